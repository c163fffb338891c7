import { assert, SpendgateError, type Scope } from '../core/index.js';
import { idTimePrefix } from '../ids.js';
import type { OutboxEvent, Store } from '../store/store.js';

/*
 * The live feed of decisions (GET /v1/events/stream, the console's Live page): one bounded
 * poll of the outbox per process, shared by every subscriber, never a query per subscriber.
 * The poll runs only while someone listens, and reads only the events of the accounts and
 * modes that have a subscriber. Each tick reads the events committed since
 * `lateMs` ago (a batch's events carry its decision time and commit a moment later: the
 * authorize budget is 1.5 s, far below the 5 s default) and hands each id not handed yet to
 * the subscribers of its account and mode.
 */

/** The event types the feed carries. */
export const FEED_EVENT_TYPES = ['authorization.approved', 'authorization.declined'] as const;

export interface EventHubOptions {
  /** Between two polls of the outbox while anyone listens. */
  readonly pollMs: number;
  /** How far back each poll reads, for events whose transaction commits late. */
  readonly lateMs: number;
  /**
   * Subscribers of this process (at most 1,000, the store's bound of accounts and modes per
   * read), and of one account and mode.
   */
  readonly subscribersMax: number;
  readonly subscribersPerAccountMax: number;
  /** Rows per read, and reads per tick (a burst past both waits for the next tick). */
  readonly rowsPerReadMax: number;
  readonly readsPerTickMax: number;
  /** The wall clock, epoch milliseconds. */
  readonly clock: () => number;
}

export const EVENT_HUB_DEFAULTS: EventHubOptions = {
  pollMs: 250,
  lateMs: 5_000,
  subscribersMax: 1_000,
  subscribersPerAccountMax: 10,
  rowsPerReadMax: 500,
  readsPerTickMax: 10,
  clock: Date.now,
};

/** Ids handed on, remembered for `lateMs`; bounded whatever the rate of events. */
const SEEN_IDS_MAX = 100_000;

export interface Subscriber {
  /** Called with each event of the subscriber's account and mode, in id order per tick. */
  readonly send: (event: OutboxEvent) => void;
}

export class EventHub {
  readonly #options: EventHubOptions;
  readonly #store: Store;
  /** Subscribers by `${accountId}/${mode}`, with that account and mode. */
  readonly #byAccount = new Map<string, { scope: Scope; subscribers: Set<Subscriber> }>();
  #subscriberCount = 0;
  /** Ids already handed on, in the order first seen (a Map keeps insertion order). */
  readonly #seen = new Map<string, true>();
  /** The first poll reads no earlier than this: a new subscriber sees only what comes. */
  #startMs = 0;
  #timer: NodeJS.Timeout | null = null;
  #polling = false;
  #closed = false;

  constructor(store: Store, options: Partial<EventHubOptions> = {}) {
    this.#store = store;
    this.#options = { ...EVENT_HUB_DEFAULTS, ...options };
    assert(this.#options.pollMs > 0 && this.#options.lateMs >= 0, 'positive intervals');
    assert(this.#options.subscribersMax <= 1_000, "within the store's bound of scopes per read");
  }

  /** Subscribers now, for tests and metrics. */
  get subscriberCount(): number {
    return this.#subscriberCount;
  }

  /**
   * Adds a subscriber for `scope`'s events; returns its removal. Refuses with
   * `service_unavailable` past either bound (the client may try again later).
   */
  subscribe(scope: Scope, subscriber: Subscriber): () => void {
    if (this.#closed) throw new SpendgateError('service_unavailable', 'The server is stopping.');
    const key = `${scope.accountId}/${scope.mode}`;
    const group = this.#byAccount.get(key) ?? {
      scope: { accountId: scope.accountId, mode: scope.mode },
      subscribers: new Set<Subscriber>(),
    };
    if (
      this.#subscriberCount >= this.#options.subscribersMax ||
      group.subscribers.size >= this.#options.subscribersPerAccountMax
    ) {
      throw new SpendgateError(
        'service_unavailable',
        'Too many live streams are open; close one or try again later.',
      );
    }
    group.subscribers.add(subscriber);
    this.#byAccount.set(key, group);
    this.#subscriberCount += 1;
    if (this.#timer === null) this.#start();
    let removed = false;
    return () => {
      if (removed) return;
      removed = true;
      group.subscribers.delete(subscriber);
      if (group.subscribers.size === 0) this.#byAccount.delete(key);
      this.#subscriberCount -= 1;
      assert(this.#subscriberCount >= 0, 'never more removals than subscriptions');
      if (this.#subscriberCount === 0) this.#stop();
    };
  }

  /** Stops polling; later subscriptions are refused. */
  close(): void {
    this.#closed = true;
    this.#stop();
  }

  #start(): void {
    this.#startMs = this.#options.clock();
    this.#seen.clear();
    this.#timer = setInterval(() => void this.poll(), this.#options.pollMs);
    // A process with only a stream open may still exit when asked to.
    this.#timer.unref();
  }

  #stop(): void {
    if (this.#timer !== null) clearInterval(this.#timer);
    this.#timer = null;
  }

  /**
   * One poll, the timer's each tick (and the tests'): a few bounded reads for every subscriber
   * at once, each event handed on once. A poll while one runs does nothing.
   */
  async poll(): Promise<void> {
    if (this.#polling) return;
    this.#polling = true;
    try {
      const fromMs = Math.max(this.#startMs, this.#options.clock() - this.#options.lateMs);
      let after = idTimePrefix('event', fromMs);
      this.#forgetBefore(after);
      const scopes = [...this.#byAccount.values()].map((group) => group.scope);
      if (scopes.length === 0) return;
      for (let read = 0; read < this.#options.readsPerTickMax; read += 1) {
        const events = await this.#store.eventsAfter(
          after,
          FEED_EVENT_TYPES,
          scopes,
          this.#options.rowsPerReadMax,
        );
        for (const event of events) this.#handOn(event);
        const last = events.at(-1);
        if (last === undefined || events.length < this.#options.rowsPerReadMax) break;
        after = last.id;
      }
    } catch {
      // The database is away: the next tick tries again; the streams stay open meanwhile.
    } finally {
      this.#polling = false;
    }
  }

  #handOn(event: OutboxEvent): void {
    if (this.#seen.has(event.id)) return;
    this.#seen.set(event.id, true);
    if (this.#seen.size > SEEN_IDS_MAX) {
      const oldest = this.#seen.keys().next().value;
      if (oldest !== undefined) this.#seen.delete(oldest);
    }
    const group = this.#byAccount.get(`${event.accountId}/${event.mode}`);
    if (group === undefined) return;
    for (const subscriber of group.subscribers) subscriber.send(event);
  }

  /** Ids older than the read's start are never read again: forgotten. */
  #forgetBefore(prefix: string): void {
    for (const id of this.#seen.keys()) {
      if (id >= prefix) break;
      this.#seen.delete(id);
    }
  }
}
