import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import {
  assert,
  currencyOf,
  presentAuthorization,
  presentTransaction,
  type AuthorizationOutcome,
} from '../../core/index.js';
import type { AuthorizeSettings } from '../../config/env.js';
import type { Store } from '../../store/store.js';
import { authOf } from '../auth.js';
import { authorizeWithinBudget } from '../authorize-budget.js';
import { authorizeInputOf } from '../authorize-input.js';
import type { StandInRecords } from '../stand-in-records.js';
import { requestCurrencyOf } from '../iso-currencies.js';
import { respond } from '../idempotency.js';
import type { Metrics } from '../metrics.js';
import {
  adviceBody,
  authorizeBody,
  holdAmountBody,
  incrementBody,
} from '../schemas/authorization.js';
import { captureBody } from '../schemas/clearing.js';
import { idParams } from '../schemas/common.js';
import { decisionObject } from '../schemas/policy.js';
import { transactionObject } from '../schemas/transaction.js';
import type { OperationId } from '../operation-docs/index.js';

/**
 * The card network's money path (contract sections 7, 10 and 16): Authorize, Capture (which
 * always posts), Reverse.
 * A decline is a decision, answered 200. The authorize route is never refused because Redis
 * is down (`rateLimitFailOpen`), and answers the stand-in decision past its time budget.
 */
export function registerAuthorizationRoutes(
  app: FastifyInstance,
  store: Store,
  settings: AuthorizeSettings,
  decisions: DecisionCounters,
  standIn: StandInRecords,
): void {
  registerAuthorize(app, store, settings, decisions, standIn);
  registerDecidingMessages(app, store, decisions);
  const routes = app.withTypeProvider<ZodTypeProvider>();

  routes.post(
    '/v1/authorizations/:id/capture',
    holdChangeRoute('captureAuthorization', captureBody),
    async (request, reply) => {
      const { scope } = authOf(request);
      const { id } = request.params;
      // The store reads the amount in the authorization's currency, with the hold locked.
      const amount = request.body?.amount ?? null;
      const final = request.body?.final ?? true;
      return respond(
        store,
        request,
        reply,
        200,
        async (operations) =>
          presentTransaction(await operations.capture(scope, id, amount, final)),
        { message: { authorizationId: id } },
      );
    },
  );
  routes.post(
    '/v1/authorizations/:id/reverse',
    holdChangeRoute('reverseAuthorization', holdAmountBody),
    async (request, reply) => {
      const { scope } = authOf(request);
      const { id } = request.params;
      const amount = request.body?.amount ?? null;
      return respond(
        store,
        request,
        reply,
        200,
        async (operations) => presentTransaction(await operations.reverse(scope, id, amount)),
        { message: { authorizationId: id } },
      );
    },
  );
}

/** Authorize: the network's question, answered within its budget (stand-in past it). */
function registerAuthorize(
  app: FastifyInstance,
  store: Store,
  settings: AuthorizeSettings,
  decisions: DecisionCounters,
  // What the network was told in stand-in and the ledger has yet to record (issue 37, item 3).
  standInRecords: StandInRecords,
): void {
  const routes = app.withTypeProvider<ZodTypeProvider>();

  routes.post(
    '/v1/authorizations',
    authorizeRoute,
    // The networkTransactionId is this route's idempotency key (contract section 5): a repeated
    // callback gets the first decision, with Idempotent-Replayed, whatever Idempotency-Key says.
    async (request, reply) => {
      const started = process.hrtime.bigint();
      const { scope } = authOf(request);
      const input = authorizeInputOf(request.body);
      const outcome = await authorizeWithinBudget(
        store,
        scope,
        input,
        settings,
        request.log,
        standInRecords,
        request.requestTrace,
      );
      if (outcome.replayed) void reply.header('Idempotent-Replayed', 'true');
      countDecision(decisions, outcome);
      return presentAuthorization(
        outcome,
        {
          cardId: input.cardId,
          amount: input.amount,
          currency: requestCurrencyOf(input.currency, 'currency'),
        },
        Number((process.hrtime.bigint() - started) / 1000n),
      );
    },
  );
}

