import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { SpendgateError } from '../../core/index.js';
import type { Store } from '../../store/store.js';
import { errorBody } from '../error-body.js';
import type { Metrics } from '../metrics.js';
import type { ProcessorDispatcher } from './dispatch.js';
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
import type { ProcessorResult, ProcessorSource } from './operation.js';

/*
 * POST /v1/processors/marqeta/{connectionId}: Marqeta's Gateway JIT Funding requests
 * (contract v1.2, section 17). No API key: Marqeta's HTTP basic auth, with the connection's
 * username and password, is the authentication. A request is answered with its jit_funding
 * object: 200 funded, 402 declined (a refusal such as an unknown card is a decline); a body
 * that carries no readable jit_funding, or a wrong basic auth, gets the error body.
 */

type Outcome = 'ok' | 'replayed' | 'approved' | 'declined' | SpendgateError['code'];

export interface MarqetaRouteDependencies {
  readonly store: Store;
  readonly dispatcher: ProcessorDispatcher;
  readonly messages: Metrics['processorMessages'];
}

const marqetaParams = z.object({
  connectionId: z.string().meta({ description: 'The processor connection (POST /v1/processors).' }),
});
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

export function registerMarqetaRoute(
  app: FastifyInstance,
  dependencies: MarqetaRouteDependencies,
): void {
  app.post(
    '/v1/processors/marqeta/:connectionId',
    {
      config: { public: true },
      schema: {
        operationId: 'receiveMarqetaJitRequest',
        tags: ['processors'],
        // No key: Marqeta's basic auth is the authentication.
        security: [],
        params: marqetaParams,
        headers: marqetaHeaders,
        body: marqetaBody,
        // 402 (declined) carries the same object with its decline_reason: see the description.
        response: { 200: marqetaAnswer },
      },
    },
    async (request, reply) => answerMarqeta(request, reply, dependencies),
  );
}

async function answerMarqeta(
  request: FastifyRequest,
  reply: FastifyReply,
  { store, dispatcher, messages }: MarqetaRouteDependencies,
): Promise<FastifyReply> {
  const connectionId = (request.params as { connectionId: string }).connectionId.slice(0, 64);
  let name = 'unknown';
  const count = (outcome: Outcome) => {
    messages.inc({ processor: 'marqeta', event: name, outcome });
  };
  try {
    if (!Buffer.isBuffer(request.body))
      throw new SpendgateError('invalid_json', 'A Marqeta JIT request is a JSON body.');
    const { connection, secrets } = await store.processorConnectionSecrets('marqeta', connectionId);
    const header = request.headers.authorization;
    verifyMarqetaAuth(typeof header === 'string' ? header : undefined, secrets);
    let body: unknown;
    try {
      body = JSON.parse(request.body.toString('utf8'));
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
    name = funding.method;
    const source: ProcessorSource = {
      processor: 'marqeta',
      connectionId: connection.id,
      accountId: connection.accountId,
      mode: connection.mode,
    };
    return await answerFunding(request, reply, { dispatcher, source, body, funding, count });
  } catch (error) {
    if (!(error instanceof SpendgateError)) throw error;
    count(error.code);
    // The code only: never the Authorization header, the body or a secret.
    request.log.warn(
      { processor: 'marqeta', connectionId, method: name, code: error.code },
      'processor message refused',
    );
    return reply
      .code(error.status)
      .send(errorBody(error.code, request.id, error.message, error.param));
  }
}

/**
 * A funding request with a readable jit_funding: always answered in kind, 200 or 402. A
 * refusal (unknown card, a malformed transaction) is a 402 decline, logged and counted,
 * nothing recorded.
 */
async function answerFunding(
  request: FastifyRequest,
  reply: FastifyReply,
  context: {
    readonly dispatcher: ProcessorDispatcher;
    readonly source: ProcessorSource;
    readonly body: unknown;
    readonly funding: JitFunding;
    readonly count: (outcome: Outcome) => void;
  },
): Promise<FastifyReply> {
  const { dispatcher, source, body, funding, count } = context;
  try {
    const jit = readJitRequest(body);
    let first: ProcessorResult | null = null;
    for (const operation of jitOperations(jit)) {
      const result = await dispatcher.run(source, operation);
      first ??= result;
      // A declined PIN debit is not captured.
      if (result.kind === 'decision' && !result.outcome.decision.approved) break;
    }
    const answer = jitAnswer(funding, jit.currency_code, first);
    count(
      first?.replayed === true
        ? 'replayed'
        : first?.kind === 'decision'
          ? answer.status === 200
            ? 'approved'
            : 'declined'
          : 'ok',
    );
    return await reply.code(answer.status).send(answer.body);
  } catch (error) {
    if (!(error instanceof SpendgateError)) throw error;
    count(error.code);
    request.log.warn(
      {
        processor: 'marqeta',
        connectionId: source.connectionId,
        method: funding.method,
        code: error.code,
      },
      'processor request declined: refused',
    );
    const answer = jitDecline(funding, declineReasonOf(error.code));
    return reply.code(answer.status).send(answer.body);
  }
}
