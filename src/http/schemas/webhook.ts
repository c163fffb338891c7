import { z } from 'zod';
import { DELIVERY_FAILURES } from '../../outbound/index.js';
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
  .extend({
    secret: z.string().optional().meta({
      description:
        'The whsec_ signing secret, shown once: absent from an idempotent replay, since it is not stored for replay.',
    }),
  })
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

/** A failed attempt's class, never the network's own error text (which would map the host's ports). */
const deliveryFailure = z
  .string()
  .nullable()
  .meta({
    description: `Null when delivered; else why not, as a class: ${DELIVERY_FAILURES.join(', ')} (a status other than 2xx).`,
  });

export const webhookTestObject = z
  .object({
    object: z.literal('webhook_test'),
    eventId: z.string(),
    delivered: z.boolean(),
    statusCode: z.number().int().nullable(),
    durationMs: z.number().int(),
    error: deliveryFailure,
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
    error: deliveryFailure,
    createdAt: timestampOutput,
  })
  .meta({ id: 'WebhookDelivery' });

export const listDeliveriesQuery = z.strictObject({ ...paginationQuery });
