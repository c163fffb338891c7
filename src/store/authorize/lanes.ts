import {
  assert,
  InvariantError,
  SpendgateError,
  type AuthorizationOutcome,
} from '../../core/index.js';
import type { RecentMap } from '../recent-map.js';
import { AUTHORIZE_BATCH_MAX, cardKey, type AuthorizeRequest } from './batch.js';

/** How the batcher runs: its bounds, its observer and where it learns each card's vault. */
export interface BatcherOptions {
  /** Batches in flight at once; each holds one database connection. */
  readonly batchesMax: number;
  /**
   * How long a batch runs before the next lane opens beside it; absent or 0: every lane opens
   * at once. A lane past the first is a spare, for when a batch is held up (a lock another
   * process holds, a slow statement or commit): each batch in flight this long opens one
   * more, up to `batchesMax`. Why not all at once: two lanes halve the batches (lanes never
   * share a vault), and each batch has a fixed cost (its round trips, a commit); on the spread
   * bench one lane cost 305-308 us of CPU per authorization (Node and PostgreSQL) against
   * 365-372 for two, and answered more a second with a lower p99 (docs/performance.md, "One
   * lane, and a spare").
   */
  readonly spareLaneAfterMs?: number;
  /** Requests waiting at most; past it, a request is refused with service_unavailable. */
  readonly queueMax: number;
  /**
   * Sees each batch's size as it starts (the server's histogram). Called once per batch, not
   * per request; it must be cheap, and what it throws is dropped (below).
   */
  readonly onBatch?: (size: number) => void;
  /**
   * Whether a batch of one that failed with `error` runs again (the store's answer: a loss of
   * the race to the networkTransactionId's unique index). Any other failure of a lone request
   * is its caller's at once. Absent: none runs again.
   */
  readonly runsAgainAlone?: (error: unknown) => boolean;
  /**
   * The vault of each card, by cardKey: the engine passes the memory its batches fill from
   * their locks (AuthorizeContext.cardVaults, memory.ts), so there is one per store and one
   * bound; the batcher adds what the outcomes show.
   */
  readonly vaultOfCard: RecentMap<string>;
}

interface Waiting {
  readonly request: AuthorizeRequest;
  readonly resolve: (outcome: AuthorizationOutcome) => void;
  readonly reject: (error: unknown) => void;
}

/** Waiting requests looked at per batch formed: bounds the work of one pump. */
const QUEUE_SCAN_MAX = 1024;
/** A spare lane's wait, at most: past a minute the bound is a mistake, not a setting. */
const SPARE_LANE_AFTER_MS_MAX = 60_000;

const cardKeyOf = (request: AuthorizeRequest): string =>
  cardKey(request.input.cardId, request.scope.accountId, request.scope.mode);

/**
 * Gathers concurrent authorizations into batches (the engine decides and records a batch in
 * one database transaction: one-trip.ts or two-trips.ts). A request starts a batch at once
 * while a lane is open; otherwise it waits in the queue and joins the next batch when one ends
 * (no timer gathers requests). The first lane is always open; each further one, up to
 * `batchesMax`, opens beside a batch in flight for `spareLaneAfterMs` (0: all are open), woken
 * by one timer that is armed only while requests wait and a lane could still open. Under light load every batch
 * holds one request and nothing waits; under heavy load batches fill, and the cost of each
 * transaction is shared.
 *
 * Lanes never share a vault. A batch locks every vault it touches until it commits, so two
 * batches with one vault in common run one after the other in the database whatever their
 * number: with random traffic over a few hundred vaults, two batches of 30 nearly always
 * share one, and a second lane only waited on the first's locks. So a request whose vault a
 * running batch holds stays in the queue (it would have waited for that lock anyway) and the
 * free lane takes requests for other vaults. The vault of a card is what the batches' locks
 * found and the outcomes show (`vaultOfCard`: a card never changes vault); a card not seen yet
 * may join any batch, which is only slower, never wrong: the database's locks decide, not this
 * hint.
 */
export class AuthorizeBatcher {
  #queue: Waiting[] = [];
  /** When each batch in flight started (performance.now()), oldest first: one per batch. */
  readonly #startedAtMs: number[] = [];
  /** The spare lane's wait (options.spareLaneAfterMs); 0: every lane opens at once. */
  readonly #spareLaneAfterMs: number;
  /** The wake-up that opens a spare lane once a batch has run long enough; one at most. */
  #spareTimer: NodeJS.Timeout | undefined;
  readonly #vaultOfCard: RecentMap<string>;
  /** Vaults a running batch holds (or will lock): the lanes' partition. */
  readonly #busyVaults = new Set<string>();
  /**
   * Batches run, and batches that failed and fell back to one request at a time. The fallback
   * keeps every answer right, so only this count shows a batch path that keeps failing (a
   * constraint the in-memory decision missed): tests hold it at zero.
   */
  readonly stats = { batches: 0, fallbacks: 0 };

