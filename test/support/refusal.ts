import { expect } from 'vitest';
import { SpendgateError } from '../../src/core/index.js';

/**
 * The SpendgateError an operation refuses with. Anything else it throws goes on up, and an
 * operation that succeeds fails the test: a refusal test can never pass by accident.
 */
export async function refusal(promise: Promise<unknown>): Promise<SpendgateError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof SpendgateError) return error;
    throw error;
  }
  throw new Error('expected a refusal');
}

/** The same for a synchronous call. */
export function refusalOf(run: () => unknown): SpendgateError {
  try {
    run();
  } catch (error) {
    if (error instanceof SpendgateError) return error;
    throw error;
  }
  throw new Error('expected a refusal');
}

/**
 * A refusal's message is a sentence of spendgate's own: it names the field by its last key and
 * leaves the path to `param` (never repeating it), never passes zod's wording on, and gives
 * "a"/"an" as English does.
 */
export function expectOwnWording(error: SpendgateError): void {
  expect(error.name).toBe(error.code === 'policy_invalid' ? 'PolicyInvalidError' : error.name);
  const param = error.param ?? '';
  if (/[.[]/.test(param)) expect(error.message).not.toContain(param);
  expect(error.message).toMatch(/^\S.*\.$/s);
  expect(error.message).not.toMatch(
    /Too small|Too big|Invalid (input|option)|expected .* (received|to have)/,
  );
  expect(error.message).not.toMatch(/ a [aeiou]/);
}
