import type {
  AmountInput,
  BalanceSnapshotRecord,
  Metadata,
  PolicyRecord,
  Scope,
  TransactionRecord,
  VaultRecord,
} from '../../core/index.js';
import type { ListBalanceSnapshotsQuery, ListVaultsQuery, Page } from '../ops/lists.js';
import type { Simulation, SimulationInput } from '../ops/policies.js';
import type { CloseDestination, CreateVaultInput } from '../ops/vaults.js';

export type { CloseDestination, CreateVaultInput } from '../ops/vaults.js';
export type { Simulation, SimulationInput } from '../ops/policies.js';

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

/** A vault's authorization policy (contract section 11). */
export interface PolicyOperations {
  /** Compiles `document` first: an invalid one never reaches the table. */
  setPolicy(scope: Scope, vaultId: string, document: unknown): Promise<PolicyRecord>;
  getPolicy(scope: Scope, vaultId: string): Promise<PolicyRecord>;
  deletePolicy(scope: Scope, vaultId: string): Promise<void>;
  simulatePolicy(scope: Scope, vaultId: string, input: SimulationInput): Promise<Simulation>;
}