  constructor(
    private readonly runBatch: (
      requests: readonly AuthorizeRequest[],
    ) => Promise<AuthorizationOutcome[]>,
    private readonly runAlone: (request: AuthorizeRequest) => Promise<AuthorizationOutcome>,
    private readonly options: BatcherOptions,
  ) {
    assert(
      Number.isSafeInteger(options.batchesMax) && options.batchesMax >= 1,
      'at least one batch may run',
    );
    assert(
      Number.isSafeInteger(options.queueMax) && options.queueMax >= 1,
      'at least one request may wait',
    );
    this.#spareLaneAfterMs = options.spareLaneAfterMs ?? 0;
    assert(
      Number.isFinite(this.#spareLaneAfterMs) &&
        this.#spareLaneAfterMs >= 0 &&
        this.#spareLaneAfterMs <= SPARE_LANE_AFTER_MS_MAX,
      'a spare lane waits a bounded time',
    );
    this.#vaultOfCard = options.vaultOfCard;
  }

  submit(request: AuthorizeRequest): Promise<AuthorizationOutcome> {
    return new Promise((resolve, reject) => {
      if (this.#queue.length >= this.options.queueMax) {
        reject(
          new SpendgateError(
            'service_unavailable',
            'Too many authorizations are waiting; retry shortly.',
          ),
        );
        return;
      }
      this.#queue.push({ request, resolve, reject });
      this.#pump();
    });
  }

  #pump(): void {
    while (this.#startedAtMs.length < this.#lanesOpen() && this.#queue.length > 0) {
      const { batch, vaults } = this.#take();
      // Every waiting request (within the scan) is for a vault a running batch holds: the
      // batch that ends first pumps again.
      if (batch.length === 0) return;
      for (const vault of vaults) this.#busyVaults.add(vault);
      const startedAtMs = performance.now();
      this.#startedAtMs.push(startedAtMs);
      void this.#run(batch).finally(() => {
        for (const vault of vaults) this.#busyVaults.delete(vault);
        this.#startedAtMs.splice(this.#startedAtMs.indexOf(startedAtMs), 1);
        this.#pump();
      });
    }
    this.#armSpareLane();
  }

  /** Lanes open now: the first, and one more for each batch in flight past the spare's wait. */
  #lanesOpen(): number {
    if (this.#spareLaneAfterMs === 0) return this.options.batchesMax;
    const heldSinceMs = performance.now() - this.#spareLaneAfterMs;
    let held = 0;
    for (const startedAtMs of this.#startedAtMs) if (startedAtMs <= heldSinceMs) held += 1;
    return Math.min(this.options.batchesMax, 1 + held);
  }

  /**
   * Requests wait while a lane could still open: wake when the oldest batch not yet past the
   * spare's wait gets there, and pump again. No timer while nothing waits or no lane is left.
   */
  #armSpareLane(): void {
    if (this.#spareTimer !== undefined || this.#spareLaneAfterMs === 0) return;
    if (this.#queue.length === 0 || this.#startedAtMs.length >= this.options.batchesMax) return;
    const nowMs = performance.now();
    // Oldest first, so the first deadline still ahead is the nearest.
    const deadlineMs = this.#startedAtMs
      .map((startedAtMs) => startedAtMs + this.#spareLaneAfterMs)
      .find((atMs) => atMs > nowMs);
    if (deadlineMs === undefined) return;
    this.#spareTimer = setTimeout(
      () => {
        this.#spareTimer = undefined;
        this.#pump();
      },
      Math.ceil(deadlineMs - nowMs),
    );
    // A batch in flight keeps the process alive; this wake-up alone must not.
    this.#spareTimer.unref();
  }

  /** The next batch, in queue order, of requests whose vaults no running batch holds. */
  #take(): { batch: Waiting[]; vaults: Set<string> } {
    const batch: Waiting[] = [];
    const vaults = new Set<string>();
    const kept: Waiting[] = [];
    let scanned = 0;
    for (const waiting of this.#queue) {
      if (batch.length === AUTHORIZE_BATCH_MAX || scanned === QUEUE_SCAN_MAX) {
        kept.push(waiting);
        continue;
      }
      scanned += 1;
      const vault = this.#vaultOfCard.get(cardKeyOf(waiting.request));
      if (vault !== undefined && this.#busyVaults.has(vault)) {
        kept.push(waiting);
        continue;
      }
      if (vault !== undefined) vaults.add(vault);
      batch.push(waiting);
    }
    this.#queue = kept;
    assert(batch.length <= AUTHORIZE_BATCH_MAX, 'a batch holds at most AUTHORIZE_BATCH_MAX');
    return { batch, vaults };
  }

  #learn(request: AuthorizeRequest, outcome: AuthorizationOutcome): void {
    const vault = outcome.transaction?.vaultId;
    if (vault !== undefined) this.#vaultOfCard.set(cardKeyOf(request), vault);
  }

  async #run(batch: readonly Waiting[]): Promise<void> {
    this.stats.batches += 1;
    try {
      this.options.onBatch?.(batch.length);
    } catch {
      // A metric must never strand a batch's callers: #run's rejection would reach no one.
    }
    try {
      const outcomes = await this.runBatch(batch.map((waiting) => waiting.request));
      batch.forEach((waiting, index) => {
        const outcome = outcomes[index];
        if (outcome === undefined) {
          // A bug in the batch, not this request's: it fails as a bug (a 500), never as a decision.
          waiting.reject(new InvariantError('a batch answers one outcome per request'));
          return;
        }
        this.#learn(waiting.request, outcome);
        waiting.resolve(outcome);
      });
    } catch (error) {
      // A batch of one runs again only after losing the race to the unique index: a first
      // decline takes no vault lock, so the same callback at another process races this one,
      // and the loser's second run answers the winner's record (issue 37), never a stand-in.
      if (batch.length === 1 && this.options.runsAgainAlone?.(error) !== true) {
        batch[0]?.reject(error);
        return;
      }
      // One request's failure (a duplicate that raced another batch, a bug) must not fail the
      // others: each runs again on its own, and only its own failure reaches its caller.
      this.stats.fallbacks += 1;
      await Promise.all(
        batch.map((waiting) =>
          this.runAlone(waiting.request).then(waiting.resolve, waiting.reject),
        ),
      );
    }
  }
}
