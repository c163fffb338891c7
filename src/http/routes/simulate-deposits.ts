import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { presentTransaction, SpendgateError } from '../../core/index.js';
import type { Store } from '../../store/store.js';
import { authOf } from '../auth.js';
import { respond } from '../idempotency.js';
import { simulateDepositBody, transactionObject } from '../schemas/transaction.js';
import type { OperationId } from '../operation-docs/index.js';

/** Simulate Deposit (contract section 7): money out of nothing, for test mode only. */
export function registerSimulateDepositRoutes(app: FastifyInstance, store: Store): void {
  app.withTypeProvider<ZodTypeProvider>().post(
    '/v1/simulate/deposits',
    {
      config: { requiredScope: 'vaults:write' },
      schema: {
        operationId: 'simulateDeposit' satisfies OperationId,
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
      const { vaultId, amount, metadata } = request.body;
      return respond(store, request, reply, 201, async (operations) =>
        presentTransaction(
          (await operations.deposit(scope, vaultId, amount, metadata ?? null)).deposit,
        ),
      );
    },
  );
}
