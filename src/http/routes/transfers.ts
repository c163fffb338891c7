import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { z } from 'zod';
import { presentTransfer, type Scope } from '../../core/index.js';
import type { Store, StoreOperations } from '../../store/store.js';
import { authOf } from '../auth.js';
import { respond } from '../idempotency.js';
import { idParams, listOf, presentPage } from '../schemas/common.js';
import {
  createExternalTransferBody,
  createTransferBody,
  listTransfersQuery,
  transferObject,
} from '../schemas/transaction.js';
import { assertChainAvailable, solanaAddress } from '../solana-address.js';
import type { OperationId } from '../operation-docs/index.js';

/** Transfers between vaults and out to Solana (contract sections 7 and 12). */
export function registerTransferRoutes(
  app: FastifyInstance,
  store: Store,
  options: { readonly solanaRpcUrl: string | null },
): void {
  const routes = app.withTypeProvider<ZodTypeProvider>();
  routes.post('/v1/transfers', createTransferRoute, async (request, reply) =>
    respond(store, request, reply, 201, (operations) =>
      createTransfer(operations, authOf(request).scope, request.body),
    ),
  );
  routes.post('/v1/transfers/external', createExternalTransferRoute, async (request, reply) => {
    const { scope } = authOf(request);
    const address = solanaAddress(request.body.address, 'address');
    assertChainAvailable(scope.mode, options.solanaRpcUrl);
    // 202: the transfer is accepted and its amount held; the Solana worker sends it.
    return respond(store, request, reply, 202, (operations) =>
      createExternalTransfer(operations, scope, address, request.body),
    );
  });
  routes.get('/v1/transfers', listTransfersRoute, async (request) =>
    presentPage(await store.listTransfers(authOf(request).scope, request.query), presentTransfer),
  );
  routes.get('/v1/transfers/:id', retrieveTransferRoute, async (request) =>
    presentTransfer(await store.getTransfer(authOf(request).scope, request.params.id)),
  );
}

const createTransferRoute = {
  config: { requiredScope: 'transfers:write' },
  schema: {
    operationId: 'createTransfer' satisfies OperationId,
    tags: ['transfers'],
    body: createTransferBody,
    response: { 201: transferObject },
  },
} as const;

const createExternalTransferRoute = {
  config: { requiredScope: 'transfers:write' },
  schema: {
    operationId: 'createExternalTransfer' satisfies OperationId,
    tags: ['transfers'],
    body: createExternalTransferBody,
    response: { 202: transferObject },
  },
} as const;

const listTransfersRoute = {
  config: { requiredScope: 'transactions:read' },
  schema: {
    operationId: 'listTransfers' satisfies OperationId,
    tags: ['transfers'],
    querystring: listTransfersQuery,
    response: { 200: listOf(transferObject) },
  },
} as const;

const retrieveTransferRoute = {
  config: { requiredScope: 'transactions:read' },
  schema: {
    operationId: 'retrieveTransfer' satisfies OperationId,
    tags: ['transfers'],
    params: idParams,
    response: { 200: transferObject },
  },
} as const;

async function createTransfer(
  operations: StoreOperations,
  scope: Scope,
  body: z.infer<typeof createTransferBody>,
) {
  return presentTransfer(
    await operations.createInternalTransfer(scope, {
      fromVaultId: body.fromVaultId,
      toVaultId: body.toVaultId,
      amount: body.amount,
      description: body.description ?? null,
      metadata: body.metadata ?? null,
    }),
  );
}

async function createExternalTransfer(
  operations: StoreOperations,
  scope: Scope,
  address: string,
  body: z.infer<typeof createExternalTransferBody>,
) {
  return presentTransfer(
    await operations.createExternalTransfer(scope, {
      fromVaultId: body.fromVaultId,
      address,
      amount: body.amount,
      memo: body.memo ?? null,
      metadata: body.metadata ?? null,
    }),
  );
}
