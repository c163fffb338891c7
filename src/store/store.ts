import {
  assert,
  CompiledPolicyCache,
  SpendgateError,
  type TemplateLibrary,
  type HoldExpirySettings,
  type Pricing,
} from '../core/index.js';
import { builtinRuleLibrary } from '../rule-library/load.js';
import { AuthorizeEngine, type AuthorizeOptions } from './authorize/engine.js';
import { areaBindersByOperation, bindOperations, lazyBinder } from './bind.js';
import type { StoreContext } from './context.js';
import { ensureSystemAccounts } from './ledger.js';
import { migrate } from './migrations/runner.js';
import { authenticateApiKey } from './ops/accounts.js';
import { runBacktest } from './ops/backtests.js';
import { listExpiredHolds } from './ops/authorizations.js';
import { readOutboxBacklog } from './ops/events.js';
import { readEventsAfter } from './ops/event-feed.js';
import { beginIdempotent, saveIdempotent } from './ops/idempotency.js';
import type { IdempotentRequest, StoredResponse } from './port/idempotency.js';
import { rewrapMasterKeySecrets } from './ops/master-key-rotation.js';
import { deliveryTarget, recordDeliveryAttempt } from './ops/webhook-deliveries.js';
import type { MessageSubject, Store, StoreOperations } from './port/index.js';
import { ReplicaReads, type WritePositions } from './replica-reads.js';
import { routeOf } from './replica-routes.js';
import { Keyring } from './secrets/index.js';
import type { SqlClient, SqlQueryable } from './sql/client.js';
import { runTransaction } from './sql/transaction.js';
import { SharedTransactions } from './sql/shared-transaction.js';
import { vaultKey } from './vault-lock-sql.js';
import { WRITES_WAITING_MAX, WriteGate } from './sql/write-gate.js';

export * from './port/index.js';
export { memoryWritePositions, type WritePositions } from './replica-reads.js';

/**
 * The store with the SQL client it runs on, for whoever opened it: the CLI's own checks and
 * the tests' inspections. The layers above (http, workers) are handed `Store`, which has none.
 */
export interface OpenedStore extends Store {
  readonly client: SqlClient;
  /**
   * Where the accounts' write positions are kept, shared by every process on the database
   * (serve.ts: Redis, once its prefix is known). Until given, every read that may lag reads
   * the primary. Only with a replica.
   */
  keepWritePositions(positions: WritePositions): void;
}

/** A streaming replica of the primary, for the reads that may lag (replica-reads.ts). */
export interface ReplicaOptions {
  readonly client: SqlClient;
  readonly positions?: WritePositions;
  /** After a replica error, reads skip it for this long. Default 5 s. */
  readonly retryAfterMs?: number;
}

export interface StoreOptions extends AuthorizeOptions {
  readonly client: SqlClient;
  /** How long holds live by merchant category (HOLD_EXPIRY_HOURS, _LONG_HOURS); 7 and 31 days. */
  readonly holdExpiry?: HoldExpirySettings;
  /**
   * Prices for conversions at a price (a SOL vault's card billed in USD, any EUR card): the
   * feeds' readings in memory, read in the background (src/solana/price-feeds.ts). None: every
   * such conversion is declined `rate_unavailable`.
   */
  readonly pricing?: Pricing;
  /** Wraps and encrypts; never logged. */
  readonly masterKey: Buffer;
  /**
   * Master keys that only decrypt, at most 4: the old key while a rotation re-wraps under
   * `masterKey`, or the next key before it becomes `masterKey` (docs/operations.md).
   */
  readonly decryptOnlyMasterKeys?: readonly Buffer[];
  /** Epoch milliseconds; tests pass a clock they control. */
  readonly clock?: () => number;
  readonly templates?: TemplateLibrary;
  readonly policyCacheEntriesMax?: number;
  /** DATABASE_READ_URL's replica; without it every read goes to `client`. */
  readonly replica?: ReplicaOptions;
  /**
   * Write transactions (transaction, idempotent) in PostgreSQL at once (DATABASE_WRITES_MAX;
   * sql/write-gate.ts); the rest wait in the store. Default DATABASE_WRITES_MAX_DEFAULT.
   */
  readonly writesOpenMax?: number;
}

