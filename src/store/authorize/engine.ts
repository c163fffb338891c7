import { assert, type AuthorizationOutcome, type Scope } from '../../core/index.js';
import type { StoreContext } from '../context.js';
import type { ReplicaReads } from '../replica-reads.js';
import { spendDayOf } from '../spend.js';
import type { SqlQueryable, SqlTransaction } from '../sql/client.js';
import { runTransaction } from '../sql/transaction.js';
import type { MessageSubject } from '../port/index.js';
import {
  cardKey,
  type AuthorizeBudget,
  type AuthorizeInput,
  type AuthorizeRequest,
} from './batch.js';
import { KnownState } from './known-state.js';
import { AuthorizeBatcher } from './lanes.js';
import { authorizeContextOf, type AuthorizeContext } from './memory.js';
import { authorizeOnKnownState, StaleKnownState } from './one-trip.js';
import { batchTraceOf, tracedTransaction, type BatchTrace, type RequestTrace } from './trace.js';
import { authorizeBatch } from './two-trips.js';
import { isUniqueViolation } from './write.js';

/** How the store's authorizations run (StoreOptions carries these). */
export interface AuthorizeOptions {
  /**
   * Authorization batches in flight at once (each holds a connection). Default 2: one lane,
   * and a spare that opens beside a batch held up for `authorizeSpareLaneAfterMs`
   * (lanes.ts); fewer, larger batches share each transaction's cost.
   */
  readonly authorizeBatchesMax?: number;
  /**
   * How long a batch runs before a spare lane opens beside it. Default 25 ms: about three times
   * a batch's time under the spread bench's saturating load (32 authorizations in about 8 ms:
   * the answers' p50 is 15.6 ms, a wait for the batch before and then its own), so a batch
   * past it is held up; and well below the stand-in budget. 0: every lane opens at once.
   */
  readonly authorizeSpareLaneAfterMs?: number;
  /** Authorizations waiting for a batch at most. Default 10,000. */
  readonly authorizeQueueMax?: number;
  /**
   * Whether a batch whose cards and vaults this process has seen is decided on that state and
   * written in one round trip (one-trip.ts). Default true; false reads first, every batch (to
   * measure one against the other in one build).
   */
  readonly authorizeOnKnownState?: boolean;
}

/** authorizeSpareLaneAfterMs's default (its comment says why). */
export const AUTHORIZE_SPARE_LANE_AFTER_MS = 25;

// The authorize path's statements are fixed texts over parameter arrays: generic plans. Its
// first statements are reads, or (on known state) a write that checks on its own snapshot what
// it depends on, so BEGIN goes out with them (TransactionOptions.pipelineBegin).
const authorizeTransaction = { genericPlans: true, pipelineBegin: true } as const;

/**
 * One store's authorizations, end to end: the lanes that gather them into batches (lanes.ts),
 * each batch decided on known state in one round trip (one-trip.ts) or, failing that, locked
 * and read first (two-trips.ts); and everything the path remembers between batches, the known
 * state and the hints (memory.ts), which live as long as the engine. openStore makes one; the
 * store hands out `authorize` and the counts, nothing else of it.
 */
export class AuthorizeEngine {
  readonly #ctx: AuthorizeContext;
  readonly #replica: ReplicaReads | null;
  readonly #onKnownState: boolean;
  readonly #known = new KnownState();
  /** Several servers may share one store (tests, embedding services): each observes every batch. */
  readonly #batchObservers = new Set<(size: number) => void>();
  readonly #lanes: AuthorizeBatcher;

  /** `replica`: the commits' accounts are told to it, so their next lists see them. */
  constructor(ctx: StoreContext, options: AuthorizeOptions, replica: ReplicaReads | null) {
    this.#ctx = authorizeContextOf(ctx);
    this.#replica = replica;
    this.#onKnownState = options.authorizeOnKnownState !== false;
    this.#lanes = new AuthorizeBatcher(
      (requests) => this.#runBatch(requests),
      (request) => this.#runAlone(request),
      {
        batchesMax: options.authorizeBatchesMax ?? 2,
        spareLaneAfterMs: options.authorizeSpareLaneAfterMs ?? AUTHORIZE_SPARE_LANE_AFTER_MS,
        queueMax: options.authorizeQueueMax ?? 10_000,
        vaultOfCard: this.#ctx.cardVaults,
        runsAgainAlone: isUniqueViolation,
        onBatch: (size) => {
          for (const observe of this.#batchObservers) observe(size);
        },
      },
    );
  }

  /** Store.authorize: the request joins the next batch. */
  readonly authorize = (
    scope: Scope,
    input: AuthorizeInput,
    budget?: AuthorizeBudget,
    trace?: RequestTrace,
  ): Promise<AuthorizationOutcome> => {
    const request = { scope, input, ...(budget === undefined ? {} : { budget }) };
    return this.#lanes.submit(trace === undefined ? request : { ...request, trace });
  };

