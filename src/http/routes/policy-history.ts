import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { presentPolicy, presentPolicyLimits, presentPolicyVersion } from '../../core/index.js';
import type { PolicyOwner, Store } from '../../store/store.js';
import { authOf } from '../auth.js';
import { respond } from '../idempotency.js';
import { idParams, listOf, presentPage } from '../schemas/common.js';
import {
  policyLimitsObject,
  policyObject,
  policyVersionObject,
  policyVersionsQuery,
  versionParams,
} from '../schemas/policy.js';
import type { OperationId } from '../operation-docs/index.js';

/**
 * A policy's remaining limits and its history, for a vault's policy or a card's own (`kind`):
 * Remaining Limits, List Policy Versions, Restore Policy Version (which sets the version's
 * document again as a new version, with `policy.updated`).
 */
export function registerPolicyHistoryRoutes(
  app: FastifyInstance,
  store: Store,
  kind: PolicyOwner['kind'],
): void {
  const routes = app.withTypeProvider<ZodTypeProvider>();
  const base = kind === 'vault' ? '/v1/vaults/:id/policy' : '/v1/cards/:id/policy';
  const owner = (id: string): PolicyOwner => ({ kind, id });
  const named = (
    operationId: 'getPolicyLimits' | 'listPolicyVersions' | 'restorePolicyVersion',
  ): OperationId => (kind === 'vault' ? operationId : `${operationId}OfCard`);

  routes.get(`${base}/limits`, limitsRoute(named('getPolicyLimits')), async (request) => {
    const { of, statuses } = await store.policyLimits(
      authOf(request).scope,
      owner(request.params.id),
    );
    return presentPolicyLimits(of, statuses);
  });

  routes.get(`${base}/versions`, versionsRoute(named('listPolicyVersions')), async (request) =>
    presentPage(
      await store.listPolicyVersions(
        authOf(request).scope,
        owner(request.params.id),
        request.query,
      ),
      presentPolicyVersion,
    ),
  );

  routes.post(
    `${base}/versions/:version/restore`,
    restoreRoute(named('restorePolicyVersion')),
    async (request, reply) => {
      const { scope, keyId } = authOf(request);
      const { id, version } = request.params;
      return respond(store, request, reply, 200, async (operations) =>
        presentPolicy(await operations.restorePolicyVersion(scope, owner(id), version, keyId)),
      );
    },
  );
}

const limitsRoute = (operationId: OperationId) =>
  ({
    config: { requiredScope: 'vaults:read' },
    schema: {
      operationId,
      tags: ['policies'],
      params: idParams,
      response: { 200: policyLimitsObject },
    },
  }) as const;

const versionsRoute = (operationId: OperationId) =>
  ({
    config: { requiredScope: 'vaults:read' },
    schema: {
      operationId,
      tags: ['policies'],
      params: idParams,
      querystring: policyVersionsQuery,
      response: { 200: listOf(policyVersionObject) },
    },
  }) as const;

const restoreRoute = (operationId: OperationId) =>
  ({
    config: { requiredScope: 'policies:write' },
    schema: {
      operationId,
      tags: ['policies'],
      params: versionParams,
      response: { 200: policyObject },
    },
  }) as const;
