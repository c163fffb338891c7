import { Worker, type Queue } from 'bullmq';
import type { RedisConnection } from '../redis.js';
import { BACKTEST_ATTEMPTS_MAX, type Store } from '../store/store.js';
import { PollingLoop, type LoopLog } from './polling-loop.js';
import {
  BACKTEST_QUEUE,
  backtestJobId,
  closeWorkerWithin,
  queuePrefix,
  type BacktestJob,
} from './queues.js';

/*
 * Policy backtests too large for their request (issue 14; store/ops/backtests.ts): the table
 * `backtests` is the record, BullMQ only carries the work.
 * - The relay (a polling loop over the database) gives every unfinished backtest that no run
 *   holds a live job: it adds one for a new backtest, and adds the next generation for one
 *   whose job Redis no longer has, or that ended while the backtest did not. Its round is one
 *   transaction: the backtests locked (SKIP LOCKED), the jobs added, the generations recorded;
 *   Redis down, the round rolls back and the backtests wait.
 * - The job runs `Store.runBacktest`: claimed under a lease, replayed with progress, the result
 *   stored. A worker that dies leaves its lease to expire; BullMQ takes the stalled job up
 *   again (or the relay adds another), and the replay starts over: nothing was committed but
 *   progress.
 */

export interface BacktestSettings {
  /** Backtests looked at per relay round. */
  readonly batchMax: number;
  /** The wait after a round that found less than a full batch. */
  readonly idleMs: number;
  /** How long a job is trusted before the relay asks Redis whether it still exists. */
  readonly recheckAfterMs: number;
  /** A run's lease: its progress extends it every second; a run silent this long is dead. */
  readonly leaseMs: number;
  /** Backtests replayed at once by one process (each replay is CPU-bound). */
  readonly concurrency: number;
}

export const DEFAULT_BACKTEST_SETTINGS: BacktestSettings = {
  batchMax: 100,
  idleMs: 1_000,
  recheckAfterMs: 30_000,
  leaseMs: 60_000,
  concurrency: 1,
};

/** BullMQ job states in which a job will still run (or is running). */
const LIVE_JOB_STATES: ReadonlySet<string> = new Set([
  'waiting',
  'active',
  'delayed',
  'prioritized',
  'waiting-children',
]);

/** Finished jobs Redis keeps at most, for inspection: the record is the database's. */
const FINISHED_JOBS_KEPT = 1_000;

/** The relay from the backtests table to the backtest queue (see the module comment). */
export class BacktestRelay {
  readonly #loop: PollingLoop;
  #added = 0;

  constructor(
    private readonly store: Store,
    private readonly queue: Queue<BacktestJob>,
    log: LoopLog,
    private readonly settings: BacktestSettings = DEFAULT_BACKTEST_SETTINGS,
  ) {
    this.#loop = new PollingLoop(
      'backtest relay',
      async () => (await this.relayOnce()) === settings.batchMax,
      settings.idleMs,
      log,
    );
  }

  /** Jobs this relay added. */
  get added(): number {
    return this.#added;
  }

  start(): void {
    this.#loop.start();
  }

  stop(): Promise<void> {
    return this.#loop.stop();
  }

  /** One round, one transaction; returns how many backtests it looked at. */
  async relayOnce(): Promise<number> {
    let added = 0;
    const looked = await this.store.transaction(async (operations) => {
      const awaiting = await operations.backtestsAwaitingJobs(
        this.settings.batchMax,
        this.settings.recheckAfterMs,
      );
      const marks: { id: string; jobGeneration: number }[] = [];
      for (const { id, jobGeneration } of awaiting) {
        if (jobGeneration > 0 && (await this.#jobAlive(id, jobGeneration))) {
          marks.push({ id, jobGeneration });
          continue;
        }
        const generation = jobGeneration + 1;
        await this.queue.add(
          BACKTEST_QUEUE,
          { backtestId: id },
          {
            jobId: backtestJobId(id, generation),
            attempts: BACKTEST_ATTEMPTS_MAX,
            backoff: { type: 'exponential', delay: 5_000 },
            removeOnComplete: { count: FINISHED_JOBS_KEPT },
            removeOnFail: { count: FINISHED_JOBS_KEPT },
          },
        );
        added += 1;
        marks.push({ id, jobGeneration: generation });
      }
      await operations.markBacktestJobs(marks);
      return awaiting.length;
    });
    this.#added += added;
    return looked;
  }

  async #jobAlive(backtestId: string, generation: number): Promise<boolean> {
    const job = await this.queue.getJob(backtestJobId(backtestId, generation));
    return job !== undefined && LIVE_JOB_STATES.has(await job.getState());
  }
}

export interface BacktestWorkerDependencies {
  readonly store: Store;
  readonly connection: RedisConnection;
  readonly redisPrefix: string;
  readonly settings: BacktestSettings;
  readonly log: LoopLog;
  /** False: the caller starts it with `run()` (once the prefix is this database's). */
  readonly autorun?: boolean;
}

/** The backtest queue's worker, and how to stop it without waiting for whole replays. */
export interface BacktestWorker {
  readonly worker: Worker<BacktestJob>;
  /** Stops the runs after their current batch (their backtests queued again), then closes. */
  close(): Promise<void>;
}

/** The backtest queue's worker: each job one run of its backtest (Store.runBacktest). */
export function startBacktestWorker(dependencies: BacktestWorkerDependencies): BacktestWorker {
  const { store, settings, log } = dependencies;
  const stopping = new AbortController();
  const worker = new Worker<BacktestJob>(
    BACKTEST_QUEUE,
    async (job) =>
      store.runBacktest(job.data.backtestId, {
        leaseMs: settings.leaseMs,
        signal: stopping.signal,
      }),
    {
      connection: dependencies.connection,
      prefix: queuePrefix(dependencies.redisPrefix),
      autorun: dependencies.autorun ?? true,
      concurrency: settings.concurrency,
    },
  );
  worker.on('failed', (job, error) => {
    log.warn({ err: error, backtestId: job?.data.backtestId }, 'backtest run failed');
  });
  worker.on('error', () => undefined);
  return {
    worker,
    async close() {
      stopping.abort();
      await closeWorkerWithin(worker, log);
    },
  };
}
