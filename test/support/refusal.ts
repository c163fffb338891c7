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