/**
 * Store.transaction's and Store.idempotent's: BEGIN leaves with the work's first statements,
 * a round trip fewer for every write through the API (a lifecycle message is 4 where it was 5).
 * TransactionOptions.pipelineBegin asks that what runs before BEGIN's answer survive BEGIN
 * failing; here it is any work's first statements, which are safe for another reason: BEGIN
 * fails only on a connection that failed (the pool hands out connections outside any
 * transaction, and BEGIN takes nothing else that could refuse it), and then so does every
 * statement behind it on that connection.
 */
const WRITE_TRANSACTION = { pipelineBegin: true } as const;

/**
 * Lifecycle messages' shared transactions (Store.message) in flight at once, and messages in
 * one. One lane: with two and no hint of each message's vault, a batch met vaults locked by
 * the other lane's batch and sent those messages to run alone (455 of 6,300 captures in 5 s),
 * 1,241-1,381 captures a second against 1,486-1,738 with one; with the hints, two lanes kept
 * apart (none alone) but answered no more than one (1,400-1,494 against 1,548-1,635), and a
 * message whose hold another process approved has no hint. With 64 connections in a closed
 * loop, 64 lets the batch that follows a commit take everything waiting (bench:http `--only
 * capture`, docs/performance.md).
 */
const MESSAGE_LANES_MAX = 1;
const MESSAGE_MEMBERS_MAX = 64;

/** Migrates the database, makes sure the system accounts exist, and returns the store. */
export async function openStore(options: StoreOptions): Promise<OpenedStore> {
  await migrate(options.client);
  await options.client.transaction(ensureSystemAccounts);
  const ctx = contextOf(options);
  const replica = replicaReadsOf(ctx, options.replica);
  const engine = new AuthorizeEngine(ctx, options, replica);
  const bound = lazyBinder(ctx, engine);
  const run = <T>(work: (operations: StoreOperations) => Promise<T>): Promise<T> =>
    runTransaction(ctx.client, (tx) => work(bound(tx)), WRITE_TRANSACTION);
  const single = perCallOperations(ctx, engine, replica);
  const writes = new WriteGate(options.writesOpenMax);
  /** Store.transaction: one transaction through the write gate. */
  const transaction = <T>(work: (operations: StoreOperations) => Promise<T>): Promise<T> =>
    writes.run(() =>
      replica === null ? run(work) : runRecordingWrites(ctx, engine, replica, work),
    );
  const messages = sharedMessages(ctx, writes, engine, bound, transaction);

  return {
    ...single,
    // One statement, read only: run on the pool without BEGIN and COMMIT, since every request
    // pays for it (two round trips fewer, measured by bench/http.bench.ts).
    authenticateApiKey: (key) => authenticateApiKey(ctx, ctx.client, key),
    // The same for the two statements of each webhook delivery.
    deliveryTarget: (eventId, endpointId) => deliveryTarget(ctx, ctx.client, eventId, endpointId),
    recordDeliveryAttempt: (attempt) => recordDeliveryAttempt(ctx, ctx.client, attempt),
    client: options.client,
    keepWritePositions(positions) {
      replica?.keepPositionsIn(positions);
    },
    authorize: engine.authorize,
    transaction,
    // With a replica, each write notes its account's position: alone, as `transaction`.
    message: (work, subject) =>
      replica === null ? messages.run(work, subject) : transaction(work),
    authorizeStats: () => engine.stats(),
    writeStats: () => writes.stats(),
    messageStats: () => messages.stats(),
    observeAuthorizeBatches: (observer) => engine.observeBatches(observer),
    idempotent: async (scope, request, work, keepRefusal) => {
      const outcome = await writes.run(() =>
        runIdempotent(ctx, bound, scope, request, work, keepRefusal),
      );
      if (!outcome.replayed) await replica?.wrote([scope.accountId]);
      return outcome;
    },
    observeReplicaReads(observer) {
      return replica?.observe(observer) ?? (() => false);
    },
    ping: async () => {
      await ctx.client.query('SELECT 1');
    },
    outboxBacklog: (pendingCountMax) => readOutboxBacklog(ctx.client, pendingCountMax, ctx.clock()),
    // Read only, on the pool like ping: the live feed reads once per tick for every subscriber.
    eventsAfter: (afterId, types, scopes, rowsMax) =>
      readEventsAfter(ctx.client, afterId, types, scopes, rowsMax),
    expireHolds: (ageMsMax, batchMax) => expireOldHolds(ctx, run, ageMsMax, batchMax),
    rewrapMasterKeySecrets: (rewrapOptions) => rewrapMasterKeySecrets(ctx, rewrapOptions),
    runBacktest: (backtestId, runOptions) =>
      runBacktest(ctx, backtestId, runOptions, (accountId) =>
        replica === null ? Promise.resolve(ctx.client) : replica.reader(accountId),
      ),
    ruleTemplates: () => ctx.templates,
    close: async () => {
      await replica?.close();
      await options.client.close();
    },
  };
}

