import type { Scope, WebhookDeliveryRecord, WebhookEndpointRecord } from '../../core/index.js';
import type { Page } from './pages.js';

export interface OutboxEvent {
  readonly id: string;
  readonly accountId: string;
  readonly mode: 'test' | 'live';
  readonly type: string;
  readonly payload: unknown;
}

/** An event as the relay hands it on: what names its deliveries, without its payload. */
export type RelayedEvent = Omit<OutboxEvent, 'payload'>;

export interface DeliveryTarget {
  readonly eventType: string;
  /** The event body as the database renders its jsonb (the same text on every attempt): what is signed and sent. */
  readonly payload: string;
  readonly accountId: string;
  readonly mode: Scope['mode'];
  readonly url: string;
  readonly secret: string;
}

/**
 * What a delivery job finds in the database:
 * - `send`: the event and its enabled endpoint: what to send where, with the signing secret;
 * - `stopped`: the endpoint was deleted, or disabled (by a 410): its pending deliveries stop;
 * - `missing`: no such event, or no such endpoint of the event's account and mode. This
 *   database never made that job (another installation's, on a shared Redis prefix), or lost
 *   the rows: the worker fails it loudly, never as if it were delivered.
 */
export type DeliveryLookup =
  | { readonly kind: 'send'; readonly target: DeliveryTarget }
  | { readonly kind: 'stopped' }
  | { readonly kind: 'missing'; readonly missing: 'event' | 'endpoint' };

export interface DeliveryAttempt {
  readonly scope: Scope;
  readonly endpointId: string;
  readonly eventId: string;
  readonly eventType: string;
  readonly attempt: number;
  readonly statusCode: number | null;
  readonly durationMs: number;
  readonly error: string | null;
  /**
   * What the attempt means for the delivery still owed (ops/owed-deliveries.ts), for the
   * delivery worker: `nextAttemptDueMs` null, the delivery ended (delivered, endpoint gone,
   * last attempt failed) and its row is deleted; a time, it will be retried then and its row
   * says so.
   * Absent (Test Webhook, sent by the request): no owed row is touched.
   */
  readonly owed?: { readonly nextAttemptDueMs: number | null };
}

/**
 * Whether an attempt's answer disables its endpoint: 410 Gone (contract section 13). The one
 * place the rule is written: the store disables the endpoint with the attempt's record, and
 * the delivery worker ends the job and counts it by the same answer.
 */
export function attemptDisablesEndpoint(statusCode: number | null): boolean {
  return statusCode === 410;
}

export const WEBHOOK_ENDPOINTS_MAX = 100;

/** One delivery: an event for one endpoint (a job's identity, workers/queues.ts webhookJobId). */
export interface DeliveryKey {
  readonly eventId: string;
  readonly endpointId: string;
}

/** A delivery still owed whose job is overdue, as the re-queue loop reads it. */
export interface OwedDelivery extends DeliveryKey {
  /** Attempts already made (and recorded): a job added again goes on from there. */
  readonly attemptsMade: number;
  /** The event's type: the name of a job added again. */
  readonly eventType: string;
}

/** Rows one statement writes or reads at most: a relay round's jobs (200 x 100 endpoints). */
export const OWED_ROWS_MAX = 20_000;

export interface CreateWebhookEndpointInput {
  readonly url: string;
  readonly events: readonly string[];
  readonly description: string | null;
}

/** Webhook endpoints, the outbox relay and the deliveries (contract section 13). */
export interface WebhookOperations {
  /** The `whsec_` secret is answered this once; it is kept encrypted. */
  createWebhookEndpoint(
    scope: Scope,
    input: CreateWebhookEndpointInput,
  ): Promise<{ endpoint: WebhookEndpointRecord; secret: string }>;
  getWebhookEndpoint(scope: Scope, endpointId: string): Promise<WebhookEndpointRecord>;
  listWebhookEndpoints(scope: Scope): Promise<WebhookEndpointRecord[]>;
  deleteWebhookEndpoint(scope: Scope, endpointId: string): Promise<void>;
  webhookSecret(endpointId: string): Promise<string>;
  listWebhookDeliveries(
    scope: Scope,
    endpointId: string,
    query: { readonly limit: number; readonly startingAfter?: string | undefined },
  ): Promise<Page<WebhookDeliveryRecord>>;
  /** Test Webhook's event, written as already relayed: it is sent once, by the request. */
  createTestEvent(
    scope: Scope,
    endpoint: WebhookEndpointRecord,
  ): Promise<{ eventId: string; payload: string }>;
  /**
   * The relay's side: unrelayed events claimed and taken off the relay's queue (skipping
   * those another relay holds; that commits with the relay's transaction), and who wants each.
   */
  relayEvents(batchMax: number): Promise<RelayedEvent[]>;
  subscribedEndpoints(events: readonly RelayedEvent[]): Promise<Map<string, string[]>>;
  /**
   * What is owed (contract section 18): the relay records its round's deliveries with its
   * claim; the re-queue loop reads those overdue (locked) and settles them: ended ones
   * forgotten, live or re-added ones looked at again after `recheckMs`.
   */
  oweDeliveries(deliveries: readonly DeliveryKey[]): Promise<void>;
  overdueDeliveries(graceMs: number, batchMax: number): Promise<OwedDelivery[]>;
  settleOwedDeliveries(
    ended: readonly DeliveryKey[],
    rechecked: readonly DeliveryKey[],
    recheckMs: number,
  ): Promise<void>;
  /** The delivery worker's side: what to send where, and the record of each attempt. */
  deliveryTarget(eventId: string, endpointId: string): Promise<DeliveryLookup>;
  recordDeliveryAttempt(attempt: DeliveryAttempt): Promise<WebhookDeliveryRecord>;
}
