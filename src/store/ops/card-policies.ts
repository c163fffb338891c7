import {
  compilePolicy,
  presentDeletedPolicy,
  presentPolicy,
  SpendgateError,
  type CardStatus,
  type CompiledPolicy,
  type CurrencyCode,
  type PolicyDocument,
  type PolicyRecord,
  type Scope,
} from '../../core/index.js';
import { dropCardSpend, fillCardSpend } from '../card-spend.js';
import { lockVault, type StoreContext } from '../context.js';
import { appendEvent } from '../outbox.js';
import type { SqlQueryable } from '../sql/client.js';
import { oneRow } from '../sql/one-row.js';
import { CHANGE_WITHOUT_KEY, recordPolicyVersion, type PolicyChange } from './policy-history.js';

/*
 * Card-level policies (card_policies, migration 0009): a card's own policy, in the vault
 * policy's format, which an authorization must pass after the vault's (core decide). Set,
 * Get and Delete mirror the vault's (ops/policies.ts); the card's spend counters are kept
 * while it has one (card-spend.ts). Every change locks the card's vault first: the authorize
 * batch reads a card's policy and counters after locking the vault, so it decides on a policy
 * and counters that cannot change before it commits.
 */

/** A card of the scope, with its vault's id. */
export interface CardOwnerRow {
  card_id: string;
  card_status: CardStatus;
  vault_id: string;
}

/** The card `cardId` if the scope can see it; card_not_found (param `id`) otherwise. */
export async function findCard(
  tx: SqlQueryable,
  scope: Scope,
  cardId: string,
): Promise<CardOwnerRow> {
  const { rows } = await tx.query<CardOwnerRow>(
    `SELECT id AS card_id, status AS card_status, vault_id FROM cards
     WHERE id = $1 AND account_id = $2 AND mode = $3`,
    [cardId, scope.accountId, scope.mode],
  );
  const row = rows[0];
  if (row === undefined)
    throw new SpendgateError('card_not_found', `No card ${cardId.slice(0, 64)} exists.`, 'id');
  return row;
}

interface CardPolicyRow {
  card_id: string;
  version: number;
  document: PolicyDocument;
  created_at: Date;
  updated_at: Date;
}

function cardPolicyFromRow(row: CardPolicyRow, vaultId: string): PolicyRecord {
  return {
    vaultId,
    cardId: row.card_id,
    version: row.version,
    document: row.document,
    createdAtMs: row.created_at.getTime(),
    updatedAtMs: row.updated_at.getTime(),
  };
}

const noCardPolicy = (cardId: string) =>
  new SpendgateError('policy_not_found', `Card ${cardId} has no authorization policy.`, 'id');

/**
 * setCardPolicy (Set Card Policy; Restore Policy Version for a card): one transaction.
 * In: scope, cardId, the policy document (compiled first, in the vault's currency: an invalid
 *   one never reaches the table), who made the change (and, for a restore, the version).
 * Out: the card's policy with its new version (one more than any before, deletes included).
 * Writes: card_policies; when the card had no policy, its spend counters filled from its
 *   authorizations (card-spend.ts); policy_versions; outbox (policy.updated, the card's policy).
 * Fails: card_not_found, card_cancelled, vault_closed, policy_invalid (with param).
 */
export async function setCardPolicy(
  ctx: StoreContext,
  tx: SqlQueryable,
  scope: Scope,
  cardId: string,
  input: unknown,
  change: PolicyChange = CHANGE_WITHOUT_KEY,
): Promise<PolicyRecord> {
  const nowMs = ctx.clock();
  const card = await findCard(tx, scope, cardId);
  const vault = await lockVault(tx, scope, card.vault_id, 'id');
  if (card.card_status === 'cancelled')
    throw new SpendgateError('card_cancelled', `Card ${card.card_id} is cancelled.`, 'id');
  if (vault.status === 'closed')
    throw new SpendgateError('vault_closed', `Vault ${vault.id} is closed.`, 'id');
  const compiled = compilePolicy(input, { currency: vault.currency, templates: ctx.templates });
  const at = new Date(nowMs);
  // `kept`: whether the card had a policy just before, read in the statement that replaces it.
  const { rows } = await tx.query<CardPolicyRow & { kept: boolean | null }>(
    `WITH before AS (SELECT document IS NOT NULL AS kept FROM card_policies WHERE card_id = $1)
     INSERT INTO card_policies (card_id, version, document, created_at, updated_at)
     VALUES ($1, 1, $2, $3, $3)
     ON CONFLICT (card_id) DO UPDATE
       SET version = card_policies.version + 1, document = EXCLUDED.document, updated_at = EXCLUDED.updated_at,
           created_at = CASE WHEN card_policies.document IS NULL THEN EXCLUDED.created_at ELSE card_policies.created_at END,
           deleted_at = NULL
     RETURNING card_id, version, document, created_at, updated_at, (SELECT kept FROM before) AS kept`,
    [card.card_id, JSON.stringify(compiled.document), at],
  );
  const row = oneRow(rows, 'the card policy upsert');
  if (row.kept !== true) await fillCardSpend(tx, card.card_id);
  const policy = cardPolicyFromRow(row, vault.id);
  ctx.policyCache.getOrCompile(card.card_id, policy.version, () => compiled);
  await recordPolicyVersion(tx, card.card_id, policy.version, policy.document, change, nowMs);
  await appendEvent(tx, scope, 'policy.updated', presentPolicy(policy), nowMs);
  return policy;
}

