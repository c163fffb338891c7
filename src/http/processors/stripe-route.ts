import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type Stripe from 'stripe';
import { z } from 'zod';
import { SpendgateError } from '../../core/index.js';
import type { Store } from '../../store/store.js';
import { errorBody } from '../error-body.js';
import type { Metrics } from '../metrics.js';
import type { ProcessorDispatcher } from './dispatch.js';
import type { ProcessorResult, ProcessorSource } from './operation.js';
import {
  isStripeEventType,
  STRIPE_API_VERSION,
  stripeRequestAnswer,
  stripeTranslation,
  verifiedStripeEvent,
  type StripeEventType,
} from './stripe.js';

/*
 * POST /v1/processors/stripe/{connectionId}: the events Stripe sends to a webhook endpoint
 * (contract v1.2, section 17). No API key: the Stripe-Signature over the raw body, with the
 * connection's signing secret, is the authentication, so the route lives outside the /v1 key
 * plugin and reads its body raw (json-body.ts parses every other body). Hidden from the
 * OpenAPI document, as every route without a key is; docs/processors.md documents it.
 */

/** The route's labels of the processor message counter: a bounded set. */
type Outcome = 'ok' | 'replayed' | 'approved' | 'declined' | SpendgateError['code'];

export interface StripeRouteDependencies {
  readonly store: Store;
  readonly dispatcher: ProcessorDispatcher;
  readonly messages: Metrics['processorMessages'];
}

export function registerStripeRoute(
  app: FastifyInstance,
  dependencies: StripeRouteDependencies,
): void {
  app.post(
    '/v1/processors/stripe/:connectionId',
    {
      config: { public: true },
      schema: {
        operationId: 'receiveStripeEvent',
        tags: ['processors'],
        // No key: the Stripe-Signature is the authentication.
        security: [],
        params: stripeParams,
        headers: stripeHeaders,
        body: stripeEventBody,
        response: { 200: stripeAnswerObject },
      },
    },
    async (request, reply) => answerStripe(request, reply, dependencies),
  );
}

/*
 * The schemas document the route; they validate nothing (the plugin's validator passes the
 * raw body through: the signature is checked over it before anything reads it).
 */
const stripeParams = z.object({
  connectionId: z.string().meta({ description: 'The processor connection (POST /v1/processors).' }),
});
const stripeHeaders = z.object({
  'stripe-signature': z
    .string()
    .meta({ description: "Stripe's signature of the raw body, with the connection's secret." }),
});
const stripeEventBody = z
  .looseObject({
    id: z.string(),
    object: z.literal('event'),
    type: z.string(),
    livemode: z.boolean(),
    data: z.looseObject({ object: z.looseObject({}) }),
  })
  .meta({ description: 'A Stripe Event, as Stripe sends it to a webhook endpoint.' });
const stripeAnswerObject = z
  .object({
    approved: z
      .boolean()
      .optional()
      .meta({ description: 'issuing_authorization.request: the decision.' }),
    amount: z
      .number()
      .int()
      .optional()
      .meta({ description: 'The amount approved, in minor units, where is_amount_controllable.' }),
    metadata: z.record(z.string(), z.string()).optional(),
    received: z.boolean().optional().meta({ description: 'Other events: taken.' }),
    operations: z.number().int().optional().meta({ description: 'The operations it ran.' }),
  })
  .meta({ id: 'StripeEventAnswer' });

async function answerStripe(
  request: FastifyRequest,
  reply: FastifyReply,
  { store, dispatcher, messages }: StripeRouteDependencies,
): Promise<FastifyReply> {
  const connectionId = (request.params as { connectionId: string }).connectionId.slice(0, 64);
  let type: StripeEventType | 'unknown' = 'unknown';
  const count = (outcome: Outcome) => {
    messages.inc({ processor: 'stripe', event: type, outcome });
  };
  try {
    if (!Buffer.isBuffer(request.body))
      throw new SpendgateError('invalid_json', 'A Stripe event is a JSON body.');
    const { connection, secrets } = await store.processorConnectionSecrets('stripe', connectionId);
    const header = request.headers['stripe-signature'];
    const event = verifiedStripeEvent(
      request.body,
      typeof header === 'string' ? header : undefined,
      secrets,
    );
    if (!isStripeEventType(event.type))
      throw new SpendgateError(
        'parameter_invalid',
        `spendgate takes no Stripe event of type ${event.type.slice(0, 64)}.`,
        'type',
      );
    type = event.type;
    if (event.livemode !== (connection.mode === 'live'))
      throw new SpendgateError(
        'parameter_invalid',
        `The event's livemode is not the connection's mode (${connection.mode}).`,
        'livemode',
      );
    const source: ProcessorSource = {
      processor: 'stripe',
      connectionId: connection.id,
      accountId: connection.accountId,
      mode: connection.mode,
    };
    const typed = event as Stripe.Event & { type: StripeEventType };
    if (type === 'issuing_authorization.request')
      return await answerRequest(request, reply, dispatcher, source, typed, count);
    const translation = stripeTranslation(typed);
    const operations = translation.kind === 'notification' ? translation.operations : [];
    const results: ProcessorResult[] = [];
    for (const operation of operations) {
      const result = await dispatcher.runNotification(source, operation);
      if (result !== null) results.push(result);
    }
    count(results.length > 0 && results.every((result) => result.replayed) ? 'replayed' : 'ok');
    return await reply.code(200).send({ received: true, operations: results.length });
  } catch (error) {
    if (!(error instanceof SpendgateError)) throw error;
    count(error.code);
    // The code and the event type only: never the header, the body or a secret.
    request.log.warn(
      { processor: 'stripe', connectionId, eventType: type, code: error.code },
      'processor message refused',
    );
    return reply
      .code(error.status)
      .send(errorBody(error.code, request.id, error.message, error.param));
  }
}

/**
 * A real-time authorization request: always 200 with Stripe-Version and a decision, since any
 * other answer makes Stripe fall back to the timeout setting. A refusal (unknown card, a
 * malformed object) is a decline, logged and counted, with nothing recorded.
 */
async function answerRequest(
  request: FastifyRequest,
  reply: FastifyReply,
  dispatcher: ProcessorDispatcher,
  source: ProcessorSource,
  event: Stripe.Event & { type: StripeEventType },
  count: (outcome: Outcome) => void,
): Promise<FastifyReply> {
  void reply.code(200).header('Stripe-Version', STRIPE_API_VERSION);
  try {
    const translation = stripeTranslation(event);
    if (translation.kind !== 'request') throw new Error('a request event translates to a request');
    const result = await dispatcher.run(source, translation.operation);
    const answer = stripeRequestAnswer(result, translation.controllable);
    count(result.replayed ? 'replayed' : answer.approved ? 'approved' : 'declined');
    return await reply.send(answer);
  } catch (error) {
    if (!(error instanceof SpendgateError)) throw error;
    count(error.code);
    request.log.warn(
      {
        processor: 'stripe',
        connectionId: source.connectionId,
        eventType: event.type,
        code: error.code,
      },
      'processor request declined: refused',
    );
    return reply.send({ approved: false, metadata: { spendgate_error: error.code } });
  }
}
