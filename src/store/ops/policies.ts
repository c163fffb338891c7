import {
  amountIn,
  currencyOf,
  type AmountInput,
  type CurrencyInfo,
  type Decimal,
  decisionVaultOf,
  compilePolicy,
  decide,
  type AuthorizationRequest,
  type CardStatus,
  type Decision,
  SpendgateError,
  type CompiledPolicy,
  type CurrencyCode,
  type PolicyDocument,
  type PolicyRecord,
  presentDeletedPolicy,
  presentPolicy,
  type Scope,
} from '../../core/index.js';
import { lockVault, type StoreContext } from '../context.js';
import { appendEvent } from '../outbox.js';
import { readSpend } from '../spend-window.js';
import { getVault } from './vaults.js';
import type { SqlQueryable } from '../sql/client.js';
import { oneRow } from '../sql/one-row.js';

interface PolicyRow {
  vault_id: string;
  version: number;
  document: PolicyDocument | null;
  created_at: Date;
  updated_at: Date;
}

function policyFromRow(row: PolicyRow & { document: PolicyDocument }): PolicyRecord {
  return {
    vaultId: row.vault_id,
    version: row.version,
    document: row.document,
    createdAtMs: row.created_at.getTime(),
    updatedAtMs: row.updated_at.getTime(),
  };
}

/**
 * setPolicy: one transaction.
 * In: scope, vaultId, the policy document (compiled first: invalid ones never reach the table).
 * Out: the policy with its new version (one more than any before, deleted ones included).
 * Writes: policies, outbox (policy.updated).
 * Fails: policy_invalid (with param), vault_not_found, vault_closed.
 */
export async function setPolicy(
  ctx: StoreContext,
  tx: SqlQueryable,
  scope: Scope,
  vaultId: string,
  input: unknown,
): Promise<PolicyRecord> {
  const nowMs = ctx.clock();
  const vault = await lockVault(tx, scope, vaultId, 'id');
  if (vault.status === 'closed')
    throw new SpendgateError('vault_closed', `Vault ${vault.id} is closed.`, 'id');
  const compiled = compilePolicy(input, { currency: vault.currency, templates: ctx.templates });
  const at = new Date(nowMs);
  const { rows } = await tx.query<PolicyRow & { document: PolicyDocument }>(
    `INSERT INTO policies (vault_id, version, document, created_at, updated_at)
     VALUES ($1, 1, $2, $3, $3)
     ON CONFLICT (vault_id) DO UPDATE
       SET version = policies.version + 1, document = EXCLUDED.document, updated_at = EXCLUDED.updated_at,
           created_at = CASE WHEN policies.document IS NULL THEN EXCLUDED.created_at ELSE policies.created_at END,
           deleted_at = NULL
     RETURNING vault_id, version, document, created_at, updated_at`,
    [vault.id, JSON.stringify(compiled.document), at],
  );
  const policy = policyFromRow(oneRow(rows, 'the policy upsert'));
  ctx.policyCache.getOrCompile(vault.id, policy.version, () => compiled);
  await appendEvent(tx, scope, 'policy.updated', presentPolicy(policy), nowMs);
  return policy;
}

export async function getPolicy(
  tx: SqlQueryable,
  scope: Scope,
  vaultId: string,
): Promise<PolicyRecord> {
  const { rows } = await tx.query<PolicyRow>(
    `SELECT p.vault_id, p.version, p.document, p.created_at, p.updated_at
     FROM vaults v LEFT JOIN policies p ON p.vault_id = v.id
     WHERE v.id = $1 AND v.account_id = $2 AND v.mode = $3`,
    [vaultId, scope.accountId, scope.mode],
  );
  const row = rows[0];
  if (row === undefined)
    throw new SpendgateError('vault_not_found', `No vault ${vaultId.slice(0, 64)} exists.`, 'id');
  if (row.document === null || row.vault_id === null) {
    throw new SpendgateError(
      'policy_not_found',
      `Vault ${vaultId} has no authorization policy.`,
      'id',
    );
  }
  return policyFromRow(row as PolicyRow & { document: PolicyDocument });
}