/**
 * getCardPolicy (Get Card Policy): one read.
 * Fails: card_not_found, policy_not_found (the card has no policy of its own).
 */
export async function getCardPolicy(
  tx: SqlQueryable,
  scope: Scope,
  cardId: string,
): Promise<PolicyRecord> {
  type Row = Omit<CardPolicyRow, 'document'> & {
    vault_id: string;
    document: PolicyDocument | null;
  };
  const { rows } = await tx.query<Row>(
    `SELECT c.vault_id, c.id AS card_id, p.version, p.document, p.created_at, p.updated_at
     FROM cards c LEFT JOIN card_policies p ON p.card_id = c.id
     WHERE c.id = $1 AND c.account_id = $2 AND c.mode = $3`,
    [cardId, scope.accountId, scope.mode],
  );
  const row = rows[0];
  if (row === undefined)
    throw new SpendgateError('card_not_found', `No card ${cardId.slice(0, 64)} exists.`, 'id');
  const { document } = row;
  if (document === null) throw noCardPolicy(row.card_id);
  return cardPolicyFromRow({ ...row, document }, row.vault_id);
}

/**
 * deleteCardPolicy (Delete Card Policy): one transaction.
 * In: scope, cardId, who made the change.  Out: the card's vault (for the answer).
 * Writes: card_policies (document NULL, version + 1: a delete is a version of the history),
 *   the card's spend counters deleted (no longer kept), policy_versions, outbox
 *   (policy.deleted).
 * Fails: card_not_found, policy_not_found.
 */
export async function deleteCardPolicy(
  ctx: StoreContext,
  tx: SqlQueryable,
  scope: Scope,
  cardId: string,
  change: PolicyChange = CHANGE_WITHOUT_KEY,
): Promise<{ vaultId: string }> {
  const nowMs = ctx.clock();
  const card = await findCard(tx, scope, cardId);
  const vault = await lockVault(tx, scope, card.vault_id, 'id');
  const at = new Date(nowMs);
  const { rows } = await tx.query<{ version: number }>(
    `UPDATE card_policies SET version = version + 1, document = NULL, deleted_at = $2, updated_at = $2
     WHERE card_id = $1 AND document IS NOT NULL RETURNING version`,
    [card.card_id, at],
  );
  const deleted = rows[0];
  if (deleted === undefined) throw noCardPolicy(card.card_id);
  await dropCardSpend(tx, card.card_id);
  // The cache is keyed by owner id, a card's as a vault's: this drops the card's versions.
  ctx.policyCache.evictVault(card.card_id);
  await recordPolicyVersion(tx, card.card_id, deleted.version, null, change, nowMs);
  await appendEvent(
    tx,
    scope,
    'policy.deleted',
    presentDeletedPolicy(vault.id, card.card_id),
    nowMs,
  );
  return { vaultId: vault.id };
}

/** The card's compiled policy from the cache, compiled on a miss; null when it has none. */
export async function loadCompiledCardPolicy(
  ctx: StoreContext,
  tx: SqlQueryable,
  cardId: string,
  currency: CurrencyCode,
): Promise<{ version: number; policy: CompiledPolicy } | null> {
  const { rows } = await tx.query<{ version: number; document: unknown }>(
    'SELECT version, document FROM card_policies WHERE card_id = $1 AND document IS NOT NULL',
    [cardId],
  );
  const row = rows[0];
  if (row === undefined) return null;
  const policy = ctx.policyCache.getOrCompile(cardId, row.version, () =>
    compilePolicy(row.document, { currency, templates: ctx.templates }),
  );
  return { version: row.version, policy };
}
