import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { SpendgateError } from '../../core/index.js';
import type { Store } from '../../store/store.js';
import { errorBody } from '../error-body.js';
import type { Metrics } from '../metrics.js';
import type { ProcessorDispatcher } from './dispatch.js';
import {
  asaAnswer,
  asaOperations,
  asaRefusal,
  lithicMessageOf,
  transactionOperations,
  verifiedLithicBody,
  type LithicAsaRequest,
  type LithicMessageName,
} from './lithic.js';
import type { ProcessorResult, ProcessorSource } from './operation.js';

/*
 * POST /v1/processors/lithic/{connectionId}: Lithic's ASA requests and transaction events
 * (contract v1.2, section 17). No API key: Lithic's webhook signature over the raw body, with
 * the connection's asaSecret, is the authentication. An ASA request is always answered 200 in
 * ASA's format (a refusal is a decline); a transaction event 200 {received}, or the error body.
 */

type Outcome = 'ok' | 'replayed' | 'approved' | 'declined' | SpendgateError['code'];

export interface LithicRouteDependencies {
  readonly store: Store;
  readonly dispatcher: ProcessorDispatcher;
  readonly messages: Metrics['processorMessages'];
}

const header = (description: string) => z.string().optional().meta({ description });
const lithicParams = z.object({
  connectionId: z.string().meta({ description: 'The processor connection (POST /v1/processors).' }),
});
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

export function registerLithicRoute(
  app: FastifyInstance,
  dependencies: LithicRouteDependencies,
): void {
  app.post(
    '/v1/processors/lithic/:connectionId',
    {
      config: { public: true },
      schema: {
        operationId: 'receiveLithicMessage',
        tags: ['processors'],
        // No key: Lithic's webhook signature is the authentication.
        security: [],
        params: lithicParams,
        headers: lithicHeaders,
        body: lithicBody,
        response: { 200: lithicAnswer },
      },
    },
    async (request, reply) => answerLithic(request, reply, dependencies),
  );
}

const headerOf = (request: FastifyRequest, name: string): string | undefined => {
  const value = request.headers[name];
  return typeof value === 'string' ? value : undefined;
};

async function answerLithic(
  request: FastifyRequest,
  reply: FastifyReply,
  { store, dispatcher, messages }: LithicRouteDependencies,
): Promise<FastifyReply> {
  const connectionId = (request.params as { connectionId: string }).connectionId.slice(0, 64);
  let name: LithicMessageName = 'unknown';
  const count = (outcome: Outcome) => {
    messages.inc({ processor: 'lithic', event: name, outcome });
  };
  try {
    if (!Buffer.isBuffer(request.body))
      throw new SpendgateError('invalid_json', 'A Lithic message is a JSON body.');
    const { connection, secrets } = await store.processorConnectionSecrets('lithic', connectionId);
    const body = verifiedLithicBody(
      request.body,
      {
        'webhook-id': headerOf(request, 'webhook-id'),
        'webhook-timestamp': headerOf(request, 'webhook-timestamp'),
        'webhook-signature': headerOf(request, 'webhook-signature'),
      },
      secrets,
    );
    const source: ProcessorSource = {
      processor: 'lithic',
      connectionId: connection.id,
      accountId: connection.accountId,
      mode: connection.mode,
    };
    const token = tokenOf(body);
    if (token !== null && !isEvent(body)) {
      const status = (body as { status?: unknown }).status;
      if (typeof status === 'string') name = status.slice(0, 40) as LithicMessageName;
      return await answerAsa(request, reply, dispatcher, source, { token, body }, count);
    }
    const message = lithicMessageOf(body);
    if (message.kind !== 'event') throw new Error('a body with event_type is an event');
    name = message.eventType as LithicMessageName;
    const results: ProcessorResult[] = [];
    for (const operation of transactionOperations(message.transaction)) {
      const result = await dispatcher.runNotification(source, operation);
      if (result !== null) results.push(result);
    }
    count(results.length > 0 && results.every((result) => result.replayed) ? 'replayed' : 'ok');
    return await reply.code(200).send({ received: true, operations: results.length });
  } catch (error) {
    if (!(error instanceof SpendgateError)) throw error;
    count(error.code);
    // The code and the message name only: never a header, the body or a secret.
    request.log.warn(
      { processor: 'lithic', connectionId, messageType: name, code: error.code },
      'processor message refused',
    );
    return reply
      .code(error.status)
      .send(errorBody(error.code, request.id, error.message, error.param));
  }
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

/**
 * An ASA request: always 200 in ASA's format, since Lithic reads any other answer as a
 * failure of the responder. A refusal (unknown card, a malformed request) is a decline,
 * logged and counted, nothing recorded.
 */
async function answerAsa(
  request: FastifyRequest,
  reply: FastifyReply,
  dispatcher: ProcessorDispatcher,
  source: ProcessorSource,
  { token, body }: { readonly token: string; readonly body: unknown },
  count: (outcome: Outcome) => void,
): Promise<FastifyReply> {
  void reply.code(200);
  try {
    const message = lithicMessageOf(body);
    if (message.kind !== 'asa') throw new Error('an ASA body reads as an ASA request');
    const asa: LithicAsaRequest = message.request;
    let first: ProcessorResult | null = null;
    for (const operation of asaOperations(asa)) {
      const result = await dispatcher.run(source, operation);
      first ??= result;
      // A declined single-message authorization is not captured.
      if (result.kind === 'decision' && !result.outcome.decision.approved) break;
    }
    const asked = BigInt((asa.amounts.hold ?? asa.amounts.cardholder).amount);
    const answer = asaAnswer(asa.token, first, asked);
    count(
      first?.replayed === true
        ? 'replayed'
        : answer.result === 'APPROVED'
          ? 'approved'
          : 'declined',
    );
    return await reply.send(answer);
  } catch (error) {
    if (!(error instanceof SpendgateError)) throw error;
    count(error.code);
    request.log.warn(
      { processor: 'lithic', connectionId: source.connectionId, code: error.code },
      'processor request declined: refused',
    );
    return reply.send(asaRefusal(token, error.code));
  }
}
