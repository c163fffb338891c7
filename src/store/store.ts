import {
  assert,
  CompiledPolicyCache,
  SpendgateError,
  type Scope,
  type TemplateLibrary,
} from '../core/index.js';
import { builtinRuleLibrary } from '../rule-library/load.js';
import type { StoreContext } from './context.js';
import { ensureSystemAccounts } from './ledger.js';
import { migrate } from './migrations/runner.js';
import {
  authenticateApiKey,
  createApiKey,
  findAccountByName,
  findOrCreateAccount,
  getAccount,
  hasAnyApiKey,
  listApiKeys,
  revokeApiKey,
} from './ops/accounts.js';
import { AuthorizeBatcher } from './authorize-batcher.js';
import { capture, listExpiredHolds, reverse } from './ops/authorizations.js';
import {
  authorizeBatch,
  cardVaultsOf,
  isUniqueViolation,
  type AuthorizeBudget,
  type AuthorizeInput,
  type AuthorizeRequest,
} from './ops/authorize-batch.js';
import { createCard, revealCard, setCardStatus } from './ops/cards.js';
import { claimEvents, markRelayed } from './ops/events.js';
import {
  completeExternalTransfer,
  createExternalTransfer,
  failExternalTransfer,
} from './ops/external-transfers.js';
import {
  beginIdempotent,
  purgeIdempotencyKeys,
  saveIdempotent,
  type IdempotentRequest,
  type StoredResponse,
} from './ops/idempotency.js';
import {
  listBalanceSnapshots,
  listCards,
  listTransactions,
  listTransfers,
  listVaults,
  listWebhookDeliveries,
  type ListBalanceSnapshotsQuery,
  type ListCardsQuery,
  type ListTransactionsQuery,
  type ListTransfersQuery,
  type ListVaultsQuery,
} from './ops/lists.js';
import {
  rewrapMasterKeySecrets,
  type RewrapCount,
  type RewrapOptions,
} from './ops/master-key-rotation.js';
import { readTransactionMetadata } from './ops/metadata.js';
import {
  deletePolicy,
  getPolicy,
  setPolicy,
  simulatePolicy,
  type SimulationInput,
} from './ops/policies.js';
import { getCard, getTransaction, getTransfer } from './ops/reads.js';
import { pendingChainTransfers, recordChainSend, type ChainSend } from './ops/chain-sends.js';
import { completeSnapshotDay, snapshotDay, snapshotDaysDue } from './ops/snapshots.js';
import {
  compactVaultHoldChanges,
  holdJournalCandidates,
  purgeOutboxEvents,
  purgeSpendCounters,
  purgeWebhookDeliveries,
} from './ops/retention.js';
import {
  createSettlement,
  getSettlement,
  pendingSettlementRecords,
  settleRecord,
  type SettlementRecordInput,
} from './ops/settlements.js';
import {
  beginTwoFactor,
  disableTwoFactor,
  requireTwoFactor,
  verifyTwoFactor,
} from './ops/two-factor.js';
import { createInternalTransfer } from './ops/transfers.js';
import {
  closeVault,
  createVault,
  deposit,
  getVault,
  setVaultFrozen,
  updateVault,
  type CloseDestination,
} from './ops/vaults.js';
import {
  createWebhookEndpoint,
  deleteWebhookEndpoint,
  getWebhookEndpoint,
  listWebhookEndpoints,
  webhookSecret,
} from './ops/webhook-endpoints.js';
import {
  createTestEvent,
  deliveryTarget,
  recordDeliveryAttempt,
  subscribedEndpoints,
  type DeliveryAttempt,
} from './ops/webhook-deliveries.js';
import type { OutboxEvent } from './ops/events.js';
import { Keyring } from './secrets/index.js';
import type { SqlClient, SqlQueryable } from './sql/client.js';
import { runTransaction } from './sql/transaction.js';

/**
 * The store port. `StoreOperations` are the operations the service performs on state, each
 * bound to an open transaction (see each operation's header in ops/ for its inputs, outputs
 * and failure codes). `Store` runs each in a transaction of its own, or several in one
 * (`transaction`), or one effect with its idempotency record (`idempotent`). Implemented once
 * over the SQL port, so the pg and PGlite adapters run the same code.
 */
