import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { SpendgateError } from '../../core/index.js';
import type { Store } from '../../store/store.js';
import { authOf } from '../auth.js';
import { cardPage, messagePage, parseDisplayStyle, type PageAnswer } from '../card-display-page.js';
import { checkDisplayOrigins } from '../display-origins.js';
import { respond } from '../idempotency.js';
import {
  cardDisplayTokenObject,
  displayOriginsObject,
  setDisplayOriginsBody,
} from '../schemas/card-display.js';
import { idParams, twoFactorHeaders } from '../schemas/common.js';
import { twoFactorRefused } from './two-factor.js';
import type { OperationId } from '../operation-docs/index.js';

/**
 * Hosted card display (issue 18): a single-use token for one card (behind `cards:reveal` and
 * two-factor, as Reveal Card Details), the page that spends it, and the origins the account
 * lets frame that page. The page's number goes from spendgate to the cardholder's browser
 * alone; the customer's servers handle a token that is spent at the first load.
 */
export function registerCardDisplayRoutes(app: FastifyInstance, store: Store): void {
  const routes = app.withTypeProvider<ZodTypeProvider>();

  routes.post('/v1/cards/:id/display-token', createTokenRoute, async (request, reply) => {
    const { scope } = authOf(request);
    const code = request.headers['x-two-factor-code'];
    // Not through `respond`: an idempotency record would keep the token in clear. A refused
    // code is returned, not thrown, so that its count commits (two-factor.ts).
    const outcome = await store.transaction(async (operations) => {
      const refusal = await operations.requireTwoFactor(scope.accountId, code);
      if (refusal !== null) return { refusal };
      return { created: await operations.createDisplayToken(scope, request.params.id) };
    });
    if ('refusal' in outcome) throw twoFactorRefused(request, reply, outcome.refusal);
    const { cardId, token, expiresAtMs } = outcome.created;
    void reply.code(201).header('Cache-Control', 'no-store');
    return {
      object: 'card_display_token' as const,
      cardId,
      token,
      url: `/card-display?token=${token}`,
      expiresAt: new Date(expiresAtMs).toISOString(),
    };
  });

  routes.get('/v1/account/display-origins', retrieveOriginsRoute, async (request) => ({
    object: 'card_display_origins' as const,
    origins: await store.displayOrigins(authOf(request).scope),
  }));

  routes.put('/v1/account/display-origins', setOriginsRoute, async (request, reply) => {
    const { scope } = authOf(request);
    const origins = checkDisplayOrigins(request.body.origins, scope.mode);
    return respond(store, request, reply, 200, async (operations) => ({
      object: 'card_display_origins' as const,
      origins: await operations.setDisplayOrigins(scope, origins),
    }));
  });

  // No key: the token is the page's only authority. No HEAD route, which would spend the
  // token and show nothing (a link checker's HEAD must not use up the cardholder's page).
  app.get(
    '/card-display',
    { config: { public: true }, schema: { hide: true }, exposeHeadRoute: false },
    async (request, reply) => {
      const answer = await displayAnswer(store, request.query as Record<string, unknown>);
      return reply.code(answer.status).headers(answer.headers).send(answer.html);
    },
  );
}

/**
 * The page for a query: the style is checked before the token is spent, so that a mistyped
 * color costs the cardholder no token. Unknown, spent and expired tokens get one answer.
 */
async function displayAnswer(
  store: Store,
  query: Readonly<Record<string, unknown>>,
): Promise<PageAnswer> {
  const parsed = parseDisplayStyle(query);
  if ('refusals' in parsed)
    return messagePage(
      400,
      'This page was asked for with a style it does not take.',
      parsed.refusals,
    );
  const token = query['token'];
  if (typeof token !== 'string')
    return messagePage(400, 'This page needs one token, from Create Card Display Token.');
  try {
    const shown = await store.spendDisplayToken(token);
    if (shown === null)
      return messagePage(404, 'This link has expired or was already used: ask for a new one.');
    return cardPage(shown.details, parsed.style, shown.origins);
  } catch (error) {
    if (error instanceof SpendgateError && error.code === 'card_cancelled')
      return messagePage(409, 'This card is cancelled: its details are never shown again.');
    throw error;
  }
}

const createTokenRoute = {
  config: { requiredScope: 'cards:reveal' },
  schema: {
    operationId: 'createCardDisplayToken' satisfies OperationId,
    tags: ['cards'],
    params: idParams,
    headers: twoFactorHeaders,
    response: { 201: cardDisplayTokenObject },
  },
} as const;

const retrieveOriginsRoute = {
  config: { requiredScope: null },
  schema: {
    operationId: 'retrieveDisplayOrigins' satisfies OperationId,
    tags: ['account'],
    response: { 200: displayOriginsObject },
  },
} as const;

const setOriginsRoute = {
  config: { requiredScope: 'account:write' },
  schema: {
    operationId: 'setDisplayOrigins' satisfies OperationId,
    tags: ['account'],
    body: setDisplayOriginsBody,
    response: { 200: displayOriginsObject },
  },
} as const;
