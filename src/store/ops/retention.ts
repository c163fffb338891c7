import { assert, dayNumberOf, isoDate, utcDayNumber } from '../../core/index.js';
import { idTimePrefix, type IdKind } from '../../ids.js';
import type { StoreContext } from '../context.js';
import { ALL_TIME_DAY } from '../spend.js';
import type { SqlQueryable } from '../sql/client.js';
import { DAY_MS, HOLD_JOURNAL_VAULTS_MAX } from '../port/maintenance.js';

/**
 * Retention and compaction of the tables every authorization (and every event) adds rows to,
 * so that none grows without bound (issue 19). Each operation is one statement, and so one
 * transaction when the store runs it (`Store` wraps each in its own), deleting at most
 * `rowsMax` rows: a bounded batch that holds its row locks briefly and never a vault's lock.
 * The maintenance worker (src/workers/maintenance.ts) repeats them until a batch comes back
 * short. What is kept, and why (also docs/operations.md):
 *
 * - webhook_deliveries: 30 days of attempts (List Deliveries shows no older ones);
 * - outbox_events: relayed events 30 days old, once no delivery attempt refers to them (an
 *   event waiting to be relayed is never deleted; deliveries end within about 3 days);
 * - idempotency_keys: 24 hours, the replay window (ops/idempotency.ts, already purged by
 *   batch; now on the maintenance schedule);
 * - spend_counters and card_spend_counters: daily rows older than 400 days (no policy window
 *   reaches back more than 366 days), unless a transaction still pending was counted on that
 *   day (its release takes the same rows back down); the all-time rows stay;
 * - backtests: finished ones (completed or failed) 30 days after they were asked for; one not
 *   finished is kept whatever its age (its run is still to come);
 * - card_display_tokens: deleted once expired (a minute after they were made), spent or not:
 *   past its expiry a token shows nothing, and its row says only that a card was shown;
 * - hold_changes: kept whole for 31 days and for every day whose snapshots are not taken yet;
 *   older changes of a vault are folded into one row carrying their sum, so the pending total
 *   at any moment after the fold is unchanged (snapshots and the invariants read sums).
 *
 * Times come from the ids where the ids are UUIDv7 (deliveries, events): their primary keys
 * give the oldest rows first, with no index on created_at.
 */

/** Rows one statement deletes at most. */
export const RETENTION_ROWS_MAX = 10_000;

function checkRowsMax(rowsMax: number): void {
  assert(
    Number.isInteger(rowsMax) && rowsMax > 0 && rowsMax <= RETENTION_ROWS_MAX,
    'a bounded batch',
  );
}

function checkRetention(retentionMs: number): void {
  // Never less than a day: a mistaken setting must not empty a table of what was just written.
  assert(Number.isSafeInteger(retentionMs) && retentionMs >= DAY_MS, 'at least a day of retention');
}

/**
 * One bounded batch of deletes: `deleteSql` takes `params` and then `rowsMax`, its last
 * parameter, and deletes at most that many rows.
 */
async function purgeBatch(
  tx: SqlQueryable,
  deleteSql: string,
  params: readonly unknown[],
  rowsMax: number,
): Promise<number> {
  checkRowsMax(rowsMax);
  const { rowCount } = await tx.query(deleteSql, [...params, rowsMax]);
  assert(rowCount <= rowsMax, 'a batch deletes at most its rows');
  return rowCount;
}

/**
 * A batch of `deleteSql` over the rows of `kind` made before the retention's start: its `$1`
 * is the id bound of that start (ids are UUIDv7: older ids sort below it), its `$2` `rowsMax`.
 */
export function purgeOlderIds(
  ctx: StoreContext,
  tx: SqlQueryable,
  kind: IdKind,
  retentionMs: number,
  deleteSql: string,
  rowsMax: number,
): Promise<number> {
  checkRetention(retentionMs);
  return purgeBatch(tx, deleteSql, [idTimePrefix(kind, ctx.clock() - retentionMs)], rowsMax);
}

/**
 * purgeWebhookDeliveries: deletes up to `rowsMax` delivery attempts older than the retention,
 * oldest first (by id, through the primary key). Out: how many were deleted.
 */
export async function purgeWebhookDeliveries(
  ctx: StoreContext,
  tx: SqlQueryable,
  retentionMs: number,
  rowsMax: number,
): Promise<number> {
  return purgeOlderIds(
    ctx,
    tx,
    'webhookDelivery',
    retentionMs,
    `DELETE FROM webhook_deliveries WHERE id IN (
       SELECT id FROM webhook_deliveries WHERE id < $1 ORDER BY id LIMIT $2)`,
    rowsMax,
  );
}

/**
 * purgeOutboxEvents: deletes up to `rowsMax` relayed events older than the retention that no
 * delivery attempt refers to (attempts go first: purgeWebhookDeliveries), oldest first.
 * Events not yet relayed are kept whatever their age: they are still to be delivered.
 * Out: how many were deleted.
 */
