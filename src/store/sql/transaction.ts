import type { SqlClient, SqlTransaction, TransactionOptions } from './client.js';

const RETRYABLE_CODES: ReadonlySet<string> = new Set(['40001', '40P01']);
const ATTEMPTS_MAX = 8;
const BACKOFF_MS_MAX = 50;

export function isRetryable(error: unknown): boolean {
  return (
    typeof error === 'object' &&
    error !== null &&
    'code' in error &&
    typeof error.code === 'string' &&
    RETRYABLE_CODES.has(error.code)
  );
}

/**
 * One store operation = one database transaction. PostgreSQL may abort a transaction that
 * lost a race (serialization failure 40001, deadlock 40P01); nothing of it was committed, so
 * running it again is safe. Bounded: after `attemptsMax` tries the error goes up.
 */
export async function runTransaction<T>(
  client: SqlClient,
  work: (tx: SqlTransaction) => Promise<T>,
  options?: TransactionOptions,
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await client.transaction(work, options);
    } catch (error) {
      if (!isRetryable(error) || attempt >= ATTEMPTS_MAX) throw error;
      // Jitter, so two transactions that deadlocked do not collide again in step.
      const delayMs = Math.random() * Math.min(BACKOFF_MS_MAX, 2 ** attempt);
      await new Promise((resolve) => setTimeout(resolve, delayMs));
    }
  }
}
