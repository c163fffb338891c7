import { Queue, Worker } from 'bullmq';
import type { RedisConnection } from '../redis.js';
import { assert, InvariantError } from '../core/index.js';
import {
  DEFAULT_RETENTION,
  HOLD_JOURNAL_VAULTS_MAX,
  type RetentionSettings,
  type Store,
} from '../store/store.js';
import { closeWorkerWithin, keepSchedulers, queuePrefix } from './queues.js';
import type { LoopLog } from './polling-loop.js';

/*
 * Repeatable maintenance, run by BullMQ job schedulers so that however many worker
 * processes run, each round runs once:
 * - hold expiry: card holds older than the configured age (7 days by default) are released,
 *   failed with `expired`, with their events, in bounded batches;
 * - balance snapshots: each vault's end-of-day balances, for every UTC day that ended and has
 *   none yet (missed days are backfilled, oldest first);
 * - retention: old webhook delivery attempts, relayed events, idempotency records and daily
 *   spend counters deleted, and old hold changes folded, so that no table the authorize path
 *   writes grows without bound (src/store/ops/retention.ts says what each keeps, and why).
 * All are idempotent, so a round that runs twice or dies halfway does no harm. The work
 * itself is in the functions below, which tests call with a controlled clock.
 */

export const MAINTENANCE_QUEUE = 'maintenance';

export interface MaintenanceSettings {
  /** Holds older than this are expired. */
  readonly holdAgeMsMax: number;
  readonly holdExpiryEveryMs: number;
  readonly snapshotEveryMs: number;
  /** Default: every 5 minutes. */
  readonly retentionEveryMs?: number;
  /** Default: DEFAULT_RETENTION. */
  readonly retention?: RetentionSettings;
}

export const DEFAULT_MAINTENANCE_SETTINGS: MaintenanceSettings = {
  holdAgeMsMax: 7 * 24 * 3_600_000,
  holdExpiryEveryMs: 60_000,
  snapshotEveryMs: 15 * 60_000,
};

const RETENTION_EVERY_MS = 5 * 60_000;

/**
 * Reconciliations of reserves are kept 30 days (the latest of each mode and currency always):
 * about 6,000 rows a day per worker process, and a month of proof of reserves to look back on.
 */
export const RESERVE_RUN_RETENTION_MS = 30 * 24 * 3_600_000;

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

/** Rows one retention statement deletes or folds: a transaction of tens of milliseconds. */
const RETENTION_BATCH_ROWS = 2_000;
/**
 * Statements per table per retention run at most: 2,000,000 rows, so that a run every five
 * minutes keeps up with more than 6,000 new rows a second in each table; a larger backlog
 * (a first run on an old database) takes several runs.
 */
const RETENTION_BATCHES_PER_RUN_MAX = 1_000;
/** Candidate searches per run: 10 million vaults. */
const HOLD_JOURNAL_SEARCHES_PER_RUN_MAX = 10_000;

/** Rows deleted or folded by one retention run, by table. */
export interface RetentionCounts {
  readonly webhookDeliveries: number;
  readonly outboxEvents: number;
  readonly idempotencyKeys: number;
  readonly spendCounters: number;
  /** Reconciliations of reserves older than RESERVE_RUN_RETENTION_MS (the latest kept). */
  readonly reserveRuns: number;
  readonly holdChanges: number;
  readonly backtests: number;
  readonly displayTokens: number;
}

/** Repeats a batch, each in its own transaction, until one comes back short. */
async function drain(batch: () => Promise<number>): Promise<number> {
  let total = 0;
  for (let round = 0; round < RETENTION_BATCHES_PER_RUN_MAX; round++) {
    const count = await batch();
    assert(count >= 0 && count <= RETENTION_BATCH_ROWS, 'a batch is bounded');
    total += count;
    if (count < RETENTION_BATCH_ROWS) break;
  }
  return total;
}

/** Folds the old hold changes of every vault that has two or more; returns the rows folded. */
export async function compactHoldJournal(store: Store, retentionMs: number): Promise<number> {
  let folded = 0;
  let after: string | null = null;
  for (let search = 0; search < HOLD_JOURNAL_SEARCHES_PER_RUN_MAX; search++) {
    const found = await store.holdJournalCandidates(retentionMs, after, HOLD_JOURNAL_VAULTS_MAX);
    const { horizonMs } = found;
    if (horizonMs === null) return 0;
    for (const vaultId of found.vaultIds) {
      folded += await drain(() =>
        store.compactVaultHoldChanges(vaultId, horizonMs, RETENTION_BATCH_ROWS),
      );
    }
    after = found.cursor;
    if (after === null) break;
  }
  return folded;
}

/**
 * One retention run: each table in bounded batches, a transaction each. Delivery attempts go
 * before the events they name (their foreign key).
 */
export async function applyRetention(
  store: Store,
  retention: RetentionSettings = DEFAULT_RETENTION,
): Promise<RetentionCounts> {
  const webhookDeliveries = await drain(() =>
    store.purgeWebhookDeliveries(retention.deliveryRetentionMs, RETENTION_BATCH_ROWS),
  );
  const outboxEvents = await drain(() =>
    store.purgeOutboxEvents(retention.eventRetentionMs, RETENTION_BATCH_ROWS),
  );
  const idempotencyKeys = await drain(() => store.purgeIdempotencyKeys(RETENTION_BATCH_ROWS));
  const spendCounters = await drain(() =>
    store.purgeSpendCounters(retention.spendCounterRetentionDays, RETENTION_BATCH_ROWS),
  );
  const reserveRuns = await drain(() =>
    store.purgeReserveRuns(RESERVE_RUN_RETENTION_MS, RETENTION_BATCH_ROWS),
  );

  const holdChanges = await compactHoldJournal(store, retention.holdJournalRetentionMs);
  const backtests = await drain(() =>
    store.purgeBacktests(retention.backtestRetentionMs, RETENTION_BATCH_ROWS),
  );
  const displayTokens = await drain(() => store.purgeDisplayTokens(RETENTION_BATCH_ROWS));
  return {
    webhookDeliveries,
    outboxEvents,
    idempotencyKeys,
    spendCounters,
    reserveRuns,
    holdChanges,
    backtests,
    displayTokens,
  };
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
  readonly producer: RedisConnection;
  readonly consumer: RedisConnection;
  readonly redisPrefix: string;
  readonly settings: MaintenanceSettings;
  readonly log: LoopLog;
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
      if (job.name === 'apply-retention')
        return applyRetention(store, settings.retention ?? DEFAULT_RETENTION);
      throw new InvariantError(`unknown maintenance job ${job.name}`);
    },
    { connection: dependencies.consumer, prefix, concurrency: 1 },
  );
  worker.on('error', () => undefined);
  const stopSchedulers = keepSchedulers(queue, {
    'expire-holds': settings.holdExpiryEveryMs,
    'take-snapshots': settings.snapshotEveryMs,
    'apply-retention': settings.retentionEveryMs ?? RETENTION_EVERY_MS,
  });
  return {
    queue,
    async stop() {
      await stopSchedulers();
      await closeWorkerWithin(worker, dependencies.log);
      await queue.close();
    },
  };
}
