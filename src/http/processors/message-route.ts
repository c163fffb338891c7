import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { SpendgateError } from '../../core/index.js';
import type { Processor, ProcessorSecrets } from '../../store/store.js';
import { errorBody } from '../error-body.js';
import type { Metrics } from '../metrics.js';
import type { ProcessorDispatcher } from './dispatch.js';
import type { ProcessorLookups } from './lookups.js';
import type { ProcessorOperation, ProcessorResult, ProcessorSource } from './operation.js';
import type { OperationId } from '../operation-docs/index.js';

/*
 * What every processor's door (stripe-route.ts, lithic-route.ts, marqeta-route.ts) does the same
 * way, so that an adapter's route holds only its processor's verification, translation and
 * answer format: the connection's read, the counting of each message, the refusal of a message
 * that cannot be taken (logged by its code, never a header, the body or a secret), and the
 * running of the operations a message asks or tells.
 */

/** The labels of the processor message counter: a bounded set. */
export type ProcessorOutcome = 'ok' | 'replayed' | 'approved' | 'declined' | SpendgateError['code'];

export interface ProcessorRouteDependencies {
  /** The connections' secrets, kept in memory for a bounded time (lookups.ts). */
  readonly lookups: ProcessorLookups;
  readonly dispatcher: ProcessorDispatcher;
  readonly messages: Metrics['processorMessages'];
}

/** The route's path parameter, as the OpenAPI document shows it. */
export const connectionParams = z.object({
  connectionId: z.string().meta({ description: 'The processor connection (POST /v1/processors).' }),
});

/** What tells one processor's door from another's. */
export interface ProcessorRouteSpec {
  readonly processor: Processor;
  readonly operationId: OperationId;
  /** The schemas document the route; they validate nothing (register.ts passes the raw body). */
  readonly headers: z.ZodType;
  readonly body: z.ZodType;
  readonly answer: z.ZodType;
  /** Verifies, translates, runs and answers one message in the processor's format. */
  readonly handle: (
    request: FastifyRequest,
    reply: FastifyReply,
    context: ProcessorMessageContext,
  ) => Promise<FastifyReply>;
}

/** What an adapter is handed for one message: it, its connection and the dispatcher. */
export interface ProcessorMessageContext {
  readonly message: ProcessorMessage;
  /** The connection the message came in on, as the dispatcher acts for it. */
  readonly source: ProcessorSource;
  /** Its secrets to verify against: the current first, the previous during a grace. */
  readonly secrets: readonly ProcessorSecrets[];
  readonly dispatcher: ProcessorDispatcher;
}

/**
 * POST /v1/processors/{processor}/{connectionId}: no API key (`public`, `security: []`), since
 * the processor's own signature or credentials over the raw body are the authentication.
 */
export function registerProcessorRoute(
  app: FastifyInstance,
  dependencies: ProcessorRouteDependencies,
  spec: ProcessorRouteSpec,
): void {
  app.post(
    `/v1/processors/${spec.processor}/:connectionId`,
    {
      config: { public: true },
      schema: {
        operationId: spec.operationId,
        tags: ['processors'],
        security: [],
        params: connectionParams,
        headers: spec.headers,
        body: spec.body,
        response: { 200: spec.answer },
      },
    },
    async (request, reply) =>
      answerProcessorMessage(
        spec.processor,
        request,
        reply,
        dependencies.messages,
        async (message) => {
          const connection = await connectionOf(dependencies.lookups, message);
          return spec.handle(request, reply, {
            message,
            ...connection,
            dispatcher: dependencies.dispatcher,
          });
        },
      ),
  );
}

/** A message being answered: its raw body, its connection id and its counter. */
export interface ProcessorMessage {
  readonly processor: Processor;
  /** The connection id of the URL, bounded: what the log names. */
  readonly connectionId: string;
  /** The body as sent: what the signature is over. */
  readonly body: Buffer;
  /** The message's name (event type, ASA status, JIT method) once read: the counter's label. */
  readonly name: string;
  named(name: string): void;
  count(outcome: ProcessorOutcome): void;
}

/**
 * Answers one message with `handle`; a refusal it throws (a bad signature, an unknown
 * connection, a malformed body) is counted, logged by its code and answered with the error
 * body and its status, nothing recorded.
 */
