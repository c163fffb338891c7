import {
  CompiledPolicyCache,
  type AuthorizationOutcome,
  type CardRecord,
  type Decimal,
  type Scope,
  type TemplateLibrary,
  type TransactionRecord,
  type TransferRecord,
  type VaultRecord,
} from '../core/index.js';
import { newId } from '../ids.js';
import { builtinRuleLibrary } from '../rule-library/load.js';
import type { StoreContext } from './context.js';
import { ensureSystemAccounts } from './ledger.js';
import { migrate } from './migrations/runner.js';
import {
  authorize,
  capture,
  expireHolds,
  reverse,
  type AuthorizeInput,
} from './ops/authorizations.js';
import { createCard, setCardStatus, type CreateCardInput } from './ops/cards.js';
import { deletePolicy, getPolicy, setPolicy, type PolicyRecord } from './ops/policies.js';
import { createInternalTransfer, type InternalTransferInput } from './ops/transfers.js';
import {
  closeVault,
  createVault,
  deposit,
  getVault,
  setVaultFrozen,
  type CreateVaultInput,
} from './ops/vaults.js';
import { Keyring } from './secrets/index.js';
import type { SqlClient } from './sql/client.js';

/**
 * The store port: every operation the service performs on money state, each one database
 * transaction (see the header of each operation in ops/ for its inputs, outputs and failure
 * codes). Implemented once over the SQL port, so the pg and PGlite adapters run the same code.
 */
export interface Store {
  readonly client: SqlClient;
  createAccount(name: string): Promise<{ id: string }>;
  createVault(
    scope: Scope,
    input: CreateVaultInput,
  ): Promise<{ vault: VaultRecord; deposit: TransactionRecord | null }>;
  deposit(
    scope: Scope,
    vaultId: string,
    amount: Decimal,
  ): Promise<{ vault: VaultRecord; deposit: TransactionRecord }>;
  getVault(scope: Scope, vaultId: string): Promise<VaultRecord>;
  freezeVault(scope: Scope, vaultId: string, reason: string | null): Promise<VaultRecord>;
  unfreezeVault(scope: Scope, vaultId: string): Promise<VaultRecord>;
  closeVault(
    scope: Scope,
    vaultId: string,
    destinationVaultId: string | null,
  ): Promise<VaultRecord>;
  createCard(scope: Scope, input: CreateCardInput): Promise<CardRecord>;
  setCardStatus(
    scope: Scope,
    cardId: string,
    status: 'active' | 'frozen' | 'cancelled',
  ): Promise<CardRecord>;
  setPolicy(scope: Scope, vaultId: string, document: unknown): Promise<PolicyRecord>;
  getPolicy(scope: Scope, vaultId: string): Promise<PolicyRecord>;
  deletePolicy(scope: Scope, vaultId: string): Promise<void>;
  authorize(scope: Scope, input: AuthorizeInput): Promise<AuthorizationOutcome>;
  capture(scope: Scope, transactionId: string, amount: Decimal | null): Promise<TransactionRecord>;
  reverse(scope: Scope, transactionId: string, amount: Decimal | null): Promise<TransactionRecord>;
  expireHolds(ageMsMax: number, batchMax?: number): Promise<number>;
  createInternalTransfer(scope: Scope, input: InternalTransferInput): Promise<TransferRecord>;
  close(): Promise<void>;
}

export interface StoreOptions {
  readonly client: SqlClient;
  readonly masterKey: Buffer;
  /** Epoch milliseconds; tests pass a clock they control. */
  readonly clock?: () => number;
  readonly templates?: TemplateLibrary;
  readonly policyCacheEntriesMax?: number;
}

/** Migrates the database, makes sure the system accounts exist, and returns the store. */
export async function openStore(options: StoreOptions): Promise<Store> {
  await migrate(options.client);
  await options.client.transaction(ensureSystemAccounts);
  const ctx: StoreContext = {
    client: options.client,
    clock: options.clock ?? Date.now,
    keyring: new Keyring(options.masterKey),
    policyCache: new CompiledPolicyCache(options.policyCacheEntriesMax),
    templates: options.templates ?? builtinRuleLibrary(),
  };
  return {
    client: options.client,
    async createAccount(name) {
      const id = newId('account', ctx.clock());
      await ctx.client.query('INSERT INTO accounts (id, name, created_at) VALUES ($1, $2, $3)', [
        id,
        name,
        new Date(ctx.clock()),
      ]);
      return { id };
    },
    createVault: (scope, input) => createVault(ctx, scope, input),
    deposit: (scope, vaultId, amount) => deposit(ctx, scope, vaultId, amount),
    getVault: (scope, vaultId) => getVault(ctx, scope, vaultId),
    freezeVault: (scope, vaultId, reason) => setVaultFrozen(ctx, scope, vaultId, true, reason),
    unfreezeVault: (scope, vaultId) => setVaultFrozen(ctx, scope, vaultId, false, null),
    closeVault: (scope, vaultId, destination) => closeVault(ctx, scope, vaultId, destination),
    createCard: (scope, input) => createCard(ctx, scope, input),
    setCardStatus: (scope, cardId, status) => setCardStatus(ctx, scope, cardId, status),
    setPolicy: (scope, vaultId, document) => setPolicy(ctx, scope, vaultId, document),
    getPolicy: (scope, vaultId) => getPolicy(ctx, scope, vaultId),
    deletePolicy: (scope, vaultId) => deletePolicy(ctx, scope, vaultId),
    authorize: (scope, input) => authorize(ctx, scope, input),
    capture: (scope, id, amount) => capture(ctx, scope, id, amount),
    reverse: (scope, id, amount) => reverse(ctx, scope, id, amount),
    expireHolds: (ageMsMax, batchMax) => expireHolds(ctx, ageMsMax, batchMax),
    createInternalTransfer: (scope, input) => createInternalTransfer(ctx, scope, input),
    close: () => options.client.close(),
  };
}
