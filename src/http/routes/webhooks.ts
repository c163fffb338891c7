import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import {
  checkWebhookUrl,
  DELIVERY_ATTEMPT_TIMEOUT_MS,
  deliverSigned,
} from '../../outbound/index.js';
import {
  presentDeletedWebhookEndpoint,
  presentWebhookDelivery,
  presentWebhookEndpoint,
  presentWebhookTest,
  type Scope,
} from '../../core/index.js';
import type { Store } from '../../store/store.js';
import { authOf } from '../auth.js';
import { respond } from '../idempotency.js';
import { idParams, listOf, presentPage } from '../schemas/common.js';
import {
  createdWebhookEndpointObject,
  createWebhookBody,
  deletedWebhookObject,
  listDeliveriesQuery,
  webhookDeliveryObject,
  webhookEndpointObject,
  webhookTestObject,
} from '../schemas/webhook.js';
import type { OperationId } from '../operation-docs/index.js';

/**
 * Webhook endpoints (contract sections 7 and 13): create, list, delete, test, deliveries.
 * An endpoint URL is checked at registration (and again at each delivery, by the sender):
 * in live mode https only, and never an address that resolves to a loopback, private,
 * link-local or metadata address.
 */
const scopeOf = { config: { requiredScope: 'webhooks:write' as const } };

export function registerWebhookRoutes(app: FastifyInstance, store: Store): void {
  const routes = app.withTypeProvider<ZodTypeProvider>();

  routes.post(
    '/v1/webhooks',
    createWebhookRoute,
    // The signing secret is shown this once: the idempotency record keeps the endpoint without
    // it (a record in clear would be a second copy of the secret), so a retry with the same
    // Idempotency-Key answers the first endpoint, with no secret and Idempotent-Replayed, and
    // creates nothing.
    async (request, reply) => {
      const { scope } = authOf(request);
      const body = request.body;
      const url = await checkWebhookUrl(body.url, scope.mode);
      return respond(
        store,
        request,
        reply,
        201,
        async (operations) => {
          const created = await operations.createWebhookEndpoint(scope, {
            url: url.href,
            events: body.events,
            description: body.description ?? null,
          });
          return { ...presentWebhookEndpoint(created.endpoint), secret: created.secret };
        },
        { forReplay: (created) => ({ ...created, secret: undefined }) },
      );
    },
  );

  routes.get(
    '/v1/webhooks',
    listWebhooksRoute,
    // At most 100 endpoints an account (WEBHOOK_ENDPOINTS_MAX): one page holds them all.
    async (request) => {
      const data = await store.listWebhookEndpoints(authOf(request).scope);
      return presentPage({ data, hasMore: false, nextCursor: null }, presentWebhookEndpoint);
    },
  );

  routes.delete('/v1/webhooks/:id', deleteWebhookRoute, async (request, reply) => {
    const { scope } = authOf(request);
    const { id } = request.params;
    return respond(store, request, reply, 200, async (operations) => {
      await operations.deleteWebhookEndpoint(scope, id);
      return presentDeletedWebhookEndpoint(id);
    });
  });

  routes.post(
    '/v1/webhooks/:id/test',
    testWebhookRoute,
    // Synchronous: one signed delivery of a webhook.test event, its result answered, and the
    // attempt recorded with the others. Not retried; the caller sees the outcome.
    async (request) => testWebhook(store, authOf(request).scope, request.params.id),
  );

  routes.get('/v1/webhooks/:id/deliveries', listWebhookDeliveriesRoute, async (request) => {
    const { scope } = authOf(request);
    const endpoint = await store.getWebhookEndpoint(scope, request.params.id);
    const page = await store.listWebhookDeliveries(scope, endpoint.id, request.query);
    return presentPage(page, presentWebhookDelivery);
  });
}

const createWebhookRoute = {
  ...scopeOf,
  schema: {
    operationId: 'createWebhook' satisfies OperationId,
    tags: ['webhooks'],
    description:
      'Registers an endpoint and answers its `whsec_` signing secret, this once. With an ' +
      '`Idempotency-Key`, a retry answers the first endpoint with `Idempotent-Replayed: true` ' +
      'and creates nothing, but without `secret`: the secret is not stored for replay. A ' +
      'client that lost the first answer deletes the endpoint and creates another. The url ' +
      'must be https in live mode; test mode also allows http. It must not be or resolve to a ' +
      'private, link-local, metadata or other non-public address in either mode; test mode ' +
      'allows loopback (a receiver on the same machine).',
    body: createWebhookBody,
    response: { 201: createdWebhookEndpointObject },
  },
} as const;

const listWebhooksRoute = {
  ...scopeOf,
  schema: {
    operationId: 'listWebhooks' satisfies OperationId,
    tags: ['webhooks'],
    response: { 200: listOf(webhookEndpointObject) },
  },
} as const;

const deleteWebhookRoute = {
  ...scopeOf,
  schema: {
    operationId: 'deleteWebhook' satisfies OperationId,
    tags: ['webhooks'],
    params: idParams,
    response: { 200: deletedWebhookObject },
  },
} as const;

const testWebhookRoute = {
  ...scopeOf,
  schema: {
    operationId: 'testWebhook' satisfies OperationId,
    tags: ['webhooks'],
    params: idParams,
    response: { 200: webhookTestObject },
  },
} as const;

const listWebhookDeliveriesRoute = {
  ...scopeOf,
  schema: {
    operationId: 'listWebhookDeliveries' satisfies OperationId,
    tags: ['webhooks'],
    params: idParams,
    querystring: listDeliveriesQuery,
    response: { 200: listOf(webhookDeliveryObject) },
  },
} as const;

/** Test Webhook: one signed delivery of a webhook.test event, recorded with the others. */
async function testWebhook(store: Store, scope: Scope, endpointId: string) {
  const endpoint = await store.getWebhookEndpoint(scope, endpointId);
  const { eventId, payload } = await store.createTestEvent(scope, endpoint);
  const secret = await store.webhookSecret(endpoint.id);
  const result = await deliverSigned({
    url: endpoint.url,
    mode: scope.mode,
    secret,
    eventId,
    body: payload,
    // Test Webhook waits as long as the worker's attempts do.
    timeoutMs: DELIVERY_ATTEMPT_TIMEOUT_MS,
  });
  await store.recordDeliveryAttempt({
    scope,
    endpointId: endpoint.id,
    eventId,
    eventType: 'webhook.test',
    attempt: 1,
    statusCode: result.statusCode,
    durationMs: result.durationMs,
    error: result.error,
  });
  return presentWebhookTest(eventId, result);
}