  /** One authorization in the caller's transaction `tx`, alone (Store.transaction's authorize). */
  async authorizeIn(
    tx: SqlQueryable,
    scope: Scope,
    input: AuthorizeInput,
    budget?: AuthorizeBudget,
  ): Promise<AuthorizationOutcome> {
    const [outcome] = await authorizeBatch(this.#ctx, tx, [
      { scope, input, ...(budget === undefined ? {} : { budget }) },
    ]);
    assert(outcome !== undefined, 'a batch of one has one outcome');
    return outcome;
  }

  /**
   * The vault a lifecycle message is about, when this process has seen it: the card's (from
   * the batches' locks) or the hold's (from its approval). A hint for Store.message, never
   * the last word: the message's own lock is.
   */
  vaultHintOf(subject: MessageSubject): string | undefined {
    return 'authorizationId' in subject
      ? this.#ctx.authorizationVaults.get(subject.authorizationId)
      : this.#ctx.cardVaults.get(
          cardKey(subject.cardId, subject.scope.accountId, subject.scope.mode),
        );
  }

  /** Store.authorizeStats: the lanes' batches and fallbacks, and known state's. */
  stats(): AuthorizeBatcher['stats'] & KnownState['stats'] {
    return { ...this.#lanes.stats, ...this.#known.stats };
  }

  /** Store.observeAuthorizeBatches. */
  observeBatches(observer: (size: number) => void): () => boolean {
    this.#batchObservers.add(observer);
    return () => this.#batchObservers.delete(observer);
  }

  /** A batch, in a span of its own when one of its requests is traced (trace.ts). */
  async #runBatch(requests: readonly AuthorizeRequest[]): Promise<AuthorizationOutcome[]> {
    const trace = batchTraceOf(requests);
    if (trace === undefined) return this.#notingHolds(await this.#decideBatch(requests, undefined));
    try {
      const outcomes = await this.#decideBatch(requests, trace);
      trace.end();
      return this.#notingHolds(outcomes);
    } catch (error) {
      trace.end(error);
      throw error;
    }
  }

  /** Remembers the vault of each hold a batch placed (AuthorizeContext.authorizationVaults). */
  #notingHolds(outcomes: AuthorizationOutcome[]): AuthorizationOutcome[] {
    for (const { transaction } of outcomes) {
      if (transaction?.status === 'pending') {
        this.#ctx.authorizationVaults.set(transaction.id, transaction.vaultId);
      }
    }
    return outcomes;
  }

  /** A batch in a transaction of its own: on known state if it can, else reading first. */
  async #decideBatch(
    requests: readonly AuthorizeRequest[],
    trace: BatchTrace | undefined,
  ): Promise<AuthorizationOutcome[]> {
    const outcomes =
      (this.#onKnownState ? await this.#authorizeOnKnown(requests, trace) : null) ??
      (await runTransaction(
        this.#ctx.client,
        (tx) => {
          trace?.path('locked');
          return authorizeBatch(this.#ctx, traced(tx, trace), requests, {
            commit: true,
            known: this.#known,
          });
        },
        authorizeTransaction,
      ));
    // One position read for the whole batch (replica only): its accounts' next lists see it.
    await this.#replica?.wrote(requests.map((request) => request.scope.accountId));
    return outcomes;
  }

  /**
   * A batch whose cards and vaults this process knows, decided on that and written in one round
   * trip (one-trip.ts); null when they are not all known, or when the database no longer held
   * what was known (nothing was written): the caller reads first.
   */
  async #authorizeOnKnown(
    requests: readonly AuthorizeRequest[],
    trace: BatchTrace | undefined,
  ): Promise<AuthorizationOutcome[] | null> {
    const nowMs = this.#ctx.clock();
    const spendDay = spendDayOf(nowMs);
    const batch = this.#known.recall(requests, spendDay, nowMs);
    if (batch === null) return null;
    try {
      return await runTransaction(
        this.#ctx.client,
        (tx) => {
          trace?.path('known state');
          return authorizeOnKnownState(
            traced(tx, trace),
            requests,
            batch,
            this.#known,
            spendDay,
            nowMs,
            this.#ctx.holdExpiry,
            this.#ctx.pricing,
          );
        },
        authorizeTransaction,
      );
    } catch (error) {
      if (error instanceof StaleKnownState) return null;
      throw error;
    }
  }

  /** A request alone, once more after a unique-index race: the retry finds the first decision. */
  async #runAlone(request: AuthorizeRequest): Promise<AuthorizationOutcome> {
    for (let attempt = 1; ; attempt++) {
      try {
        const outcome = await runTransaction(
          this.#ctx.client,
          (tx) => this.authorizeIn(tx, request.scope, request.input, request.budget),
          authorizeTransaction,
        );
        await this.#replica?.wrote([request.scope.accountId]);
        return outcome;
      } catch (error) {
        if (!isUniqueViolation(error) || attempt >= 2) throw error;
      }
    }
  }
}

/** `tx` as it is, or with its round trips in the batch's trace. */
function traced(tx: SqlTransaction, trace: BatchTrace | undefined): SqlTransaction {
  return trace === undefined ? tx : tracedTransaction(tx, trace);
}
