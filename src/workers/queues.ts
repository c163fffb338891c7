import type { Queue, Worker } from 'bullmq';
import { Cluster } from 'ioredis';
import type { RedisTarget } from '../config/env.js';
import { redisClient, type RedisConnection } from '../redis.js';
import type { LoopLog } from './polling-loop.js';

/*
 * The BullMQ queues and their Redis connections. Every key of every queue lives under the
 * prefix `{REDIS_PREFIX}`: the braces are a Redis Cluster hash tag, so all of a queue's keys
 * hash to one slot and BullMQ's multi-key scripts run unchanged on a cluster. The same key
 * names on one server and on a cluster: a deployment moved to a cluster keeps its names. The
 * price: every queue of a deployment shares that one slot, so one master of the cluster
 * (and its replica) carries all of the deployment's queues (docs/operations.md).
 */

export const WEBHOOK_QUEUE = 'webhooks';
/** Policy backtests too large to replay in their request (workers/backtests.ts). */
export const BACKTEST_QUEUE = 'backtests';

export function queuePrefix(redisPrefix: string): string {
  return `{${redisPrefix}}`;
}

/** The data of one delivery job: an event for one endpoint (the rest is read at delivery). */
export interface WebhookJob {
  readonly eventId: string;
  readonly endpointId: string;
  /**
   * Attempts made before this job existed: a job added again after Redis lost the first
   * (delivery-requeue.ts) goes on with the attempts and the retry schedule where they were.
   * Absent: 0.
   */
  readonly attemptsBefore?: number;
}

/**
 * One job per (event, endpoint), named by both: a relay that crashed between adding the job
 * and marking the event relayed adds it again under the same id, and BullMQ keeps the first.
 */
export function webhookJobId(job: WebhookJob): string {
  return `${job.eventId}.${job.endpointId}`;
}

/** The data of one backtest job: the backtest (its definition and state are in the database). */
export interface BacktestJob {
  readonly backtestId: string;
}

/**
 * A backtest's job of one generation: the relay adds generation n + 1 only when the job of
 * generation n is gone or finished while the backtest is not (Redis lost it, or it ran out of
 * attempts), so a job id is never reused and a live job is never doubled.
 */
export function backtestJobId(backtestId: string, generation: number): string {
  return `${backtestId}.${generation}`;
}

/**
 * A producer's connection: no queue of commands while Redis is down, so an add fails at once
 * and the relay's transaction rolls back (the events stay in the outbox for the next round).
 */
export function producerConnection(target: RedisTarget): RedisConnection {
  return redisClient(target, { enableOfflineQueue: false, maxRetriesPerRequest: 1 });
}

/**
 * A worker's connection: BullMQ's blocking commands need retries without limit (on a cluster,
 * on its connection to each node: redisClient puts the setting there, where BullMQ checks it).
 */
export function workerConnection(target: RedisTarget): RedisConnection {
  return redisClient(target, { maxRetriesPerRequest: null });
}

/** How long a relay round waits for a replica to have its jobs, before it rolls back. */
export const REPLICA_WAIT_MS = 1_000;

/**
 * On a Redis Cluster: resolves once a replica of the master holding the queues' slot has every
 * write this connection made there so far (Redis's WAIT); rejects when none has within
 * REPLICA_WAIT_MS, so that the relay's round rolls back and its events are relayed again.
 *
 * Why: replication is asynchronous. A master killed just after it answered an add, before its
 * replica had the job, is failed over to a replica without it; the relay, having marked the
 * event relayed, would never add it again, and the delivery would be lost. A master left with
 * no replica (its own was promoted, or is gone) has nobody to wait for: the round goes on.
 * On one server (REDIS_URL) there is no failover to lose jobs to: nothing to wait for.
 */
export async function confirmReplicated(
  connection: RedisConnection,
  redisPrefix: string,
): Promise<void> {
  if (!(connection instanceof Cluster)) return;
  // A key of the queues' slot leads each pipeline to the master holding that slot; the
  // commands without a key (INFO, WAIT) follow it there. The key itself is never written.
  const anchor = `${queuePrefix(redisPrefix)}:replicas`;
  const [, info] = await answers(connection.pipeline().exists(anchor).info('replication'));
  const replicas = Number(/connected_slaves:(\d+)/.exec(String(info))?.[1] ?? '0');
  if (replicas === 0) return;
  const [, acknowledged] = await answers(
    connection.pipeline().exists(anchor).wait(1, REPLICA_WAIT_MS),
  );
  if (typeof acknowledged !== 'number' || acknowledged < 1) {
    throw new Error(
      `no replica of the queues' master acknowledged within ${String(REPLICA_WAIT_MS)} ms`,
    );
  }
}

