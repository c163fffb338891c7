import { assert } from '../../core/index.js';
import type { StoreContext } from '../context.js';
import type { SqlQueryable } from '../sql/client.js';
import { type DeliveryKey, OWED_ROWS_MAX, type OwedDelivery } from '../port/webhooks.js';

/*
 * What each endpoint is owed (contract section 18, v1.2; migration 0018): a row per
 * (event, endpoint) delivery not yet ended, so that a delivery whose job Redis lost is known
 * to PostgreSQL and queued again (src/workers/delivery-requeue.ts). The relay writes the rows
 * with its claim; recordDeliveryAttempt (webhook-deliveries.ts) moves or deletes a row in the
 * statement that records each attempt; the re-queue loop reads the overdue ones.
 */

/**
 * oweDeliveries: one statement, in the relay's transaction (outbox-relay.ts).
 * In: the deliveries the round adds jobs for, at most OWED_ROWS_MAX.
 * Out: nothing. Writes: webhook_deliveries_owed, each due now; a row already there (a round
 *   that added its jobs and died before its commit leaves none, but a retried statement
 *   might) is kept as it is.
 * Fails: only on database errors (the round rolls back, its events wait in the outbox).
 */
export async function oweDeliveries(
  ctx: StoreContext,
  tx: SqlQueryable,
  deliveries: readonly DeliveryKey[],
): Promise<void> {
  assert(deliveries.length <= OWED_ROWS_MAX, 'a bounded round of deliveries');
  if (deliveries.length === 0) return;
  await tx.query(
    `INSERT INTO webhook_deliveries_owed (event_id, endpoint_id, due_at)
     SELECT event_id, endpoint_id, $3 FROM unnest($1::text[], $2::text[]) AS d(event_id, endpoint_id)
     ON CONFLICT DO NOTHING`,
    [
      deliveries.map((delivery) => delivery.eventId),
      deliveries.map((delivery) => delivery.endpointId),
      new Date(ctx.clock()),
    ],
  );
}

/**
 * overdueDeliveries: one statement, in the re-queue loop's transaction (with
 * settleOwedDeliveries after it).
 * In: graceMs, how long past its due time a delivery waits before its job is looked for;
 *   batchMax, 1 to 10,000.
 * Out: the deliveries due more than graceMs ago, oldest first, locked until the transaction
 *   ends (rows another loop holds are skipped, so loops side by side share nothing).
 * Fails: only on database errors.
 */
export async function overdueDeliveries(
  ctx: StoreContext,
  tx: SqlQueryable,
  graceMs: number,
  batchMax: number,
): Promise<OwedDelivery[]> {
  assert(Number.isSafeInteger(graceMs) && graceMs >= 0, 'a grace in whole ms');
  assert(Number.isSafeInteger(batchMax) && batchMax > 0 && batchMax <= 10_000, 'a bounded batch');
  const { rows } = await tx.query<{
    event_id: string;
    endpoint_id: string;
    attempts_made: number;
    type: string | null;
  }>(
    `WITH due AS (
       SELECT event_id, endpoint_id, attempts_made FROM webhook_deliveries_owed
       WHERE due_at < $1 ORDER BY due_at LIMIT $2 FOR UPDATE SKIP LOCKED
     )
     SELECT due.event_id, due.endpoint_id, due.attempts_made, e.type
     FROM due LEFT JOIN outbox_events e ON e.id = due.event_id`,
    [new Date(ctx.clock() - graceMs), batchMax],
  );
  assert(rows.length <= batchMax, 'at most batchMax deliveries');
  return rows.map((row) => ({
    eventId: row.event_id,
    endpointId: row.endpoint_id,
    attemptsMade: row.attempts_made,
    // An event purged by retention still names its job; the worker then fails it loudly.
    eventType: row.type ?? 'event',
  }));
}

/**
 * settleOwedDeliveries: one statement, in the re-queue loop's transaction.
 * In: `ended`, deliveries whose job finished (completed or failed for good): their rows are
 *   deleted; `rechecked`, deliveries whose job is alive or was just added again: looked for
 *   again once `recheckMs` has passed (their due time moved to now + recheckMs). Together at
 *   most 2 x 10,000.
 * Out: nothing. Writes: webhook_deliveries_owed. Fails: only on database errors.
 */
export async function settleOwedDeliveries(
  ctx: StoreContext,
  tx: SqlQueryable,
  ended: readonly DeliveryKey[],
  rechecked: readonly DeliveryKey[],
  recheckMs: number,
): Promise<void> {
  assert(ended.length <= 10_000 && rechecked.length <= 10_000, 'bounded settlements');
  assert(Number.isSafeInteger(recheckMs) && recheckMs >= 0, 'a recheck in whole ms');
  if (ended.length === 0 && rechecked.length === 0) return;
  await tx.query(
    `WITH ended AS (
       DELETE FROM webhook_deliveries_owed o
       USING unnest($1::text[], $2::text[]) AS d(event_id, endpoint_id)
       WHERE o.event_id = d.event_id AND o.endpoint_id = d.endpoint_id
     )
     UPDATE webhook_deliveries_owed o SET due_at = $5
     FROM unnest($3::text[], $4::text[]) AS d(event_id, endpoint_id)
     WHERE o.event_id = d.event_id AND o.endpoint_id = d.endpoint_id`,
    [
      ended.map((delivery) => delivery.eventId),
      ended.map((delivery) => delivery.endpointId),
      rechecked.map((delivery) => delivery.eventId),
      rechecked.map((delivery) => delivery.endpointId),
      new Date(ctx.clock() + recheckMs),
    ],
  );
}
