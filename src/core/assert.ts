/*
 * Invariant checks in the manner of TigerBeetle's TIGER_STYLE: a failed assertion is a bug in
 * spendgate or in its caller, never a user error, so it throws an `InvariantError` that the
 * outer layers turn into a 500 without exposing its message.
 */

export class InvariantError extends Error {
  // Typed `string`, not the literal, so that a subclass can give its own name.
  override readonly name: string = 'InvariantError';
}

export function assert(condition: boolean, message: string): asserts condition {
  if (!condition) throw new InvariantError(message);
}
