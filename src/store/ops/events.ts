import { assert } from '../../core/index.js';
import type { StoreContext } from '../context.js';
import type { SqlQueryable } from '../sql/client.js';
import { oneRow } from '../sql/one-row.js';

/*
 * The relay's side of the outbox. relayEvents claims up to `batchMax` unrelayed events with
 * FOR UPDATE SKIP LOCKED, so any number of relays work side by side without taking the same
 * rows, and marks them relayed in the same statement; the relay hands them on before its
 * transaction commits, so a round that fails to hand them on rolls the mark back.
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

/** An event as the relay hands it on: what names its deliveries, without its payload. */
export type RelayedEvent = Omit<OutboxEvent, 'payload'>;

/**
 * relayEvents: one statement, in the relay's transaction. Claims up to `batchMax` unrelayed
 * events, oldest first, skipping those another relay holds, and marks them relayed.
 * Why one statement and no payload: a claim and then a mark cost two statements a round, and
 * the claim read each event's payload (a kilobyte, turned to text by PostgreSQL and parsed by
 * Node, about 2 us) that the relay never uses; the delivery worker reads it when it sends
 * (webhook-deliveries.ts, deliveryTarget). Each row is still locked (the subquery's FOR
 * UPDATE) and then written: SKIP LOCKED needs the lock.
 * In: batchMax, 1 to 10,000. Out: the events, in id order (their commit order is not known;
 *   id order is their creation order). Fails: only on database errors.
 */
export async function relayEvents(
  ctx: StoreContext,
  tx: SqlQueryable,
  batchMax: number,
): Promise<RelayedEvent[]> {
  assert(Number.isSafeInteger(batchMax) && batchMax > 0 && batchMax <= 10_000, 'a bounded batch');
  const { rows } = await tx.query<Omit<OutboxEventRow, 'payload'>>(
    `WITH relayed AS (
       UPDATE outbox_events SET relayed_at = $2
       WHERE id IN (SELECT id FROM outbox_events WHERE relayed_at IS NULL
                    ORDER BY id LIMIT $1 FOR UPDATE SKIP LOCKED)
         AND relayed_at IS NULL
       RETURNING id, account_id, mode, type
     )
     SELECT id, account_id, mode, type FROM relayed ORDER BY id`,
    [batchMax, new Date(ctx.clock())],
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
