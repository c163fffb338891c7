import {
  assert,
  presentWebhookEndpoint,
  type Scope,
  type WebhookDeliveryRecord,
  type WebhookEndpointRecord,
} from '../../core/index.js';
import { newId } from '../../ids.js';
import type { StoreContext } from '../context.js';
import { eventRow } from '../outbox.js';
import type { SqlQueryable } from '../sql/client.js';
import { oneRow } from '../sql/one-row.js';
import {
  attemptDisablesEndpoint,
  type DeliveryAttempt,
  type DeliveryLookup,
  type RelayedEvent,
} from '../port/webhooks.js';
import { webhookSecretAad } from './webhook-endpoints.js';

/*
 * The store's side of webhook fan-out (contract section 13): who subscribes to which event,
 * what a delivery sends, and the record of every attempt.
 */

export interface DeliveryRow {
  id: string;
  endpoint_id: string;
  event_id: string;
  event_type: string;
  attempt: number;
  succeeded: boolean;
  status_code: number | null;
  duration_ms: number;
  error: string | null;
  created_at: Date;
}
export const DELIVERY_COLUMNS =
  'id, endpoint_id, event_id, event_type, attempt, succeeded, status_code, duration_ms, error, created_at';

export function deliveryFromRow(row: DeliveryRow): WebhookDeliveryRecord {
  return {
    id: row.id,
    endpointId: row.endpoint_id,
    eventId: row.event_id,
    eventType: row.event_type,
    attempt: row.attempt,
    succeeded: row.succeeded,
    statusCode: row.status_code,
    durationMs: row.duration_ms,
    error: failureClass(row.error),
    createdAtMs: row.created_at.getTime(),
  };
}

/**
 * A failed attempt is recorded, and shown to the endpoint's owner, as its failure class (the
 * sender's: `connection_failed`, `timeout`, `tls_error`, `http_status`, ...), a short
 * snake_case word. Never a socket's error text: "connection reset" against "connection
 * refused" would tell the owner which ports of an address answer. Text of any other shape
 * (recorded before the classes, or passed by mistake) becomes the generic class.
 */
const FAILURE_CLASS = /^[a-z][a-z_]{0,39}$/;

function failureClass(error: string | null): string | null {
  if (error === null) return null;
  return FAILURE_CLASS.test(error) ? error : 'connection_failed';
}

/**
 * subscribedEndpoints: one read, for the relay.
 * In: claimed events.  Out: for each event id, the ids of the enabled endpoints of its account
 *   and mode that subscribe to its type (or to "*"), in id order.
 * Reads: webhook_endpoints through webhook_endpoints_owner.
 */
export async function subscribedEndpoints(
  tx: SqlQueryable,
  events: readonly RelayedEvent[],
): Promise<Map<string, string[]>> {
  const owners = [...new Set(events.map((event) => `${event.accountId} ${event.mode}`))];
  const { rows } = await tx.query<{
    id: string;
    account_id: string;
    mode: string;
    events: string[];
  }>(
    `SELECT id, account_id, mode, events FROM webhook_endpoints
     WHERE (account_id, mode) IN (SELECT * FROM unnest($1::text[], $2::text[]))
       AND status = 'enabled' AND deleted_at IS NULL
     ORDER BY id`,
    [owners.map((owner) => owner.split(' ')[0]), owners.map((owner) => owner.split(' ')[1])],
  );
  const subscribed = new Map<string, string[]>();
  for (const event of events) {
    subscribed.set(
      event.id,
      rows
        .filter(
          (row) =>
            row.account_id === event.accountId &&
            row.mode === event.mode &&
            (row.events.includes('*') || row.events.includes(event.type)),
        )
        .map((row) => row.id),
    );
  }
  return subscribed;
}

/**
 * deliveryTarget: one read, for the delivery worker.
 * In: event id, endpoint id.  Out: a DeliveryLookup (above).
 * Reads the primary, never a replica that may lag: a job's event and endpoint were committed
 * before the relay added it, so a row missing here is missing for good.
 */
