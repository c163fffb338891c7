import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { z } from 'zod';
import {
  formatAmount,
  parseAmount,
  presentFiat,
  presentRate,
  presentTransaction,
  presentTransactionMetadata,
  SpendgateError,
  type Decimal,
} from '../../core/index.js';
import type { ListTransactionsQuery, Store, Timeline } from '../../store/store.js';
import { authOf } from '../auth.js';
import { ANY_CURRENCY, idParams, listOf, presentPage } from '../schemas/common.js';
import {
  listTransactionsQuery,
  metadataObject,
  timelineObject,
  transactionObject,
} from '../schemas/transaction.js';
import type { OperationId } from '../operation-docs/index.js';

/** Transactions and their metadata (contract sections 7 and 14). */
export function registerTransactionRoutes(app: FastifyInstance, store: Store): void {
  const routes = app.withTypeProvider<ZodTypeProvider>();
  routes.get('/v1/transactions', listTransactionsRoute, async (request) =>
    presentPage(
      await store.listTransactions(authOf(request).scope, transactionFilters(request.query)),
      presentTransaction,
    ),
  );
  routes.get('/v1/transactions/:id', retrieveTransactionRoute, async (request) =>
    presentTransaction(await store.getTransaction(authOf(request).scope, request.params.id)),
  );
  routes.get('/v1/transactions/:id/metadata', transactionMetadataRoute, async (request, reply) => {
    void reply.header('Cache-Control', 'no-store');
    const { id } = request.params;
    const metadata = await store.readTransactionMetadata(authOf(request).scope, id);
    return presentTransactionMetadata(id, metadata);
  });
  routes.get('/v1/transactions/:id/timeline', transactionTimelineRoute, async (request) =>
    presentTimeline(await store.transactionTimeline(authOf(request).scope, request.params.id)),
  );
}

const listTransactionsRoute = {
  config: { requiredScope: 'transactions:read' },
  schema: {
    operationId: 'listTransactions' satisfies OperationId,
    tags: ['transactions'],
    querystring: listTransactionsQuery,
    response: { 200: listOf(transactionObject) },
  },
} as const;

const retrieveTransactionRoute = {
  config: { requiredScope: 'transactions:read' },
  schema: {
    operationId: 'retrieveTransaction' satisfies OperationId,
    tags: ['transactions'],
    params: idParams,
    response: { 200: transactionObject },
  },
} as const;

const transactionMetadataRoute = {
  config: { requiredScope: 'transactions:metadata' },
  schema: {
    operationId: 'getTransactionMetadata' satisfies OperationId,
    tags: ['transactions'],
    params: idParams,
    response: { 200: metadataObject },
  },
} as const;

const transactionTimelineRoute = {
  config: { requiredScope: 'transactions:read' },
  schema: {
    operationId: 'getTransactionTimeline' satisfies OperationId,
    tags: ['transactions'],
    params: idParams,
    response: { 200: timelineObject },
  },
} as const;

function presentTimeline(timeline: Timeline): z.infer<typeof timelineObject> {
  const { transaction } = timeline;
  const shown = (value: Decimal) => formatAmount(value, transaction.currency);
  return {
    object: 'timeline',
    transactionId: transaction.id,
    currency: transaction.currency,
    messages: timeline.entries.map((entry) => ({
      kind: entry.kind,
      amount: shown(entry.amount),
      heldAmount: shown(entry.holdAfter),
      approved: entry.approved,
      networkTransactionId: entry.networkTransactionId,
      createdAt: new Date(entry.atMs).toISOString(),
      billing: entry.billing === null ? null : presentFiat(entry.billing),
      rate: entry.rate === null ? null : presentRate(entry.rate),
    })),
    truncated: timeline.truncated,
  };
}

/** The query as the store filters: amounts exact, dates as epoch milliseconds. */
function transactionFilters(query: z.infer<typeof listTransactionsQuery>): ListTransactionsQuery {
  return {
    limit: query.limit,
    startingAfter: query.startingAfter,
    vaultId: query.vaultId,
    cardId: query.cardId,
    status: query.status,
    type: query.type,
    minAmount: filterAmount(query.minAmount, 'minAmount'),
    maxAmount: filterAmount(query.maxAmount, 'maxAmount'),
    startDate: filterDate(query.startDate, 'startDate'),
    endDate: filterDate(query.endDate, 'endDate'),
  };
}

function filterAmount(value: string | undefined, param: string): Decimal | undefined {
  return value === undefined ? undefined : parseAmount(value, ANY_CURRENCY, { param });
}

const DAY_MS = 86_400_000;
const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;

/**
 * A bound as the store takes it: epoch milliseconds, the start inclusive, the end exclusive.
 * A date alone names a whole UTC day, so that `startDate=endDate=D` lists the day D: the end
 * of a date-only endDate is the start of the next day. A date-time keeps its exact instant.
 */
function filterDate(value: string | undefined, param: 'startDate' | 'endDate'): number | undefined {
  if (value === undefined) return undefined;
  const ms = Date.parse(value);
  if (Number.isNaN(ms))
    throw new SpendgateError('parameter_invalid', `${param} must be an ISO 8601 date.`, param);
  return param === 'endDate' && DATE_ONLY.test(value) ? ms + DAY_MS : ms;
}
