import { assert } from '../../core/index.js';
import type { SqlQueryable } from '../sql/client.js';
import { oneRow } from '../sql/one-row.js';
import type { OutboxEvent, RelayedEvent } from '../port/webhooks.js';

/*
 * The relay's side of the outbox. An event waits for the relay while its id is in
 * outbox_unrelayed (migration 0016), written in the event's own transaction. relayEvents
 * claims up to `batchMax` of those ids with FOR UPDATE SKIP LOCKED, so any number of relays
 * work side by side without taking the same events, and deletes them in the same statement;
 * the relay hands the events on before its transaction commits, so a round that fails to hand
 * them on rolls the delete back.
 */

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

/**
 * relayEvents: one statement, in the relay's transaction. Claims up to `batchMax` unrelayed
 * events, oldest first, skipping those another relay holds, and takes them off the relay's
 * queue (outbox_unrelayed).
 * Why a queue of ids, deleted from: marking the event row relayed wrote a new version of the
 * whole row, its kilobyte of payload included (docs/performance.md, "WAL per authorization").
 * Why one statement and no payload: the relay never uses the payload (a kilobyte, turned to
 * text by PostgreSQL and parsed by Node); the delivery worker reads it when it sends
 * (webhook-deliveries.ts, deliveryTarget). The events are read by `id = ANY(array)`, a probe
 * of the primary key per id whatever the table's size or statistics.
 * In: batchMax, 1 to 10,000. Out: the events, in id order (their commit order is not known;
 *   id order is their creation order). Fails: only on database errors.
 */
export async function relayEvents(tx: SqlQueryable, batchMax: number): Promise<RelayedEvent[]> {
  assert(Number.isSafeInteger(batchMax) && batchMax > 0 && batchMax <= 10_000, 'a bounded batch');
  const { rows } = await tx.query<Omit<OutboxEventRow, 'payload'>>(
    `WITH claimed AS (
       DELETE FROM outbox_unrelayed
       WHERE id IN (SELECT id FROM outbox_unrelayed ORDER BY id LIMIT $1 FOR UPDATE SKIP LOCKED)
       RETURNING id
     )
     SELECT id, account_id, mode, type FROM outbox_events
     WHERE id = ANY (ARRAY(SELECT id FROM claimed)) ORDER BY id`,
    [batchMax],
  );
  assert(rows.length <= batchMax, 'at most batchMax events a round');
  return rows.map((row) => ({
    id: row.id,
    accountId: row.account_id,
    mode: row.mode,
    type: row.type,
  }));
}

/**
 * readOutboxBacklog: one read-only statement, both parts on the relay's queue
 * (outbox_unrelayed), so its cost follows the backlog, bounded by `pendingCountMax`, never the
 * table of events; the oldest's time is one probe of the events' primary key. Ids are UUIDv7,
 * so the first by id is the oldest. Out: the lag in seconds of the oldest unrelayed event (0
 * with none), and how many wait.
 */
export async function readOutboxBacklog(
  tx: SqlQueryable,
  pendingCountMax: number,
  nowMs: number,
): Promise<{ lagSeconds: number; pending: number }> {
  assert(Number.isSafeInteger(pendingCountMax) && pendingCountMax > 0, 'a bounded count');
  const { rows } = await tx.query<{ oldest: Date | null; pending: string }>(
    `SELECT (SELECT created_at FROM outbox_events
             WHERE id = (SELECT id FROM outbox_unrelayed ORDER BY id LIMIT 1)) AS oldest,
            (SELECT count(*) FROM (SELECT 1 FROM outbox_unrelayed LIMIT $1) AS waiting) AS pending`,
    [pendingCountMax],
  );
  const row = oneRow(rows, 'a SELECT of scalars');
  return {
    // created_at is written from the same wall clock; never negative if the clocks skew.
    lagSeconds: row.oldest === null ? 0 : Math.max(0, (nowMs - row.oldest.getTime()) / 1000),
    pending: Number(row.pending),
  };
}
