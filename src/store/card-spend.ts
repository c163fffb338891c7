import { assert, type Decimal } from '../core/index.js';
import { ALL_MERCHANTS, ALL_TIME_DAY, billingSpendKeys, spendKeys } from './spend.js';
import type { SqlQueryable } from './sql/client.js';

/*
 * A card's own spend counters (card_spend_counters, migration 0009): the rows a card policy's
 * limits and spend facts sum, the same rows a vault's spend_counters has, per card. They are
 * kept only while the card has a policy, so a card without one costs the authorize path no
 * write: filled from the card's authorizations when its policy is set (fillCardSpend), added
 * to by the authorize batch in its one write (authorize/card-policy-batch.ts), taken back down by
 * releases (releaseKeysAndCardSpend), and deleted with the policy (dropCardSpend). Every one of
 * these runs under the lock of the card's vault, which every writer of the vault's counters
 * holds too, so the two never disagree about which approvals are counted.
 */

/**
 * Fills a card's counters from its authorizations (and force captures, which count as spend:
 * ops/clearing.ts), exactly as the approvals, captures and releases would have left them: per approved authorization (the ones with a spend day), what it still
 * counts (captured plus held) and one count while it is pending or completed, on the rows
 * `spendKeys` names (its day and all time, all merchants and its MCC). Rows of authorizations
 * released whole are written as zeros, as the vault's are. One statement over the card's
 * authorizations (through transactions_by_card_kind): run once per card policy set after none.
 * Needs: the card's vault locked, and no counters for the card (dropCardSpend, or never kept).
 */
export async function fillCardSpend(tx: SqlQueryable, cardId: string): Promise<number> {
  const { rowCount } = await tx.query(
    `INSERT INTO card_spend_counters (card_id, mcc, day, amount, count)
     SELECT $1, k.mcc, k.day, sum(t.amount), sum(t.count)
     FROM (SELECT spend_day, mcc, captured_amount + hold_remaining AS amount,
                  CASE WHEN status IN ('pending', 'completed') THEN 1 ELSE 0 END AS count
           FROM transactions
           WHERE card_id = $1 AND type IN ('card_authorization', 'force_capture')
             AND spend_day IS NOT NULL) t
     CROSS JOIN LATERAL (VALUES ($2, t.spend_day), ($2, $3::date), (t.mcc, t.spend_day), (t.mcc, $3::date))
       AS k(mcc, day)
     WHERE k.mcc IS NOT NULL
     GROUP BY k.mcc, k.day`,
    [cardId, ALL_MERCHANTS, ALL_TIME_DAY],
  );
  return (rowCount ?? 0) + (await fillCardBillingSpend(tx, cardId));
}

/**
 * The billing rows of fillCardSpend (issue 35): per approval whose billing amount was counted
 * (billing_counted), that amount in its currency's rows, count 0, as the batch writes them.
 */
async function fillCardBillingSpend(tx: SqlQueryable, cardId: string): Promise<number> {
  const { rowCount } = await tx.query(
    `INSERT INTO card_spend_counters (card_id, mcc, day, amount, count)
     SELECT $1, k.mcc, k.day, sum(t.billing_amount), 0
     FROM (SELECT spend_day, billing_currency AS currency, billing_currency || ':' || mcc AS at_mcc,
                  billing_amount
           FROM transactions
           WHERE card_id = $1 AND type = 'card_authorization' AND billing_counted) t
     CROSS JOIN LATERAL (VALUES (t.currency, t.spend_day), (t.currency, $2::date),
                                (t.at_mcc, t.spend_day), (t.at_mcc, $2::date)) AS k(mcc, day)
     WHERE k.mcc IS NOT NULL
     GROUP BY k.mcc, k.day`,
    [cardId, ALL_TIME_DAY],
  );
  return rowCount ?? 0;
}

/**
 * Takes an authorization's billing amount back out of the billing rows it was counted in (the
 * vault's, and its card's while the card has a policy), when the whole authorization is
 * released (reversed, expired, or declined by an advice): billing limits count an
 * authorization's billing amount while it is pending or completed. Nothing when it was never
 * counted (billing_counted), or was taken back already. Needs: the vault locked.
 */
