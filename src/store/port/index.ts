import type { Scope, SpendgateError, TemplateLibrary } from '../../core/index.js';
import type { AccountOperations } from './accounts.js';
import type { BacktestOperations, BacktestRunOutcome } from './backtests.js';
import type { AuthorizationOperations } from './authorizations.js';
import type { CardOperations } from './cards.js';
import type { DepositOperations } from './deposits.js';
import type { IdempotentRequest, StoredResponse } from './idempotency.js';
import type {
  MaintenanceOperations,
  OutboxBacklog,
  RewrapCount,
  RewrapOptions,
} from './maintenance.js';
import type { ReplicaEvent } from './replica.js';
import type { ReserveOperations } from './reserves.js';
import type { SettlementOperations } from './settlements.js';
import type { TransferOperations } from './transfers.js';
import type { ProcessorOperations } from './processors.js';
import type { PolicyOperations, VaultOperations } from './vaults.js';
import type { OutboxEvent, WebhookOperations } from './webhooks.js';
import type { SharedTransactionStats } from '../sql/shared-transaction.js';

export * from './accounts.js';
export * from './authorizations.js';
export * from './backtests.js';
export * from './cards.js';
export * from './deposits.js';
export * from './idempotency.js';
export * from './maintenance.js';
export * from './processors.js';
export * from './replica.js';
export * from './reserves.js';
export * from './settlements.js';
export * from './transfers.js';
export * from './vaults.js';
export * from './webhooks.js';
export { LIMIT_MAX as PAGE_LIMIT_MAX, LIMIT_MIN as PAGE_LIMIT_MIN } from './pages.js';
export type { Page, PageQuery } from './pages.js';

/**
 * The store port: every operation the service performs on state, by area, each bound to a
 * transaction (see each operation's header in store/ops/ for its inputs, outputs and failure
 * codes). Declared here, implemented once in store/bind.ts over the SQL port, so the pg and
 * PGlite adapters run the same code. It hands out no SQL client: the layers above ask for what
 * they need by name (`ping`, `outboxBacklog`), and only src/store imports store/ops. The port
 * owns every type and bound it names (port/*.ts): store/ops imports them from here, never the
 * other way (test/architecture.test.ts).
 */
export interface StoreOperations
  extends
    AccountOperations,
    VaultOperations,
    PolicyOperations,
    CardOperations,
    AuthorizationOperations,
    TransferOperations,
    WebhookOperations,
    SettlementOperations,
    MaintenanceOperations,
    BacktestOperations,
    ReserveOperations,
    DepositOperations,
    ProcessorOperations {}

/**
 * What a lifecycle message is about (Store.message): its hold, or its card. The store keeps a
 * message out of a batch that already holds the vault it last saw that hold or card in.
 */
export type MessageSubject =
  { readonly authorizationId: string } | { readonly cardId: string; readonly scope: Scope };

/** The store as the service uses it: each operation in a transaction of its own, or composed. */
export interface Store extends StoreOperations {
  /** Several operations in one transaction: all of them commit, or none. */
  transaction<T>(work: (operations: StoreOperations) => Promise<T>): Promise<T>;
  /**
   * One lifecycle message (a capture, reversal, increment, force capture, refund or advice):
   * as `transaction`, but it may share its database transaction with other messages in flight
   * (sql/shared-transaction.ts), and `work` may run more than once (only one run commits).
   * `work` must start with the message's lock (lockAuthorization or lockCardVault).
   */
  message<T>(
    work: (operations: StoreOperations) => Promise<T>,
    subject?: MessageSubject,
  ): Promise<T>;
  /**
   * One effect with its idempotency record, in one transaction (contract section 5). A replay
   * returns the stored response. A refusal (`SpendgateError`) that `keepRefusal` renders is
   * stored as rendered, with the effect's partial writes rolled back; one it answers null for,
   * and any other failure, stores nothing and is thrown, so the request may be retried with
   * the same key. (Which refusals are kept is the HTTP adapter's rule, by status.)
   */
  idempotent(
    scope: { readonly accountId: string; readonly mode: 'test' | 'live' },
    request: IdempotentRequest,
    work: (operations: StoreOperations) => Promise<StoredResponse>,
    keepRefusal: (error: SpendgateError) => StoredResponse | null,
  ): Promise<{ replayed: boolean; response: StoredResponse }>;
  /** Resolves when the database answers one trivial statement (readiness checks). */
  ping(): Promise<void>;
  /** The outbox's backlog in one read-only statement, its count bounded by `pendingCountMax`. */
  outboxBacklog(pendingCountMax: number): Promise<OutboxBacklog>;
  /**
   * Committed events of `types` and `scopes` (accounts and modes) after `afterId` (an event id
   * or a prefix of one), in id order, at most `rowsMax` (ops/event-feed.ts): the live feed's
   * one read per tick.
   */
  eventsAfter(
    afterId: string,
    types: readonly string[],
    scopes: readonly Scope[],
    rowsMax: number,
  ): Promise<OutboxEvent[]>;
  /**
   * Authorization batches run so far, how many fell back to one request at a time, how many
   * were decided on known state in one round trip, and how many of those found it stale.
   */
  authorizeStats(): {
    readonly batches: number;
    readonly fallbacks: number;
    readonly oneTrip: number;
    readonly stale: number;
  };
  /**
   * The write gate's state now (DATABASE_WRITES_MAX, sql/write-gate.ts): write transactions in
   * PostgreSQL, and writes waiting for one of its slots.
   */
  writeStats(): { readonly open: number; readonly waiting: number };
  /** The shared transactions of lifecycle messages since start (Store.message). */
  messageStats(): SharedTransactionStats;
  /**
   * Calls `observer` with each authorization batch's size as it starts (the server's
   * histogram); returns its removal.
   */
  observeAuthorizeBatches(observer: (size: number) => void): () => void;
  /**
   * Calls `observer` with where each read that may lag was served and why, and with each write
   * position that could not be kept (a replica only: docs/operations.md, "Read replica");
   * returns its removal.
   */
  observeReplicaReads(observer: (event: ReplicaEvent) => void): () => void;
  /** Expires holds older than `ageMsMax`, each in its own transaction; returns how many. */
  expireHolds(ageMsMax: number, batchMax?: number): Promise<number>;
  /**
   * Re-wraps every secret under a master key other than the current one (vault data keys,
   * webhook and two-factor secrets), in batches, a transaction each (ops/master-key-rotation.ts).
   */
  rewrapMasterKeySecrets(options?: RewrapOptions): Promise<RewrapCount[]>;
  /**
   * One run of a queued backtest, in several transactions (ops/backtests.ts): claimed under a
   * lease of `leaseMs`, replayed with its progress written, its result stored; `signal` stops
   * it after its current batch, the backtest queued again.
   */
  runBacktest(
    backtestId: string,
    options: { readonly leaseMs: number; readonly signal?: AbortSignal },
  ): Promise<BacktestRunOutcome>;
  /** The rule templates policies may name in this store (the built-in library by default). */
  ruleTemplates(): TemplateLibrary;
  close(): Promise<void>;
}
