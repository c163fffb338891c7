import type { FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { SpendgateError } from '../../core/index.js';
import {
  declineReasonOf,
  jitAnswer,
  jitDecline,
  jitFundingOf,
  jitOperations,
  readJitRequest,
  verifyMarqetaAuth,
  type JitFunding,
} from './marqeta.js';
import {
  answerDecisionRequest,
  requestDecision,
  type ProcessorMessageContext,
  type ProcessorRouteSpec,
} from './message-route.js';
import type { OperationId } from '../operation-docs/index.js';

/*
 * POST /v1/processors/marqeta/{connectionId}: Marqeta's Gateway JIT Funding requests
 * (contract v1.2, section 17). No API key: Marqeta's HTTP basic auth, with the connection's
 * username and password, is the authentication. A request is answered with its jit_funding
 * object: 200 funded, 402 declined (a refusal such as an unknown card is a decline); a body
 * that carries no readable jit_funding, or a wrong basic auth, gets the error body.
 */

const marqetaHeaders = z.object({
  authorization: z
    .string()
    .meta({ description: "HTTP basic auth with the connection's username and password." }),
});
const marqetaBody = z
  .looseObject({
    type: z.string(),
    token: z.string(),
    card_token: z.string(),
    gpa_order: z.looseObject({
      jit_funding: z.looseObject({ token: z.string(), method: z.string(), amount: z.number() }),
    }),
  })
  .meta({ description: 'A Marqeta Gateway JIT Funding request (a transaction).' });
const jitObject = z.object({
  token: z.string(),
  method: z.string(),
  user_token: z.string().optional(),
  acting_user_token: z.string().optional(),
  amount: z.number().meta({ description: 'Funded, in major units (402: asked).' }),
  original_jit_funding_token: z.string().optional(),
  decline_reason: z.string().optional().meta({ description: '402 only: why.' }),
});
const marqetaAnswer = z.object({ jit_funding: jitObject }).meta({ id: 'MarqetaJitAnswer' });

async function answerMarqeta(
  request: FastifyRequest,
  reply: FastifyReply,
  context: ProcessorMessageContext,
): Promise<FastifyReply> {
  const { message, secrets } = context;
  const header = request.headers.authorization;
  verifyMarqetaAuth(typeof header === 'string' ? header : undefined, secrets);
  let body: unknown;
  try {
    body = JSON.parse(message.body.toString('utf8'));
  } catch {
    throw new SpendgateError('invalid_json', 'The Marqeta JIT request is not JSON.');
  }
  const funding = jitFundingOf(body);
  if (funding === null) {
    readJitRequest(body); // throws at the field at fault, where it can name one
    throw new SpendgateError(
      'parameter_invalid',
      'A JIT request carries gpa_order.jit_funding.',
      'gpa_order.jit_funding',
    );
  }
  message.named(funding.method);
  // A readable jit_funding is always answered in kind, 200 or 402: a refusal (an unknown
  // card, a malformed transaction) is a 402 decline.
  const answer = await answerDecisionRequest(
    request,
    message,
    () => decideJit(context, body, funding),
    (code) => jitDecline(funding, declineReasonOf(code)),
  );
  return reply.code(answer.status).send(answer.body);
}

/** A funding request: its operations' result, as the jit_funding answer. */
function decideJit(context: ProcessorMessageContext, body: unknown, funding: JitFunding) {
  const jit = readJitRequest(body);
  return requestDecision(
    context,
    jitOperations(jit),
    (first) => jitAnswer(funding, jit.currency_code, first),
    (answer) => answer.status === 200,
  );
}

/** The door's registration (register.ts). */
export const MARQETA_ROUTE: ProcessorRouteSpec = {
  processor: 'marqeta',
  operationId: 'receiveMarqetaJitRequest' satisfies OperationId,
  headers: marqetaHeaders,
  body: marqetaBody,
  // 402 (declined) carries the same object with its decline_reason: see its description.
  answer: marqetaAnswer,
  handle: answerMarqeta,
};
