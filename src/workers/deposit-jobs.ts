import { Queue, Worker } from 'bullmq';
import type { RedisConnection } from '../redis.js';
import { InvariantError, type Mode } from '../core/index.js';
import type { Store } from '../store/store.js';
import { DepositSweeper, DEFAULT_SWEEP_BATCH } from './deposit-sweeper.js';
import {
  DEFAULT_DEPOSIT_WATCH_OPTIONS,
  DepositWatcher,
  type BeforeCredit,
  type DepositWatchOptions,
} from './deposit-watcher.js';
import type { LoopLog } from './polling-loop.js';
import { closeWorkerWithin, keepSchedulers, queuePrefix } from './queues.js';
import type { ChainTarget } from './solana-transfers.js';

/*
 * The deposit watcher and the sweeper as BullMQ job schedulers of the worker role: however
 * many worker processes run, each pass runs once per interval (a pass whose worker dies is
 * taken again once its lock expires; both are safe to run twice or at once).
 */

export const DEPOSIT_QUEUE = 'deposits';

export interface DepositSettings {
  readonly watchEveryMs: number;
  readonly sweepEveryMs: number;
  readonly watch: DepositWatchOptions;
  readonly sweepBatchMax: number;
  /** Test mode only (see BeforeCredit). */
  readonly beforeCredit?: BeforeCredit;
}

export const DEFAULT_DEPOSIT_SETTINGS: DepositSettings = {
  watchEveryMs: 2_000,
  sweepEveryMs: 5_000,
  watch: DEFAULT_DEPOSIT_WATCH_OPTIONS,
  sweepBatchMax: DEFAULT_SWEEP_BATCH,
};

export interface DepositJobs {
  readonly queue: Queue;
  readonly watcher: DepositWatcher;
  readonly sweeper: DepositSweeper;
  stop(): Promise<void>;
}

export function startDepositJobs(dependencies: {
  readonly store: Store;
  readonly chains: Readonly<Record<Mode, ChainTarget | null>>;
  readonly producer: RedisConnection;
  readonly consumer: RedisConnection;
  readonly redisPrefix: string;
  readonly settings: DepositSettings;
  readonly log: LoopLog;
}): DepositJobs {
  const { store, chains, settings, log } = dependencies;
  const watcher = new DepositWatcher(
    store,
    chains,
    log,
    settings.watch,
    settings.beforeCredit ?? null,
  );
  const sweeper = new DepositSweeper(store, chains, log, settings.sweepBatchMax);
  const prefix = queuePrefix(dependencies.redisPrefix);
  const queue = new Queue(DEPOSIT_QUEUE, { connection: dependencies.producer, prefix });
  queue.on('error', () => undefined);
  const worker = new Worker(
    DEPOSIT_QUEUE,
    async (job) => {
      if (job.name === 'watch-deposits') return (await watcher.scanOnce()).recorded;
      if (job.name === 'sweep-deposits') return sweeper.sweepOnce();
      throw new InvariantError(`unknown deposit job ${job.name}`);
    },
    { connection: dependencies.consumer, prefix, concurrency: 1 },
  );
  worker.on('error', () => undefined);
  const stopSchedulers = keepSchedulers(queue, {
    'watch-deposits': settings.watchEveryMs,
    'sweep-deposits': settings.sweepEveryMs,
  });
  return {
    queue,
    watcher,
    sweeper,
    async stop() {
      await stopSchedulers();
      await closeWorkerWithin(worker, log);
      await queue.close();
    },
  };
}
