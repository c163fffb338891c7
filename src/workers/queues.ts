import type { Redis } from 'ioredis';
import { redisClient } from '../redis.js';

/*
 * The BullMQ queues and their Redis connections. Every key of every queue lives under the
 * prefix `{REDIS_PREFIX}`: the braces are a Redis Cluster hash tag, so all of a queue's keys
 * hash to one slot and BullMQ's multi-key scripts run unchanged on a cluster.
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
export function producerConnection(url: string): Redis {
  return redisClient(url, { enableOfflineQueue: false, maxRetriesPerRequest: 1 });
}

/** A worker's connection: BullMQ's blocking commands need retries without limit. */
export function workerConnection(url: string): Redis {
  return redisClient(url, { maxRetriesPerRequest: null });
}
