import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { presentBalance, presentBalanceSnapshot } from '../../core/index.js';
import type { Store } from '../../store/store.js';
import { authOf } from '../auth.js';
import { idParams, listOf, presentPage } from '../schemas/common.js';
import { balanceHistoryQuery, balanceObject, balanceSnapshotObject } from '../schemas/vault.js';
import type { OperationId } from '../operation-docs/index.js';

/** A vault's balance now and day by day (contract sections 7 and 8). */
export function registerVaultBalanceRoutes(app: FastifyInstance, store: Store): void {
  const routes = app.withTypeProvider<ZodTypeProvider>();
  routes.get('/v1/vaults/:id/balance', vaultBalanceRoute, async (request) =>
    presentBalance(await store.getVault(authOf(request).scope, request.params.id), Date.now()),
  );
  routes.get('/v1/vaults/:id/balance/history', balanceHistoryRoute, async (request) =>
    presentPage(
      await store.listBalanceSnapshots(authOf(request).scope, request.params.id, request.query),
      presentBalanceSnapshot,
    ),
  );
}

const vaultBalanceRoute = {
  config: { requiredScope: 'vaults:read' },
  schema: {
    operationId: 'getVaultBalance' satisfies OperationId,
    tags: ['vaults'],
    params: idParams,
    response: { 200: balanceObject },
  },
} as const;

const balanceHistoryRoute = {
  config: { requiredScope: 'vaults:read' },
  schema: {
    operationId: 'getBalanceHistory' satisfies OperationId,
    tags: ['vaults'],
    params: idParams,
    querystring: balanceHistoryQuery,
    response: { 200: listOf(balanceSnapshotObject) },
  },
} as const;
