import { assert, type Decimal } from '../core/index.js';
import { ALL_MERCHANTS, ALL_TIME_DAY, spendKeys } from './spend.js';
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
  return rowCount ?? 0;
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