/**
 * Advice and increments (contract v1.2, section 16) answer a decision, like Authorize, and are
 * idempotent by their own networkTransactionId in the store (a repeat answers what was recorded).
 */
function registerDecidingMessages(
  app: FastifyInstance,
  store: Store,
  decisions: DecisionCounters,
): void {
  const routes = app.withTypeProvider<ZodTypeProvider>();
  routes.post('/v1/authorizations/advice', adviceRoute, async (request, reply) => {
    const started = process.hrtime.bigint();
    const { scope } = authOf(request);
    const { approved, reason } = request.body;
    const input = authorizeInputOf(request.body);
    const outcome = await store.message(
      (operations) => operations.advise(scope, { ...input, approved, reason }),
      { cardId: input.cardId, scope },
    );
    if (outcome.replayed) void reply.header('Idempotent-Replayed', 'true');
    return presentAuthorization(
      outcome,
      {
        cardId: input.cardId,
        amount: input.amount,
        currency: requestCurrencyOf(input.currency, 'currency'),
      },
      Number((process.hrtime.bigint() - started) / 1000n),
    );
  });
  routes.post('/v1/authorizations/:id/increment', incrementRoute, async (request, reply) => {
    const started = process.hrtime.bigint();
    const { scope } = authOf(request);
    const outcome = await store.message(
      (operations) => operations.incrementAuthorization(scope, request.params.id, request.body),
      { authorizationId: request.params.id },
    );
    if (outcome.replayed) void reply.header('Idempotent-Replayed', 'true');
    countDecision(decisions, outcome);
    assert(outcome.transaction !== null, 'an increment answers with its authorization');
    return presentAuthorization(
      outcome,
      {
        cardId: outcome.transaction.cardId,
        amount: outcome.transaction.amount,
        currency: currencyOf(outcome.transaction.currency),
      },
      Number((process.hrtime.bigint() - started) / 1000n),
    );
  });
}

function holdChangeRoute<Body extends typeof captureBody | typeof holdAmountBody>(
  operationId: Extract<OperationId, 'captureAuthorization' | 'reverseAuthorization'>,
  body: Body,
) {
  return {
    // A capture always posts (section 16), and a reverse frees a hold: neither waits on Redis.
    config: { requiredScope: 'authorizations:write', rateLimitFailOpen: true },
    schema: {
      operationId,
      tags: ['authorizations'],
      params: idParams,
      body,
      response: { 200: transactionObject },
    },
  } as const;
}

/** The counters each decision answered adds to. */
export type DecisionCounters = Pick<Metrics, 'decisions' | 'rateUnavailableDeclines'>;

function countDecision(counters: DecisionCounters, outcome: AuthorizationOutcome): void {
  if (outcome.decision.declineReason?.rule === 'rate_unavailable') {
    counters.rateUnavailableDeclines.inc();
  }
  counters.decisions.inc({
    outcome: outcome.decision.approved ? 'approved' : 'declined',
    decline_code: outcome.decision.declineCode ?? '',
    stand_in: String(outcome.standIn),
  });
}

const adviceRoute = {
  config: { requiredScope: 'authorizations:write', rateLimitFailOpen: true },
  schema: {
    operationId: 'adviseAuthorization' satisfies OperationId,
    tags: ['authorizations'],
    body: adviceBody,
    response: { 200: decisionObject },
  },
} as const;

const incrementRoute = {
  config: { requiredScope: 'authorizations:write', rateLimitFailOpen: true },
  schema: {
    operationId: 'incrementAuthorization' satisfies OperationId,
    tags: ['authorizations'],
    params: idParams,
    body: incrementBody,
    response: { 200: decisionObject },
  },
} as const;

const authorizeRoute = {
  config: { requiredScope: 'authorizations:write', rateLimitFailOpen: true },
  schema: {
    operationId: 'authorize' satisfies OperationId,
    tags: ['authorizations'],
    body: authorizeBody,
    response: { 200: decisionObject },
  },
} as const;
