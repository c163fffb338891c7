import { assert } from '../../core/index.js';
import type { StoreContext } from '../context.js';
import type { SqlQueryable } from '../sql/client.js';
import { oneRow } from '../sql/one-row.js';

/*
 * The relay's side of the outbox. claimEvents locks up to `batchMax` unrelayed events with
 * FOR UPDATE SKIP LOCKED, so any number of relays work side by side without taking the same
 * rows; the relay hands them on and marks them relayed in the same transaction.
 */

export interface OutboxEvent {
  readonly id: string;
  readonly accountId: string;
  readonly mode: 'test' | 'live';
  readonly type: string;
  readonly payload: unknown;
}

/** The columns of an outbox event as the relay and the live feed read it. */
export const OUTBOX_EVENT_COLUMNS = 'id, account_id, mode, type, payload';

export interface OutboxEventRow {
  readonly id: string;
  readonly account_id: string;
  readonly mode: 'test' | 'live';
  readonly type: string;
  readonly payload: unknown;
}

export function outboxEventOf(row: OutboxEventRow): OutboxEvent {
  return {
    id: row.id,
    accountId: row.account_id,
    mode: row.mode,
    type: row.type,
    payload: row.payload,
  };
}

export async function claimEvents(tx: SqlQueryable, batchMax: number): Promise<OutboxEvent[]> {
  assert(Number.isSafeInteger(batchMax) && batchMax > 0 && batchMax <= 10_000, 'a bounded batch');
  const { rows } = await tx.query<OutboxEventRow>(
    `SELECT ${OUTBOX_EVENT_COLUMNS} FROM outbox_events
     WHERE relayed_at IS NULL ORDER BY id LIMIT $1 FOR UPDATE SKIP LOCKED`,
    [batchMax],
  );
  return rows.map(outboxEventOf);
}

export async function markRelayed(
  ctx: StoreContext,
  tx: SqlQueryable,
  ids: readonly string[],
): Promise<void> {
  if (ids.length === 0) return;
  const { rowCount } = await tx.query(
    'UPDATE outbox_events SET relayed_at = $2 WHERE id = ANY($1) AND relayed_at IS NULL',
    [ids, new Date(ctx.clock())],
  );
  assert(rowCount === ids.length, 'claimed events are still locked and unrelayed');
}

/**
 * readOutboxBacklog: one read-only statement, both parts on the relay's partial index
 * (outbox_events_unrelayed: id WHERE relayed_at IS NULL), so its cost follows the backlog,
 * bounded by `pendingCountMax`, never the table. Ids are UUIDv7, so the first by id is the
 * oldest. Out: the lag in seconds of the oldest unrelayed event (0 with none), and how many wait.
 */
export async function readOutboxBacklog(
  tx: SqlQueryable,
  pendingCountMax: number,
  nowMs: number,
): Promise<{ lagSeconds: number; pending: number }> {
  assert(Number.isSafeInteger(pendingCountMax) && pendingCountMax > 0, 'a bounded count');
  const { rows } = await tx.query<{ oldest: Date | null; pending: string }>(
    `SELECT (SELECT created_at FROM outbox_events WHERE relayed_at IS NULL ORDER BY id LIMIT 1) AS oldest,
            (SELECT count(*) FROM (SELECT 1 FROM outbox_events WHERE relayed_at IS NULL LIMIT $1) AS waiting) AS pending`,
    [pendingCountMax],
  );
  const row = oneRow(rows, 'a SELECT of scalars');
  return {
    // created_at is written from the same wall clock; never negative if the clocks skew.
    lagSeconds: row.oldest === null ? 0 : Math.max(0, (nowMs - row.oldest.getTime()) / 1000),
    pending: Number(row.pending),
  };
}
