import {
  compilePolicy,
  currencyOf,
  limitStatuses,
  type Scope,
  SpendgateError,
} from '../../core/index.js';
import type { StoreContext } from '../context.js';
import { CARD_SPEND, VAULT_SPEND } from '../spend.js';
import { readSpend } from '../spend-window.js';
import type { SqlQueryable } from '../sql/client.js';
import type { PolicyLimitsRecord, PolicyOwner } from '../port/vaults.js';

/**
 * policyLimits (Remaining Limits): one read-only transaction.
 * In: scope, the owner (a vault, or a card with a policy of its own).
 * Out: for each limit of its policy (its own and its templates', in decision order), what the
 *   window has used, what the next authorization may still take, and when the window starts
 *   again. The same counter rows, summed by the same function (SpendCounters.totals), as
 *   authorize decides with, and the decision's own comparisons (core limit-status.ts): a
 *   purchase above `remaining` is declined by that limit, one of exactly `remaining` is not.
 *   A vault's spend counts its card authorizations and external transfers; a card's, its own
 *   authorizations.
 * Fails: vault_not_found / card_not_found, policy_not_found (no policy).
 */
export async function policyLimits(
  ctx: StoreContext,
  tx: SqlQueryable,
  scope: Scope,
  owner: PolicyOwner,
): Promise<PolicyLimitsRecord> {
  const nowMs = ctx.clock();
  const row = await readPolicyOf(tx, scope, owner);
  if (row.document === null || row.version === null) {
    const name = owner.kind === 'vault' ? `Vault ${row.vault_id}` : `Card ${owner.id}`;
    throw new SpendgateError('policy_not_found', `${name} has no authorization policy.`, 'id');
  }
  const { document, version } = row;
  const currency = currencyOf(row.currency);
  const policy = ctx.policyCache.getOrCompile(owner.id, version, () =>
    compilePolicy(document, { currency, templates: ctx.templates }),
  );
  const target = owner.kind === 'vault' ? VAULT_SPEND : CARD_SPEND;
  const spend = await readSpend(tx, owner.id, policy.aggregates, nowMs, target);
  return {
    of: {
      vaultId: row.vault_id,
      cardId: owner.kind === 'card' ? owner.id : null,
      version,
      currency,
      asOfMs: nowMs,
    },
    statuses: limitStatuses(policy.limits, spend, nowMs),
  };
}

interface PolicyOfRow {
  vault_id: string;
  currency: string;
  version: number | null;
  document: unknown;
}

/** The owner's current policy (document null: none), with its vault and currency, in one read. */
async function readPolicyOf(
  tx: SqlQueryable,
  scope: Scope,
  owner: PolicyOwner,
): Promise<PolicyOfRow> {
  const { rows } = await tx.query<PolicyOfRow>(
    owner.kind === 'vault'
      ? `SELECT v.id AS vault_id, v.currency, p.version, p.document
         FROM vaults v LEFT JOIN policies p ON p.vault_id = v.id
         WHERE v.id = $1 AND v.account_id = $2 AND v.mode = $3`
      : `SELECT v.id AS vault_id, v.currency, p.version, p.document
         FROM cards c JOIN vaults v ON v.id = c.vault_id LEFT JOIN card_policies p ON p.card_id = c.id
         WHERE c.id = $1 AND c.account_id = $2 AND c.mode = $3`,
    [owner.id, scope.accountId, scope.mode],
  );
  const row = rows[0];
  if (row !== undefined) return row;
  const shown = owner.id.slice(0, 64);
  throw owner.kind === 'vault'
    ? new SpendgateError('vault_not_found', `No vault ${shown} exists.`, 'id')
    : new SpendgateError('card_not_found', `No card ${shown} exists.`, 'id');
}
