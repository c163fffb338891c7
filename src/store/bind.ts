import { assert } from '../core/index.js';
import type { StoreContext } from './context.js';
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
import { capture, reverse } from './ops/authorizations.js';
import { forceCapture, refund } from './ops/clearing.js';
import { advise } from './authorize/advice.js';
import { incrementAuthorization } from './authorize/increment.js';
import {
  backtestsAwaitingJobs,
  createBacktest,
  getBacktest,
  markBacktestJobs,
} from './ops/backtests.js';
import type { AuthorizeEngine } from './authorize/engine.js';
import { createCard, revealCard, setCardStatus, updateCard } from './ops/cards.js';
import {
  createDisplayToken,
  displayOrigins,
  setDisplayOrigins,
  spendDisplayToken,
} from './ops/card-display.js';
import {
  completeSweep,
  depositKeySeed,
  failSweep,
  listChainDeposits,
  recordChainDeposit,
  recordSweepSend,
  unsweptDeposits,
} from './ops/chain-deposits.js';
import { pendingChainTransfers, recordChainSend } from './ops/chain-sends.js';
import {
  advanceDepositWatch,
  assignDepositAddresses,
  depositWatchBatch,
  watchDepositAddress,
} from './ops/deposit-watch.js';
import { relayEvents } from './ops/events.js';
import {
  completeExternalTransfer,
  createExternalTransfer,
  failExternalTransfer,
} from './ops/external-transfers.js';
import { purgeIdempotencyKeys } from './ops/idempotency.js';
import {
  listBalanceSnapshots,
  listCards,
  listTransactions,
  listTransfers,
  listVaults,
  listWebhookDeliveries,
} from './ops/lists.js';
import { readTransactionMetadata } from './ops/metadata.js';
import { transactionTimeline } from './ops/timeline.js';
import {
  compactVaultHoldChanges,
  holdJournalCandidates,
  purgeOutboxEvents,
  purgeBacktests,
  purgeDisplayTokens,
  purgeSpendCounters,
  purgeWebhookDeliveries,
} from './ops/retention.js';
import { deleteCardPolicy, getCardPolicy, setCardPolicy } from './ops/card-policies.js';
import { deletePolicy, getPolicy, setPolicy, simulatePolicy } from './ops/policies.js';
import { policyLimits } from './ops/policy-limits.js';
import {
  closeReserveRunRequests,
  latestReserveRuns,
  ledgerPosition,
  purgeReserveRuns,
  recordReserveRun,
  requestReserveRun,
  reserveRunRequestOpen,
  reserveRunRequests,
  unsentExternalTransfers,
  unsentTransfersIn,
} from './ops/reserves.js';
import { listPolicyVersions, restorePolicyVersion } from './ops/policy-versions.js';
import { getCard, getTransaction, getTransfer } from './ops/reads.js';
import {
  createSettlement,
  getSettlement,
  pendingSettlementRecords,
  settleRecord,
} from './ops/settlements.js';
import { completeSnapshotDay, snapshotDay, snapshotDaysDue } from './ops/snapshots.js';
import { createInternalTransfer } from './ops/transfers.js';
import {
  beginTwoFactor,
  disableTwoFactor,
  requireTwoFactor,
  verifyTwoFactor,
} from './ops/two-factor.js';
import {
  closeVault,
  createVault,
  deposit,
  getVault,
  setVaultFrozen,
  updateVault,
} from './ops/vaults.js';
import {
  createWebhookEndpoint,
  deleteWebhookEndpoint,
  getWebhookEndpoint,
  listWebhookEndpoints,
  webhookSecret,
} from './ops/webhook-endpoints.js';
import {
  authorizationByNetworkId,
  cardOfProcessorCard,
  createProcessorConnection,
  deleteProcessorConnection,
  getProcessorConnection,
  listProcessorConnections,
  processorConnectionSecrets,
  rotateProcessorSecrets,
} from './ops/processors.js';
import { overdueDeliveries, oweDeliveries, settleOwedDeliveries } from './ops/owed-deliveries.js';
import {
  createTestEvent,
  deliveryTarget,
  recordDeliveryAttempt,
  subscribedEndpoints,
} from './ops/webhook-deliveries.js';
import type {
  AccountOperations,
  AuthorizationOperations,
  BacktestOperations,
  CardOperations,
  DepositOperations,
  MaintenanceOperations,
  PolicyOperations,
  ProcessorOperations,
  ReserveOperations,
  SettlementOperations,
  StoreOperations,
  TransferOperations,
  VaultOperations,
  WebhookOperations,
} from './port/index.js';
import type { SqlQueryable } from './sql/client.js';

