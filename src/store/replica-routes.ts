import type { StoreOperations } from './port/index.js';

/*
 * Where each operation of the port is served once the store has a read replica
 * (replica-reads.ts), declared operation by operation. The table's type names every operation
 * of `StoreOperations`: a new one does not compile until it says how it routes, and a route
 * that names an account reads it from the operation's own arguments, checked by the compiler
 * (no guessing at a call's first argument).
 *
 * The reads that may lag (`replica`) each list or page through history, cost the primary most
 * per call and are not read to decide money. Single rows by id (a vault's balance, a card, a
 * transfer's status), policies (read to decide) and settlements stay on the primary: cheap, or
 * deciding. An operation made for an account that is not declared a read (`write`) raises the
 * account's write position once it has committed: a read counted as a write costs one position
 * update, never a wrong answer.
 */

/** How the calls of one operation, taking `Args`, are served. */
export type Route<Args extends readonly unknown[]> =
  /** A read that may lag: the replica serves it once it holds the account's writes. */
  | { readonly serve: 'replica'; readonly accountOf: (...args: Args) => string }
  /** A read made for an account, on the primary: no write position is raised after it. */
  | { readonly serve: 'primary_read' }
  /** Made for an account and may write: its write position is raised once it has committed. */
  | { readonly serve: 'write'; readonly accountOf: (...args: Args) => string }
  /** Made for no one account (the workers', the adapters' and the sign-in's side): neither. */
  | { readonly serve: 'unscoped' };

/** A route for every operation of the port, each typed by the operation's own arguments. */
export type OperationRoutes = {
  readonly [Name in keyof StoreOperations]: Route<Parameters<StoreOperations[Name]>>;
};

/** The account of an operation whose first argument is a scope (or carries its account). */
const first = (scope: { readonly accountId: string }): string => scope.accountId;

const replica = { serve: 'replica', accountOf: first } as const;
const primaryRead = { serve: 'primary_read' } as const;
const write = { serve: 'write', accountOf: first } as const;
const unscoped = { serve: 'unscoped' } as const;

export const OPERATION_ROUTES: OperationRoutes = {
  // Accounts: a new key raises its account's position, as every write for an account does.
  findAccountByName: unscoped,
  findOrCreateAccount: unscoped,
  getAccount: unscoped,
  beginTwoFactor: unscoped,
  verifyTwoFactor: unscoped,
  disableTwoFactor: unscoped,
  requireTwoFactor: unscoped,
  hasAnyApiKey: unscoped,
  createApiKey: write,
  authenticateApiKey: unscoped,
  listApiKeys: unscoped,
  revokeApiKey: unscoped,
  // Vaults and their policies.
  createVault: write,
  deposit: write,
  getVault: primaryRead,
  listVaults: replica,
  updateVault: write,
  freezeVault: write,
  unfreezeVault: write,
  closeVault: write,
  listBalanceSnapshots: replica,
  setPolicy: write,
  getPolicy: primaryRead,
  deletePolicy: write,
  simulatePolicy: primaryRead,
  setCardPolicy: write,
  getCardPolicy: primaryRead,
  deleteCardPolicy: write,
  policyLimits: primaryRead,
  listPolicyVersions: replica,
  restorePolicyVersion: write,
  // Cards.
  createCard: write,
  getCard: primaryRead,
  updateCard: write,
  listCards: replica,
  setCardStatus: write,
  revealCard: write,
  createDisplayToken: write,
  spendDisplayToken: unscoped,
  displayOrigins: primaryRead,
  setDisplayOrigins: write,
  // The card network's money path and its transactions.
  authorize: write,
  capture: write,
  incrementAuthorization: write,
  advise: write,
  forceCapture: write,
  refund: write,
  reverse: write,
  getTransaction: primaryRead,
  listTransactions: replica,
  readTransactionMetadata: primaryRead,
  transactionTimeline: primaryRead,
  // Transfers, and the transfer worker's side.
  createInternalTransfer: write,
  createExternalTransfer: write,
  getTransfer: primaryRead,
  listTransfers: replica,
  pendingChainTransfers: unscoped,
  recordChainSend: unscoped,
  completeExternalTransfer: unscoped,
  failExternalTransfer: unscoped,
  // Webhooks, the relay and the deliveries.
  createWebhookEndpoint: write,
  getWebhookEndpoint: primaryRead,
  listWebhookEndpoints: replica,
  deleteWebhookEndpoint: write,
  webhookSecret: unscoped,
  listWebhookDeliveries: replica,
  createTestEvent: write,
  relayEvents: unscoped,
  subscribedEndpoints: unscoped,
  oweDeliveries: unscoped,
  overdueDeliveries: unscoped,
  settleOwedDeliveries: unscoped,
  deliveryTarget: unscoped,
  recordDeliveryAttempt: unscoped,
  // Settlements.
  createSettlement: write,
  getSettlement: primaryRead,
  pendingSettlementRecords: unscoped,
  settleRecord: unscoped,
  // Maintenance.
  snapshotDay: unscoped,
  snapshotDaysDue: unscoped,
  completeSnapshotDay: unscoped,
  purgeIdempotencyKeys: unscoped,
  purgeWebhookDeliveries: unscoped,
  purgeOutboxEvents: unscoped,
  purgeBacktests: unscoped,
  purgeSpendCounters: unscoped,
  purgeDisplayTokens: unscoped,
  holdJournalCandidates: unscoped,
  compactVaultHoldChanges: unscoped,
  // Backtests.
  createBacktest: write,
  getBacktest: replica,
  backtestsAwaitingJobs: unscoped,
  markBacktestJobs: unscoped,
  // Reserves.
  ledgerPosition: unscoped,
  recordReserveRun: unscoped,
  latestReserveRuns: unscoped,
  unsentExternalTransfers: unscoped,
  unsentTransfersIn: unscoped,
  requestReserveRun: unscoped,
  reserveRunRequests: unscoped,
  closeReserveRunRequests: unscoped,
  reserveRunRequestOpen: unscoped,
  purgeReserveRuns: unscoped,
  // Deposits on chain, the watcher's and the sweeper's side.
  listChainDeposits: replica,
  assignDepositAddresses: unscoped,
  depositWatchBatch: unscoped,
  watchTokenAccount: unscoped,
  recordChainDeposit: unscoped,
  advanceDepositWatch: unscoped,
  unsweptDeposits: unscoped,
  recordSweepSend: unscoped,
  completeSweep: unscoped,
  failSweep: unscoped,
  depositKeySeed: unscoped,
  // Processor connections. Its reads are not declared primary reads yet, so each raises its
  // account's position as a write would: one position update, never a wrong answer.
  createProcessorConnection: write,
  getProcessorConnection: write,
  listProcessorConnections: write,
  deleteProcessorConnection: write,
  rotateProcessorSecrets: write,
  processorConnectionSecrets: unscoped,
  cardOfProcessorCard: write,
  authorizationByNetworkId: write,
};

/**
 * The route of `name`, for a caller that holds the call's arguments as a list: they are the
 * operation's own (the caller wraps that operation), which the table's type cannot follow
 * through a name known only at run time.
 */
export function routeOf(name: keyof StoreOperations): Route<readonly unknown[]> {
  return OPERATION_ROUTES[name] as Route<readonly unknown[]>;
}
