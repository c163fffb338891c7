import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { presentTransaction, type Scope, type TransactionRecord } from '../../core/index.js';
import type { Store, StoreOperations } from '../../store/store.js';
import { authOf } from '../auth.js';
import { respond } from '../idempotency.js';
import { forceCaptureBody, refundBody } from '../schemas/clearing.js';
import { transactionObject } from '../schemas/transaction.js';
import type { OperationId } from '../operation-docs/index.js';

/**
 * Force Capture and Refund (contract v1.2, section 16): clearing messages with no hold to
 * capture. Each answers 201 with the completed transaction; a repeat of its
 * networkTransactionId answers the transaction recorded, with Idempotent-Replayed.
 */
export function registerClearingRoutes(app: FastifyInstance, store: Store): void {
  const routes = app.withTypeProvider<ZodTypeProvider>();

  routes.post(
    '/v1/captures',
    {
      // Money the network has moved: recorded even while Redis, and so the count, is down.
      config: { requiredScope: 'authorizations:write', rateLimitFailOpen: true },
      schema: {
        operationId: 'forceCapture' satisfies OperationId,
        tags: ['authorizations'],
        body: forceCaptureBody,
        response: { 201: transactionObject },
      },
    },
    async (request, reply) =>
      respondWithPosting(store, request, reply, request.body.cardId, (operations, scope) =>
        operations.forceCapture(scope, request.body),
      ),
  );

  routes.post(
    '/v1/refunds',
    {
      // Money the network has moved: recorded even while Redis, and so the count, is down.
      config: { requiredScope: 'authorizations:write', rateLimitFailOpen: true },
      schema: {
        operationId: 'createRefund' satisfies OperationId,
        tags: ['authorizations'],
        body: refundBody,
        response: { 201: transactionObject },
      },
    },
    async (request, reply) =>
      respondWithPosting(store, request, reply, request.body.cardId, (operations, scope) =>
        operations.refund(scope, request.body),
      ),
  );
}

/**
 * A force capture's or a refund's answer: 201 with the posting, Idempotent-Replayed on a
 * repeat of its network id. Set by each run of the effect, which may run more than once
 * (Store.message): the run that committed says last.
 */
function respondWithPosting(
  store: Store,
  request: FastifyRequest,
  reply: FastifyReply,
  cardId: string,
  post: (
    operations: StoreOperations,
    scope: Scope,
  ) => Promise<{ readonly transaction: TransactionRecord; readonly replayed: boolean }>,
): Promise<FastifyReply> {
  const { scope } = authOf(request);
  return respond(
    store,
    request,
    reply,
    201,
    async (operations) => {
      const outcome = await post(operations, scope);
      if (outcome.replayed) void reply.header('Idempotent-Replayed', 'true');
      else void reply.removeHeader('Idempotent-Replayed');
      return presentTransaction(outcome.transaction);
    },
    { message: { cardId, scope } },
  );
}
