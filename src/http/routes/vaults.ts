import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import {
  currencyOf,
  parseAmount,
  presentBalance,
  presentBalanceSnapshot,
  presentVault,
  SpendgateError,
  ZERO,
} from '../../core/index.js';
import type { Store } from '../../store/store.js';
import { authOf } from '../auth.js';
import { respond } from '../idempotency.js';
import { idParams, listOf, presentPage } from '../schemas/common.js';
import {
  balanceHistoryQuery,
  balanceObject,
  balanceSnapshotObject,
  closeVaultBody,
  createVaultBody,
  freezeVaultBody,
  listVaultsQuery,
  updateVaultBody,
  vaultObject,
} from '../schemas/vault.js';
import { assertChainAvailable, solanaAddress } from '../solana-address.js';

/** Vaults (contract sections 7-9): create, list, retrieve, update, freeze, unfreeze, close, balance. */
export function registerVaultRoutes(
  app: FastifyInstance,
  store: Store,
  options: { readonly solanaRpcUrl: string | null },
): void {
  const routes = app.withTypeProvider<ZodTypeProvider>();

  routes.post(
    '/v1/vaults',
    {
      config: { requiredScope: 'vaults:write' },
      schema: {
        operationId: 'createVault',
        tags: ['vaults'],
        body: createVaultBody,
        response: { 201: vaultObject },
      },
    },
    async (request, reply) => {
      const { scope } = authOf(request);
      const body = request.body;
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
            'vault with a transfer from another vault (POST /v1/transfers); on-chain deposits ' +
            'are coming.',
          'initialDeposit',
        );
      }
      return respond(store, request, reply, 201, async (operations) => {
        const { vault } = await operations.createVault(scope, {
          name: body.name,
          currency: currency.code as 'USDC' | 'SOL',
          metadata: body.metadata ?? {},
          initialDeposit,
        });
        return presentVault(vault);
      });
    },
  );

  routes.get(
    '/v1/vaults/:id',
    {
      config: { requiredScope: 'vaults:read' },
      schema: {
        operationId: 'retrieveVault',
        tags: ['vaults'],
        params: idParams,
        response: { 200: vaultObject },
      },
    },
    async (request) => presentVault(await store.getVault(authOf(request).scope, request.params.id)),
  );

  routes.get(
    '/v1/vaults',
    {
      config: { requiredScope: 'vaults:read' },
      schema: {
        operationId: 'listVaults',
        tags: ['vaults'],
        querystring: listVaultsQuery,
        response: { 200: listOf(vaultObject) },
      },
    },
    async (request) => {
      const { limit, startingAfter, currency, status } = request.query;
      const page = await store.listVaults(authOf(request).scope, {
        limit,
        startingAfter,
        currency: currency as 'USDC' | 'SOL' | undefined,
        status,
      });
      return presentPage(page, presentVault);
    },
  );

  routes.patch(
    '/v1/vaults/:id',
    {
      config: { requiredScope: 'vaults:write' },
      schema: {
        operationId: 'updateVault',
        tags: ['vaults'],
        params: idParams,
        body: updateVaultBody,
        response: { 200: vaultObject },
      },
    },
    async (request, reply) => {
      const { scope } = authOf(request);
      const { id } = request.params;
      return respond(store, request, reply, 200, async (operations) =>
        presentVault(
          await operations.updateVault(scope, id, {
            name: request.body.name,
            metadata: request.body.metadata,
          }),
        ),
      );
    },
  );

  routes.post(
    '/v1/vaults/:id/freeze',
    {
      config: { requiredScope: 'vaults:write' },
      schema: {
        operationId: 'freezeVault',
        tags: ['vaults'],
        params: idParams,
        body: freezeVaultBody,
        response: { 200: vaultObject },
      },
    },
    async (request, reply) => {
      const { scope } = authOf(request);
      const { id } = request.params;
      return respond(store, request, reply, 200, async (operations) =>
        presentVault(await operations.freezeVault(scope, id, request.body?.reason ?? null)),
      );
    },
  );

  routes.post(
    '/v1/vaults/:id/unfreeze',
    {
      config: { requiredScope: 'vaults:write' },
      schema: {
        operationId: 'unfreezeVault',
        tags: ['vaults'],
        params: idParams,
        response: { 200: vaultObject },
      },
    },
    async (request, reply) => {
      const { scope } = authOf(request);
      const { id } = request.params;
      return respond(store, request, reply, 200, async (operations) =>
        presentVault(await operations.unfreezeVault(scope, id)),
      );
    },
  );

  routes.post(
    '/v1/vaults/:id/close',
    {
      config: { requiredScope: 'vaults:write' },
      schema: {
        operationId: 'closeVault',
        tags: ['vaults'],
        params: idParams,
        body: closeVaultBody,
        response: { 200: vaultObject },
      },
    },
    async (request, reply) => {
      const { scope } = authOf(request);
      const { id } = request.params;
      const destination = request.body?.destination;
      const target =
        destination === undefined
          ? null
          : 'address' in destination
            ? { address: solanaAddress(destination.address, 'destination.address') }
            : { vaultId: destination.vaultId };
      if (target !== null && 'address' in target) {
        // Not found comes first: the 503 must not tell a stranger the vault exists.
        await store.getVault(scope, id);
        assertChainAvailable(scope.mode, options.solanaRpcUrl);
      }
      return respond(store, request, reply, 200, async (operations) =>
        presentVault(await operations.closeVault(scope, id, target)),
      );
    },
  );

  routes.get(
    '/v1/vaults/:id/balance',
    {
      config: { requiredScope: 'vaults:read' },
      schema: {
        operationId: 'getVaultBalance',
        tags: ['vaults'],
        params: idParams,
        response: { 200: balanceObject },
      },
    },
    async (request) => {
      const vault = await store.getVault(authOf(request).scope, request.params.id);
      return presentBalance(vault, Date.now());
    },
  );

  routes.get(
    '/v1/vaults/:id/balance/history',
    {
      config: { requiredScope: 'vaults:read' },
      schema: {
        operationId: 'getBalanceHistory',
        tags: ['vaults'],
        params: idParams,
        querystring: balanceHistoryQuery,
        response: { 200: listOf(balanceSnapshotObject) },
      },
    },
    async (request) => {
      const page = await store.listBalanceSnapshots(
        authOf(request).scope,
        request.params.id,
        request.query,
      );
      return presentPage(page, presentBalanceSnapshot);
    },
  );
}