/**
 * The store port (port/index.ts) implemented over one SQL connection or transaction `tx`: each
 * area's operations bound to the store's context and `tx`. store.ts runs them in transactions.
 */
export function bindOperations(
  ctx: StoreContext,
  tx: SqlQueryable,
  engine: AuthorizeEngine,
): StoreOperations {
  return {
    ...bindAccounts(ctx, tx),
    ...bindVaults(ctx, tx),
    ...bindPolicies(ctx, tx),
    ...bindCards(ctx, tx),
    ...bindAuthorizations(ctx, tx, engine),
    ...bindTransfers(ctx, tx),
    ...bindWebhooks(ctx, tx),
    ...bindSettlements(ctx, tx),
    ...bindMaintenance(ctx, tx),
    ...bindBacktests(ctx, tx),
    ...bindReserves(ctx, tx),
    ...bindDeposits(ctx, tx),
    ...bindProcessors(ctx, tx),
  };
}

type AreaBinder = (
  ctx: StoreContext,
  tx: SqlQueryable,
  engine: AuthorizeEngine,
) => Partial<StoreOperations>;

const AREA_BINDERS: readonly AreaBinder[] = [
  bindAccounts,
  bindVaults,
  bindPolicies,
  bindCards,
  bindAuthorizations,
  bindTransfers,
  bindWebhooks,
  bindSettlements,
  bindMaintenance,
  bindBacktests,
  bindReserves,
  bindDeposits,
  bindProcessors,
];

/**
 * Each operation's area binder, for a store that runs each call in a transaction of its own:
 * a call binds only its area, not all of bindOperations' twelve (about a hundred closures),
 * which was 1.2% of the server's busy time under the authorize bench, paid by the workers'
 * per-call operations (docs/performance.md). Each area is bound once here, with `tx`, to
 * read the names of its operations.
 */
export function areaBindersByOperation(
  ctx: StoreContext,
  tx: SqlQueryable,
  engine: AuthorizeEngine,
): Map<keyof StoreOperations, AreaBinder> {
  const byOperation = new Map<keyof StoreOperations, AreaBinder>();
  for (const bind of AREA_BINDERS) {
    for (const name of Object.keys(bind(ctx, tx, engine)) as (keyof StoreOperations)[]) {
      assert(!byOperation.has(name), `the operation ${name} belongs to one area`);
      byOperation.set(name, bind);
    }
  }
  return byOperation;
}

/** What a lazily bound StoreOperations keeps: its transaction and the areas bound so far. */
interface LazyBinding {
  readonly tx: SqlQueryable;
  readonly areas: Map<AreaBinder, Partial<StoreOperations>>;
}

/**
 * The store's operations bound to a transaction area by area, each on its first use: a
 * transaction's work uses one area or two of twelve, and binding all of them (about a hundred
 * closures) for each transaction was 3-5% of the service's CPU on the message bench
 * (docs/performance.md). Made once per store: each operation is a getter on one shared
 * prototype, enumerable, so `for...in` lists every name.
 */
export function lazyBinder(
  ctx: StoreContext,
  engine: AuthorizeEngine,
): (tx: SqlQueryable) => StoreOperations {
  const prototype = {};
  for (const [name, bind] of areaBindersByOperation(ctx, ctx.client, engine)) {
    Object.defineProperty(prototype, name, {
      enumerable: true,
      get(this: LazyBinding) {
        let area = this.areas.get(bind);
        if (area === undefined) {
          area = bind(ctx, this.tx, engine);
          this.areas.set(bind, area);
        }
        return area[name];
      },
    });
  }
  return (tx) => {
    const binding: LazyBinding = { tx, areas: new Map() };
    // The prototype's getters are StoreOperations' every member (areaBindersByOperation).
    return Object.assign(Object.create(prototype) as StoreOperations, binding);
  };
}

function bindAccounts(ctx: StoreContext, tx: SqlQueryable): AccountOperations {
  return {
    findAccountByName: (name) => findAccountByName(tx, name),
    findOrCreateAccount: (name) => findOrCreateAccount(ctx, tx, name),
    getAccount: (accountId) => getAccount(tx, accountId),
    beginTwoFactor: (accountId) => beginTwoFactor(ctx, tx, accountId),
    verifyTwoFactor: (accountId, code) => verifyTwoFactor(ctx, tx, accountId, code),
    disableTwoFactor: (accountId, code) => disableTwoFactor(ctx, tx, accountId, code),
    requireTwoFactor: (accountId, code) => requireTwoFactor(ctx, tx, accountId, code),
    hasAnyApiKey: () => hasAnyApiKey(tx),
    createApiKey: (input) => createApiKey(ctx, tx, input),
    authenticateApiKey: (key) => authenticateApiKey(ctx, tx, key),
    listApiKeys: (accountId) => listApiKeys(tx, accountId),
    revokeApiKey: (keyId) => revokeApiKey(ctx, tx, keyId),
  };
}

