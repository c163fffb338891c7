import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { presentCard, presentCardDetails } from '../../core/index.js';
import type { Store } from '../../store/store.js';
import { authOf } from '../auth.js';
import { respond } from '../idempotency.js';
import {
  cardDetailsObject,
  cardObject,
  createCardBody,
  listCardsQuery,
  updateCardBody,
} from '../schemas/card.js';
import { idParams, listOf, presentPage, twoFactorHeaders } from '../schemas/common.js';
import { twoFactorRefused } from './two-factor.js';
import type { OperationId } from '../operation-docs/index.js';

/**
 * Cards (contract sections 7-9): create, list, retrieve, reveal, freeze, unfreeze, cancel.
 * A card's number and CVV leave the store only through Reveal, never into a log, an event,
 * an idempotency record or a cache.
 */
export function registerCardRoutes(
  app: FastifyInstance,
  store: Store,
  options: { readonly cardBin: string },
): void {
  const routes = app.withTypeProvider<ZodTypeProvider>();

  routes.post('/v1/cards', createCardRoute, async (request, reply) => {
    const { scope } = authOf(request);
    const body = request.body;
    return respond(store, request, reply, 201, async (operations) =>
      presentCard(
        await operations.createCard(scope, {
          vaultId: body.vaultId,
          cardholderName: body.cardholderName,
          metadata: body.metadata ?? {},
          bin: options.cardBin,
          ...(body.billingCurrency === undefined ? {} : { billingCurrency: body.billingCurrency }),
          ...(body.processorCard === undefined ? {} : { processorCard: body.processorCard }),
        }),
      ),
    );
  });

  routes.get('/v1/cards', listCardsRoute, async (request) =>
    presentPage(await store.listCards(authOf(request).scope, request.query), presentCard),
  );

  routes.get('/v1/cards/:id', retrieveCardRoute, async (request) =>
    presentCard(await store.getCard(authOf(request).scope, request.params.id)),
  );

  registerUpdateCard(app, store);

  routes.post('/v1/cards/:id/reveal', revealCardRoute, async (request, reply) => {
    const { scope } = authOf(request);
    const code = request.headers['x-two-factor-code'];
    // Not through `respond`: an idempotency record would keep the number and CVV in the
    // database in clear. Reveal changes nothing but the spent code, so a retry is harmless.
    // A refused code is returned, not thrown, so that its count commits (two-factor.ts).
    const outcome = await store.transaction(async (operations) => {
      const refusal = await operations.requireTwoFactor(scope.accountId, code);
      if (refusal !== null) return { refusal };
      return { details: await operations.revealCard(scope, request.params.id) };
    });
    if ('refusal' in outcome) throw twoFactorRefused(request, reply, outcome.refusal);
    void reply.header('Cache-Control', 'no-store');
    return presentCardDetails(outcome.details);
  });

  const transitions = [
    { path: 'freeze', operationId: 'freezeCard' satisfies OperationId, status: 'frozen' },
    { path: 'unfreeze', operationId: 'unfreezeCard' satisfies OperationId, status: 'active' },
    { path: 'cancel', operationId: 'cancelCard' satisfies OperationId, status: 'cancelled' },
  ] as const;
  for (const transition of transitions) {
    routes.post(
      `/v1/cards/:id/${transition.path}`,
      cardTransitionRoute(transition.operationId),
      async (request, reply) => {
        const { scope } = authOf(request);
        const { id } = request.params;
        return respond(store, request, reply, 200, async (operations) =>
          presentCard(await operations.setCardStatus(scope, id, transition.status)),
        );
      },
    );
  }
}

function cardTransitionRoute(
  operationId: Extract<OperationId, 'freezeCard' | 'unfreezeCard' | 'cancelCard'>,
) {
  return {
    config: { requiredScope: 'cards:write' },
    schema: { operationId, tags: ['cards'], params: idParams, response: { 200: cardObject } },
  } as const;
}

const createCardRoute = {
  config: { requiredScope: 'cards:write' },
  schema: {
    operationId: 'createCard' satisfies OperationId,
    tags: ['cards'],
    body: createCardBody,
    response: { 201: cardObject },
  },
} as const;

const listCardsRoute = {
  config: { requiredScope: 'cards:read' },
  schema: {
    operationId: 'listCards' satisfies OperationId,
    tags: ['cards'],
    querystring: listCardsQuery,
    response: { 200: listOf(cardObject) },
  },
} as const;

const retrieveCardRoute = {
  config: { requiredScope: 'cards:read' },
  schema: {
    operationId: 'retrieveCard' satisfies OperationId,
    tags: ['cards'],
    params: idParams,
    response: { 200: cardObject },
  },
} as const;

/** Update Card (contract v1.2, section 3 amendments): name and metadata; card.updated. */
function registerUpdateCard(app: FastifyInstance, store: Store): void {
  const routes = app.withTypeProvider<ZodTypeProvider>();
  routes.patch('/v1/cards/:id', updateCardRoute, async (request, reply) => {
    const { scope } = authOf(request);
    const { cardholderName, metadata, processorCard } = request.body;
    return respond(store, request, reply, 200, async (operations) =>
      presentCard(
        await operations.updateCard(scope, request.params.id, {
          cardholderName,
          metadata,
          processorCard,
        }),
      ),
    );
  });
}

const updateCardRoute = {
  config: { requiredScope: 'cards:write' },
  schema: {
    operationId: 'updateCard' satisfies OperationId,
    tags: ['cards'],
    params: idParams,
    body: updateCardBody,
    response: { 200: cardObject },
  },
} as const;

const revealCardRoute = {
  config: { requiredScope: 'cards:reveal' },
  schema: {
    operationId: 'revealCard' satisfies OperationId,
    tags: ['cards'],
    params: idParams,
    headers: twoFactorHeaders,
    response: { 200: cardDetailsObject },
  },
} as const;
