import { CompiledPolicyCache, SpendgateError, type TemplateLibrary } from '../core/index.js';
import { builtinRuleLibrary } from '../rule-library/load.js';
import { AuthorizeBatcher } from './authorize-lanes.js';
import { bindOperations } from './bind.js';
import type { StoreContext } from './context.js';
import { ensureSystemAccounts } from './ledger.js';
import { migrate } from './migrations/runner.js';
import { authenticateApiKey } from './ops/accounts.js';
import { runBacktest } from './ops/backtests.js';
import { listExpiredHolds } from './ops/authorizations.js';
import {
  authorizeBatch,
  cardVaultsOf,
  isUniqueViolation,
  type AuthorizeRequest,
} from './ops/decide-and-record.js';
import { readOutboxBacklog } from './ops/events.js';
import {
  beginIdempotent,
  saveIdempotent,
  type IdempotentRequest,
  type StoredResponse,
} from './ops/idempotency.js';
import { rewrapMasterKeySecrets } from './ops/master-key-rotation.js';
import { deliveryTarget, recordDeliveryAttempt } from './ops/webhook-deliveries.js';
import type { Store, StoreOperations } from './port/index.js';
import { Keyring } from './secrets/index.js';
import type { SqlClient } from './sql/client.js';
import { runTransaction } from './sql/transaction.js';

export * from './port/index.js';

/**
 * The store with the SQL client it runs on, for whoever opened it: the CLI's own checks and
 * the tests' inspections. The layers above (http, workers) are handed `Store`, which has none.
 */
export interface OpenedStore extends Store {
  readonly client: SqlClient;
}

export interface StoreOptions {
  readonly client: SqlClient;
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
  /**
   * Authorization batches in flight at once (each holds a connection). Default 2: one batch
   * fills while the other commits, and fewer, larger batches share each transaction's cost
   * (measured by bench/store.bench.ts: 2 beat 4 and 8 under 64 concurrent callers).
   */
  readonly authorizeBatchesMax?: number;
  /** Authorizations waiting for a batch at most. Default 10,000. */
  readonly authorizeQueueMax?: number;
}

/** Migrates the database, makes sure the system accounts exist, and returns the store. */
export async function openStore(options: StoreOptions): Promise<OpenedStore> {
  await migrate(options.client);
  await options.client.transaction(ensureSystemAccounts);
  const ctx = contextOf(options);
  const run = <T>(work: (operations: StoreOperations) => Promise<T>): Promise<T> =>
    runTransaction(ctx.client, (tx) => work(bindOperations(ctx, tx)));
  const single = perCallOperations(ctx, run);
  // Several servers may share one store (tests, embedding services): each observes every batch.
  const batchObservers = new Set<(size: number) => void>();
  const batcher = createAuthorizeBatcher(ctx, options, batchObservers);

  return {
    ...single,
    // One statement, read only: run on the pool without BEGIN and COMMIT, since every request
    // pays for it (two round trips fewer, measured by bench/http.bench.ts).
    authenticateApiKey: (key) => authenticateApiKey(ctx, ctx.client, key),
    // The same for the two statements of each webhook delivery.
    deliveryTarget: (eventId, endpointId) => deliveryTarget(ctx, ctx.client, eventId, endpointId),
    recordDeliveryAttempt: (attempt) => recordDeliveryAttempt(ctx, ctx.client, attempt),
    client: options.client,
    authorize: (scope, input, budget) =>
      batcher.submit({ scope, input, ...(budget === undefined ? {} : { budget }) }),
    transaction: run,
    authorizeStats: () => ({ ...batcher.stats }),
    observeAuthorizeBatches(observer) {
      batchObservers.add(observer);
      return () => batchObservers.delete(observer);
    },
    idempotent: (scope, request, work, keepRefusal) =>
      runIdempotent(ctx, scope, request, work, keepRefusal),
    ping: async () => {
      await ctx.client.query('SELECT 1');
    },
    outboxBacklog: (pendingCountMax) => readOutboxBacklog(ctx.client, pendingCountMax, ctx.clock()),
    expireHolds: (ageMsMax, batchMax) => expireOldHolds(ctx, run, ageMsMax, batchMax),
    rewrapMasterKeySecrets: (rewrapOptions) => rewrapMasterKeySecrets(ctx, rewrapOptions),
    runBacktest: (backtestId, runOptions) => runBacktest(ctx, backtestId, runOptions),
    ruleTemplates: () => ctx.templates,
    close: () => options.client.close(),
  };
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
  };
}

/** Each operation in a transaction of its own: the same names, wrapped one by one. */
function perCallOperations(ctx: StoreContext, run: Store['transaction']): StoreOperations {
  const perCall = {} as Record<keyof StoreOperations, unknown>;
  for (const name of Object.keys(bindOperations(ctx, ctx.client)) as (keyof StoreOperations)[]) {
    perCall[name] = (...args: unknown[]) =>
      run((operations) => (operations[name] as (...inner: unknown[]) => Promise<unknown>)(...args));
  }
  return perCall as StoreOperations;
}

// The authorize path's statements are fixed texts over parameter arrays: generic plans. Its
// first statements are reads, so BEGIN goes out with them.
const authorizeTransaction = { genericPlans: true, pipelineBegin: true } as const;

/** Authorizations gathered into batches, a transaction each (authorize-lanes.ts). */
function createAuthorizeBatcher(
  ctx: StoreContext,
  options: StoreOptions,
  batchObservers: ReadonlySet<(size: number) => void>,
): AuthorizeBatcher {
  // A request alone, once more after a unique-index race: the retry finds the first decision.
  const authorizeAlone = async (request: AuthorizeRequest) => {
    for (let attempt = 1; ; attempt++) {
      try {
        return await runTransaction(
          ctx.client,
          (tx) => bindOperations(ctx, tx).authorize(request.scope, request.input, request.budget),
          authorizeTransaction,
        );
      } catch (error) {
        if (!isUniqueViolation(error) || attempt >= 2) throw error;
      }
    }
  };
  return new AuthorizeBatcher(
    (requests) =>
      runTransaction(
        ctx.client,
        (tx) => authorizeBatch(ctx, tx, requests, { commit: true }),
        authorizeTransaction,
      ),
    authorizeAlone,
    {
      batchesMax: options.authorizeBatchesMax ?? 2,
      queueMax: options.authorizeQueueMax ?? 10_000,
      vaultOfCard: cardVaultsOf(ctx),
      onBatch: (size) => {
        for (const observe of batchObservers) observe(size);
      },
    },
  );
}

/** Store.idempotent: the effect in a savepoint, so that a kept refusal is stored without it. */
async function runIdempotent(
  ctx: StoreContext,
  scope: Parameters<Store['idempotent']>[0],
  request: IdempotentRequest,
  work: (operations: StoreOperations) => Promise<StoredResponse>,
  keepRefusal: (error: SpendgateError) => StoredResponse | null,
): ReturnType<Store['idempotent']> {
  return runTransaction(ctx.client, async (tx) => {
    const stored = await beginIdempotent(ctx, tx, scope, request);
    if (stored !== null) return { replayed: true, response: stored };
    await tx.exec('SAVEPOINT idempotent_effect');
    let response: StoredResponse;
    try {
      response = await work(bindOperations(ctx, tx));
    } catch (error) {
      const kept = error instanceof SpendgateError ? keepRefusal(error) : null;
      if (kept === null) throw error;
      await tx.exec('ROLLBACK TO SAVEPOINT idempotent_effect');
      response = kept;
    }
    await saveIdempotent(ctx, tx, scope, request, response);
    return { replayed: false, response };
  });
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