function bindVaults(ctx: StoreContext, tx: SqlQueryable): VaultOperations {
  return {
    createVault: (scope, input) => createVault(ctx, tx, scope, input),
    deposit: (scope, vaultId, amount, metadata) =>
      deposit(ctx, tx, scope, vaultId, amount, metadata),
    getVault: (scope, vaultId) => getVault(tx, scope, vaultId),
    listVaults: (scope, query) => listVaults(tx, scope, query),
    updateVault: (scope, vaultId, changes) => updateVault(ctx, tx, scope, vaultId, changes),
    freezeVault: (scope, vaultId, reason) => setVaultFrozen(ctx, tx, scope, vaultId, true, reason),
    unfreezeVault: (scope, vaultId) => setVaultFrozen(ctx, tx, scope, vaultId, false, null),
    closeVault: (scope, vaultId, destination) => closeVault(ctx, tx, scope, vaultId, destination),
    listBalanceSnapshots: (scope, vaultId, query) =>
      listBalanceSnapshots(tx, scope, vaultId, query, ctx.clock()),
  };
}

function bindPolicies(ctx: StoreContext, tx: SqlQueryable): PolicyOperations {
  return {
    setPolicy: (scope, vaultId, document, keyId = null) =>
      setPolicy(ctx, tx, scope, vaultId, document, { keyId }),
    getPolicy: (scope, vaultId) => getPolicy(tx, scope, vaultId),
    deletePolicy: (scope, vaultId, keyId = null) =>
      deletePolicy(ctx, tx, scope, vaultId, { keyId }),
    simulatePolicy: (scope, vaultId, input) => simulatePolicy(ctx, tx, scope, vaultId, input),
    setCardPolicy: (scope, cardId, document, keyId = null) =>
      setCardPolicy(ctx, tx, scope, cardId, document, { keyId }),
    getCardPolicy: (scope, cardId) => getCardPolicy(tx, scope, cardId),
    deleteCardPolicy: (scope, cardId, keyId = null) =>
      deleteCardPolicy(ctx, tx, scope, cardId, { keyId }),
    policyLimits: (scope, owner) => policyLimits(ctx, tx, scope, owner),
    listPolicyVersions: (scope, owner, query) => listPolicyVersions(tx, scope, owner, query),
    restorePolicyVersion: (scope, owner, version, keyId = null) =>
      restorePolicyVersion(ctx, tx, scope, owner, version, keyId),
  };
}

function bindCards(ctx: StoreContext, tx: SqlQueryable): CardOperations {
  return {
    createCard: (scope, input) => createCard(ctx, tx, scope, input),
    getCard: (scope, cardId) => getCard(tx, scope, cardId),
    listCards: (scope, query) => listCards(tx, scope, query),
    setCardStatus: (scope, cardId, status) => setCardStatus(ctx, tx, scope, cardId, status),
    updateCard: (scope, cardId, changes) => updateCard(ctx, tx, scope, cardId, changes),
    revealCard: (scope, cardId) => revealCard(ctx, tx, scope, cardId),
    createDisplayToken: (scope, cardId) => createDisplayToken(ctx, tx, scope, cardId),
    spendDisplayToken: (token) => spendDisplayToken(ctx, tx, token),
    displayOrigins: (scope) => displayOrigins(tx, scope),
    setDisplayOrigins: (scope, origins) => setDisplayOrigins(ctx, tx, scope, origins),
  };
}

function bindAuthorizations(
  ctx: StoreContext,
  tx: SqlQueryable,
  engine: AuthorizeEngine,
): AuthorizationOperations {
  return {
    authorize: (scope, input, budget) => engine.authorizeIn(tx, scope, input, budget),
    capture: (scope, transactionId, amount, final) =>
      capture(ctx, tx, scope, transactionId, amount, final),
    incrementAuthorization: (scope, transactionId, input) =>
      incrementAuthorization(ctx, tx, scope, transactionId, input),
    advise: (scope, input) => advise(ctx, tx, scope, input),
    forceCapture: (scope, input) => forceCapture(ctx, tx, scope, input),
    refund: (scope, input) => refund(ctx, tx, scope, input),
    reverse: (scope, transactionId, amount, reason) =>
      reverse(ctx, tx, scope, transactionId, amount, reason),
    getTransaction: (scope, transactionId) => getTransaction(tx, scope, transactionId),
    listTransactions: (scope, query) => listTransactions(tx, scope, query),
    readTransactionMetadata: (scope, transactionId) =>
      readTransactionMetadata(ctx, tx, scope, transactionId),
    transactionTimeline: (scope, transactionId) => transactionTimeline(tx, scope, transactionId),
  };
}

