import { DelayedError, UnrecoverableError, Worker, type Job } from 'bullmq';
import type { RedisConnection } from '../redis.js';
import { assert } from '../core/index.js';
import { DELIVERY_ATTEMPT_TIMEOUT_MS, deliverSigned } from '../outbound/index.js';
import { attemptDisablesEndpoint, type Store } from '../store/store.js';
import { EndpointGate } from './endpoint-gate.js';
import type { WebhookOutcome, WorkerMetrics } from './metrics.js';
import { queuePrefix, WEBHOOK_QUEUE, type WebhookJob } from './queues.js';
import { retryDelayMs, retryDelayMsMax } from './retry-schedule.js';

export interface DeliverySettings {
  /** Deliveries in flight at once in this process. */
  readonly concurrency: number;
  /** Deliveries in flight at once to one endpoint in this process. */
  readonly endpointConcurrency: number;
  /** The waits between attempts (retry-schedule.ts); attempts = retries + 1. */
  readonly retryDelaysMs: readonly number[];
  /** One attempt's limit, the contract's 15 s. */
  readonly timeoutMs: number;
}

export const DEFAULT_DELIVERY_SETTINGS: Omit<DeliverySettings, 'retryDelaysMs'> = {
  concurrency: 128,
  endpointConcurrency: 32,
  timeoutMs: DELIVERY_ATTEMPT_TIMEOUT_MS,
};

/** Times a job may be taken up again after its worker died; bounded, but never reached. */
const STALLS_MAX = 1_000;

/**
 * A job naming an event or endpoint this database lacks: failed at once, no retry (an
 * `UnrecoverableError` to BullMQ), and reported where it is thrown, so the 'failed' handler
 * does not report it again.
 */
class UnknownDeliveryJobError extends UnrecoverableError {}

/** The backoff type jobs name; the worker's strategy answers it. */
export const CONTRACT_BACKOFF = 'contract-schedule';

export interface DeliveryLog {
  warn(object: object, message: string): void;
  error(object: object, message: string): void;
}

export interface WebhookWorkerDependencies {
  readonly store: Store;
  readonly connection: RedisConnection;
  readonly redisPrefix: string;
  readonly settings: DeliverySettings;
  readonly log: DeliveryLog;
  readonly metrics: WorkerMetrics;
  /** Whether the worker takes jobs at once (BullMQ's autorun); false: once `run()` is called. */
  readonly autorun?: boolean;
}

/** The job processor: one delivery attempt, its turn at its endpoint's gate first. */
function deliveryProcessor(
  dependencies: WebhookWorkerDependencies,
): (job: Job<WebhookJob>, token: string | undefined) => Promise<string> {
  const { store, settings, log, metrics } = dependencies;
  const gate = new EndpointGate(settings.endpointConcurrency, settings.concurrency);

  const deliver = async (job: Job<WebhookJob>, token: string | undefined): Promise<string> => {
    const { eventId, endpointId } = job.data;
    const turn = await gate.enter(endpointId);
    if ('retryInMs' in turn) {
      // BullMQ's worker hands every job it runs to the processor with the job's lock token.
      assert(token !== undefined, 'a job handed back needs its lock token');
      await job.moveToDelayed(Date.now() + turn.retryInMs, token);
      throw new DelayedError();
    }
    const startedMs = performance.now();
    try {
      const lookup = await store.deliveryTarget(eventId, endpointId);
      if (lookup.kind === 'stopped') return 'endpoint no longer receives';
      if (lookup.kind === 'missing') {
        metrics.unknownDeliveryJobs.inc({ missing: lookup.missing });
        log.error(
          { eventId, endpointId, missing: lookup.missing, redisPrefix: dependencies.redisPrefix },
          `webhook delivery job failed: this database has no such ${lookup.missing}; another ` +
            'installation may share this REDIS_PREFIX, or the rows were lost (the job stays in the failed set)',
        );
        // No retry: the database will not grow the rows, and another attempt would only delay
        // the failure an operator must see.
        throw new UnknownDeliveryJobError(`no such ${lookup.missing} in this database`);
      }
      const target = lookup.target;
      const attemptStartedMs = performance.now();
      const result = await deliverSigned({
        url: target.url,
        mode: target.mode,
        secret: target.secret,
        eventId,
        body: target.payload,
        timeoutMs: settings.timeoutMs,
      });
      metrics.webhookAttemptSeconds.observe((performance.now() - attemptStartedMs) / 1000);
      // Counted as the endpoint answered, before the record: should the record fail, the
      // receiver still had this attempt (and the retry will be another).
      metrics.webhookDeliveries.inc({ outcome: attemptOutcome(job, result) });
      await store.recordDeliveryAttempt({
        scope: { accountId: target.accountId, mode: target.mode },
        endpointId,
        eventId,
        eventType: target.eventType,
        attempt: attemptsBefore(job) + job.attemptsMade + 1,
        statusCode: result.statusCode,
        durationMs: result.durationMs,
        error: result.error,
        owed: { nextAttemptDueMs: nextAttemptDueMs(job, result, settings.retryDelaysMs) },
      });
      if (result.delivered) return 'delivered';
      const status = result.statusCode;
      if (attemptDisablesEndpoint(status)) return 'endpoint gone: disabled';
      throw new Error(
        status === null ? `not delivered: ${result.error ?? 'no answer'}` : `answered ${status}`,
      );
    } finally {
      turn.release(performance.now() - startedMs);
    }
  };
  return deliver;
}

