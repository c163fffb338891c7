import { Queue, Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import { InvariantError } from '../core/index.js';
import type { Store } from '../store/store.js';
import { queuePrefix } from './queues.js';

/*
 * Repeatable maintenance, run by BullMQ job schedulers so that however many worker
 * processes run, each round runs once:
 * - hold expiry: card holds older than the configured age (7 days by default) are released,
 *   failed with `expired`, with their events, in bounded batches;
 * - balance snapshots: each vault's end-of-day balances, for every UTC day that ended and has
 *   none yet (missed days are backfilled, oldest first).
 * Both are idempotent, so a round that runs twice or dies halfway does no harm. The work
 * itself is in the two functions below, which tests call with a controlled clock.
 */

export const MAINTENANCE_QUEUE = 'maintenance';

export interface MaintenanceSettings {
  /** Holds older than this are expired. */
  readonly holdAgeMsMax: number;
  readonly holdExpiryEveryMs: number;
  readonly snapshotEveryMs: number;
}

export const DEFAULT_MAINTENANCE_SETTINGS: MaintenanceSettings = {
  holdAgeMsMax: 7 * 24 * 3_600_000,
  holdExpiryEveryMs: 60_000,
  snapshotEveryMs: 15 * 60_000,
};

const HOLD_BATCH_MAX = 500;
/** Expiry rounds per run at most: a backlog beyond 10,000 holds waits for the next run. */
const HOLD_BATCHES_PER_RUN_MAX = 20;
const SNAPSHOT_BATCH_MAX = 1000;
/** Snapshot batches per day at most: 10 million vaults. */
const SNAPSHOT_BATCHES_PER_DAY_MAX = 10_000;

/** Expires holds older than `ageMsMax`; returns how many. */
export async function expireHolds(store: Store, ageMsMax: number): Promise<number> {
  let expired = 0;
  for (let round = 0; round < HOLD_BATCHES_PER_RUN_MAX; round++) {
    const count = await store.expireHolds(ageMsMax, HOLD_BATCH_MAX);
    expired += count;
    if (count < HOLD_BATCH_MAX) break;
  }
  return expired;
}

/** Writes the snapshots of every ended day that has none yet; returns the days completed. */
export async function takeSnapshots(store: Store): Promise<string[]> {
  const days = await store.snapshotDaysDue();
  for (const day of days) {
    let after: string | null = null;
    for (let batch = 0; batch < SNAPSHOT_BATCHES_PER_DAY_MAX; batch++) {
      after = await store.snapshotDay(day, after, SNAPSHOT_BATCH_MAX);
      if (after === null) break;
    }
    await store.completeSnapshotDay(day);
  }
  return days;
}

export interface Maintenance {
  /** The schedulers' queue, for its counts at /metrics. */
  readonly queue: Queue;
  stop(): Promise<void>;
}

export function startMaintenance(dependencies: {
  readonly store: Store;
  readonly producer: Redis;
  readonly consumer: Redis;
  readonly redisPrefix: string;
  readonly settings: MaintenanceSettings;
}): Maintenance {
  const { store, settings } = dependencies;
  const prefix = queuePrefix(dependencies.redisPrefix);
  const queue = new Queue(MAINTENANCE_QUEUE, { connection: dependencies.producer, prefix });
  queue.on('error', () => undefined);
  const worker = new Worker(
    MAINTENANCE_QUEUE,
    async (job) => {
      if (job.name === 'expire-holds') return expireHolds(store, settings.holdAgeMsMax);
      if (job.name === 'take-snapshots') return (await takeSnapshots(store)).length;
      throw new InvariantError(`unknown maintenance job ${job.name}`);
    },
    { connection: dependencies.consumer, prefix, concurrency: 1 },
  );
  worker.on('error', () => undefined);
  // Upserting a scheduler is idempotent, so every process does it at start; while Redis is
  // down it is tried again until it answers (contract section 15: background work starts as
  // soon as Redis does).
  let stopping = false;
  const scheduled = (async () => {
    for (let attempt = 0; !stopping; attempt++) {
      try {
        await queue.upsertJobScheduler('expire-holds', { every: settings.holdExpiryEveryMs });
        await queue.upsertJobScheduler('take-snapshots', { every: settings.snapshotEveryMs });
        return;
      } catch {
        await new Promise((resolve) => setTimeout(resolve, Math.min(200 * 2 ** attempt, 5_000)));
      }
    }
  })();
  return {
    queue,
    async stop() {
      stopping = true;
      await scheduled;
      await worker.close();
      await queue.close();
    },
  };
}
