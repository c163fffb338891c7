import type { Queue } from 'bullmq';
import type { Store } from '../store/store.js';
import { webhookJobId, type WebhookJob } from './queues.js';

/**
 * The outbox relay (contract section 13). One round is one database transaction: claim up to
 * `batchMax` committed, unrelayed events (FOR UPDATE SKIP LOCKED, so any number of relays run
 * side by side without sharing an event), add one delivery job per (event, subscribed
 * endpoint), mark the events relayed, commit.
 *
 * Failure cases, each safe:
 * - Redis down: the add fails, the transaction rolls back, the events wait in the outbox.
 * - A crash after the add and before the commit: the events are claimed again and the jobs
 *   added again under the same ids, which BullMQ ignores (queues.ts, webhookJobId).
 * - A crash after the commit: the jobs are in Redis; nothing is lost or repeated.
 */
export interface RelayOptions {
  /** Events claimed per round; also bounds a round's jobs (times 100 endpoints at most). */
  readonly batchMax: number;
  /** The wait after a round that found less than a full batch. */
  readonly idleMs: number;
}

export const DEFAULT_RELAY_OPTIONS: RelayOptions = { batchMax: 200, idleMs: 100 };
/** The longest wait between rounds after failures (Redis or the database down). */
const FAILURE_WAIT_MS_MAX = 5_000;

export interface RelayLog {
  warn(object: object, message: string): void;
  info(message: string): void;
}

export class OutboxRelay {
  #stopping = false;
  #running: Promise<void> | null = null;
  #wake: (() => void) | null = null;
  /** Events relayed by this relay, and rounds that failed: for tests and metrics. */
  readonly stats = { relayed: 0, failedRounds: 0 };

  constructor(
    private readonly store: Store,
    private readonly queue: Queue<WebhookJob>,
    private readonly log: RelayLog,
    private readonly options: RelayOptions = DEFAULT_RELAY_OPTIONS,
  ) {}

  start(): void {
    if (this.#running === null) this.#running = this.#loop();
  }

  /** Finishes the round in progress, then stops. */
  async stop(): Promise<void> {
    this.#stopping = true;
    this.#wake?.();
    await this.#running;
    this.#running = null;
  }

  /** One round; returns how many events it relayed. */
  async relayOnce(): Promise<number> {
    const relayed = await this.store.transaction(async (operations) => {
      const events = await operations.claimEvents(this.options.batchMax);
      if (events.length === 0) return 0;
      const subscribed = await operations.subscribedEndpoints(events);
      const jobs = events.flatMap((event) =>
        (subscribed.get(event.id) ?? []).map((endpointId) => {
          const data = { eventId: event.id, endpointId };
          return { name: event.type, data, opts: { jobId: webhookJobId(data) } };
        }),
      );
      if (jobs.length > 0) await this.queue.addBulk(jobs);
      await operations.markRelayed(events.map((event) => event.id));
      return events.length;
    });
    this.stats.relayed += relayed;
    return relayed;
  }

  async #loop(): Promise<void> {
    let failures = 0;
    while (!this.#stopping) {
      let waitMs: number;
      try {
        const relayed = await this.relayOnce();
        if (failures > 0) this.log.info('outbox relay: relaying again');
        failures = 0;
        waitMs = relayed < this.options.batchMax ? this.options.idleMs : 0;
      } catch (error) {
        this.stats.failedRounds += 1;
        failures += 1;
        // Loud once, then quiet while it lasts: the events are safe in the outbox.
        if (failures === 1) this.log.warn({ err: error }, 'outbox relay: a round failed; retrying');
        waitMs = Math.min(this.options.idleMs * 2 ** failures, FAILURE_WAIT_MS_MAX);
      }
      if (waitMs > 0 && !this.#stopping) await this.#sleep(waitMs);
    }
  }

  #sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.#wake = null;
        resolve();
      }, ms);
      this.#wake = () => {
        clearTimeout(timer);
        this.#wake = null;
        resolve();
      };
    });
  }
}
