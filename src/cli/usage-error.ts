/*
 * The command line's two explained failures, in a module of their own so that main.ts can
 * tell them apart without loading the store (keys.ts re-exports both).
 */

export class UsageError extends Error {
  override readonly name = 'UsageError';
}

/** A command whose account or key does not exist: its message says what to do instead. */
export class NotFoundError extends Error {
  override readonly name = 'NotFoundError';
}
