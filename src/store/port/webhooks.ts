import type { Scope, WebhookDeliveryRecord, WebhookEndpointRecord } from '../../core/index.js';
import type { RelayedEvent } from '../ops/events.js';
import type { Page } from '../ops/lists.js';
import type { DeliveryKey, OwedDelivery } from '../ops/owed-deliveries.js';
import type { DeliveryAttempt, DeliveryLookup } from '../ops/webhook-deliveries.js';

export type { OutboxEvent, RelayedEvent } from '../ops/events.js';
export {
  attemptDisablesEndpoint,
  type DeliveryAttempt,
  type DeliveryLookup,
  type DeliveryTarget,
} from '../ops/webhook-deliveries.js';
export { WEBHOOK_ENDPOINTS_MAX } from '../ops/webhook-endpoints.js';
export { OWED_ROWS_MAX, type DeliveryKey, type OwedDelivery } from '../ops/owed-deliveries.js';

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