function bindTransfers(ctx: StoreContext, tx: SqlQueryable): TransferOperations {
  return {
    createInternalTransfer: (scope, input) => createInternalTransfer(ctx, tx, scope, input),
    createExternalTransfer: (scope, input) => createExternalTransfer(ctx, tx, scope, input),
    getTransfer: (scope, transferId) => getTransfer(tx, scope, transferId),
    listTransfers: (scope, query) => listTransfers(tx, scope, query),
    pendingChainTransfers: (batchMax, holdBack) => pendingChainTransfers(tx, batchMax, holdBack),
    recordChainSend: (transferId, send, previousSignature) =>
      recordChainSend(ctx, tx, transferId, send, previousSignature),
    completeExternalTransfer: (transferId, signature) =>
      completeExternalTransfer(ctx, tx, transferId, signature),
    failExternalTransfer: (transferId, reason) => failExternalTransfer(ctx, tx, transferId, reason),
  };
}

function bindWebhooks(ctx: StoreContext, tx: SqlQueryable): WebhookOperations {
  return {
    createWebhookEndpoint: (scope, input) => createWebhookEndpoint(ctx, tx, scope, input),
    getWebhookEndpoint: (scope, endpointId) => getWebhookEndpoint(tx, scope, endpointId),
    listWebhookEndpoints: (scope) => listWebhookEndpoints(tx, scope),
    deleteWebhookEndpoint: (scope, endpointId) => deleteWebhookEndpoint(ctx, tx, scope, endpointId),
    webhookSecret: (endpointId) => webhookSecret(ctx, tx, endpointId),
    listWebhookDeliveries: (scope, endpointId, query) =>
      listWebhookDeliveries(tx, scope, endpointId, query),
    createTestEvent: (scope, endpoint) => createTestEvent(ctx, tx, scope, endpoint),
    relayEvents: (batchMax) => relayEvents(tx, batchMax),
    subscribedEndpoints: (events) => subscribedEndpoints(tx, events),
    oweDeliveries: (deliveries) => oweDeliveries(ctx, tx, deliveries),
    overdueDeliveries: (graceMs, batchMax) => overdueDeliveries(ctx, tx, graceMs, batchMax),
    settleOwedDeliveries: (ended, rechecked, recheckMs) =>
      settleOwedDeliveries(ctx, tx, ended, rechecked, recheckMs),
    deliveryTarget: (eventId, endpointId) => deliveryTarget(ctx, tx, eventId, endpointId),
    recordDeliveryAttempt: (attempt) => recordDeliveryAttempt(ctx, tx, attempt),
  };
}

function bindSettlements(ctx: StoreContext, tx: SqlQueryable): SettlementOperations {
  return {
    createSettlement: (scope, records) => createSettlement(ctx, tx, scope, records),
    getSettlement: (scope, settlementId) => getSettlement(tx, scope, settlementId),
    pendingSettlementRecords: (batchMax) => pendingSettlementRecords(tx, batchMax),
    settleRecord: (settlementId, position) => settleRecord(ctx, tx, settlementId, position),
  };
}

function bindMaintenance(ctx: StoreContext, tx: SqlQueryable): MaintenanceOperations {
  return {
    snapshotDay: (day, afterVaultId, batchMax) => snapshotDay(tx, day, afterVaultId, batchMax),
    snapshotDaysDue: () => snapshotDaysDue(ctx, tx),
    completeSnapshotDay: (day) => completeSnapshotDay(ctx, tx, day),
    purgeIdempotencyKeys: (batchMax) => purgeIdempotencyKeys(ctx, tx, batchMax),
    purgeWebhookDeliveries: (retentionMs, rowsMax) =>
      purgeWebhookDeliveries(ctx, tx, retentionMs, rowsMax),
    purgeOutboxEvents: (retentionMs, rowsMax) => purgeOutboxEvents(ctx, tx, retentionMs, rowsMax),
    purgeBacktests: (retentionMs, rowsMax) => purgeBacktests(ctx, tx, retentionMs, rowsMax),
    purgeSpendCounters: (retentionDays, rowsMax) =>
      purgeSpendCounters(ctx, tx, retentionDays, rowsMax),
    purgeDisplayTokens: (rowsMax) => purgeDisplayTokens(ctx, tx, rowsMax),
    holdJournalCandidates: (retentionMs, afterVaultId, vaultsMax) =>
      holdJournalCandidates(ctx, tx, retentionMs, afterVaultId, vaultsMax),
    compactVaultHoldChanges: (vaultId, horizonMs, rowsMax) =>
      compactVaultHoldChanges(tx, vaultId, horizonMs, rowsMax),
  };
}

