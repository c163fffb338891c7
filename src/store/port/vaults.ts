import type {
  AmountInput,
  BalanceSnapshotRecord,
  Metadata,
  PolicyRecord,
  PolicyVersionRecord,
  Scope,
  TransactionRecord,
  VaultRecord,
} from '../../core/index.js';
import type { ListBalanceSnapshotsQuery, ListVaultsQuery, Page } from '../ops/lists.js';
import type { Simulation, SimulationInput } from '../ops/policies.js';
import type { PolicyLimitsRecord } from '../ops/policy-limits.js';
import type { ListPolicyVersionsQuery, PolicyOwner } from '../ops/policy-versions.js';
import type { CloseDestination, CreateVaultInput } from '../ops/vaults.js';

export type { CloseDestination, CreateVaultInput } from '../ops/vaults.js';
export type { Simulation, SimulationInput } from '../ops/policies.js';
export type { PolicyLimitsRecord } from '../ops/policy-limits.js';
export type { ListPolicyVersionsQuery, PolicyOwner } from '../ops/policy-versions.js';

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
