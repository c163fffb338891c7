import type { FastifyReply, FastifyRequest } from 'fastify';
import type Stripe from 'stripe';
import { z } from 'zod';
import { SpendgateError } from '../../core/index.js';
import {
  answerDecisionRequest,
  answerNotification,
  requestDecision,
  type ProcessorMessageContext,
  type ProcessorRouteSpec,
} from './message-route.js';
import {
  isStripeEventType,
  STRIPE_API_VERSION,
  stripeRequestAnswer,
  stripeTranslation,
  verifiedStripeEvent,
  type StripeEventType,
} from './stripe.js';
import type { OperationId } from '../operation-docs/index.js';

/*
 * POST /v1/processors/stripe/{connectionId}: the events Stripe sends to a webhook endpoint
 * (contract v1.2, section 17). No API key: the Stripe-Signature over the raw body, with the
 * connection's signing secret, is the authentication, so the route lives outside the /v1 key
 * plugin and reads its body raw (json-body.ts parses every other body). Hidden from the
 * OpenAPI document, as every route without a key is; docs/processors.md documents it.
 */

/*
 * The schemas document the route; they validate nothing (the plugin's validator passes the
 * raw body through: the signature is checked over it before anything reads it).
 */
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
  context: ProcessorMessageContext,
): Promise<FastifyReply> {
  const { message, source, secrets } = context;
  const header = request.headers['stripe-signature'];
  const event = verifiedStripeEvent(
    message.body,
    typeof header === 'string' ? header : undefined,
    secrets,
  );
  if (!isStripeEventType(event.type))
    throw new SpendgateError(
      'parameter_invalid',
      `spendgate takes no Stripe event of type ${event.type.slice(0, 64)}.`,
      'type',
    );
  message.named(event.type);
  if (event.livemode !== (source.mode === 'live'))
    throw new SpendgateError(
      'parameter_invalid',
      `The event's livemode is not the connection's mode (${source.mode}).`,
      'livemode',
    );
  const typed = event as Stripe.Event & { type: StripeEventType };
  if (typed.type === 'issuing_authorization.request') {
    // Always 200 with Stripe-Version and a decision: any other answer makes Stripe fall back
    // to its timeout setting.
    const answer = await answerDecisionRequest(
      request,
      message,
      () => {
        const translation = stripeTranslation(typed);
        if (translation.kind !== 'request')
          throw new Error('a request event translates to a request');
        return requestDecision(
          context,
          [translation.operation],
          (result) => stripeRequestAnswer(result, translation.controllable),
          (answer) => answer.approved,
        );
      },
      (code) => ({ approved: false, metadata: { spendgate_error: code } }),
    );
    return reply.code(200).header('Stripe-Version', STRIPE_API_VERSION).send(answer);
  }
  const translation = stripeTranslation(typed);
  const operations = translation.kind === 'notification' ? translation.operations : [];
  return answerNotification(reply, context, operations);
}

/** The door's registration (register.ts). */
export const STRIPE_ROUTE: ProcessorRouteSpec = {
  processor: 'stripe',
  operationId: 'receiveStripeEvent' satisfies OperationId,
  headers: stripeHeaders,
  body: stripeEventBody,
  answer: stripeAnswerObject,
  handle: answerStripe,
};