export async function purgeOutboxEvents(
  ctx: StoreContext,
  tx: SqlQueryable,
  retentionMs: number,
  rowsMax: number,
): Promise<number> {
  return purgeOlderIds(
    ctx,
    tx,
    'event',
    retentionMs,
    `DELETE FROM outbox_events WHERE id IN (
       SELECT e.id FROM outbox_events e
       WHERE e.id < $1 AND NOT EXISTS (SELECT 1 FROM outbox_unrelayed u WHERE u.id = e.id)
         AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = e.id)
       ORDER BY e.id LIMIT $2)`,
    rowsMax,
  );
}

/**
 * purgeBacktests: deletes up to `rowsMax` finished backtests (completed or failed) asked for
 * before the retention, oldest first (by id, through the primary key). Out: how many.
 */
export async function purgeBacktests(
  ctx: StoreContext,
  tx: SqlQueryable,
  retentionMs: number,
  rowsMax: number,
): Promise<number> {
  return purgeOlderIds(
    ctx,
    tx,
    'backtest',
    retentionMs,
    `DELETE FROM backtests WHERE id IN (
       SELECT id FROM backtests WHERE id < $1 AND status IN ('completed', 'failed')
       ORDER BY id LIMIT $2)`,
    rowsMax,
  );
}

/**
 * A counter's day as a number (days since the all-time day, which is 0), exactly as the
 * retention indexes of migration 0012 spell it: only statements that name this expression can
 * use them, which keeps the hot path's window reads on the primary key (spend-window.ts).
 */
const DAY_NUMBER = `(c.day - DATE '${ALL_TIME_DAY}')`;

/**
 * purgeSpendCounters: deletes up to `rowsMax` daily spend counters older than `retentionDays`
 * (through spend_counters_age, by the day's number), oldest first, except those of a day on which a transaction of
 * the vault still pending was counted: its release will take that row back down. All-time rows
 * are never deleted. Then, with what is left of `rowsMax`, the same of the cards' own counters
 * (card_spend_counters_age). Out: how many were deleted.
 */
export async function purgeSpendCounters(
  ctx: StoreContext,
  tx: SqlQueryable,
  retentionDays: number,
  rowsMax: number,
): Promise<number> {
  assert(Number.isInteger(retentionDays) && retentionDays >= 366, 'past every policy window');
  const cutoff = isoDate(utcDayNumber(ctx.clock()) - retentionDays);
  // The transactions that count spend are card authorizations and external transfers; naming
  // both lets the pending check read the (vault, type, status) index of migration 0008.
  const vaultRows = await purgeBatch(
    tx,
    `DELETE FROM spend_counters WHERE (vault_id, mcc, day) IN (
       SELECT c.vault_id, c.mcc, c.day FROM spend_counters c
       WHERE ${DAY_NUMBER} > 0 AND ${DAY_NUMBER} < ($1::date - DATE '${ALL_TIME_DAY}')
         AND NOT EXISTS (SELECT 1 FROM transactions t
                         WHERE t.vault_id = c.vault_id AND t.type IN ('card_authorization', 'external_transfer')
                           AND t.status = 'pending' AND t.spend_day = c.day)
       ORDER BY ${DAY_NUMBER} LIMIT $2)`,
    [cutoff],
    rowsMax,
  );
  if (vaultRows >= rowsMax) return vaultRows;
  // A card's counters count its authorizations only: the pending check reads the
  // (card, type, status) index of migration 0008.
  const cardRows = await purgeBatch(
    tx,
    `DELETE FROM card_spend_counters WHERE (card_id, mcc, day) IN (
       SELECT c.card_id, c.mcc, c.day FROM card_spend_counters c
       WHERE ${DAY_NUMBER} > 0 AND ${DAY_NUMBER} < ($1::date - DATE '${ALL_TIME_DAY}')
         AND NOT EXISTS (SELECT 1 FROM transactions t
                         WHERE t.card_id = c.card_id AND t.type = 'card_authorization'
                           AND t.status = 'pending' AND t.spend_day = c.day)
       ORDER BY ${DAY_NUMBER} LIMIT $2)`,
    [cutoff],
    rowsMax - vaultRows,
  );
  return vaultRows + cardRows;
}

/**
 * holdJournalCandidates: one read. The hold journal's horizon (changes before it may be
 * folded): the retention's start, but never after the start of the first day whose
 * end-of-day snapshots are still to be taken (they sum the journal up to that day's end), and
 * nothing before any day's snapshots were complete; and, of up to `vaultsMax` vaults after
 * `afterVaultId` in id order, those with at least two changes before the horizon (each found
 * by reading two entries of hold_changes_vault at most).
 * Out: the horizon (null: nothing may be folded yet), the candidates, and the cursor of the
 *   next search (null: every vault was looked at).
 */
