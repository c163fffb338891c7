import { assert, isoTimestamp, type Scope } from '../core/index.js';
import { newId } from '../ids.js';
import type { SqlQueryable } from './sql/client.js';

/*
 * The event outbox (contract section 13): an event is a row written in the transaction of the
 * change it describes, so a committed change always has its event and a rolled-back one never
 * does. Relays (src/workers/outbox-relay.ts) claim rows and fan them out.
 */

/** The event types of contract section 13; an endpoint subscribes to some, or to "*". */
export const EVENT_TYPES = [
  'vault.created',
  'vault.updated',
  'vault.frozen',
  'vault.unfrozen',
  'vault.closed',
  'card.created',
  'card.frozen',
  'card.unfrozen',
  'card.cancelled',
  'authorization.approved',
  'authorization.declined',
  'transaction.completed',
  'transaction.failed',
  'transfer.created',
  'transfer.completed',
  'transfer.failed',
  'policy.updated',
  'policy.deleted',
  'webhook.test',
  // v1.2 (contract sections 16-17): the transaction's whole life and card updates.
  'authorization.incremented',
  'authorization.advised',
  'transaction.captured',
  'transaction.refunded',
  'vault.overdrawn',
  'vault.restored',
  'card.updated',
] as const;

export type EventType = (typeof EVENT_TYPES)[number];

/** An event as stored and delivered (contract section 13). */
export interface EventPayload {
  readonly id: string;
  readonly object: 'event';
  readonly type: EventType;
  readonly createdAt: string;
  readonly mode: Scope['mode'];
  readonly data: { readonly object: object };
}

export function eventPayload(
  scope: Scope,
  type: EventType,
  object: object,
  nowMs: number,
): EventPayload {
  return {
    id: newId('event', nowMs),
    object: 'event',
    type,
    createdAt: isoTimestamp(nowMs),
    mode: scope.mode,
    data: { object },
  };
}

/** An event's id and stored payload (the row appendEvent writes). */
export function eventRow(
  scope: Scope,
  type: EventType,
  object: object,
  nowMs: number,
): { readonly id: string; readonly payload: string } {
  const payload = eventPayload(scope, type, object, nowMs);
  return { id: payload.id, payload: JSON.stringify(payload) };
}

/** Events appendEvents writes in one statement, at most. */
const EVENTS_TOGETHER_MAX = 4;

/**
 * Events of one object in one statement, in the order given (a capture that completes its
 * authorization: transaction.captured, then transaction.completed): a statement fewer than an
 * appendEvent each. The payloads travel as one JSON array, read by the server.
 */
export async function appendEvents(
  tx: SqlQueryable,
  scope: Scope,
  types: readonly EventType[],
  object: object,
  nowMs: number,
): Promise<void> {
  assert(types.length >= 1 && types.length <= EVENTS_TOGETHER_MAX, 'a few events of one object');
  if (types.length === 1) {
    await appendEvent(tx, scope, types[0] as EventType, object, nowMs);
    return;
  }
  const payloads = types.map((type) => eventPayload(scope, type, object, nowMs));
  await tx.query(
    `WITH event AS (
       INSERT INTO outbox_events (id, account_id, mode, type, payload, created_at)
       SELECT e.payload->>'id', $1, $2, e.payload->>'type', e.payload, $3
       FROM jsonb_array_elements($4::jsonb) WITH ORDINALITY AS e(payload, n) ORDER BY e.n
       RETURNING id
     )
     INSERT INTO outbox_unrelayed (id) SELECT id FROM event`,
    [scope.accountId, scope.mode, new Date(nowMs), JSON.stringify(payloads)],
  );
}

export async function appendEvent(
  tx: SqlQueryable,
  scope: Scope,
  type: EventType,
  object: object,
  nowMs: number,
): Promise<string> {
  const { id, payload } = eventRow(scope, type, object, nowMs);
  // The event and its place in the relay's queue (migration 0016), in one statement.
  await tx.query(
    `WITH event AS (
       INSERT INTO outbox_events (id, account_id, mode, type, payload, created_at)
       VALUES ($1, $2, $3, $4, $5, $6) RETURNING id
     )
     INSERT INTO outbox_unrelayed (id) SELECT id FROM event`,
    [id, scope.accountId, scope.mode, type, payload, new Date(nowMs)],
  );
  return id;
}
