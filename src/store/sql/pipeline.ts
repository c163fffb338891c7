import type { SqlQueryable } from './client.js';

/*
 * Statements of one transaction sent together rather than one round trip each. On the pg
 * client (pipelining, pg-client.ts) a statement sent before the previous one is answered goes
 * out at once, and `together` corks the socket so that all of them leave in one write: the
 * message bench found a socket write per statement to be a third of the service's CPU on a
 * capture (writev on loopback), beside the round trips the vault lock is held across.
 * PostgreSQL runs them in the order sent, so locks are taken, and rows written, in that order;
 * what one statement needs of another's answer still waits for it.
 */

/** A pipelining queryable's way to send what `send` issues in one write. */
export interface Corkable {
  readonly together?: <T>(send: () => T) => T;
  /**
   * Holds what is sent until this turn of the event loop ends, so that statements sent by
   * several works of a shared transaction (shared-transaction.ts) in one turn leave together.
   */
  readonly corkForTick?: () => void;
}

type Settled<T extends readonly unknown[]> = { -readonly [K in keyof T]: Awaited<T[K]> };

/** SQLSTATE 25P02: a statement sent behind one that failed, refused for that alone. */
const IN_FAILED_TRANSACTION = '25P02';

const isBehindFailure = (reason: unknown): boolean =>
  typeof reason === 'object' &&
  reason !== null &&
  (reason as { code?: unknown }).code === IN_FAILED_TRANSACTION;

/**
 * Starts each of `start`'s works now (each sends its first statement before its first
 * `await`), in one write where the client can, and waits for every one to settle before
 * answering: none may still send a statement once the caller goes on (a rollback, the
 * connection back in its pool). Rejects with the first failure that is not only a statement
 * refused behind another's (25P02), which names the cause; else resolves with every result.
 */
export async function inPipeline<const T extends readonly Promise<unknown>[]>(
  tx: SqlQueryable & Corkable,
  start: () => T,
): Promise<Settled<T>> {
  const started = tx.together === undefined ? start() : tx.together(start);
  const settled = await Promise.allSettled(started);
  const failures = settled.flatMap((result) => (result.status === 'rejected' ? [result] : []));
  const cause = failures.find((failure) => !isBehindFailure(failure.reason)) ?? failures[0];
  if (cause !== undefined) throw cause.reason;
  return settled.map((result) => (result as PromiseFulfilledResult<unknown>).value) as Settled<T>;
}
