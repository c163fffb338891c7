import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import {
  Decimal,
  parseAmount,
  presentTransaction,
  presentTransfer,
  SpendgateError,
} from '../../core/index.js';
import type { Store } from '../../store/store.js';
import { authOf } from '../auth.js';
import { respond } from '../idempotency.js';
import { vaultAt } from '../lookups.js';
import { assertChainAvailable, solanaAddress } from '../solana-address.js';
import { ANY_CURRENCY, idParams, listOf, presentPage } from '../schemas/common.js';
import {
  createExternalTransferBody,
  createTransferBody,
  listTransactionsQuery,
  listTransfersQuery,
  metadataObject,
  simulateDepositBody,
  transactionObject,
  transferObject,
} from '../schemas/transaction.js';

function filterAmount(value: string | undefined, param: string): Decimal | undefined {
  return value === undefined ? undefined : parseAmount(value, ANY_CURRENCY, { param });
}

const DAY_MS = 86_400_000;
const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;

/**
 * A bound as the store takes it: epoch milliseconds, the start inclusive, the end exclusive.
 * A date alone names a whole UTC day, so that `startDate=endDate=D` lists the day D: the end
 * of a date-only endDate is the start of the next day. A date-time keeps its exact instant.
 */
function filterDate(value: string | undefined, param: 'startDate' | 'endDate'): number | undefined {
  if (value === undefined) return undefined;
  const ms = Date.parse(value);
  if (Number.isNaN(ms))
    throw new SpendgateError('parameter_invalid', `${param} must be an ISO 8601 date.`, param);
  return param === 'endDate' && DATE_ONLY.test(value) ? ms + DAY_MS : ms;
}

/** Transfers, transactions, transaction metadata and simulated deposits (contract sections 7, 12, 14). */
export function registerTransferRoutes(
  app: FastifyInstance,
  store: Store,
  options: { readonly solanaRpcUrl: string | null },
): void {
  const routes = app.withTypeProvider<ZodTypeProvider>();

  routes.post(
    '/v1/transfers',
    {
      config: { requiredScope: 'transfers:write' },
      schema: {
        operationId: 'createTransfer',
        tags: ['transfers'],
        body: createTransferBody,
        response: { 201: transferObject },
      },
    },
    async (request, reply) => {
      const { scope } = authOf(request);
      const body = request.body;
      const from = await vaultAt(store, scope, body.fromVaultId, 'fromVaultId');
      const amount = parseAmount(body.amount, from.currency, { param: 'amount', allowZero: false });
      return respond(store, request, reply, 201, async (operations) =>
        presentTransfer(
          await operations.createInternalTransfer(scope, {
            fromVaultId: from.id,
            toVaultId: body.toVaultId,
            amount,
            description: body.description ?? null,
            metadata: body.metadata ?? null,
          }),
        ),
      );
    },
  );

  routes.post(
    '/v1/transfers/external',
    {
      config: { requiredScope: 'transfers:write' },
      schema: {
        operationId: 'createExternalTransfer',
        tags: ['transfers'],
        body: createExternalTransferBody,
        response: { 202: transferObject },
      },
    },
    async (request, reply) => {
      const { scope } = authOf(request);
      const body = request.body;
      const address = solanaAddress(body.address, 'address');
      assertChainAvailable(scope.mode, options.solanaRpcUrl);
      const from = await vaultAt(store, scope, body.fromVaultId, 'fromVaultId');
      const amount = parseAmount(body.amount, from.currency, { param: 'amount', allowZero: false });
      // 202: the transfer is accepted and its amount held; the Solana worker sends it.
      return respond(store, request, reply, 202, async (operations) =>
        presentTransfer(
          await operations.createExternalTransfer(scope, {
            fromVaultId: from.id,
            address,
            amount,
            memo: body.memo ?? null,
            metadata: body.metadata ?? null,
          }),
        ),
      );
    },
  );

  routes.get(
    '/v1/transfers',
    {
      config: { requiredScope: 'transactions:read' },
      schema: {
        operationId: 'listTransfers',
        tags: ['transfers'],
        querystring: listTransfersQuery,
        response: { 200: listOf(transferObject) },
      },
    },
    async (request) => {
      const page = await store.listTransfers(authOf(request).scope, request.query);
      return presentPage(page, presentTransfer);
    },
  );

  routes.get(
    '/v1/transfers/:id',
    {
      config: { requiredScope: 'transactions:read' },
      schema: {
        operationId: 'retrieveTransfer',
        tags: ['transfers'],
        params: idParams,
        response: { 200: transferObject },
      },
    },
    async (request) =>
      presentTransfer(await store.getTransfer(authOf(request).scope, request.params.id)),
  );

  routes.get(
    '/v1/transactions',
    {
      config: { requiredScope: 'transactions:read' },
      schema: {
        operationId: 'listTransactions',
        tags: ['transactions'],
        querystring: listTransactionsQuery,
        response: { 200: listOf(transactionObject) },
      },
    },
    async (request) => {
      const query = request.query;
      const page = await store.listTransactions(authOf(request).scope, {
        limit: query.limit,
        startingAfter: query.startingAfter,
        vaultId: query.vaultId,
        cardId: query.cardId,
        status: query.status,
        type: query.type,
        minAmount: filterAmount(query.minAmount, 'minAmount'),
        maxAmount: filterAmount(query.maxAmount, 'maxAmount'),
        startDate: filterDate(query.startDate, 'startDate'),
        endDate: filterDate(query.endDate, 'endDate'),
      });
      return presentPage(page, presentTransaction);
    },
  );

  routes.get(
    '/v1/transactions/:id',
    {
      config: { requiredScope: 'transactions:read' },
      schema: {
        operationId: 'retrieveTransaction',
        tags: ['transactions'],
        params: idParams,
        response: { 200: transactionObject },
      },
    },
    async (request) =>
      presentTransaction(await store.getTransaction(authOf(request).scope, request.params.id)),
  );

  routes.get(
    '/v1/transactions/:id/metadata',
    {
      config: { requiredScope: 'transactions:metadata' },
      schema: {
        operationId: 'getTransactionMetadata',
        tags: ['transactions'],
        params: idParams,
        response: { 200: metadataObject },
      },
    },
    async (request, reply) => {
      void reply.header('Cache-Control', 'no-store');
      const metadata = await store.readTransactionMetadata(
        authOf(request).scope,
        request.params.id,
      );
      return {
        object: 'transaction_metadata' as const,
        transactionId: request.params.id,
        metadata,
      };
    },
  );

  routes.post(
    '/v1/simulate/deposits',
    {
      config: { requiredScope: 'vaults:write' },
      schema: {
        operationId: 'simulateDeposit',
        tags: ['testing'],
        body: simulateDepositBody,
        response: { 201: transactionObject },
      },
    },
    async (request, reply) => {
      const { scope } = authOf(request);
      if (scope.mode !== 'test') {
        throw new SpendgateError(
          'parameter_invalid',
          'Deposits can be simulated in test mode only.',
          'mode',
        );
      }
      const vault = await vaultAt(store, scope, request.body.vaultId, 'vaultId');
      const amount = parseAmount(request.body.amount, vault.currency, {
        param: 'amount',
        allowZero: false,
      });
      return respond(store, request, reply, 201, async (operations) =>
        presentTransaction(
          (await operations.deposit(scope, vault.id, amount, request.body.metadata ?? null))
            .deposit,
        ),
      );
    },
  );
}
