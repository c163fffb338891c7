import { assert, presentTransaction, type TransactionRecord } from '../../core/index.js';
import { eventPayload } from '../outbox.js';
import {
  addApprovalDeltas,
  approvalOf,
  billingCountedOf,
  spendUpsertManySql,
  type CounterRowDelta,
  type SpendRowDelta,
} from '../spend.js';
import type { SqlQueryable } from '../sql/client.js';
import { SqlParams } from '../sql/params.js';
import { isRetryable } from '../sql/transaction.js';
import type { LockedBatch, VaultState } from './batch.js';
import { cardSpendUpsertCte } from './card-policy-batch.js';

/*
 * The batch's one write, whichever way it was decided (two-trips.ts after the lock, one-trip.ts
 * on known state, with the check that the state still holds), and how its failures read.
 */

/**
 * Writes the batch in one statement: the transactions; for the approvals, each vault's pending
 * total (one update per vault), the hold journal and the spend counters (one upsert per row;
 * and the card counters of cards with a policy, card-policy-batch.ts);
 * and one event per transaction. The same rows changeVaultTotals, changeSpend and
 * appendEvent write, sharing their SQL pieces. Parameters are bound by name (SqlParams), in an
 * order fixed by the code, so the text is the same every batch (one prepared statement).
 * In: `fresh`, the one-round-trip path's check (one-trip.ts): a condition on the
 *   database as the statement sees it, bound in the same `params`; false fails the statement
 *   with STALE_KNOWN_STATE, so nothing is written.
 * Out: the batch's vaults' `xmin` set to the row versions this write made.
 */
// Long because the batch's whole write is one statement, its text one template: split, the
// parts would only be read together.
export async function recordAuthorizations(
  query: SqlQueryable['query'],
  transactions: readonly TransactionRecord[],
  batch: Pick<LockedBatch, 'vaults' | 'cardPolicies'>,
  spendDay: string,
  nowMs: number,
  fresh?: (params: SqlParams) => string,
): Promise<void> {
  const approved = transactions.filter((transaction) => transaction.status === 'pending');
  const changed = vaultsApprovedOn(batch.vaults, approved);
  const params = new SqlParams();
  const check = freshCheck(fresh?.(params));
  const at = params.value(new Date(nowMs));
  const inserted = transactionRows(params, transactions);
  const pendingDeltas = params.unnest('d', {
    id: params.texts(changed.map((vault) => vault.id)),
    delta: params.texts(changed.map((vault) => vault.pendingDelta.toFixed())),
    ...(fresh === undefined ? {} : { xmin: params.texts(changed.map((vault) => vault.xmin)) }),
  });
  const holdChanges = params.unnest('h', {
    vault_id: params.texts(approved.map((t) => t.vaultId)),
    id: params.texts(approved.map((t) => t.id)),
    delta: params.texts(approved.map((t) => t.amount.toFixed())),
  });
  const events = authorizationEvents(params, transactions, nowMs);
  const vaultsChanged = params.value(changed.length, 'integer');
  const { rows } = await query<{ updated: number; ids: string[] | null; xmins: string[] | null }>(
    `WITH ${check.cte}
     inserted AS (
       INSERT INTO transactions (id, account_id, mode, vault_id, type, status, currency, amount, hold_remaining, card_id,
                                 merchant, mcc, network_transaction_id, decline_code, decline_reason, shadow_matches,
                                 stand_in, spend_day, created_at, updated_at, completed_at, billing_amount,
                                 billing_currency, merchant_amount, merchant_currency, requested_amount, partial, expires_at, rate,
                                 billing_counted)
       SELECT id, account_id, mode, vault_id, 'card_authorization', status, currency, amount::numeric, hold::numeric, card_id,
              merchant::jsonb, mcc, ntx, decline_code, decline_reason::jsonb, shadow_matches::jsonb, stand_in,
              CASE WHEN status = 'pending' THEN ${params.value(spendDay, 'date')} END, ${at}, ${at},
              CASE WHEN status = 'completed' THEN ${at}::timestamptz END, billing_amount::numeric, billing_currency,
              merchant_amount::numeric, merchant_currency, requested_amount::numeric, partial, expires_at::timestamptz, rate::jsonb,
              billing_counted
       FROM ${inserted}
     ),
     totals AS (
       UPDATE vaults SET pending = vaults.pending + d.delta::numeric, updated_at = ${at}
       FROM ${pendingDeltas} WHERE vaults.id = d.id${check.andHolds}
       RETURNING vaults.id, vaults.xmin::text AS xmin
     ),
     journal AS (
       INSERT INTO hold_changes (vault_id, transaction_id, delta, created_at)
       SELECT vault_id, id, delta::numeric, ${at} FROM ${holdChanges}
     ),
     counters AS (${spendUpsertManySql(params, spendRowDeltas(approved, spendDay))}),
     ${cardSpendUpsertCte(params, approved, batch.cardPolicies, spendDay)}
     events AS (
       INSERT INTO outbox_events (id, account_id, mode, type, payload, created_at)
       SELECT payload->>'id', account_id, payload->>'mode', payload->>'type', payload, ${at} FROM ${events}
       RETURNING id
     ),
     queued AS (INSERT INTO outbox_unrelayed (id) SELECT id FROM events)
     -- The postcondition, checked here rather than after the statement: the COMMIT may already
     -- be on its way behind it, and a failed statement turns that COMMIT into a ROLLBACK. The
     -- cast of a sentence to integer is the error PostgreSQL raises (evaluated only when due).
     SELECT CASE ${check.whenNot}WHEN count(*) = ${vaultsChanged} THEN count(*)::int
                 ELSE ('${check.shortBecause}: ' || count(*) || ' vaults updated of ' || ${vaultsChanged})::int END AS updated,
            array_agg(id) AS ids, array_agg(xmin) AS xmins
     FROM totals`,
    params.values,
  );
  const row = rows[0];
  assert(row?.updated === changed.length, 'every vault with approvals is updated once');
  keepRowVersions(batch.vaults, row.ids ?? [], row.xmins ?? []);
}

