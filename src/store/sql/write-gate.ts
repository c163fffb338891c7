import { AsyncLocalStorage } from 'node:async_hooks';
import { DATABASE_WRITES_MAX_DEFAULT } from '../../config/env.js';
import { assert, SpendgateError } from '../../core/index.js';

/** Past this many waiting, a write is refused (503): a backlog that long only grows. */
export const WRITES_WAITING_MAX = 4_096;

/**
 * At most `openMax` of the store's write transactions (Store.transaction, Store.idempotent) in
 * PostgreSQL at once; the rest wait here, first come first served, at most WRITES_WAITING_MAX.
 *
 * Why: a lifecycle message is a transaction of its own (the authorizations batch theirs in
 * the engine's lanes, which this gate does not hold back). With 64 of them in flight, 20
 * backends (the pool) contended for 2 cores and the same vaults' locks, and PostgreSQL's CPU
 * per capture was 1.5x what it was with 4 (bench:http `--only capture`, docs/performance.md).
 * Waiting in Node costs nothing of PostgreSQL's.
 *
 * Re-entrant: a transaction started inside another's work (none should be, but a nested wait
 * while holding a slot could hold every slot) passes without waiting.
 */
export class WriteGate {
  #open = 0;
  readonly #waiting: (() => void)[] = [];
  readonly #inside = new AsyncLocalStorage<true>();

  constructor(readonly openMax: number = DATABASE_WRITES_MAX_DEFAULT) {
    assert(Number.isSafeInteger(openMax) && openMax >= 1, 'a gate lets one write through');
  }

  /** Runs `work` once a slot is free (or at once, inside another's work). */
  async run<T>(work: () => Promise<T>): Promise<T> {
    if (this.#inside.getStore() === true) return work();
    await this.#enter();
    try {
      return await this.#inside.run(true, work);
    } finally {
      this.#leave();
    }
  }

  /** Writes in PostgreSQL now, and waiting (Store.writeStats, /metrics). */
  stats(): { readonly open: number; readonly waiting: number } {
    return { open: this.#open, waiting: this.#waiting.length };
  }

  async #enter(): Promise<void> {
    if (this.#open < this.openMax) {
      this.#open += 1;
      return;
    }
    if (this.#waiting.length >= WRITES_WAITING_MAX) {
      throw new SpendgateError(
        'service_unavailable',
        'Too many writes are waiting for the database; try again in a moment.',
      );
    }
    // The slot is handed over by #leave: #open stays as it is.
    await new Promise<void>((resolve) => this.#waiting.push(resolve));
  }

  #leave(): void {
    const next = this.#waiting.shift();
    if (next === undefined) {
      this.#open -= 1;
      assert(this.#open >= 0, 'a gate never opens below zero');
      return;
    }
    next();
  }
}
