import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { z } from 'zod';
import {
  currencyOf,
  parseAmount,
  presentVault,
  SpendgateError,
  ZERO,
  type Scope,
} from '../../core/index.js';
import type { CloseDestination, Store, StoreOperations } from '../../store/store.js';
import { authOf } from '../auth.js';
import { respond } from '../idempotency.js';
import { idParams, listOf, presentPage } from '../schemas/common.js';
import {
  closeVaultBody,
  createVaultBody,
  freezeVaultBody,
  listVaultsQuery,
  updateVaultBody,
  vaultObject,
} from '../schemas/vault.js';
import { assertChainAvailable, solanaAddress } from '../solana-address.js';
import type { OperationId } from '../operation-docs/index.js';

/** Vaults (contract sections 7 and 9): create, list, retrieve, update, freeze, unfreeze, close. */
export function registerVaultRoutes(
  app: FastifyInstance,
  store: Store,
  options: { readonly solanaRpcUrl: string | null },
): void {
  const routes = app.withTypeProvider<ZodTypeProvider>();
  routes.post('/v1/vaults', createVaultRoute, async (request, reply) => {
    const { scope } = authOf(request);
    const input = createVaultInput(scope, request.body);
    return respond(store, request, reply, 201, async (operations) =>
      presentVault((await operations.createVault(scope, input)).vault),
    );
  });
  routes.get('/v1/vaults/:id', retrieveVaultRoute, async (request) =>
    presentVault(await store.getVault(authOf(request).scope, request.params.id)),
  );
  routes.get('/v1/vaults', listVaultsRoute, async (request) => {
    const { limit, startingAfter, currency, status } = request.query;
    const page = await store.listVaults(authOf(request).scope, {
      limit,
      startingAfter,
      currency: currency as 'USDC' | 'SOL' | undefined,
      status,
    });
    return presentPage(page, presentVault);
  });
  routes.patch('/v1/vaults/:id', updateVaultRoute, async (request, reply) => {
    const { name, metadata } = request.body;
    return respond(store, request, reply, 200, (operations) =>
      changed(operations.updateVault(authOf(request).scope, request.params.id, { name, metadata })),
    );
  });
  routes.post('/v1/vaults/:id/freeze', freezeVaultRoute, async (request, reply) => {
    const reason = request.body?.reason ?? null;
    return respond(store, request, reply, 200, (operations) =>
      changed(operations.freezeVault(authOf(request).scope, request.params.id, reason)),
    );
  });
  routes.post('/v1/vaults/:id/unfreeze', unfreezeVaultRoute, async (request, reply) =>
    respond(store, request, reply, 200, (operations) =>
      changed(operations.unfreezeVault(authOf(request).scope, request.params.id)),
    ),
  );
  routes.post('/v1/vaults/:id/close', closeVaultRoute, async (request, reply) => {
    const { scope } = authOf(request);
    const { id } = request.params;
    const target = closeDestination(request.body?.destination);
    if (target !== null && 'address' in target) {
      // Not found comes first: the 503 must not tell a stranger the vault exists.
      await store.getVault(scope, id);
      assertChainAvailable(scope.mode, options.solanaRpcUrl);
    }
    return respond(store, request, reply, 200, (operations) =>
      changed(operations.closeVault(scope, id, target)),
    );
  });
}

async function changed(vault: ReturnType<StoreOperations['getVault']>) {
  return presentVault(await vault);
}

/** Create Vault's body as the store takes it; refused here what no vault could accept. */
function createVaultInput(scope: Scope, body: z.infer<typeof createVaultBody>) {
  const currency = currencyOf(body.currency, 'currency');
  if (body.network !== currency.network) {
    throw new SpendgateError(
      'parameter_invalid',
      `${currency.code} vaults are on the ${currency.network} network.`,
      'network',
    );
  }
  const initialDeposit =
    body.initialDeposit === undefined
      ? ZERO
      : parseAmount(body.initialDeposit, currency, { param: 'initialDeposit' });
  // A live deposit out of nothing would credit money that nothing on chain backs: live
  // money enters only by moving it, never by asking. Test mode keeps it, to play with.
  if (scope.mode === 'live' && initialDeposit.gt(0)) {
    throw new SpendgateError(
      'parameter_invalid',
      'A live vault starts empty: initialDeposit above 0 is for test mode only. Fund a live ' +
        'vault by sending to its depositAddress on chain, or with a transfer from another ' +
        'vault (POST /v1/transfers).',
      'initialDeposit',
    );
  }
  return {
    name: body.name,
    currency: currency.code as 'USDC' | 'SOL',
    metadata: body.metadata ?? {},
    initialDeposit,
  };
}

function closeDestination(
  destination: NonNullable<z.infer<typeof closeVaultBody>>['destination'] | undefined,
): CloseDestination {
  if (destination === undefined) return null;
  return 'address' in destination
    ? { address: solanaAddress(destination.address, 'destination.address') }
    : { vaultId: destination.vaultId };
}

const createVaultRoute = {
  config: { requiredScope: 'vaults:write' },
  schema: {
    operationId: 'createVault' satisfies OperationId,
    tags: ['vaults'],
    body: createVaultBody,
    response: { 201: vaultObject },
  },
} as const;

const retrieveVaultRoute = {
  config: { requiredScope: 'vaults:read' },
  schema: {
    operationId: 'retrieveVault' satisfies OperationId,
    tags: ['vaults'],
    params: idParams,
    response: { 200: vaultObject },
  },
} as const;

const listVaultsRoute = {
  config: { requiredScope: 'vaults:read' },
  schema: {
    operationId: 'listVaults' satisfies OperationId,
    tags: ['vaults'],
    querystring: listVaultsQuery,
    response: { 200: listOf(vaultObject) },
  },
} as const;

const updateVaultRoute = {
  config: { requiredScope: 'vaults:write' },
  schema: {
    operationId: 'updateVault' satisfies OperationId,
    tags: ['vaults'],
    params: idParams,
    body: updateVaultBody,
    response: { 200: vaultObject },
  },
} as const;

const freezeVaultRoute = {
  config: { requiredScope: 'vaults:write' },
  schema: {
    operationId: 'freezeVault' satisfies OperationId,
    tags: ['vaults'],
    params: idParams,
    body: freezeVaultBody,
    response: { 200: vaultObject },
  },
} as const;

const unfreezeVaultRoute = {
  config: { requiredScope: 'vaults:write' },
  schema: {
    operationId: 'unfreezeVault' satisfies OperationId,
    tags: ['vaults'],
    params: idParams,
    response: { 200: vaultObject },
  },
} as const;

const closeVaultRoute = {
  config: { requiredScope: 'vaults:write' },
  schema: {
    operationId: 'closeVault' satisfies OperationId,
    tags: ['vaults'],
    params: idParams,
    body: closeVaultBody,
    response: { 200: vaultObject },
  },
} as const;