/**
 * Store.message's shared transactions, each through the write gate as one write; a message
 * sent to run alone runs as Store.transaction's work (`alone`).
 */
function sharedMessages(
  ctx: StoreContext,
  writes: WriteGate,
  engine: AuthorizeEngine,
  bound: (tx: SqlQueryable) => StoreOperations,
  alone: <T>(work: (operations: StoreOperations) => Promise<T>) => Promise<T>,
) {
  const shared = new SharedTransactions({
    lanesMax: MESSAGE_LANES_MAX,
    membersMax: MESSAGE_MEMBERS_MAX,
    waitingMax: WRITES_WAITING_MAX,
    runShared: (work) => writes.run(() => ctx.client.transaction(work, WRITE_TRANSACTION)),
  });
  return {
    run: <T>(
      work: (operations: StoreOperations) => Promise<T>,
      subject: MessageSubject | undefined,
    ): Promise<T> => {
      const vaultId = subject === undefined ? undefined : engine.vaultHintOf(subject);
      return shared.run(
        (tx) => work(bound(tx)),
        () => alone(work),
        vaultId === undefined ? undefined : vaultKey(vaultId),
      );
    },
    stats: () => shared.stats(),
  };
}

function replicaReadsOf(
  ctx: StoreContext,
  options: ReplicaOptions | undefined,
): ReplicaReads | null {
  if (options === undefined) return null;
  const reads = new ReplicaReads({
    primary: ctx.client,
    replica: options.client,
    // Not ctx.clock: the skip after a failure is real time, whatever time tests make up.
    ...(options.retryAfterMs === undefined ? {} : { retryAfterMs: options.retryAfterMs }),
  });
  if (options.positions !== undefined) reads.keepPositionsIn(options.positions);
  return reads;
}

/**
 * Store.transaction with a replica: the operations handed to `work` note the accounts they
 * write for, whose positions are raised once the transaction has committed.
 */
async function runRecordingWrites<T>(
  ctx: StoreContext,
  engine: AuthorizeEngine,
  replica: ReplicaReads,
  work: (operations: StoreOperations) => Promise<T>,
): Promise<T> {
  let written = new Set<string>();
  const result = await runTransaction(
    ctx.client,
    (tx) => {
      // A retried transaction starts again: only the committed attempt's accounts count.
      written = new Set<string>();
      return work(notingWrites(bindOperations(ctx, tx, engine), written));
    },
    WRITE_TRANSACTION,
  );
  await replica.wrote(written);
  return result;
}

function notingWrites(operations: StoreOperations, written: Set<string>): StoreOperations {
  const noting = {} as Record<keyof StoreOperations, unknown>;
  for (const name of Object.keys(operations) as (keyof StoreOperations)[]) {
    const route = routeOf(name);
    noting[name] = (...args: unknown[]) => {
      if (route.serve === 'write') written.add(route.accountOf(...args));
      return (operations[name] as (...inner: unknown[]) => Promise<unknown>)(...args);
    };
  }
  return noting as StoreOperations;
}

