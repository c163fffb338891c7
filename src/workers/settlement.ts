import type { Store } from '../store/store.js';
import { PollingLoop, type LoopLog } from './polling-loop.js';

export interface SettlementOptions {
  /** Records read per round. */
  readonly batchMax: number;
  readonly idleMs: number;
}

export const DEFAULT_SETTLEMENT_OPTIONS: SettlementOptions = { batchMax: 100, idleMs: 250 };

/**
 * The settlement worker (clearing batches): polls for unsettled records of accepted
 * settlements and posts each in a transaction of its own (store: settleRecord), which
 * captures and marks the record together. Any number may run: a record another holds is
 * skipped (SKIP LOCKED), and a settled record is never settled again, so a crash at any point
 * repeats nothing when the worker starts again.
 */
export class SettlementWorker {
  readonly #loop: PollingLoop;
  #settled = 0;

  constructor(
    private readonly store: Store,
    log: LoopLog,
    private readonly options: SettlementOptions = DEFAULT_SETTLEMENT_OPTIONS,
  ) {
    this.#loop = new PollingLoop(
      'settlement worker',
      async () => (await this.settleOnce()) === options.batchMax,
      options.idleMs,
      log,
    );
  }

  get settled(): number {
    return this.#settled;
  }

  start(): void {
    this.#loop.start();
  }

  stop(): Promise<void> {
    return this.#loop.stop();
  }

  /** One round: the records it found, each settled (or skipped) in its own transaction. */
  async settleOnce(): Promise<number> {
    const records = await this.store.pendingSettlementRecords(this.options.batchMax);
    for (const { settlementId, position } of records) {
      const outcome = await this.store.transaction((operations) =>
        operations.settleRecord(settlementId, position),
      );
      if (outcome !== 'skipped') this.#settled += 1;
    }
    return records.length;
  }
}