export async function deliveryTarget(
  ctx: StoreContext,
  tx: SqlQueryable,
  eventId: string,
  endpointId: string,
): Promise<DeliveryLookup> {
  const { rows } = await tx.query<{
    event_found: boolean;
    endpoint_found: boolean;
    receiving: boolean | null;
    type: string | null;
    payload: string | null;
    account_id: string | null;
    mode: Scope['mode'] | null;
    url: string | null;
    secret_enc: string | null;
  }>(
    // One row whatever exists, so that the three outcomes cost one round trip.
    `SELECT e.id IS NOT NULL AS event_found, w.id IS NOT NULL AS endpoint_found,
            w.status = 'enabled' AND w.deleted_at IS NULL AS receiving,
            e.type, e.payload::text AS payload, w.account_id, w.mode, w.url, w.secret_enc
     FROM (SELECT $1::text AS event_id, $2::text AS endpoint_id) job
     LEFT JOIN outbox_events e ON e.id = job.event_id
     LEFT JOIN webhook_endpoints w
       ON w.id = job.endpoint_id AND w.account_id = e.account_id AND w.mode = e.mode`,
    [eventId, endpointId],
  );
  const row = oneRow(rows, 'the delivery target lookup');
  if (!row.event_found) return { kind: 'missing', missing: 'event' };
  if (!row.endpoint_found) return { kind: 'missing', missing: 'endpoint' };
  if (row.receiving !== true) return { kind: 'stopped' };
  assert(
    row.type !== null &&
      row.payload !== null &&
      row.account_id !== null &&
      row.mode !== null &&
      row.url !== null &&
      row.secret_enc !== null,
    'a found event and endpoint have every column',
  );
  return {
    kind: 'send',
    target: {
      eventType: row.type,
      payload: row.payload,
      accountId: row.account_id,
      mode: row.mode,
      url: row.url,
      secret: ctx.keyring.decryptSecret(row.secret_enc, webhookSecretAad(endpointId)),
    },
  };
}

/**
 * recordDeliveryAttempt: one statement.
 * In: the attempt.  Out: its record; succeeded when the status is 2xx.
 * Writes: webhook_deliveries; the endpoint disabled when `attemptDisablesEndpoint`; with
 *   `owed`, the delivery's row of webhook_deliveries_owed deleted (ended) or moved to its next
 *   attempt, in the same statement, so that keeping what is owed costs no round trip.
 */
export async function recordDeliveryAttempt(
  ctx: StoreContext,
  tx: SqlQueryable,
  input: DeliveryAttempt,
): Promise<WebhookDeliveryRecord> {
  assert(Number.isInteger(input.attempt) && input.attempt >= 1, 'attempts count from 1');
  assert(Number.isInteger(input.durationMs) && input.durationMs >= 0, 'a duration in whole ms');
  const nowMs = ctx.clock();
  const succeeded = input.statusCode !== null && input.statusCode >= 200 && input.statusCode < 300;
  // One statement, so that it is atomic on its own: the worker runs it on the pool without
  // BEGIN and COMMIT (store.ts), one round trip per delivery.
  const { rows } = await tx.query<DeliveryRow>(
    `WITH gone AS (
       UPDATE webhook_endpoints SET status = 'disabled', disabled_reason = 'gone'
       WHERE id = $4 AND $13::boolean AND status = 'enabled'
     ), owed_ended AS (
       DELETE FROM webhook_deliveries_owed
       WHERE event_id = $5 AND endpoint_id = $4 AND $14::boolean AND $15::timestamptz IS NULL
     ), owed_retried AS (
       UPDATE webhook_deliveries_owed SET attempts_made = GREATEST(attempts_made, $7), due_at = $15
       WHERE event_id = $5 AND endpoint_id = $4 AND $15::timestamptz IS NOT NULL
     )
     INSERT INTO webhook_deliveries (id, account_id, mode, endpoint_id, event_id, event_type, attempt, succeeded,
                                     status_code, duration_ms, error, created_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) RETURNING ${DELIVERY_COLUMNS}`,
    [
      newId('webhookDelivery', nowMs),
      input.scope.accountId,
      input.scope.mode,
      input.endpointId,
      input.eventId,
      input.eventType,
      input.attempt,
      succeeded,
      input.statusCode,
      input.durationMs,
      failureClass(input.error),
      new Date(nowMs),
      attemptDisablesEndpoint(input.statusCode),
      input.owed !== undefined,
      nextAttemptDue(input),
    ],
  );
  return deliveryFromRow(oneRow(rows, 'the delivery INSERT'));
}

/** When the owed delivery's next attempt is due: null when none (ended, or no owed row). */
function nextAttemptDue(input: DeliveryAttempt): Date | null {
  const dueMs = input.owed?.nextAttemptDueMs ?? null;
  assert(dueMs === null || Number.isSafeInteger(dueMs), 'a due time in whole ms');
  return dueMs === null ? null : new Date(dueMs);
}

/**
 * createTestEvent: one transaction, for Test Webhook.
 * In: scope, the endpoint.  Out: the webhook.test event's id and body.
 * Writes: outbox_events, and nothing to the relay's queue (outbox_unrelayed): the test goes
 *   to this endpoint alone, synchronously, never to the other subscribers through the relay.
 */
export async function createTestEvent(
  ctx: StoreContext,
  tx: SqlQueryable,
  scope: Scope,
  endpoint: WebhookEndpointRecord,
): Promise<{ eventId: string; payload: string }> {
  const nowMs = ctx.clock();
  const { id, payload } = eventRow(scope, 'webhook.test', presentWebhookEndpoint(endpoint), nowMs);
  await tx.query(
    `INSERT INTO outbox_events (id, account_id, mode, type, payload, created_at)
     VALUES ($1, $2, $3, 'webhook.test', $4, $5)`,
    [id, scope.accountId, scope.mode, payload, new Date(nowMs)],
  );
  return { eventId: id, payload };
}