function contextOf(options: StoreOptions): StoreContext {
  return {
    client: options.client,
    clock: options.clock ?? Date.now,
    keyring: new Keyring({
      current: options.masterKey,
      decryptOnly: options.decryptOnlyMasterKeys ?? [],
    }),
    policyCache: new CompiledPolicyCache(options.policyCacheEntriesMax),
    templates: options.templates ?? builtinRuleLibrary(),
    ...(options.holdExpiry === undefined ? {} : { holdExpiry: options.holdExpiry }),
    ...(options.pricing === undefined ? {} : { pricing: options.pricing }),
  };
}

/**
 * Each operation in a transaction of its own: the same names, wrapped one by one. With a
 * replica, each is served as its route declares (replica-routes.ts): the reads that may lag
 * are routed (replica-reads.ts), and each write made for an account raises that account's
 * write position once it has committed.
 */
function perCallOperations(
  ctx: StoreContext,
  engine: AuthorizeEngine,
  replica: ReplicaReads | null,
): StoreOperations {
  const perCall = {} as Record<keyof StoreOperations, unknown>;
  const areaBinders = areaBindersByOperation(ctx, ctx.client, engine);
  const names = Object.keys(bindOperations(ctx, ctx.client, engine)) as (keyof StoreOperations)[];
  for (const name of names) {
    const bindArea = areaBinders.get(name);
    assert(bindArea !== undefined, `the operation ${name} belongs to an area`);
    const onPrimary = (...args: unknown[]) =>
      runTransaction(ctx.client, (tx) =>
        (bindArea(ctx, tx, engine)[name] as (...inner: unknown[]) => Promise<unknown>)(...args),
      );
    perCall[name] = onPrimary;
    if (replica === null) continue;
    const route = routeOf(name);
    if (route.serve === 'replica') {
      perCall[name] = (...args: unknown[]) =>
        replica.read(route.accountOf(...args), (tx) =>
          (bindArea(ctx, tx, engine)[name] as (...inner: unknown[]) => Promise<unknown>)(...args),
        );
    } else if (route.serve === 'write') {
      perCall[name] = async (...args: unknown[]) => {
        const result = await onPrimary(...args);
        await replica.wrote([route.accountOf(...args)]);
        return result;
      };
    }
  }
  return perCall as StoreOperations;
}

/** Store.idempotent: the effect in a savepoint, so that a kept refusal is stored without it. */
async function runIdempotent(
  ctx: StoreContext,
  bound: (tx: SqlQueryable) => StoreOperations,
  scope: Parameters<Store['idempotent']>[0],
  request: IdempotentRequest,
  work: (operations: StoreOperations) => Promise<StoredResponse>,
  keepRefusal: (error: SpendgateError) => StoredResponse | null,
): ReturnType<Store['idempotent']> {
  return runTransaction(
    ctx.client,
    async (tx) => {
      const stored = await beginIdempotent(ctx, tx, scope, request);
      if (stored !== null) return { replayed: true, response: stored };
      await tx.exec('SAVEPOINT idempotent_effect');
      let response: StoredResponse;
      try {
        response = await work(bound(tx));
      } catch (error) {
        const kept = error instanceof SpendgateError ? keepRefusal(error) : null;
        if (kept === null) throw error;
        await tx.exec('ROLLBACK TO SAVEPOINT idempotent_effect');
        response = kept;
      }
      await saveIdempotent(ctx, tx, scope, request, response);
      return { replayed: false, response };
    },
    WRITE_TRANSACTION,
  );
}

/** Store.expireHolds: the expired holds listed in one transaction, each reversed in its own. */
async function expireOldHolds(
  ctx: StoreContext,
  run: Store['transaction'],
  ageMsMax: number,
  batchMax = 500,
): Promise<number> {
  const holds = await runTransaction(ctx.client, (tx) =>
    listExpiredHolds(ctx, tx, ageMsMax, batchMax),
  );
  let expired = 0;
  for (const hold of holds) {
    try {
      await run((operations) => operations.reverse(hold.scope, hold.id, null, 'expired'));
      expired += 1;
    } catch (error) {
      // Captured or reversed since it was listed: nothing left to expire.
      if (!(error instanceof SpendgateError && error.code === 'transaction_not_pending'))
        throw error;
    }
  }
  return expired;
}
