import type { Queue } from 'bullmq';
import type { Store } from '../store/store.js';
import { PollingLoop, type LoopLog } from './polling-loop.js';
import { webhookJobId, type WebhookJob } from './queues.js';

export interface RelayOptions {
  /** Events claimed per round; also bounds a round's jobs (times 100 endpoints at most). */
  readonly batchMax: number;
  /** The wait after a round that found less than a full batch. */
  readonly idleMs: number;
}

export const DEFAULT_RELAY_OPTIONS: RelayOptions = { batchMax: 200, idleMs: 100 };

/**
 * The outbox relay (contract section 13). One round is one database transaction: claim up to
 * `batchMax` committed, unrelayed events and take them off the relay's queue (FOR UPDATE SKIP
 * LOCKED, so any number of relays run side by side without sharing an event), add one
 * delivery job per (event, subscribed endpoint), commit.
 *
 * Failure cases, each safe:
 * - Redis down: the add fails, the transaction rolls back, the events wait in the outbox.
 * - A crash after the add and before the commit: the events are claimed again and the jobs
 *   added again under the same ids, which BullMQ ignores (queues.ts, webhookJobId).
 * - A crash after the commit: the jobs are in Redis; nothing is lost or repeated.
 * - A Redis Cluster master killed after the add: `confirmAdded` (queues.ts, confirmReplicated)
 *   waits for a replica to have the jobs before the commit, or rolls the round back.
 * - Redis losing the jobs after the commit (a restart without persistence, a failover that
 *   lost writes): each delivery is a row of webhook_deliveries_owed, written in the round's
 *   transaction, and the re-queue loop (delivery-requeue.ts) adds its job again.
 */
export class OutboxRelay {
  readonly #loop: PollingLoop;
  #relayed = 0;

  constructor(
    private readonly store: Store,
    private readonly queue: Queue<WebhookJob>,
    log: LoopLog,
    private readonly options: RelayOptions = DEFAULT_RELAY_OPTIONS,
    /** Resolves once the jobs added are safe from a failover; the default: at once. */
    private readonly confirmAdded: () => Promise<void> = () => Promise.resolve(),
  ) {
    this.#loop = new PollingLoop(
      'outbox relay',
      async () => (await this.relayOnce()) === options.batchMax,
      options.idleMs,
      log,
    );
  }

  /** Events relayed by this relay, and rounds that failed: for tests and metrics. */
  get stats(): { readonly relayed: number; readonly failedRounds: number } {
    return { relayed: this.#relayed, failedRounds: this.#loop.failedRounds };
  }

  start(): void {
    this.#loop.start();
  }

  /** Finishes the round in progress, then stops. */
  stop(): Promise<void> {
    return this.#loop.stop();
  }

  /** One round; returns how many events it relayed. */
  async relayOnce(): Promise<number> {
    const relayed = await this.store.transaction(async (operations) => {
      const events = await operations.relayEvents(this.options.batchMax);
      if (events.length === 0) return 0;
      const subscribed = await operations.subscribedEndpoints(events);
      const jobs = events.flatMap((event) =>
        (subscribed.get(event.id) ?? []).map((endpointId) => {
          const data = { eventId: event.id, endpointId };
          return { name: event.type, data, opts: { jobId: webhookJobId(data) } };
        }),
      );
      if (jobs.length > 0) {
        // What is owed, in the claim's transaction: a job Redis loses later is added again
        // from these rows (delivery-requeue.ts). Written before the add, so that a round
        // whose add fails has written nothing either.
        await operations.oweDeliveries(jobs.map((job) => job.data));
        await this.queue.addBulk(jobs);
        await this.confirmAdded();
      }
      return events.length;
    });
    this.#relayed += relayed;
    return relayed;
  }
}