export async function answerProcessorMessage(
  processor: Processor,
  request: FastifyRequest,
  reply: FastifyReply,
  messages: Metrics['processorMessages'],
  handle: (message: ProcessorMessage) => Promise<FastifyReply>,
): Promise<FastifyReply> {
  const connectionId = (request.params as { connectionId: string }).connectionId.slice(0, 64);
  let name = 'unknown';
  const count = (outcome: ProcessorOutcome) => {
    messages.inc({ processor, event: name, outcome });
  };
  try {
    if (!Buffer.isBuffer(request.body))
      throw new SpendgateError('invalid_json', `A ${processor} message is a JSON body.`);
    const body = request.body;
    return await handle({
      processor,
      connectionId,
      body,
      get name() {
        return name;
      },
      named: (value) => {
        name = value.slice(0, 64);
      },
      count,
    });
  } catch (error) {
    if (!(error instanceof SpendgateError)) throw error;
    count(error.code);
    request.log.warn(
      { processor, connectionId, messageType: name, code: error.code },
      'processor message refused',
    );
    return reply
      .code(error.status)
      .send(errorBody(error.code, request.id, error.message, error.param));
  }
}

/**
 * The message's connection (processor_not_found otherwise), as the source the dispatcher acts
 * for, and its secrets to verify against (the current first, the previous during a grace).
 */
async function connectionOf(
  lookups: ProcessorLookups,
  message: ProcessorMessage,
): Promise<{ readonly source: ProcessorSource; readonly secrets: readonly ProcessorSecrets[] }> {
  const { connection, secrets } = await lookups.connection(message.processor, message.connectionId);
  return {
    source: {
      processor: message.processor,
      connectionId: connection.id,
      accountId: connection.accountId,
      mode: connection.mode,
    },
    secrets,
  };
}

/**
 * A request the processor waits on for a decision: always answered in its own format. A
 * refusal (an unknown card, a malformed object) becomes the processor's decline, `refusal`,
 * logged and counted, nothing recorded: any other answer would make the processor fall back to
 * its own timeout behaviour.
 */
export async function answerDecisionRequest<Answer>(
  request: FastifyRequest,
  message: ProcessorMessage,
  decide: () => Promise<{ readonly answer: Answer; readonly outcome: ProcessorOutcome }>,
  refusal: (code: SpendgateError['code']) => Answer,
): Promise<Answer> {
  try {
    const { answer, outcome } = await decide();
    message.count(outcome);
    return answer;
  } catch (error) {
    if (!(error instanceof SpendgateError)) throw error;
    message.count(error.code);
    request.log.warn(
      {
        processor: message.processor,
        connectionId: message.connectionId,
        messageType: message.name,
        code: error.code,
      },
      'processor request declined: refused',
    );
    return refusal(error.code);
  }
}

/**
 * The operations a request asks, run in order (an authorize, then the capture of a
 * single-message purchase; a declined authorization is not captured), and the answer to the
 * processor, `answerOf` the first one's result, with its counter label.
 */
export async function requestDecision<Answer>(
  { dispatcher, source }: Pick<ProcessorMessageContext, 'dispatcher' | 'source'>,
  operations: readonly ProcessorOperation[],
  answerOf: (first: ProcessorResult | null) => Answer,
  approved: (answer: Answer) => boolean,
): Promise<{ readonly answer: Answer; readonly outcome: ProcessorOutcome }> {
  let first: ProcessorResult | null = null;
  for (const operation of operations) {
    const result = await dispatcher.run(source, operation);
    first ??= result;
    if (result.kind === 'decision' && !result.outcome.decision.approved) break;
  }
  const answer = answerOf(first);
  return { answer, outcome: requestOutcome(first, approved(answer)) };
}

/** The counter's label of a request's answer: a decision's, or ok for a posting or nothing. */
function requestOutcome(first: ProcessorResult | null, approved: boolean): ProcessorOutcome {
  if (first?.replayed === true) return 'replayed';
  if (first?.kind !== 'decision') return 'ok';
  return approved ? 'approved' : 'declined';
}

/**
 * A notification's operations (what followed an authorization), run in order and counted:
 * 200 `{received: true, operations}`, `replayed` when every one was a repeat.
 */
export async function answerNotification(
  reply: FastifyReply,
  { dispatcher, source, message }: ProcessorMessageContext,
  operations: readonly ProcessorOperation[],
): Promise<FastifyReply> {
  const results: ProcessorResult[] = [];
  for (const operation of operations) {
    const result = await dispatcher.runNotification(source, operation);
    if (result !== null) results.push(result);
  }
  message.count(
    results.length > 0 && results.every((result) => result.replayed) ? 'replayed' : 'ok',
  );
  return reply.code(200).send({ received: true, operations: results.length });
}
