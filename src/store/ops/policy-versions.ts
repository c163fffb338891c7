import {
  SpendgateError,
  type PolicyDocument,
  type PolicyRecord,
  type PolicyVersionRecord,
  type Scope,
} from '../../core/index.js';
import type { StoreContext } from '../context.js';
import type { SqlQueryable } from '../sql/client.js';
import { findCard, setCardPolicy } from './card-policies.js';
import { checkLimit } from './list-pages.js';
import type { Page } from '../port/pages.js';
import { setPolicy } from './policies.js';
import { getVault } from './vaults.js';
import type { ListPolicyVersionsQuery, PolicyOwner } from '../port/vaults.js';

/*
 * The history of a policy (policy_versions, migration 0009): every Set, Delete and Restore of
 * a vault's or a card's policy adds one row, numbered by the policy's version after it, with
 * the API key that made it. List Policy Versions reads it; Restore puts a version's document
 * back as a new version.
 */

/** The largest version a path or cursor may name: the column is a 32-bit integer. */
const VERSION_MAX = 2_147_483_647;

/** The owner, if the scope can see it (else its kind's 404), with the vault it belongs to. */
async function ownerOf(
  tx: SqlQueryable,
  scope: Scope,
  owner: PolicyOwner,
): Promise<{ vaultId: string; cardId: string | null }> {
  if (owner.kind === 'vault')
    return { vaultId: (await getVault(tx, scope, owner.id)).id, cardId: null };
  const card = await findCard(tx, scope, owner.id);
  return { vaultId: card.vault_id, cardId: card.card_id };
}

interface VersionRow {
  version: number;
  change: PolicyVersionRecord['change'];
  document: PolicyDocument | null;
  restored_from: number | null;
  key_id: string | null;
  created_at: Date;
}

/**
 * listPolicyVersions (List Policy Versions): one read-only transaction.
 * In: scope, the owner (vault or card), limit 1-100, startingAfter (a version number from a
 *   previous page).
 * Out: a page of the owner's policy versions, newest first; nextCursor is the last version's
 *   number, as a string.
 * Reads: policy_versions through its primary key (owner_id, version).
 * Fails: vault_not_found / card_not_found, parameter_invalid (limit, startingAfter).
 */
export async function listPolicyVersions(
  tx: SqlQueryable,
  scope: Scope,
  owner: PolicyOwner,
  query: ListPolicyVersionsQuery,
): Promise<Page<PolicyVersionRecord>> {
  checkLimit(query.limit);
  const after = query.startingAfter === undefined ? null : versionOf(query.startingAfter);
  if (after === null && query.startingAfter !== undefined) {
    throw new SpendgateError(
      'parameter_invalid',
      'startingAfter must be a version number from a previous page.',
      'startingAfter',
    );
  }
  const { vaultId, cardId } = await ownerOf(tx, scope, owner);
  const { rows } = await tx.query<VersionRow>(
    `SELECT version, change, document, restored_from, key_id, created_at FROM policy_versions
     WHERE owner_id = $1 AND ($2::integer IS NULL OR version < $2::integer)
     ORDER BY version DESC LIMIT $3`,
    [owner.id, after, query.limit + 1],
  );
  const hasMore = rows.length > query.limit;
  const data = rows.slice(0, query.limit).map((row): PolicyVersionRecord => ({
    vaultId,
    cardId,
    version: row.version,
    change: row.change,
    restoredFrom: row.restored_from,
    keyId: row.key_id,
    document: row.document,
    createdAtMs: row.created_at.getTime(),
  }));
  const last = data[data.length - 1];
  return { data, hasMore, nextCursor: hasMore && last !== undefined ? String(last.version) : null };
}

/** A version number written in decimal (1 to 2^31 - 1), or null. */
export function versionOf(text: string): number | null {
  if (!/^[1-9][0-9]{0,9}$/.test(text)) return null;
  const version = Number(text);
  return version <= VERSION_MAX ? version : null;
}

/**
 * restorePolicyVersion (Restore Policy Version): one transaction.
 * In: scope, the owner, the version to put back (as the path gives it: any text, of which
 *   only a version number of the owner's history names anything), who asks.
 * Out: the policy, set again from that version's document as a new version (Set Policy's
 *   answer), its history row a `restore` naming the version restored.
 * Writes: what Set Policy (or Set Card Policy) writes, outbox policy.updated.
 * Fails: vault_not_found / card_not_found; policy_not_found (param `version`: no such version);
 *   parameter_invalid (param `version`: the version is a delete, with no document);
 *   what Set Policy fails with (vault_closed, card_cancelled, policy_invalid when the rule
 *   library no longer has a template it names).
 */
export async function restorePolicyVersion(
  ctx: StoreContext,
  tx: SqlQueryable,
  scope: Scope,
  owner: PolicyOwner,
  versionText: string,
  keyId: string | null,
): Promise<PolicyRecord> {
  await ownerOf(tx, scope, owner);
  const version = versionOf(versionText);
  // Not a version number: it names nothing, as an unknown one does (a 404, like a bad id).
  const { rows } =
    version === null
      ? { rows: [] }
      : await tx.query<{ document: PolicyDocument | null }>(
          'SELECT document FROM policy_versions WHERE owner_id = $1 AND version = $2',
          [owner.id, version],
        );
  const name = owner.kind === 'vault' ? `Vault ${owner.id}` : `Card ${owner.id}`;
  const row = rows[0];
  if (version === null || row === undefined) {
    throw new SpendgateError(
      'policy_not_found',
      `${name} has no policy version ${versionText.slice(0, 16)}.`,
      'version',
    );
  }
  if (row.document === null) {
    throw new SpendgateError(
      'parameter_invalid',
      `Version ${version} of the policy of ${owner.kind} ${owner.id} is its deletion, with no document to restore.`,
      'version',
    );
  }
  const change = { keyId, restoredFrom: version };
  return owner.kind === 'vault'
    ? setPolicy(ctx, tx, scope, owner.id, row.document, change)
    : setCardPolicy(ctx, tx, scope, owner.id, row.document, change);
}