export async function holdJournalCandidates(
  ctx: StoreContext,
  tx: SqlQueryable,
  retentionMs: number,
  afterVaultId: string | null,
  vaultsMax = HOLD_JOURNAL_VAULTS_MAX,
): Promise<{ horizonMs: number | null; vaultIds: string[]; cursor: string | null }> {
  checkRetention(retentionMs);
  assert(Number.isInteger(vaultsMax) && vaultsMax > 0 && vaultsMax <= 10_000, 'a bounded search');
  const { rows: days } = await tx.query<{ last_done: string | null }>(
    'SELECT max(day)::text AS last_done FROM snapshot_days',
  );
  const lastDone = days[0]?.last_done ?? null;
  if (lastDone === null) return { horizonMs: null, vaultIds: [], cursor: null };
  const firstDueStartMs = (dayNumberOf(lastDone) + 1) * DAY_MS;
  const horizonMs = Math.min(ctx.clock() - retentionMs, firstDueStartMs);
  const { rows } = await tx.query<{ id: string; foldable: boolean }>(
    `SELECT v.id,
            (SELECT count(*) FROM (SELECT 1 FROM hold_changes h
                                   WHERE h.vault_id = v.id AND h.created_at < $2 LIMIT 2) AS two) = 2 AS foldable
     FROM (SELECT id FROM vaults WHERE $1::text IS NULL OR id > $1 ORDER BY id LIMIT $3) AS v
     ORDER BY v.id`,
    [afterVaultId, new Date(horizonMs), vaultsMax],
  );
  return {
    horizonMs,
    vaultIds: rows.filter((row) => row.foldable).map((row) => row.id),
    cursor: rows.length < vaultsMax ? null : (rows.at(-1)?.id ?? null),
  };
}

/**
 * compactVaultHoldChanges: folds up to `rowsMax` of a vault's hold changes before `horizonMs`
 * (oldest first, through hold_changes_vault) into one row: their sum, at the time of the last
 * of them, naming its transaction (so the journal's orphan check still holds); no row when
 * they sum to zero. Sums up to any moment at or after the horizon are unchanged, and so are
 * the vault's pending total and every snapshot still to be taken. Rows another compaction has
 * locked are skipped. Nothing happens unless at least two rows are found.
 * Out: the rows folded (0 or at least 2).
 */
export async function compactVaultHoldChanges(
  tx: SqlQueryable,
  vaultId: string,
  horizonMs: number,
  rowsMax: number,
): Promise<number> {
  checkRowsMax(rowsMax);
  assert(Number.isSafeInteger(horizonMs), 'a horizon in epoch milliseconds');
  const { rows } = await tx.query<{ folded: string; written: string }>(
    `WITH old AS MATERIALIZED (
       SELECT id, transaction_id, delta, created_at FROM hold_changes
       WHERE vault_id = $1 AND created_at < $2
       ORDER BY created_at, id LIMIT $3
       FOR UPDATE SKIP LOCKED
     ), folded AS (
       DELETE FROM hold_changes h USING old
       WHERE h.id = old.id AND (SELECT count(*) FROM old) >= 2
       RETURNING h.id, h.transaction_id, h.delta, h.created_at
     ), total AS (
       SELECT count(*) AS rows, sum(delta) AS delta, max(created_at) AS created_at,
              (array_agg(transaction_id ORDER BY created_at DESC, id DESC))[1] AS transaction_id
       FROM folded
     ), written AS (
       INSERT INTO hold_changes (vault_id, transaction_id, delta, created_at)
       SELECT $1, transaction_id, delta, created_at FROM total WHERE rows > 0 AND delta <> 0
       RETURNING id
     )
     SELECT (SELECT rows FROM total) AS folded, (SELECT count(*) FROM written) AS written`,
    [vaultId, new Date(horizonMs), rowsMax],
  );
  const folded = Number(rows[0]?.folded ?? 'NaN');
  const written = Number(rows[0]?.written ?? 'NaN');
  assert(folded === 0 || (folded >= 2 && folded <= rowsMax), 'folds two rows or more, or none');
  assert(written <= 1 && (written === 0 || folded > 0), 'one row for what was folded, at most');
  return folded;
}

/**
 * purgeDisplayTokens: deletes up to `rowsMax` card display tokens past their expiry, spent or
 * not, oldest expiry first (through card_display_tokens_expiry). Out: how many.
 */
export async function purgeDisplayTokens(
  ctx: StoreContext,
  tx: SqlQueryable,
  rowsMax: number,
): Promise<number> {
  return purgeBatch(
    tx,
    `DELETE FROM card_display_tokens WHERE token_sha256 IN (
       SELECT token_sha256 FROM card_display_tokens WHERE expires_at <= $1
       ORDER BY expires_at LIMIT $2)`,
    [new Date(ctx.clock())],
    rowsMax,
  );
}