function bindBacktests(ctx: StoreContext, tx: SqlQueryable): BacktestOperations {
  return {
    createBacktest: (scope, subject, input) => createBacktest(ctx, tx, scope, subject, input),
    getBacktest: (scope, subject, backtestId) => getBacktest(tx, scope, subject, backtestId),
    backtestsAwaitingJobs: (batchMax, recheckAfterMs) =>
      backtestsAwaitingJobs(ctx, tx, batchMax, recheckAfterMs),
    markBacktestJobs: (jobs) => markBacktestJobs(ctx, tx, jobs),
  };
}

function bindReserves(ctx: StoreContext, tx: SqlQueryable): ReserveOperations {
  return {
    ledgerPosition: (mode, currency) => ledgerPosition(tx, mode, currency),
    recordReserveRun: (run) => recordReserveRun(ctx, tx, run),
    latestReserveRuns: (currencies) => latestReserveRuns(tx, currencies),
    unsentExternalTransfers: () => unsentExternalTransfers(tx),
    unsentTransfersIn: (pairs, max, afterId) => unsentTransfersIn(tx, pairs, max, afterId),
    requestReserveRun: () => requestReserveRun(ctx, tx),
    reserveRunRequests: () => reserveRunRequests(tx),
    closeReserveRunRequests: (requestIds) => closeReserveRunRequests(tx, requestIds),
    reserveRunRequestOpen: (requestId) => reserveRunRequestOpen(tx, requestId),
    purgeReserveRuns: (retentionMs, rowsMax) => purgeReserveRuns(ctx, tx, retentionMs, rowsMax),
  };
}

function bindDeposits(ctx: StoreContext, tx: SqlQueryable): DepositOperations {
  return {
    listChainDeposits: (scope, vaultId, query) => listChainDeposits(tx, scope, vaultId, query),
    assignDepositAddresses: (batchMax) => assignDepositAddresses(ctx, tx, batchMax),
    depositWatchBatch: (batchMax) => depositWatchBatch(tx, batchMax),
    watchTokenAccount: (vaultId, address, ownerAddress) =>
      watchDepositAddress(tx, { vaultId, address, ownerAddress }),
    recordChainDeposit: (found) => recordChainDeposit(ctx, tx, found),
    advanceDepositWatch: (address, from, to) => advanceDepositWatch(ctx, tx, address, from, to),
    unsweptDeposits: (batchMax) => unsweptDeposits(tx, batchMax),
    recordSweepSend: (depositId, send, previousSignature) =>
      recordSweepSend(ctx, tx, depositId, send, previousSignature),
    completeSweep: (depositId, signature) => completeSweep(ctx, tx, depositId, signature),
    failSweep: (depositId, reason) => failSweep(tx, depositId, reason),
    depositKeySeed: (vaultId) => depositKeySeed(ctx, tx, vaultId),
  };
}

function bindProcessors(ctx: StoreContext, tx: SqlQueryable): ProcessorOperations {
  return {
    createProcessorConnection: (scope, input) => createProcessorConnection(ctx, tx, scope, input),
    getProcessorConnection: (scope, id) => getProcessorConnection(ctx, tx, scope, id),
    listProcessorConnections: (scope) => listProcessorConnections(ctx, tx, scope),
    deleteProcessorConnection: (scope, id) => deleteProcessorConnection(ctx, tx, scope, id),
    rotateProcessorSecrets: (scope, id, input) => rotateProcessorSecrets(ctx, tx, scope, id, input),
    processorConnectionSecrets: (processor, id) =>
      processorConnectionSecrets(ctx, tx, processor, id),
    cardOfProcessorCard: (scope, connectionId, processorCardId) =>
      cardOfProcessorCard(tx, scope, connectionId, processorCardId),
    authorizationByNetworkId: (scope, networkTransactionId) =>
      authorizationByNetworkId(tx, scope, networkTransactionId),
  };
}
