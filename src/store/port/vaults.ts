import type {
  AmountInput,
  AuthorizationRequest,
  BalanceSnapshotRecord,
  CurrencyCode,
  CurrencyInfo,
  Decimal,
  Decision,
  LimitsOf,
  LimitStatus,
  Metadata,
  PolicyRecord,
  PolicyVersionRecord,
  Scope,
  TransactionRecord,
  VaultRecord,
} from '../../core/index.js';
import type { Page, PageQuery } from './pages.js';

export interface ListVaultsQuery extends PageQuery {
  readonly currency?: CurrencyCode | undefined;
  readonly status?: VaultRecord['status'] | undefined;
}

export interface ListBalanceSnapshotsQuery {
  readonly limit: number;
  /** A day, `YYYY-MM-DD`: the next page holds the days before it. */
  readonly startingAfter?: string | undefined;
  /** `YYYY-MM-DD`, inclusive. */
  readonly startDate?: string | undefined;
  /** `YYYY-MM-DD`, inclusive. */
  readonly endDate?: string | undefined;
}

export interface SimulationInput {
  /** A draft to try; null tries the vault's current policy (none: approve-all but balance). */
  readonly draft: unknown;
  /**
   * The purchase to try: its amount is read against `currency`, by default the vault's (so
   * the caller needs no read of the vault first); refusals name `transaction.*`, the field
   * Simulate Policy's body gives it under.
   */
  readonly request: Omit<AuthorizationRequest, 'amount' | 'currency'> & {
    readonly amount: AmountInput;
    readonly currency?: string | null | undefined;
  };
}

/** What a simulation decided, and the purchase as it was read. */
export interface Simulation {
  readonly decision: Decision;
  readonly vaultId: string;
  readonly amount: Decimal;
  readonly currency: CurrencyInfo;
}

/** What Remaining Limits answers: whose policy, which version, and each limit's figures. */
export interface PolicyLimitsRecord {
  readonly of: LimitsOf;
  readonly statuses: readonly LimitStatus[];
}

/** Whose policy: a vault's, or a card's own. */
export interface PolicyOwner {
  readonly kind: 'vault' | 'card';
  readonly id: string;
}

/** List Policy Versions' query: `startingAfter` is a version number, in decimal. */
export type ListPolicyVersionsQuery = PageQuery;

export interface CreateVaultInput {
  readonly name: string;
  readonly currency: CurrencyCode;
  readonly metadata: Metadata;
  /** Parsed at the edge; zero means no deposit. */
  readonly initialDeposit: Decimal;
}

/**
 * closeVault: one transaction.
 * In: scope, vaultId, destination vault id (needed when the ledger balance is above zero).
 * Out: the closed vault.
 * Writes: a withdrawal posting vault -> destination vault with a `withdrawal` and a
 *   `transfer_in` transaction, cards.status = cancelled for its cards, vaults.status,
 *   outbox (vault.closed, card.cancelled for each card).
 * Fails: vault_not_found, vault_closed, vault_has_pending_transactions, parameter_missing
 *   (balance above zero, no destination), and for the destination: vault_not_found,
 *   vault_frozen, vault_closed, currency_mismatch, parameter_invalid (itself).
 */
export type CloseDestination = { readonly vaultId: string } | { readonly address: string } | null;

export interface VaultChanges {
  readonly name?: string | undefined;
  /** A null value removes its key. */
  readonly metadata?: Readonly<Record<string, string | null>> | undefined;
}

/** Vaults, their balances and their policies (contract sections 7-9 and 11). */
export interface VaultOperations {
  createVault(
    scope: Scope,
    input: CreateVaultInput,
  ): Promise<{ vault: VaultRecord; deposit: TransactionRecord | null }>;
  /** A test-mode deposit out of nothing (Simulate Deposit), in the vault's currency. */
  deposit(
    scope: Scope,
    vaultId: string,
    amount: AmountInput,
    metadata?: Metadata | null,
  ): Promise<{ vault: VaultRecord; deposit: TransactionRecord }>;
  getVault(scope: Scope, vaultId: string): Promise<VaultRecord>;
  listVaults(scope: Scope, query: ListVaultsQuery): Promise<Page<VaultRecord>>;
  updateVault(scope: Scope, vaultId: string, changes: VaultChanges): Promise<VaultRecord>;
  freezeVault(scope: Scope, vaultId: string, reason: string | null): Promise<VaultRecord>;
  unfreezeVault(scope: Scope, vaultId: string): Promise<VaultRecord>;
  closeVault(scope: Scope, vaultId: string, destination: CloseDestination): Promise<VaultRecord>;
  listBalanceSnapshots(
    scope: Scope,
    vaultId: string,
    query: ListBalanceSnapshotsQuery,
  ): Promise<Page<BalanceSnapshotRecord>>;
}

/**
 * A vault's authorization policy (contract section 11), a card's own policy (card-level
 * policies), their remaining limits and their history. `keyId` is the API key making a change
 * (its id, kept in the policy's history); null or absent for a change made without one.
 */
export interface PolicyOperations {
  /** Compiles `document` first: an invalid one never reaches the table. */
  setPolicy(
    scope: Scope,
    vaultId: string,
    document: unknown,
    keyId?: string | null,
  ): Promise<PolicyRecord>;
  getPolicy(scope: Scope, vaultId: string): Promise<PolicyRecord>;
  deletePolicy(scope: Scope, vaultId: string, keyId?: string | null): Promise<void>;
  simulatePolicy(scope: Scope, vaultId: string, input: SimulationInput): Promise<Simulation>;
  /** A card's own policy, compiled in its vault's currency; decided after the vault's. */
  setCardPolicy(
    scope: Scope,
    cardId: string,
    document: unknown,
    keyId?: string | null,
  ): Promise<PolicyRecord>;
  getCardPolicy(scope: Scope, cardId: string): Promise<PolicyRecord>;
  /** Answers the card's vault, for the deletion's answer. */
  deleteCardPolicy(
    scope: Scope,
    cardId: string,
    keyId?: string | null,
  ): Promise<{ vaultId: string }>;
  policyLimits(scope: Scope, owner: PolicyOwner): Promise<PolicyLimitsRecord>;
  listPolicyVersions(
    scope: Scope,
    owner: PolicyOwner,
    query: ListPolicyVersionsQuery,
  ): Promise<Page<PolicyVersionRecord>>;
  /**
   * Sets the document of `version` again, as a new version (its history row: a restore).
   * `version` as a path gives it: text that is not a version number names nothing (a 404).
   */
  restorePolicyVersion(
    scope: Scope,
    owner: PolicyOwner,
    version: string,
    keyId?: string | null,
  ): Promise<PolicyRecord>;
}
