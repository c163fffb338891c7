import type { SqlQueryable } from '../../src/store/sql/client.js';

/**
 * Card authorizations written straight into `transactions` by one INSERT ... SELECT (for the
 * backtests that need more than a request replays at once): `count` rows on the card, one a
 * millisecond, ending just before `endMs`, ids of the form the service makes (UUIDv7 bodies
 * led by their millisecond). Amounts cycle 1 to 200; every fourth is declined by `limits[0]`
 * (authorization_failed), the rest approved and captured whole. History only: no ledger
 * entries, holds or counters go with them.
 */
export async function insertAuthorizations(
  db: SqlQueryable,
  target: {
    readonly accountId: string;
    readonly mode: 'test' | 'live';
    readonly vaultId: string;
    readonly cardId: string;
  },
  count: number,
  endMs: number,
): Promise<void> {
  await db.query(
    `INSERT INTO transactions (id, account_id, mode, vault_id, type, status, currency, amount, captured_amount,
                               card_id, merchant, mcc, decline_code, decline_reason, spend_day, created_at,
                               updated_at, completed_at)
     SELECT 'txn_' || lpad(to_hex(ms), 12, '0') || '7' || lpad(to_hex(i), 19, '0'),
            $1, $2, $3, 'card_authorization', CASE WHEN i % 4 = 0 THEN 'declined' ELSE 'completed' END, 'USDC',
            amount, CASE WHEN i % 4 = 0 THEN 0 ELSE amount END, $4,
            jsonb_build_object('name', 'Bulk ' || (i % 7), 'mcc', '5812', 'country', 'US'), '5812',
            CASE WHEN i % 4 = 0 THEN 'authorization_failed' END,
            CASE WHEN i % 4 = 0 THEN jsonb_build_object('rule', 'limits[0]', 'message', 'over') END,
            CASE WHEN i % 4 = 0 THEN NULL ELSE (to_timestamp(ms / 1000.0) AT TIME ZONE 'UTC')::date END,
            to_timestamp(ms / 1000.0), to_timestamp(ms / 1000.0),
            CASE WHEN i % 4 = 0 THEN NULL ELSE to_timestamp(ms / 1000.0) END
     FROM (SELECT i, $5::bigint - $6::bigint + i AS ms, (1 + i % 200)::numeric AS amount
           FROM generate_series(0, $6::bigint - 1) AS i) AS generated`,
    [target.accountId, target.mode, target.vaultId, target.cardId, endMs, count],
  );
}
