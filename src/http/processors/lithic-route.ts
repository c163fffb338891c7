import type { FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import {
  asaAnswer,
  asaOperations,
  asaRefusal,
  lithicMessageOf,
  transactionOperations,
  verifiedLithicBody,
} from './lithic.js';
import {
  answerDecisionRequest,
  answerNotification,
  requestDecision,
  type ProcessorMessageContext,
  type ProcessorRouteSpec,
} from './message-route.js';
import type { OperationId } from '../operation-docs/index.js';

/*
 * POST /v1/processors/lithic/{connectionId}: Lithic's ASA requests and transaction events
 * (contract v1.2, section 17). No API key: Lithic's webhook signature over the raw body, with
 * the connection's asaSecret, is the authentication. An ASA request is always answered 200 in
 * ASA's format (a refusal is a decline); a transaction event 200 {received}, or the error body.
 */

const header = (description: string) => z.string().optional().meta({ description });
const lithicHeaders = z.object({
  'webhook-id': header("Lithic's message id (Standard Webhooks)."),
  'webhook-timestamp': header('When Lithic signed, in Unix seconds.'),
  'webhook-signature': header("Lithic's signature of id, timestamp and raw body."),
});
const lithicBody = z
  .looseObject({
    token: z.string(),
    status: z.string().optional(),
    event_type: z.string().optional(),
  })
  .meta({ description: 'An ASA request (Lithic CardAuthorization) or a transaction event.' });
const lithicAnswer = z
  .object({
    token: z.string().optional().meta({ description: 'ASA: the transaction token.' }),
    result: z.string().optional().meta({ description: 'ASA: APPROVED or a decline result.' }),
    approved_amount: z.number().int().optional().meta({ description: 'ASA: a partial approval.' }),
    received: z.boolean().optional().meta({ description: 'Transaction events: taken.' }),
    operations: z.number().int().optional(),
  })
  .meta({ id: 'LithicAnswer' });

const headerOf = (request: FastifyRequest, name: string): string | undefined => {
  const value = request.headers[name];
  return typeof value === 'string' ? value : undefined;
};

async function answerLithic(
  request: FastifyRequest,
  reply: FastifyReply,
  context: ProcessorMessageContext,
): Promise<FastifyReply> {
  const { message, secrets } = context;
  const body = verifiedLithicBody(
    message.body,
    {
      'webhook-id': headerOf(request, 'webhook-id'),
      'webhook-timestamp': headerOf(request, 'webhook-timestamp'),
      'webhook-signature': headerOf(request, 'webhook-signature'),
    },
    secrets,
  );
  const token = tokenOf(body);
  if (token !== null && !isEvent(body)) {
    const status = (body as { status?: unknown }).status;
    if (typeof status === 'string') message.named(status.slice(0, 40));
    // Always 200 in ASA's format: Lithic reads any other answer as a failure of the responder.
    const answer = await answerDecisionRequest(
      request,
      message,
      () => decideAsa(context, body),
      (code) => asaRefusal(token, code),
    );
    return reply.code(200).send(answer);
  }
  const read = lithicMessageOf(body);
  if (read.kind !== 'event') throw new Error('a body with event_type is an event');
  message.named(read.eventType);
  const operations = transactionOperations(read.transaction);
  return answerNotification(reply, context, operations);
}

const isEvent = (body: unknown) =>
  typeof body === 'object' &&
  body !== null &&
  typeof (body as { event_type?: unknown }).event_type === 'string' &&
  (body as { event_type: string }).event_type !== 'card_authorization.approval_request';

function tokenOf(body: unknown): string | null {
  if (typeof body !== 'object' || body === null) return null;
  const token = (body as { token?: unknown }).token;
  return typeof token === 'string' && token !== '' ? token.slice(0, 255) : null;
}

/** An ASA request: its operations' decision, in ASA's body. */
function decideAsa(context: ProcessorMessageContext, body: unknown) {
  const read = lithicMessageOf(body);
  if (read.kind !== 'asa') throw new Error('an ASA body reads as an ASA request');
  const asa = read.request;
  const asked = BigInt((asa.amounts.hold ?? asa.amounts.cardholder).amount);
  return requestDecision(
    context,
    asaOperations(asa),
    (first) => asaAnswer(asa.token, first, asked),
    (answer) => answer.result === 'APPROVED',
  );
}

/** The door's registration (register.ts). */
export const LITHIC_ROUTE: ProcessorRouteSpec = {
  processor: 'lithic',
  operationId: 'receiveLithicMessage' satisfies OperationId,
  headers: lithicHeaders,
  body: lithicBody,
  answer: lithicAnswer,
  handle: answerLithic,
};
