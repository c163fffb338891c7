import { assert, dayNumberOf, isoDate, utcDayNumber } from '../../core/index.js';
import type { StoreContext } from '../context.js';
import type { SqlQueryable } from '../sql/client.js';

/**
 * snapshotDay: the end-of-day balances of one UTC day for up to `batchMax` vaults after
 * `afterVaultId` (in id order), from the ledger and the hold journal as they stood at midnight
 * that ended the day. Exact for any past day, so missed days can be backfilled. Idempotent:
 * an existing snapshot is kept. Out: the last vault id covered, or null when none was left.
 */
export async function snapshotDay(
  tx: SqlQueryable,
  day: string,
  afterVaultId: string | null,
  batchMax = 1000,
): Promise<string | null> {
  assert(batchMax > 0 && batchMax <= 10_000, 'a bounded batch');
  const endOfDay = `${isoDate(dayNumberOf(day) + 1)}T00:00:00.000Z`;
  const { rows } = await tx.query<{ id: string }>(
    `WITH batch AS (
       SELECT id, currency FROM vaults
       WHERE created_at < $2::timestamptz AND ($3::text IS NULL OR id > $3)
         AND (closed_at IS NULL OR closed_at >= $1::date)
       ORDER BY id LIMIT $4
     ), totals AS (
       SELECT b.id, b.currency,
         coalesce((SELECT sum(amount) FROM ledger_entries e
                   WHERE e.ledger_account_id = b.id AND e.created_at < $2::timestamptz), 0) AS ledger,
         coalesce((SELECT sum(delta) FROM hold_changes h
                   WHERE h.vault_id = b.id AND h.created_at < $2::timestamptz), 0) AS pending
       FROM batch b
     ), written AS (
       INSERT INTO balance_snapshots (vault_id, day, currency, ledger, pending, available, created_at)
       SELECT id, $1::date, currency, ledger, pending, ledger - pending, now() FROM totals
       ON CONFLICT (vault_id, day) DO NOTHING
     )
     SELECT id FROM batch ORDER BY id`,
    [day, endOfDay, afterVaultId, batchMax],
  );
  return rows.at(-1)?.id ?? null;
}

/** Days one snapshot run backfills at most; a longer gap takes several runs. */
export const SNAPSHOT_DAYS_PER_RUN_MAX = 366;

/**
 * snapshotDaysDue: one read. The UTC days whose end-of-day snapshots are still to be taken:
 * from the day after the last completed one (or the day the first vault was created) through
 * yesterday, oldest first, at most SNAPSHOT_DAYS_PER_RUN_MAX.
 */
export async function snapshotDaysDue(ctx: StoreContext, tx: SqlQueryable): Promise<string[]> {
  const { rows } = await tx.query<{ last_done: string | null; first_vault: string | null }>(
    `SELECT (SELECT max(day)::text FROM snapshot_days) AS last_done,
            (SELECT min(created_at AT TIME ZONE 'UTC')::date::text FROM vaults) AS first_vault`,
  );
  const row = rows[0];
  const yesterday = utcDayNumber(ctx.clock()) - 1;
  const first =
    row?.last_done != null
      ? dayNumberOf(row.last_done) + 1
      : row?.first_vault != null
        ? dayNumberOf(row.first_vault)
        : yesterday + 1;
  const days: string[] = [];
  for (let day = first; day <= yesterday && days.length < SNAPSHOT_DAYS_PER_RUN_MAX; day++) {
    days.push(isoDate(day));
  }
  return days;
}

/** completeSnapshotDay: marks a day's snapshots complete (every vault of it written). */
export async function completeSnapshotDay(
  ctx: StoreContext,
  tx: SqlQueryable,
  day: string,
): Promise<void> {
  await tx.query(
    'INSERT INTO snapshot_days (day, completed_at) VALUES ($1::date, $2) ON CONFLICT (day) DO NOTHING',
    [day, new Date(ctx.clock())],
  );
}
