import type { FastifyInstance, FastifyReply } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { presentTransaction } from '../../core/index.js';
import type { Store } from '../../store/store.js';
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
    async (request, reply) => {
      const { scope } = authOf(request);
      return respond(
        store,
        request,
        reply,
        201,
        async (operations) => {
          const outcome = await operations.forceCapture(scope, request.body);
          markRepeat(reply, outcome.replayed);
          return presentTransaction(outcome.transaction);
        },
        { message: { cardId: request.body.cardId, scope } },
      );
    },
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
    async (request, reply) => {
      const { scope } = authOf(request);
      return respond(
        store,
        request,
        reply,
        201,
        async (operations) => {
          const outcome = await operations.refund(scope, request.body);
          markRepeat(reply, outcome.replayed);
          return presentTransaction(outcome.transaction);
        },
        { message: { cardId: request.body.cardId, scope } },
      );
    },
  );
}

/**
 * A repeat of a network id answers Idempotent-Replayed. Set by each run of a message's effect,
 * which may run more than once (Store.message): the run that committed says last.
 */
function markRepeat(reply: FastifyReply, replayed: boolean): void {
  if (replayed) void reply.header('Idempotent-Replayed', 'true');
  else void reply.removeHeader('Idempotent-Replayed');
}