/**
 * The webhook delivery worker (contract section 13). A job is one event for one endpoint:
 * read what to send (nothing, if the endpoint was deleted or disabled meanwhile: its pending
 * deliveries stop), sign it, POST it, record the attempt. A job naming an event or endpoint
 * this database does not have was never made here (another installation's, on a shared Redis
 * prefix) or its rows are gone: it fails at once, loudly (an error line and
 * `spendgate_webhook_jobs_unknown_total`), and stays in the failed set for an operator, never
 * ended as if delivered. A 2xx ends the job; a 410 disables
 * the endpoint and ends it; anything else fails the attempt, and BullMQ retries it on the
 * contract's schedule (the custom backoff below) until the attempts run out.
 *
 * Fairness (endpoint-gate.ts): at most `endpointConcurrency` deliveries to one endpoint run at
 * once in a process, as many more wait their turn here, and a job beyond that goes back to the
 * queue for about as long as its endpoint needs, without spending an attempt: a slow endpoint
 * holds a few of the `concurrency` slots and never all of them.
 */
export function startWebhookWorker(dependencies: WebhookWorkerDependencies): Worker<WebhookJob> {
  const { settings, log } = dependencies;
  const worker = new Worker<WebhookJob>(WEBHOOK_QUEUE, deliveryProcessor(dependencies), {
    connection: dependencies.connection,
    prefix: queuePrefix(dependencies.redisPrefix),
    autorun: dependencies.autorun ?? true,
    concurrency: settings.concurrency,
    // A job whose worker died is taken up again within about 15 s (lock 10 s, checked every
    // 5 s), and as often as workers die: deliveries are at least once, receivers drop repeats
    // by webhook-id, so a job must never be failed for having stalled (BullMQ's default: once).
    lockDuration: 10_000,
    stalledInterval: 5_000,
    maxStalledCount: STALLS_MAX,
    settings: {
      // A job added again after Redis lost the first goes on along the schedule.
      backoffStrategy: (attemptsMade, _type, _error, job) =>
        retryDelayMs(settings.retryDelaysMs, attemptsMade + attemptsBefore(job)),
    },
  });
  worker.on('failed', (job, error) => {
    if (job === undefined || error instanceof UnknownDeliveryJobError) return;
    // No retry follows the last attempt, nor an UnrecoverableError. A job that stalled more
    // than `maxStalledCount` times is failed by BullMQ with an UnrecoverableError (its deferred
    // failure, "job stalled more than allowable limit"): the class says so, not the message.
    if (job.attemptsMade >= (job.opts.attempts ?? 1) || error instanceof UnrecoverableError) {
      log.warn(
        { eventId: job.data.eventId, endpointId: job.data.endpointId, err: error },
        'webhook delivery gave up after its last attempt',
      );
    }
  });
  // Redis going away is reported by /readyz; the worker reconnects by itself.
  worker.on('error', () => undefined);
  return worker;
}

/** Attempts made before the job existed (queues.ts, WebhookJob.attemptsBefore). */
function attemptsBefore(job: { readonly data: unknown } | undefined): number {
  const data = job?.data;
  const before =
    typeof data === 'object' && data !== null && 'attemptsBefore' in data ? data.attemptsBefore : 0;
  assert(typeof before === 'number' && Number.isSafeInteger(before) && before >= 0, 'a count');
  return before;
}

/**
 * When the delivery's next attempt is due, for its row of what is owed: null when this attempt
 * ends it (delivered, endpoint gone, or no attempt left). The latest the backoff can choose, so
 * that the re-queue loop never takes a job merely waiting out its jitter for a lost one.
 */
function nextAttemptDueMs(
  job: Job<WebhookJob>,
  result: { readonly delivered: boolean; readonly statusCode: number | null },
  schedule: readonly number[],
): number | null {
  const outcome = attemptOutcome(job, result);
  if (outcome !== 'failed_will_retry') return null;
  return Date.now() + retryDelayMsMax(schedule, attemptsBefore(job) + job.attemptsMade + 1);
}

/** What one attempt's answer means for its job (metrics.ts, WEBHOOK_OUTCOMES). */
function attemptOutcome(
  job: Job<WebhookJob>,
  result: { readonly delivered: boolean; readonly statusCode: number | null },
): WebhookOutcome {
  if (result.delivered) return 'delivered';
  if (attemptDisablesEndpoint(result.statusCode)) return 'endpoint_disabled';
  return job.attemptsMade + 1 >= (job.opts.attempts ?? 1) ? 'failed_final' : 'failed_will_retry';
}

/** The options every delivery job is added with. */
export function deliveryJobOptions(retryDelaysMs: readonly number[]) {
  return {
    attempts: retryDelaysMs.length + 1,
    backoff: { type: CONTRACT_BACKOFF },
    // Kept a day, so that a relay re-adding a job under its id finds it and adds nothing.
    removeOnComplete: { age: 24 * 3600, count: 100_000 },
    removeOnFail: { age: 7 * 24 * 3600, count: 100_000 },
  };
}
