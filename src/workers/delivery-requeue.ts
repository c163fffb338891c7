import type { Queue } from 'bullmq';
import { assert } from '../core/index.js';
import type { DeliveryKey, OwedDelivery, Store } from '../store/store.js';
import { PollingLoop, type LoopLog } from './polling-loop.js';
import { webhookJobId, type WebhookJob } from './queues.js';

/*
 * Redis carries work; it is never the only record of it (contract section 18, v1.2). Every
 * delivery not yet ended is a row of webhook_deliveries_owed (store/ops/owed-deliveries.ts),
 * due when its job should next be taken. This loop looks at the rows overdue by `graceMs` and
 * asks BullMQ for each one's job:
 * - gone (Redis restarted empty, a failover lost it): added again under the same job id, so
 *   the receiver gets the same `webhook-id`, with the attempts already made carried over
 *   (WebhookJob.attemptsBefore), so the retry schedule and the recorded attempt numbers go on;
 * - finished (completed, or failed for good): the row is forgotten (the worker deletes it
 *   itself as a delivery ends; this covers an endpoint found stopped, or a delete that failed);
 * - waiting, delayed or running: left alone, looked at again after `recheckMs`.
 * A round is one transaction, its rows locked (SKIP LOCKED: loops in several processes share
 * nothing); Redis down, the round rolls back and the rows wait. A job lost is thus queued again
 * at most recheckMs + graceMs + intervalMs after its loss (50 s with the defaults; the contract
 * allows 60), or after it was due, whichever is later.
 */

export interface RequeueSettings {
  /** The wait after a round that found less than a full batch. */
  readonly intervalMs: number;
  /** How long past its due time a delivery's job is trusted before it is looked for. */
  readonly graceMs: number;
  /** How long a job found alive is trusted before it is looked for again. */
  readonly recheckMs: number;
  /** Deliveries looked at per round (one BullMQ state read each, pipelined). */
  readonly batchMax: number;
}

export const DEFAULT_REQUEUE_SETTINGS: RequeueSettings = {
  intervalMs: 10_000,
  graceMs: 10_000,
  recheckMs: 30_000,
  batchMax: 500,
};

/** The contract's bound on how long a lost job may stay lost. */
const REQUEUE_BOUND_MS = 60_000;

/** BullMQ's answers for a job that will not run again. */
const ENDED_JOB_STATES: ReadonlySet<string> = new Set(['completed', 'failed']);

/** The re-queue loop over what is owed (see the module comment). */
export class DeliveryRequeue {
  readonly #loop: PollingLoop;
  #requeued = 0;

  constructor(
    private readonly store: Store,
    private readonly queue: Queue<WebhookJob>,
    private readonly log: LoopLog,
    /** Attempts a delivery has in all (retries + 1), as the relay's jobs are added with. */
    private readonly attemptsMax: number,
    private readonly settings: RequeueSettings = DEFAULT_REQUEUE_SETTINGS,
    /** Resolves once the jobs added are safe from a failover (queues.ts, confirmReplicated). */
    private readonly confirmAdded: () => Promise<void> = () => Promise.resolve(),
  ) {
    assert(Number.isSafeInteger(attemptsMax) && attemptsMax >= 1, 'at least one attempt');
    assert(
      settings.batchMax > 0 &&
        settings.batchMax <= 10_000 &&
        settings.recheckMs + settings.graceMs + settings.intervalMs <= REQUEUE_BOUND_MS,
      'a bounded batch, and a lost job queued again within the contract bound',
    );
    this.#loop = new PollingLoop(
      'webhook re-queue',
      async () => (await this.requeueOnce()) === settings.batchMax,
      settings.intervalMs,
      log,
    );
  }

  /** Jobs this loop added again: deliveries whose job Redis had lost. */
  get requeued(): number {
    return this.#requeued;
  }

  start(): void {
    this.#loop.start();
  }

  /** Finishes the round in progress, then stops. */
  stop(): Promise<void> {
    return this.#loop.stop();
  }

  /** One round, one transaction; returns how many overdue deliveries it looked at. */
  async requeueOnce(): Promise<number> {
    let added = 0;
    const looked = await this.store.transaction(async (operations) => {
      const overdue = await operations.overdueDeliveries(
        this.settings.graceMs,
        this.settings.batchMax,
      );
      if (overdue.length === 0) return 0;
      const states = await Promise.all(
        overdue.map((delivery) => this.queue.getJobState(webhookJobId(delivery))),
      );
      const ended: DeliveryKey[] = [];
      const alive: DeliveryKey[] = [];
      const lost: OwedDelivery[] = [];
      overdue.forEach((delivery, index) => {
        const state = states[index] ?? 'unknown';
        if (ENDED_JOB_STATES.has(state)) ended.push(delivery);
        else if (state !== 'unknown') alive.push(delivery);
        // Attempts used up (the schedule was shortened since): nothing left to make.
        else if (delivery.attemptsMade >= this.attemptsMax) ended.push(delivery);
        else lost.push(delivery);
      });
      if (lost.length > 0) {
        await this.queue.addBulk(lost.map((delivery) => this.#jobOf(delivery)));
        await this.confirmAdded();
      }
      await operations.settleOwedDeliveries(ended, [...alive, ...lost], this.settings.recheckMs);
      added = lost.length;
      return overdue.length;
    });
    if (added > 0) {
      this.#requeued += added;
      this.log.warn(
        { requeued: added },
        'webhook deliveries whose jobs Redis had lost were queued again',
      );
    }
    return looked;
  }

  /** The job of a delivery added again: the same id, the attempts left, the count carried. */
  #jobOf(delivery: OwedDelivery): Parameters<Queue<WebhookJob>['addBulk']>[0][number] {
    const data: WebhookJob = {
      eventId: delivery.eventId,
      endpointId: delivery.endpointId,
      attemptsBefore: delivery.attemptsMade,
    };
    return {
      name: delivery.eventType,
      data,
      opts: { jobId: webhookJobId(data), attempts: this.attemptsMax - delivery.attemptsMade },
    };
  }
}