/** A pipeline's answers, or its first error. */
async function answers(pipeline: ReturnType<Cluster['pipeline']>): Promise<unknown[]> {
  const replies = (await pipeline.exec()) ?? [];
  return replies.map(([error, reply]) => {
    if (error !== null) throw error;
    return reply;
  });
}

/** Waits between attempts to upsert the schedulers while Redis does not answer. */
const SCHEDULER_RETRY_MS_MIN = 200;
const SCHEDULER_RETRY_MS_MAX = 5_000;
/**
 * How often the schedulers are upserted again while Redis answers: a Redis that restarted
 * empty (or a failover that lost them) has them back within this long, whatever the process.
 */
export const SCHEDULER_CHECK_MS = 30_000;

/**
 * Keeps `schedulers` (job name -> every ms) on `queue`, upserting them at once and again every
 * `checkEveryMs` for as long as it runs: upserting an unchanged scheduler keeps its next run
 * (BullMQ replaces the delayed job at the same time), so this costs nothing while they are
 * there, and brings them back when Redis lost them (contract section 18: background work whose
 * loss would lose work, here holds that would never expire). While Redis does not answer it
 * tries again, backing off from 200 ms to 5 s (contract section 15: background work starts as
 * soon as Redis does). The returned stop resolves at once, even with an upsert in flight that
 * waits for a Redis that never came (BullMQ waits for its connection to be ready): that upsert
 * is left to fail when the connection closes.
 */
export function keepSchedulers(
  queue: Queue,
  schedulers: Readonly<Record<string, number>>,
  checkEveryMs: number = SCHEDULER_CHECK_MS,
): () => Promise<void> {
  let stopping = false;
  let wake: () => void = () => undefined;
  const stopped = new Promise<void>((resolve) => {
    wake = resolve;
  });
  const pause = (ms: number): Promise<void> => {
    let timer: NodeJS.Timeout | undefined;
    const waited = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, ms);
    });
    return Promise.race([waited, stopped]).finally(() => {
      clearTimeout(timer);
    });
  };
  const kept = (async () => {
    for (let failures = 0; !stopping;) {
      const upserted = upsertSchedulers(queue, schedulers);
      upserted.catch(() => undefined);
      try {
        await Promise.race([upserted, stopped]);
        failures = 0;
      } catch {
        failures += 1;
      }
      const retryMs = Math.min(
        SCHEDULER_RETRY_MS_MIN * 2 ** (failures - 1),
        SCHEDULER_RETRY_MS_MAX,
      );
      if (!stopping) await pause(failures === 0 ? checkEveryMs : retryMs);
    }
  })();
  return async () => {
    stopping = true;
    wake();
    await kept;
  };
}

async function upsertSchedulers(
  queue: Queue,
  schedulers: Readonly<Record<string, number>>,
): Promise<void> {
  for (const [name, every] of Object.entries(schedulers))
    await queue.upsertJobScheduler(name, { every });
}

/** How long a stop waits for one BullMQ worker to close (its job in progress included). */
export const WORKER_CLOSE_MS_MAX = 4_000;

/**
 * Closes a BullMQ worker, waiting for its job in progress, at most WORKER_CLOSE_MS_MAX; past
 * that, logs which worker did not close and goes on, so the process's stop still ends within
 * its own limit. Why a bound: after a Redis Cluster failover a worker's blocking fetch, sent
 * to the master that died, can stay unsettled after its connection closed, and BullMQ's close
 * waits for its fetch loop forever (test/workers/redis-cluster.test.ts saw the stop hang until
 * serve's 10 s limit). Nothing is owed in Redis alone: a job cut short by the exit committed its
 * PostgreSQL transaction or rolled it back, and BullMQ runs again a job whose lock lapsed.
 */
export async function closeWorkerWithin(
  worker: Worker,
  log: LoopLog,
  closeMsMax: number = WORKER_CLOSE_MS_MAX,
): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'late'>((resolve) => {
    timer = setTimeout(() => {
      resolve('late');
    }, closeMsMax);
  });
  const closed = worker.close().then(() => 'closed' as const);
  try {
    if ((await Promise.race([closed, late])) === 'late') {
      log.warn({ worker: worker.name, limitMs: closeMsMax }, 'worker did not close in time');
    }
  } finally {
    clearTimeout(timer);
  }
}