export async function releaseBillingSpend(tx: SqlQueryable, transactionId: string): Promise<void> {
  const { rows } = await tx.query<{
    vault_id: string;
    card_id: string | null;
    spend_day: string;
    mcc: string | null;
    billing_amount: string;
    billing_currency: string;
  }>(
    `UPDATE transactions SET billing_counted = false WHERE id = $1 AND billing_counted
     RETURNING vault_id, card_id, spend_day::text AS spend_day, mcc, billing_amount::text AS billing_amount,
               billing_currency`,
    [transactionId],
  );
  const row = rows[0];
  if (row === undefined) return;
  const { mccs, days } = billingSpendKeys(row.billing_currency, row.spend_day, row.mcc);
  const { rowCount } = await tx.query(
    `UPDATE spend_counters c SET amount = c.amount - $4::numeric
     FROM unnest($2::text[], $3::text[]) AS k(mcc, day)
     WHERE c.vault_id = $1 AND c.mcc = k.mcc AND c.day = k.day::date`,
    [row.vault_id, mccs, days, row.billing_amount],
  );
  assert(rowCount === mccs.length, 'a release finds the billing rows its approval wrote');
  if (row.card_id === null) return;
  await tx.query(
    `UPDATE card_spend_counters c SET amount = c.amount - $4::numeric
     FROM unnest($2::text[], $3::text[]) AS k(mcc, day)
     WHERE c.card_id = $1 AND c.mcc = k.mcc AND c.day = k.day::date`,
    [row.card_id, mccs, days, row.billing_amount],
  );
}

/** Deletes a card's counters (its policy deleted): they are no longer kept. */
export async function dropCardSpend(tx: SqlQueryable, cardId: string): Promise<void> {
  await tx.query('DELETE FROM card_spend_counters WHERE card_id = $1', [cardId]);
}

/**
 * A release's counter keys, read with the card's counters taken back down in the same
 * statement (one round trip, as the read alone was): the authorization's spend day and MCC,
 * and, when its card's counters are kept (the card has a policy), the same rows the vault's
 * release changes, by the same deltas. A card without a policy has no rows: nothing changes.
 * Needs: the vault locked, the authorization approved (it has a spend day).
 */
export async function releaseKeysAndCardSpend(
  tx: SqlQueryable,
  transactionId: string,
  amountDelta: Decimal,
  countDelta: number,
): Promise<{ day: string; mcc: string | null }> {
  assert(amountDelta.lte(0) && countDelta <= 0, 'a release takes spend back down');
  assert(Number.isSafeInteger(countDelta), 'count deltas are integers');
  const { rows } = await tx.query<{
    spend_day: string | null;
    mcc: string | null;
    card_rows: number;
  }>(
    `WITH t AS (SELECT spend_day, mcc, card_id FROM transactions WHERE id = $1),
     card AS (
       UPDATE card_spend_counters c SET amount = c.amount + $2::numeric, count = c.count + $3::integer
       FROM t CROSS JOIN LATERAL (VALUES ($4, t.spend_day), ($4, $5::date), (t.mcc, t.spend_day), (t.mcc, $5::date))
         AS k(mcc, day)
       WHERE c.card_id = t.card_id AND c.mcc = k.mcc AND c.day = k.day
       RETURNING 1
     )
     SELECT t.spend_day::text AS spend_day, t.mcc, (SELECT count(*) FROM card)::int AS card_rows FROM t`,
    [transactionId, amountDelta.toFixed(), countDelta, ALL_MERCHANTS, ALL_TIME_DAY],
  );
  const row = rows[0];
  const day = row?.spend_day ?? null;
  assert(row !== undefined && day !== null, 'an approved authorization has a spend day');
  const expected = spendKeys({ day, mcc: row.mcc }).mccs.length;
  assert(
    row.card_rows === 0 || row.card_rows === expected,
    "a release finds all of its card's counters, or none (the card has no policy)",
  );
  return { day, mcc: row.mcc };
}
