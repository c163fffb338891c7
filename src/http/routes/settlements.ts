import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { parseAmount, presentSettlement, type AmountInput } from '../../core/index.js';
import type { SettlementRecordInput, Store } from '../../store/store.js';
import { authOf } from '../auth.js';
import { respond } from '../idempotency.js';
import { ANY_CURRENCY, idParams } from '../schemas/common.js';
import {
  createSettlementBody,
  settlementObject,
  type SettlementRecordBody,
} from '../schemas/settlement.js';
import type { OperationId } from '../operation-docs/index.js';

/**
 * Clearing batches: the card network's capture file. Accepted whole with 202 once
 * every record is well-formed; the settlement worker then posts each capture, and a record
 * that fails (unknown authorization, amount above the hold) is reported without stopping the
 * others. Progress and per-record errors: GET /v1/settlements/{id}.
 */
export function registerSettlementRoutes(app: FastifyInstance, store: Store): void {
  const routes = app.withTypeProvider<ZodTypeProvider>();

  routes.post('/v1/settlements', createSettlementRoute, async (request, reply) => {
    const { scope } = authOf(request);
    const records = request.body.records.map(recordInput);
    return respond(store, request, reply, 202, async (operations) =>
      presentSettlement(await operations.createSettlement(scope, records)),
    );
  });

  routes.get('/v1/settlements/:id', retrieveSettlementRoute, async (request) =>
    presentSettlement(await store.getSettlement(authOf(request).scope, request.params.id)),
  );
}

/**
 * A record as the store keeps it. Each amount's form is checked now (at the finest scale any
 * currency has), so a malformed one refuses the batch at its place; its currency's scale is
 * checked when it is posted, since the authorization or the card's vault names the currency.
 */
function recordInput(record: SettlementRecordBody, index: number): SettlementRecordInput {
  const exact = (amount: AmountInput) =>
    parseAmount(amount, ANY_CURRENCY, {
      param: `records[${index}].amount`,
      allowZero: false,
    }).toFixed();
  if (record.type === 'force_capture' || record.type === 'refund') {
    const { type, ...message } = record;
    return { kind: type, message: { ...message, amount: exact(message.amount) } };
  }
  return {
    kind: 'capture',
    authorizationId: record.authorizationId,
    amount: record.amount === undefined ? null : exact(record.amount),
    final: record.final ?? true,
  };
}

const createSettlementRoute = {
  config: { requiredScope: 'authorizations:write' },
  schema: {
    operationId: 'createSettlement' satisfies OperationId,
    tags: ['authorizations'],
    body: createSettlementBody,
    response: { 202: settlementObject },
  },
} as const;

const retrieveSettlementRoute = {
  config: { requiredScope: 'authorizations:write' },
  schema: {
    operationId: 'retrieveSettlement' satisfies OperationId,
    tags: ['authorizations'],
    params: idParams,
    response: { 200: settlementObject },
  },
} as const;
