import {
  amountIn,
  type CardStatus,
  type CompiledPolicy,
  compilePolicy,
  type CurrencyCode,
  currencyOf,
  decide,
  decisionVaultOf,
  type PolicyDocument,
  type PolicyRecord,
  presentDeletedPolicy,
  presentPolicy,
  type Scope,
  SpendgateError,
  type SpendTotals,
  type VaultRecord,
} from '../../core/index.js';
import { lockVault, type StoreContext } from '../context.js';
import { appendEvent } from '../outbox.js';
import { CARD_SPEND } from '../spend.js';
import { readSpend } from '../spend-window.js';
import { loadCompiledCardPolicy } from './card-policies.js';
import { CHANGE_WITHOUT_KEY, recordPolicyVersion, type PolicyChange } from './policy-history.js';
import { getVault } from './vaults.js';
import type { SqlQueryable } from '../sql/client.js';
import { oneRow } from '../sql/one-row.js';
import type { Simulation, SimulationInput } from '../port/vaults.js';

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
 * setPolicy (Set Policy; Restore Policy Version for a vault): one transaction.
 * In: scope, vaultId, the policy document (compiled first: invalid ones never reach the table),
 *   who made the change (and, for a restore, the version put back).
 * Out: the policy with its new version (one more than any before, deletes included).
 * Writes: policies, policy_versions, outbox (policy.updated).
 * Fails: policy_invalid (with param), vault_not_found, vault_closed.
 */
export async function setPolicy(
  ctx: StoreContext,
  tx: SqlQueryable,
  scope: Scope,
  vaultId: string,
  input: unknown,
  change: PolicyChange = CHANGE_WITHOUT_KEY,
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
  await recordPolicyVersion(tx, vault.id, policy.version, policy.document, change, nowMs);
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
 * In: scope, vaultId, who made the change.  Out: nothing.
 * Writes: policies (document NULL, version + 1: a delete is a version of the history, and the
 * count goes on from it), policy_versions, outbox (policy.deleted).
 * Fails: vault_not_found, policy_not_found.
 */
export async function deletePolicy(
  ctx: StoreContext,
  tx: SqlQueryable,
  scope: Scope,
  vaultId: string,
  change: PolicyChange = CHANGE_WITHOUT_KEY,
): Promise<void> {
  const nowMs = ctx.clock();
  const vault = await lockVault(tx, scope, vaultId, 'id');
  const { rows } = await tx.query<{ version: number }>(
    `UPDATE policies SET version = version + 1, document = NULL, deleted_at = $2, updated_at = $2
     WHERE vault_id = $1 AND document IS NOT NULL RETURNING version`,
    [vault.id, new Date(nowMs)],
  );
  const deleted = rows[0];
  if (deleted === undefined)
    throw new SpendgateError(
      'policy_not_found',
      `Vault ${vault.id} has no authorization policy.`,
      'id',
    );
  ctx.policyCache.evictVault(vault.id);
  await recordPolicyVersion(tx, vault.id, deleted.version, null, change, nowMs);
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

/**
 * simulatePolicy: one read-only transaction (Simulate Policy, contract section 7).
 * In: scope, vaultId, an optional draft policy, a transaction (amount, merchant, optional card).
 * Out: the decision the vault would give now, against its live balance and spend aggregates,
 *   shadow matches included; with a card that has a policy of its own, that policy decides
 *   too, against the card's spend, as authorize would (the draft stands for the vault's
 *   policy only). Writes nothing.
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
  const card = await simulatedCard(ctx, tx, scope, vault, input.request.cardId, nowMs);
  const spend = policy === null ? {} : await readSpend(tx, vault.id, policy.aggregates, nowMs);
  const decision = decide({
    card: { id: input.request.cardId, vaultId: vault.id, status: card.status },
    vault: decisionVaultOf(vault),
    policy,
    spend,
    ...card.policy,
    at: nowMs,
    request: { ...input.request, amount, currency: currency.code },
  });
  return { decision, vaultId: vault.id, amount, currency };
}

/**
 * The card a simulation names (none: an active card with no policy of its own): its status,
 * and its own policy with the card's spend for it, as authorize would decide with them.
 */
async function simulatedCard(
  ctx: StoreContext,
  tx: SqlQueryable,
  scope: Scope,
  vault: VaultRecord,
  cardId: string,
  nowMs: number,
): Promise<{
  status: CardStatus;
  policy: { cardPolicy: CompiledPolicy; cardSpend: SpendTotals } | Record<string, never>;
}> {
  if (cardId === '') return { status: 'active', policy: {} };
  const { rows } = await tx.query<{ status: CardStatus }>(
    'SELECT status FROM cards WHERE id = $1 AND vault_id = $2 AND account_id = $3 AND mode = $4',
    [cardId, vault.id, scope.accountId, scope.mode],
  );
  const status = rows[0]?.status;
  if (status === undefined) {
    throw new SpendgateError(
      'card_not_found',
      `No card ${cardId.slice(0, 64)} exists on this vault.`,
      'transaction.cardId',
    );
  }
  const own = await loadCompiledCardPolicy(ctx, tx, cardId, vault.currency);
  if (own === null) return { status, policy: {} };
  const cardSpend = await readSpend(tx, cardId, own.policy.aggregates, nowMs, CARD_SPEND);
  return { status, policy: { cardPolicy: own.policy, cardSpend } };
}
