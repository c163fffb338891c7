import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { PolicyInvalidError, presentBacktest } from '../../core/index.js';
import type { BacktestSubject, Store } from '../../store/store.js';
import { authOf } from '../auth.js';
import { respond } from '../idempotency.js';
import { backtestBody, backtestObject, backtestParams } from '../schemas/backtest.js';
import { idParams } from '../schemas/common.js';
import { underPolicy } from './policies.js';
import type { OperationId } from '../operation-docs/index.js';

/*
 * Policy backtests (issue 14): a draft replayed over a vault's recorded card authorizations,
 * or one card's (under the draft alone), in a window of at most 90 days. A window of at most
 * 10,000 authorizations is answered at once (200, completed); a larger one is queued (202)
 * for a job of the worker role, and read back by its id under the same vault or card.
 *
 * Scope `transactions:read`: the answer is made of recorded transactions (counts, examples
 * with their merchants and amounts), which a key that may not list transactions must not read
 * through another door.
 */
export function registerBacktestRoutes(app: FastifyInstance, store: Store): void {
  const routes = app.withTypeProvider<ZodTypeProvider>();
  const subjects = [
    { path: '/v1/vaults/:id/policy', kind: 'vault', operation: 'Vault' },
    { path: '/v1/cards/:id/policy', kind: 'card', operation: 'Card' },
  ] as const;
  for (const { path, kind, operation } of subjects) {
    const subjectOf = (id: string): BacktestSubject =>
      kind === 'vault' ? { kind, vaultId: id } : { kind, cardId: id };

    routes.post(`${path}/backtest`, createRoute(operation), async (request, reply) => {
      const { scope } = authOf(request);
      const { policy, startDate, endDate } = request.body;
      return respond(
        store,
        request,
        reply,
        (body: ReturnType<typeof presentBacktest>) => (body.status === 'completed' ? 200 : 202),
        async (operations) => {
          try {
            const { backtest } = await operations.createBacktest(
              scope,
              subjectOf(request.params.id),
              { draft: policy, startDate, endDate },
            );
            return presentBacktest(backtest);
          } catch (error) {
            // Compiled as Set Policy compiles a body; the fault's path is the body's, under `policy`.
            if (error instanceof PolicyInvalidError) throw underPolicy(error);
            throw error;
          }
        },
      );
    });

    routes.get(`${path}/backtests/:backtestId`, getRoute(operation), async (request) =>
      presentBacktest(
        await store.getBacktest(
          authOf(request).scope,
          subjectOf(request.params.id),
          request.params.backtestId,
        ),
      ),
    );
  }
}

function createRoute(operation: 'Vault' | 'Card') {
  return {
    config: { requiredScope: 'transactions:read' },
    schema: {
      operationId: `create${operation}PolicyBacktest` as const satisfies OperationId,
      tags: ['policies'],
      params: idParams,
      body: backtestBody,
      response: { 200: backtestObject, 202: backtestObject },
    },
  } as const;
}

function getRoute(operation: 'Vault' | 'Card') {
  return {
    config: { requiredScope: 'transactions:read' },
    schema: {
      operationId: `get${operation}PolicyBacktest` as const satisfies OperationId,
      tags: ['policies'],
      params: backtestParams,
      response: { 200: backtestObject },
    },
  } as const;
}
