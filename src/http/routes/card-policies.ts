import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { presentDeletedPolicy, presentPolicy } from '../../core/index.js';
import type { Store } from '../../store/store.js';
import { authOf } from '../auth.js';
import { respond } from '../idempotency.js';
import { idParams } from '../schemas/common.js';
import { deletedPolicyObject, policyBody, policyObject } from '../schemas/policy.js';
import type { OperationId } from '../operation-docs/index.js';

/**
 * Card-level policies: a card's own policy, in the vault policy's format, which an
 * authorization on the card must pass after the vault's. Set, get and delete, with the vault
 * policy routes' validation, idempotency, scopes and events (`policy.updated`,
 * `policy.deleted`, the policy object carrying `cardId`).
 */
export function registerCardPolicyRoutes(app: FastifyInstance, store: Store): void {
  const routes = app.withTypeProvider<ZodTypeProvider>();

  routes.put('/v1/cards/:id/policy', setCardPolicyRoute, async (request, reply) => {
    const { scope, keyId } = authOf(request);
    const { id } = request.params;
    return respond(store, request, reply, 200, async (operations) =>
      presentPolicy(await operations.setCardPolicy(scope, id, request.body, keyId)),
    );
  });

  routes.get('/v1/cards/:id/policy', getCardPolicyRoute, async (request) =>
    presentPolicy(await store.getCardPolicy(authOf(request).scope, request.params.id)),
  );

  routes.delete('/v1/cards/:id/policy', deleteCardPolicyRoute, async (request, reply) => {
    const { scope, keyId } = authOf(request);
    const { id } = request.params;
    return respond(store, request, reply, 200, async (operations) => {
      const { vaultId } = await operations.deleteCardPolicy(scope, id, keyId);
      return presentDeletedPolicy(vaultId, id);
    });
  });
}

const setCardPolicyRoute = {
  config: { requiredScope: 'policies:write' },
  schema: {
    operationId: 'setCardPolicy' satisfies OperationId,
    tags: ['policies'],
    params: idParams,
    body: policyBody,
    response: { 200: policyObject },
  },
} as const;

const getCardPolicyRoute = {
  config: { requiredScope: 'vaults:read' },
  schema: {
    operationId: 'getCardPolicy' satisfies OperationId,
    tags: ['policies'],
    params: idParams,
    response: { 200: policyObject },
  },
} as const;

const deleteCardPolicyRoute = {
  config: { requiredScope: 'policies:write' },
  schema: {
    operationId: 'deleteCardPolicy' satisfies OperationId,
    tags: ['policies'],
    params: idParams,
    response: { 200: deletedPolicyObject },
  },
} as const;