function bind(ctx: StoreContext, tx: SqlQueryable) {
  return {
    /** The transaction itself, for the store's own composite steps. */
    client: tx,
    findAccountByName: (name: string) => findAccountByName(ctx, tx, name),
    findOrCreateAccount: (name: string) => findOrCreateAccount(ctx, tx, name),
    getAccount: (accountId: string) => getAccount(ctx, tx, accountId),
    beginTwoFactor: (accountId: string) => beginTwoFactor(ctx, tx, accountId),
    verifyTwoFactor: (accountId: string, code: string) => verifyTwoFactor(ctx, tx, accountId, code),
    disableTwoFactor: (accountId: string, code: string | undefined) =>
      disableTwoFactor(ctx, tx, accountId, code),
    requireTwoFactor: (accountId: string, code: string | undefined) =>
      requireTwoFactor(ctx, tx, accountId, code),
    hasAnyApiKey: () => hasAnyApiKey(ctx, tx),
    createApiKey: (input: Parameters<typeof createApiKey>[2]) => createApiKey(ctx, tx, input),
    authenticateApiKey: (key: string) => authenticateApiKey(ctx, tx, key),
    listApiKeys: (accountId: string) => listApiKeys(ctx, tx, accountId),
    revokeApiKey: (keyId: string) => revokeApiKey(ctx, tx, keyId),
    createVault: (scope: Scope, input: Parameters<typeof createVault>[3]) =>
      createVault(ctx, tx, scope, input),
    deposit: (
      scope: Scope,
      vaultId: string,
      amount: Parameters<typeof deposit>[4],
      metadata?: Parameters<typeof deposit>[5],
    ) => deposit(ctx, tx, scope, vaultId, amount, metadata),
    readTransactionMetadata: (scope: Scope, transactionId: string) =>
      readTransactionMetadata(ctx, tx, scope, transactionId),
    getVault: (scope: Scope, vaultId: string) => getVault(ctx, tx, scope, vaultId),
    getCard: (scope: Scope, id: string) => getCard(ctx, tx, scope, id),
    getTransaction: (scope: Scope, id: string) => getTransaction(ctx, tx, scope, id),
    getTransfer: (scope: Scope, id: string) => getTransfer(ctx, tx, scope, id),
    updateVault: (scope: Scope, vaultId: string, changes: Parameters<typeof updateVault>[4]) =>
      updateVault(ctx, tx, scope, vaultId, changes),
    freezeVault: (scope: Scope, vaultId: string, reason: string | null) =>
      setVaultFrozen(ctx, tx, scope, vaultId, true, reason),
    unfreezeVault: (scope: Scope, vaultId: string) =>
      setVaultFrozen(ctx, tx, scope, vaultId, false, null),
    closeVault: (scope: Scope, vaultId: string, destination: CloseDestination) =>
      closeVault(ctx, tx, scope, vaultId, destination),
    createCard: (scope: Scope, input: Parameters<typeof createCard>[3]) =>
      createCard(ctx, tx, scope, input),
    revealCard: (scope: Scope, cardId: string) => revealCard(ctx, tx, scope, cardId),
    setCardStatus: (scope: Scope, cardId: string, status: Parameters<typeof setCardStatus>[4]) =>
      setCardStatus(ctx, tx, scope, cardId, status),
    setPolicy: (scope: Scope, vaultId: string, document: unknown) =>
      setPolicy(ctx, tx, scope, vaultId, document),
    getPolicy: (scope: Scope, vaultId: string) => getPolicy(ctx, tx, scope, vaultId),
    deletePolicy: (scope: Scope, vaultId: string) => deletePolicy(ctx, tx, scope, vaultId),
    simulatePolicy: (scope: Scope, vaultId: string, input: SimulationInput) =>
      simulatePolicy(ctx, tx, scope, vaultId, input),
    authorize: async (scope: Scope, input: AuthorizeInput, budget?: AuthorizeBudget) => {
      const [outcome] = await authorizeBatch(ctx, tx, [
        { scope, input, ...(budget === undefined ? {} : { budget }) },
      ]);
      assert(outcome !== undefined, 'a batch of one has one outcome');
      return outcome;
    },
    capture: (scope: Scope, transactionId: string, amount: Parameters<typeof capture>[4]) =>
      capture(ctx, tx, scope, transactionId, amount),
    reverse: (
      scope: Scope,
      transactionId: string,
      amount: Parameters<typeof reverse>[4],
      reason?: 'reversed' | 'expired' | 'stand_in',
    ) => reverse(ctx, tx, scope, transactionId, amount, reason),
    createInternalTransfer: (scope: Scope, input: Parameters<typeof createInternalTransfer>[3]) =>
      createInternalTransfer(ctx, tx, scope, input),
    createExternalTransfer: (scope: Scope, input: Parameters<typeof createExternalTransfer>[3]) =>
      createExternalTransfer(ctx, tx, scope, input),
    completeExternalTransfer: (transferId: string, signature: string) =>
      completeExternalTransfer(ctx, tx, transferId, signature),
    pendingChainTransfers: (batchMax: number) => pendingChainTransfers(ctx, tx, batchMax),
    recordChainSend: (
      transferId: string,
      send: Omit<ChainSend, 'signings'>,
      previousSignature: string | null,
    ) => recordChainSend(ctx, tx, transferId, send, previousSignature),
    failExternalTransfer: (transferId: string, reason: string) =>
      failExternalTransfer(ctx, tx, transferId, reason),
    createWebhookEndpoint: (scope: Scope, input: Parameters<typeof createWebhookEndpoint>[3]) =>
      createWebhookEndpoint(ctx, tx, scope, input),
    listWebhookEndpoints: (scope: Scope) => listWebhookEndpoints(ctx, tx, scope),
    deleteWebhookEndpoint: (scope: Scope, endpointId: string) =>
      deleteWebhookEndpoint(ctx, tx, scope, endpointId),
    webhookSecret: (endpointId: string) => webhookSecret(ctx, tx, endpointId),
    getWebhookEndpoint: (scope: Scope, endpointId: string) =>
      getWebhookEndpoint(ctx, tx, scope, endpointId),
    subscribedEndpoints: (events: readonly OutboxEvent[]) => subscribedEndpoints(ctx, tx, events),
    deliveryTarget: (eventId: string, endpointId: string) =>
      deliveryTarget(ctx, tx, eventId, endpointId),
    recordDeliveryAttempt: (attempt: DeliveryAttempt) => recordDeliveryAttempt(ctx, tx, attempt),
    createTestEvent: (scope: Scope, endpoint: Parameters<typeof createTestEvent>[3]) =>
      createTestEvent(ctx, tx, scope, endpoint),
    claimEvents: (batchMax: number) => claimEvents(ctx, tx, batchMax),
    markRelayed: (ids: readonly string[]) => markRelayed(ctx, tx, ids),
    snapshotDay: (day: string, afterVaultId: string | null, batchMax?: number) =>
      snapshotDay(ctx, tx, day, afterVaultId, batchMax),
    snapshotDaysDue: () => snapshotDaysDue(ctx, tx),
    completeSnapshotDay: (day: string) => completeSnapshotDay(ctx, tx, day),
    createSettlement: (scope: Scope, records: readonly SettlementRecordInput[]) =>
      createSettlement(ctx, tx, scope, records),
    getSettlement: (scope: Scope, id: string) => getSettlement(ctx, tx, scope, id),
    pendingSettlementRecords: (batchMax: number) => pendingSettlementRecords(ctx, tx, batchMax),
    settleRecord: (settlementId: string, position: number) =>
      settleRecord(ctx, tx, settlementId, position),
    purgeIdempotencyKeys: (batchMax?: number) => purgeIdempotencyKeys(ctx, tx, batchMax),
    purgeWebhookDeliveries: (retentionMs: number, rowsMax: number) =>
      purgeWebhookDeliveries(ctx, tx, retentionMs, rowsMax),
    purgeOutboxEvents: (retentionMs: number, rowsMax: number) =>
      purgeOutboxEvents(ctx, tx, retentionMs, rowsMax),
    purgeSpendCounters: (retentionDays: number, rowsMax: number) =>
      purgeSpendCounters(ctx, tx, retentionDays, rowsMax),
    holdJournalCandidates: (retentionMs: number, afterVaultId: string | null, vaultsMax?: number) =>
      holdJournalCandidates(ctx, tx, retentionMs, afterVaultId, vaultsMax),
    compactVaultHoldChanges: (vaultId: string, horizonMs: number, rowsMax: number) =>
      compactVaultHoldChanges(ctx, tx, vaultId, horizonMs, rowsMax),
    listVaults: (scope: Scope, query: ListVaultsQuery) => listVaults(tx, scope, query),
    listCards: (scope: Scope, query: ListCardsQuery) => listCards(tx, scope, query),
    listTransactions: (scope: Scope, query: ListTransactionsQuery) =>
      listTransactions(tx, scope, query),
    listTransfers: (scope: Scope, query: ListTransfersQuery) => listTransfers(tx, scope, query),
    listBalanceSnapshots: (scope: Scope, vaultId: string, query: ListBalanceSnapshotsQuery) =>
      listBalanceSnapshots(tx, scope, vaultId, query, ctx.clock()),
    listWebhookDeliveries: (
      scope: Scope,
      endpointId: string,
      query: Parameters<typeof listWebhookDeliveries>[3],
    ) => listWebhookDeliveries(tx, scope, endpointId, query),
  };
}