/**
 * deletePolicy: one transaction.
 * In: scope, vaultId.  Out: nothing.  Writes: policies.document = NULL (the version stays),
 * outbox (policy.deleted).  Fails: vault_not_found, policy_not_found.
 */
export async function deletePolicy(
  ctx: StoreContext,
  tx: SqlQueryable,
  scope: Scope,
  vaultId: string,
): Promise<void> {
  const nowMs = ctx.clock();
  const vault = await lockVault(tx, scope, vaultId, 'id');
  const { rowCount } = await tx.query(
    'UPDATE policies SET document = NULL, deleted_at = $2, updated_at = $2 WHERE vault_id = $1 AND document IS NOT NULL',
    [vault.id, new Date(nowMs)],
  );
  if (rowCount === 0)
    throw new SpendgateError(
      'policy_not_found',
      `Vault ${vault.id} has no authorization policy.`,
      'id',
    );
  ctx.policyCache.evictVault(vault.id);
  await appendEvent(tx, scope, 'policy.deleted', presentDeletedPolicy(vault.id), nowMs);
}

/** The vault's compiled policy from the cache, compiled on a miss; null when it has none. */
export async function loadCompiledPolicy(
  ctx: StoreContext,
  tx: SqlQueryable,
  vaultId: string,
  currency: CurrencyCode,
): Promise<CompiledPolicy | null> {
  const { rows } = await tx.query<{ version: number; document: unknown }>(
    'SELECT version, document FROM policies WHERE vault_id = $1 AND document IS NOT NULL',
    [vaultId],
  );
  const row = rows[0];
  if (row === undefined) return null;
  return ctx.policyCache.getOrCompile(vaultId, row.version, () =>
    compilePolicy(row.document, { currency, templates: ctx.templates }),
  );
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

/**
 * simulatePolicy: one read-only transaction (Simulate Policy, contract section 7).
 * In: scope, vaultId, an optional draft policy, a transaction (amount, merchant, optional card).
 * Out: the decision the vault would give now, against its live balance and spend aggregates,
 *   shadow matches included. Writes nothing.
 * Fails: vault_not_found, card_not_found (a card id of another vault or account),
 *   policy_invalid (the draft).
 */
export async function simulatePolicy(
  ctx: StoreContext,
  tx: SqlQueryable,
  scope: Scope,
  vaultId: string,
  input: SimulationInput,
): Promise<Simulation> {
  const nowMs = ctx.clock();
  const vault = await getVault(tx, scope, vaultId);
  const currency = currencyOf(input.request.currency ?? vault.currency, 'transaction.currency');
  const amount = amountIn(input.request.amount, currency, { param: 'transaction.amount' });
  const policy =
    input.draft === null
      ? await loadCompiledPolicy(ctx, tx, vault.id, vault.currency)
      : compilePolicy(input.draft, { currency: vault.currency, templates: ctx.templates });
  let cardStatus: CardStatus = 'active';
  if (input.request.cardId !== '') {
    const { rows } = await tx.query<{ status: CardStatus }>(
      'SELECT status FROM cards WHERE id = $1 AND vault_id = $2 AND account_id = $3 AND mode = $4',
      [input.request.cardId, vault.id, scope.accountId, scope.mode],
    );
    const status = rows[0]?.status;
    if (status === undefined) {
      throw new SpendgateError(
        'card_not_found',
        `No card ${input.request.cardId.slice(0, 64)} exists on this vault.`,
        'transaction.cardId',
      );
    }
    cardStatus = status;
  }
  const spend = policy === null ? {} : await readSpend(tx, vault.id, policy.aggregates, nowMs);
  const decision = decide({
    card: { id: input.request.cardId, vaultId: vault.id, status: cardStatus },
    vault: decisionVaultOf(vault),
    policy,
    spend,
    nowMs,
    request: { ...input.request, amount, currency: currency.code },
  });
  return { decision, vaultId: vault.id, amount, currency };
}
