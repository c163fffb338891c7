import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { presentChainDeposit } from '../../core/index.js';
import type { Store } from '../../store/store.js';
import { authOf } from '../auth.js';
import { idParams, listOf, presentPage } from '../schemas/common.js';
import { chainDepositObject, listDepositsQuery } from '../schemas/vault.js';
import type { OperationId } from '../operation-docs/index.js';

/** The transfers found at a vault's deposit address (issue 15): credited, swept and ignored. */
export function registerVaultDepositRoutes(app: FastifyInstance, store: Store): void {
  app
    .withTypeProvider<ZodTypeProvider>()
    .get('/v1/vaults/:id/deposits', listDepositsRoute, async (request) =>
      presentPage(
        await store.listChainDeposits(authOf(request).scope, request.params.id, request.query),
        presentChainDeposit,
      ),
    );
}

const listDepositsRoute = {
  config: { requiredScope: 'vaults:read' },
  schema: {
    operationId: 'listVaultDeposits' satisfies OperationId,
    tags: ['vaults'],
    params: idParams,
    querystring: listDepositsQuery,
    response: { 200: listOf(chainDepositObject) },
  },
} as const;