export type StoreOperations = ReturnType<typeof bind>;

export interface Store extends StoreOperations {
  readonly client: SqlClient;
  /** Several operations in one transaction: all of them commit, or none. */
  transaction<T>(work: (operations: StoreOperations) => Promise<T>): Promise<T>;
  /**
   * One effect with its idempotency record, in one transaction (contract section 5). A replay
   * returns the stored response. A refusal (`SpendgateError`) that is not a 400 is stored as
   * `presentError` renders it, with the effect's partial writes rolled back; a 400 or any
   * other failure stores nothing, so the request may be retried with the same key.
   */
  idempotent(
    scope: Scope,
    request: IdempotentRequest,
    work: (operations: StoreOperations) => Promise<StoredResponse>,
    presentError: (error: SpendgateError) => StoredResponse,
  ): Promise<{ replayed: boolean; response: StoredResponse }>;
  /** Authorization batches run so far, and how many fell back to one request at a time. */
  authorizeStats(): { readonly batches: number; readonly fallbacks: number };
  /**
   * Calls `observer` with each authorization batch's size as it starts (the server's
   * histogram); returns its removal.
   */
  observeAuthorizeBatches(observer: (size: number) => void): () => void;
  /** Expires holds older than `ageMsMax`, each in its own transaction; returns how many. */
  expireHolds(ageMsMax: number, batchMax?: number): Promise<number>;
  /**
   * Re-wraps every secret under a master key other than the current one (vault data keys,
   * webhook and two-factor secrets), in batches, a transaction each (ops/master-key-rotation.ts).
   */
  rewrapMasterKeySecrets(options?: RewrapOptions): Promise<RewrapCount[]>;
  close(): Promise<void>;
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
export async function openStore(options: StoreOptions): Promise<Store> {
  await migrate(options.client);
  await options.client.transaction(ensureSystemAccounts);
  const ctx: StoreContext = {
    client: options.client,
    clock: options.clock ?? Date.now,
    keyring: new Keyring({
      current: options.masterKey,
      decryptOnly: options.decryptOnlyMasterKeys ?? [],
    }),
    policyCache: new CompiledPolicyCache(options.policyCacheEntriesMax),
    templates: options.templates ?? builtinRuleLibrary(),
  };
  const run = <T>(work: (operations: StoreOperations) => Promise<T>): Promise<T> =>
    runTransaction(ctx.client, (tx) => work(bind(ctx, tx)));

  // Each operation in a transaction of its own: the same names, wrapped one by one.
  const perCall = {} as Record<keyof StoreOperations, unknown>;
  for (const name of Object.keys(bind(ctx, ctx.client)) as (keyof StoreOperations)[]) {
    if (name === 'client') continue;
    perCall[name] = (...args: unknown[]) =>
      run((operations) => (operations[name] as (...inner: unknown[]) => Promise<unknown>)(...args));
  }
  const single = perCall as StoreOperations;

  // The authorize path's statements are fixed texts over parameter arrays: generic plans. Its
  // first statements are reads, so BEGIN goes out with them.
  const authorizeTransaction = { genericPlans: true, pipelineBegin: true } as const;
  // A request alone, once more after a unique-index race: the retry finds the first decision.
  const authorizeAlone = async (request: AuthorizeRequest) => {
    for (let attempt = 1; ; attempt++) {
      try {
        return await runTransaction(
          ctx.client,
          (tx) => bind(ctx, tx).authorize(request.scope, request.input, request.budget),
          authorizeTransaction,
        );
      } catch (error) {
        if (!isUniqueViolation(error) || attempt >= 2) throw error;
      }
    }
  };
  // Several servers may share one store (tests, embedding services): each observes every batch.
  const batchObservers = new Set<(size: number) => void>();
  const batcher = new AuthorizeBatcher(
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
    async idempotent(scope, request, work, presentError) {
      return run(async (operations) => {
        const stored = await beginIdempotent(ctx, operations.client, scope, request);
        if (stored !== null) return { replayed: true, response: stored };
        await operations.client.exec('SAVEPOINT idempotent_effect');
        let response: StoredResponse;
        try {
          response = await work(operations);
        } catch (error) {
          if (!(error instanceof SpendgateError) || error.status === 400 || error.status >= 500)
            throw error;
          await operations.client.exec('ROLLBACK TO SAVEPOINT idempotent_effect');
          response = presentError(error);
        }
        await saveIdempotent(ctx, operations.client, scope, request, response);
        return { replayed: false, response };
      });
    },
    async expireHolds(ageMsMax, batchMax = 500) {
      const holds = await run((operations) =>
        listExpiredHolds(ctx, operations.client, ageMsMax, batchMax),
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
    },
    rewrapMasterKeySecrets: (rewrapOptions) => rewrapMasterKeySecrets(ctx, rewrapOptions),
    close: () => options.client.close(),
  };
}