/**
 * The batch's vaults with an approval, their pending totals changed or not (their rows'
 * versions then tell whether their counters changed, VaultState.xmin), in id order: the order
 * every vault lock is taken in (context.ts, lockVaultPair), since on known state the update of
 * these rows takes their locks itself (one-trip.ts).
 */
function vaultsApprovedOn(
  vaults: ReadonlyMap<string, VaultState>,
  approved: readonly TransactionRecord[],
): VaultState[] {
  const approvedVaults = new Set(approved.map((transaction) => transaction.vaultId));
  return [...vaults.values()]
    .filter((vault) => approvedVaults.has(vault.id))
    .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

/** The row versions the write made, on the batch's vaults it updated (VaultState.xmin). */
function keepRowVersions(
  vaults: ReadonlyMap<string, VaultState>,
  vaultIds: readonly string[],
  xmins: readonly string[],
): void {
  assert(vaultIds.length === xmins.length, 'a version per vault updated');
  vaultIds.forEach((vaultId, index) => {
    const vault = vaults.get(vaultId);
    assert(vault !== undefined, 'a vault updated is of the batch');
    vault.xmin = xmins[index] as string;
  });
}

/**
 * The pieces of recordAuthorizations' statement that make its writes depend on `freshSql`
 * (none without it): the check as a CTE, made once on the statement's snapshot (before its
 * writes), and the condition (FRESH_OR_FAIL) of the pending totals' update and of the result.
 * The update also names the row version it decided on (`d.xmin`): the statement runs without a
 * lock before it (one-trip.ts), so a row another transaction wrote since its
 * snapshot is rechecked on its new version and left alone, and the count of vaults updated
 * falls short: stale (`shortBecause`), where without the check a short count is a bug.
 */
function freshCheck(freshSql: string | undefined): {
  cte: string;
  andHolds: string;
  whenNot: string;
  shortBecause: string;
} {
  if (freshSql === undefined) {
    return { cte: '', andHolds: '', whenNot: '', shortBecause: 'postcondition failed' };
  }
  return {
    cte: `fresh AS MATERIALIZED (SELECT ${freshSql} AS ok),`,
    andHolds: ` AND vaults.xmin::text = d.xmin AND ${FRESH_OR_FAIL}`,
    whenNot: `WHEN NOT ${FRESH_OR_FAIL} THEN 0 `,
    shortBecause: STALE_KNOWN_STATE,
  };
}

/**
 * What the one-round-trip path's statement fails with when the database no longer holds the
 * state it decided on: the cast of this sentence to boolean is the error PostgreSQL raises
 * (22P02, its text quoted in the message), as the postcondition's is.
 */
export const STALE_KNOWN_STATE = 'spendgate: the known state is stale';
/**
 * The check, true or the error: a condition of the pending totals' update, so that it fails
 * before the first row is written (a stale guess could otherwise trip the available-balance
 * CHECK first), and of the statement's result, so that it is made even when nothing is
 * approved. `f.ok` joined to the sentence keeps the cast from being a constant, which the
 * planner would fold, and fail, at once.
 */
const FRESH_OR_FAIL = `(SELECT CASE WHEN f.ok THEN true ELSE ('${STALE_KNOWN_STATE}: ' || f.ok)::boolean END FROM fresh f)`;

/** The transactions' rows, for the INSERT of recordAuthorizations. */
function transactionRows(params: SqlParams, transactions: readonly TransactionRecord[]): string {
  const column = <T>(value: (transaction: TransactionRecord) => T): T[] => transactions.map(value);
  return params.unnest('r', {
    id: params.texts(column((t) => t.id)),
    account_id: params.texts(column((t) => t.accountId)),
    mode: params.texts(column((t) => t.mode)),
    vault_id: params.texts(column((t) => t.vaultId)),
    status: params.texts(column((t) => t.status)),
    currency: params.texts(column((t) => t.currency)),
    amount: params.texts(column((t) => t.amount.toFixed())),
    hold: params.texts(column((t) => t.holdRemaining.toFixed())),
    card_id: params.texts(column((t) => t.cardId)),
    merchant: params.texts(column((t) => JSON.stringify(t.merchant))),
    mcc: params.texts(column((t) => t.merchant?.mcc ?? null)),
    ntx: params.texts(column((t) => t.networkTransactionId)),
    decline_code: params.texts(column((t) => t.declineCode)),
    decline_reason: params.texts(
      column((t) => (t.declineReason === null ? null : JSON.stringify(t.declineReason))),
    ),
    // NULL for none, nearly every row: no JSON is made or stored for it (migration 0010).
    shadow_matches: params.texts(
      column((t) => (t.shadowMatches.length === 0 ? null : JSON.stringify(t.shadowMatches))),
    ),
    stand_in: params.booleans(column((t) => t.standIn)),
    // Contract v1.2, section 16 (migration 0019).
    billing_amount: params.texts(column((t) => t.lifecycle?.billing?.amount.toFixed() ?? null)),
    billing_currency: params.texts(column((t) => t.lifecycle?.billing?.currency ?? null)),
    merchant_amount: params.texts(
      column((t) => t.lifecycle?.merchantAmount?.amount.toFixed() ?? null),
    ),
    merchant_currency: params.texts(column((t) => t.lifecycle?.merchantAmount?.currency ?? null)),
    requested_amount: params.texts(column((t) => t.lifecycle?.requestedAmount?.toFixed() ?? null)),
    partial: params.booleans(column((t) => t.lifecycle?.partial ?? false)),
    // The price a conversion used (NULL at par or in the asset: nearly every row).
    rate: params.texts(
      column((t) => (t.lifecycle?.rate == null ? null : JSON.stringify(t.lifecycle.rate))),
    ),
    // Whether the approval's billing amount went into billing counter rows (migration 0023),
    // so that a release takes back exactly what was added.
    billing_counted: params.booleans(
      column((t) => t.status === 'pending' && billingCountedOf(t) !== undefined),
    ),
    expires_at: params.texts(
      column((t) => {
        const expiresAtMs = t.lifecycle?.expiresAtMs ?? null;
        return expiresAtMs === null ? null : new Date(expiresAtMs).toISOString();
      }),
    ),
  });
}

/**
 * One event per transaction (approved or declined), for the INSERT of recordAuthorizations:
 * the payloads as one JSON array (SqlParams.jsons), their id, mode and type read from them.
 */
function authorizationEvents(
  params: SqlParams,
  transactions: readonly TransactionRecord[],
  nowMs: number,
): string {
  const payloads = transactions.map((transaction) => {
    const type =
      transaction.declineCode === null ? 'authorization.approved' : 'authorization.declined';
    const scope = { accountId: transaction.accountId, mode: transaction.mode };
    return eventPayload(scope, type, presentTransaction(transaction), nowMs);
  });
  return params.unnest('e', {
    account_id: params.texts(transactions.map((transaction) => transaction.accountId)),
    payload: params.jsons(payloads),
  });
}

/**
 * What the approvals add to the spend counters, one delta per row however many approvals
 * touch it: an upsert may not touch a row twice.
 */
function spendRowDeltas(approved: readonly TransactionRecord[], spendDay: string): SpendRowDelta[] {
  const deltas = new Map<string, CounterRowDelta>();
  for (const transaction of approved) {
    addApprovalDeltas(deltas, transaction.vaultId, approvalOf(transaction), spendDay);
  }
  return [...deltas.values()].map(({ ownerId, mcc, day, amount, count }) => ({
    vaultId: ownerId,
    mcc,
    day,
    amount,
    count,
  }));
}

/**
 * Two first callbacks with one networkTransactionId on different vaults race to the unique
 * index; the loser must run again (and then finds the winner's decision).
 */
export function isUniqueViolation(error: unknown): boolean {
  return (
    typeof error === 'object' &&
    error !== null &&
    'code' in error &&
    error.code === '23505' &&
    !isRetryable(error)
  );
}
