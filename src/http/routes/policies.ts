import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import {
  PolicyInvalidError,
  presentAuthorization,
  presentDeletedPolicy,
  presentPolicy,
} from '../../core/index.js';
import type { Simulation, Store } from '../../store/store.js';
import { authOf } from '../auth.js';
import { respond } from '../idempotency.js';
import { idParams } from '../schemas/common.js';
import {
  decisionObject,
  deletedPolicyObject,
  policyBody,
  policyObject,
  simulateBody,
} from '../schemas/policy.js';
import type { OperationId } from '../operation-docs/index.js';

/** Authorization policies (contract sections 7 and 11): set, get, delete, simulate. */
export function registerPolicyRoutes(app: FastifyInstance, store: Store): void {
  const routes = app.withTypeProvider<ZodTypeProvider>();

  routes.put('/v1/vaults/:id/policy', setPolicyRoute, async (request, reply) => {
    const { scope, keyId } = authOf(request);
    const { id } = request.params;
    return respond(store, request, reply, 200, async (operations) =>
      presentPolicy(await operations.setPolicy(scope, id, request.body, keyId)),
    );
  });

  routes.get('/v1/vaults/:id/policy', getPolicyRoute, async (request) =>
    presentPolicy(await store.getPolicy(authOf(request).scope, request.params.id)),
  );

  routes.delete('/v1/vaults/:id/policy', deletePolicyRoute, async (request, reply) => {
    const { scope, keyId } = authOf(request);
    const { id } = request.params;
    return respond(store, request, reply, 200, async (operations) => {
      await operations.deletePolicy(scope, id, keyId);
      return presentDeletedPolicy(id);
    });
  });

  routes.post('/v1/vaults/:id/policy/simulate', simulatePolicyRoute, async (request) => {
    const started = process.hrtime.bigint();
    const { scope } = authOf(request);
    const { transaction } = request.body;
    const draft = request.body.policy ?? null;
    let simulation: Simulation;
    try {
      simulation = await store.simulatePolicy(scope, request.params.id, {
        draft,
        request: {
          cardId: transaction.cardId ?? '',
          amount: transaction.amount,
          currency: transaction.currency ?? null,
          merchant: transaction.merchant,
        },
      });
    } catch (error) {
      // The draft is compiled as Set Policy compiles a body, so both refuse the same policy
      // with the same fault; here the fault's path is the body's, under `policy`.
      if (draft !== null && error instanceof PolicyInvalidError) throw underPolicy(error);
      throw error;
    }
    const { decision, vaultId, amount, currency } = simulation;
    return presentAuthorization(
      { decision, standIn: false, transaction: null, replayed: false },
      { cardId: transaction.cardId ?? null, vaultId, amount, currency },
      Number((process.hrtime.bigint() - started) / 1000n),
    );
  });
}

/**
 * A draft's refusal, its path moved under `policy`. The message names the field by its last
 * key, never by the path, so it stays as it is.
 */
export function underPolicy(error: PolicyInvalidError): PolicyInvalidError {
  const param = error.param ?? 'policy';
  if (param === 'policy') return error;
  const moved = param.startsWith('[') ? `policy${param}` : `policy.${param}`;
  return new PolicyInvalidError(error.message, moved);
}

const setPolicyRoute = {
  config: { requiredScope: 'policies:write' },
  schema: {
    operationId: 'setPolicy' satisfies OperationId,
    tags: ['policies'],
    params: idParams,
    body: policyBody,
    response: { 200: policyObject },
  },
} as const;

const getPolicyRoute = {
  config: { requiredScope: 'vaults:read' },
  schema: {
    operationId: 'getPolicy' satisfies OperationId,
    tags: ['policies'],
    params: idParams,
    response: { 200: policyObject },
  },
} as const;

const deletePolicyRoute = {
  config: { requiredScope: 'policies:write' },
  schema: {
    operationId: 'deletePolicy' satisfies OperationId,
    tags: ['policies'],
    params: idParams,
    response: { 200: deletedPolicyObject },
  },
} as const;

const simulatePolicyRoute = {
  config: { requiredScope: 'vaults:read' },
  schema: {
    operationId: 'simulatePolicy' satisfies OperationId,
    tags: ['policies'],
    params: idParams,
    body: simulateBody,
    response: { 200: decisionObject },
  },
} as const;
