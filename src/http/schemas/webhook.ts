import { z } from 'zod';
import { EVENT_TYPES } from '../../store/outbox.js';
import { paginationQuery, text, timestampOutput } from './common.js';

export const webhookEndpointObject = z
  .object({
    id: z.string(),
    object: z.literal('webhook_endpoint'),
    url: z.string(),
    events: z.array(z.string()),
    description: z.string().nullable(),
    status: z.enum(['enabled', 'disabled']),
    createdAt: timestampOutput,
  })
  .meta({ id: 'WebhookEndpoint' });

export const createdWebhookEndpointObject = webhookEndpointObject
  .extend({ secret: z.string().meta({ description: 'The whsec_ signing secret, shown once.' }) })
  .meta({ id: 'CreatedWebhookEndpoint' });

/** Events an endpoint subscribes to: named types, or "*" for all (contract section 13). */
const subscribable = z.enum(['*', ...EVENT_TYPES]);

export const createWebhookBody = z.strictObject({
  // Checked (scheme, and in live mode the addresses it resolves to) in the handler.
  url: text(1, 2048),
  events: z
    .array(subscribable)
    .min(1)
    .max(EVENT_TYPES.length + 1)
    .refine((events) => new Set(events).size === events.length, {
      error: 'names an event twice',
    }),
  description: text(1, 500).optional(),
});

export const deletedWebhookObject = z.object({
  object: z.literal('webhook_endpoint'),
  id: z.string(),
  deleted: z.literal(true),
});

export const webhookTestObject = z
  .object({
    object: z.literal('webhook_test'),
    eventId: z.string(),
    delivered: z.boolean(),
    statusCode: z.number().int().nullable(),
    durationMs: z.number().int(),
    error: z.string().nullable(),
  })
  .meta({ id: 'WebhookTest' });

export const webhookDeliveryObject = z
  .object({
    id: z.string(),
    object: z.literal('webhook_delivery'),
    endpointId: z.string(),
    eventId: z.string(),
    eventType: z.string(),
    attempt: z.number().int(),
    status: z.enum(['succeeded', 'failed']),
    statusCode: z.number().int().nullable(),
    durationMs: z.number().int(),
    error: z.string().nullable(),
    createdAt: timestampOutput,
  })
  .meta({ id: 'WebhookDelivery' });

export const listDeliveriesQuery = z.strictObject({ ...paginationQuery });
