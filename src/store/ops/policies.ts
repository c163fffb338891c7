import {
  amountIn,
  currencyOf,
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
  type SpendTotals,
  type VaultRecord,
  presentDeletedPolicy,
  presentPolicy,
  type Scope,
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
import { inPipeline } from '../sql/pipeline.js';
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
  const { cardId } = input.request;
  // The vault and the card it names in one round trip; a missing vault is refused first.
  const [vault, cardStatus] = await inPipeline(tx, () => [
    getVault(tx, scope, vaultId),
    cardId === ''
      ? Promise.resolve<CardStatus>('active')
      : cardStatusOn(tx, scope, vaultId, cardId),
  ]);
  const currency = currencyOf(input.request.currency ?? vault.currency, 'transaction.currency');
  const amount = amountIn(input.request.amount, currency, { param: 'transaction.amount' });
  const draft =
    input.draft === null
      ? null
      : compilePolicy(input.draft, { currency: vault.currency, templates: ctx.templates });
  const request = { ...input.request, amount, currency: currency.code };
  const decision = await decideAsAuthorize(ctx, tx, { vault, cardStatus, draft, request, nowMs });
  return { decision, vaultId: vault.id, amount, currency };
}

/** What decideAsAuthorize decides on: a vault as read (or locked), and the card's status. */
export interface DecideOn {
  readonly vault: VaultRecord;
  readonly cardStatus: CardStatus;
  /** A compiled draft standing for the vault's policy; null: the vault's own policy. */
  readonly draft: CompiledPolicy | null;
  /** The purchase, its amount read; cardId '' for none (an active card, no policy of its own). */
  readonly request: AuthorizationRequest;
  readonly nowMs: number;
}

/**
 * What authorize would decide now for `request` on `on.vault` (Simulate Policy, and what a
 * force capture records it would have said): the vault's policy (or the draft) against the
 * vault's spend, and the card's own policy, if any, against the card's, as authorize decides.
 * Its reads go in two round trips (sql/pipeline.ts): both policies, then both spends.
 */
export async function decideAsAuthorize(
  ctx: StoreContext,
  tx: SqlQueryable,
  on: DecideOn,
): Promise<Decision> {
  const { vault, request, nowMs } = on;
  const { cardId } = request;
  const [policy, own] = await inPipeline(tx, () => [
    on.draft === null
      ? loadCompiledPolicy(ctx, tx, vault.id, vault.currency)
      : Promise.resolve(on.draft),
    cardId === '' ? Promise.resolve(null) : loadCompiledCardPolicy(ctx, tx, cardId, vault.currency),
  ]);
  const [spend, cardSpend] = await inPipeline(tx, () => [
    policy === null
      ? Promise.resolve<SpendTotals>({})
      : readSpend(tx, vault.id, policy.aggregates, nowMs),
    own === null
      ? Promise.resolve<SpendTotals>({})
      : readSpend(tx, cardId, own.policy.aggregates, nowMs, CARD_SPEND),
  ]);
  return decide({
    card: { id: cardId, vaultId: vault.id, status: on.cardStatus },
    vault: decisionVaultOf(vault),
    policy,
    spend,
    ...(own === null ? {} : { cardPolicy: own.policy, cardSpend }),
    at: nowMs,
    request,
  });
}

/** The status of a card of the vault's. Fails: card_not_found (another vault's or account's). */
async function cardStatusOn(
  tx: SqlQueryable,
  scope: Scope,
  vaultId: string,
  cardId: string,
): Promise<CardStatus> {
  const { rows } = await tx.query<{ status: CardStatus }>(
    'SELECT status FROM cards WHERE id = $1 AND vault_id = $2 AND account_id = $3 AND mode = $4',
    [cardId, vaultId, scope.accountId, scope.mode],
  );
  const status = rows[0]?.status;
  if (status === undefined) {
    throw new SpendgateError(
      'card_not_found',
      `No card ${cardId.slice(0, 64)} exists on this vault.`,
      'transaction.cardId',
    );
  }
  return status;
}
