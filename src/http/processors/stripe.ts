import Stripe from 'stripe';
import { z } from 'zod';
import { SpendgateError, type Merchant } from '../../core/index.js';
import type { ProcessorSecrets } from '../../store/store.js';
import type { ProcessorOperation, ProcessorResult } from './operation.js';
import { readShape } from './read-shape.js';

/*
 * Stripe Issuing (contract v1.2, section 17), translated onto the dispatcher's operations. The
 * event is verified with Stripe's own package (`webhooks.constructEvent` over the raw body,
 * its default tolerance of 300 s), then read with the fields named here (Stripe's types say
 * what Stripe sends; the schema below checks that it did, since constructEvent only parses):
 *
 * - issuing_authorization.request: answered synchronously, as real-time authorizations
 *   expect: 200, `Stripe-Version`, `{approved, amount?, metadata}`. The first request of an
 *   authorization is an authorize; a request on an authorization already approved is an
 *   increment of `pending_request.amount`.
 * - issuing_authorization.created: what Stripe decided without our answer (our webhook timed
 *   out, or Stripe declined before asking) is an advice; one decided by our answer is
 *   already recorded.
 * - issuing_authorization.updated: `reversed` and `expired` release the hold, `closed` what
 *   the captures left of it; an amount that went down while pending releases the difference,
 *   one that went up without our answer (Stripe's timeout setting decided an incremental
 *   authorization) is an increment of it, as an advice (approved already: recorded whatever
 *   the balance).
 * - issuing_transaction.created: `capture` captures its authorization, not final (Stripe may
 *   send several; a force capture when it has none), `refund` refunds.
 */

/** The event types this adapter reads; any other is refused (and counted) as unknown. */
export const STRIPE_EVENT_TYPES = [
  'issuing_authorization.request',
  'issuing_authorization.created',
  'issuing_authorization.updated',
  'issuing_transaction.created',
] as const;
export type StripeEventType = (typeof STRIPE_EVENT_TYPES)[number];

/** The API version of the `stripe` package, which the response names (`Stripe-Version`). */
export const STRIPE_API_VERSION: string = Stripe.API_VERSION;

/**
 * The event, verified against each secret of the connection (current first, then the previous
 * one while a rotation's grace lasts). Fails: invalid_signature (no header, a forged or stale
 * signature, a body that is not the signed one). Never echoes the header or a secret.
 */
export function verifiedStripeEvent(
  rawBody: Buffer,
  header: string | undefined,
  secrets: readonly ProcessorSecrets[],
): Stripe.Event {
  if (header === undefined || header === '')
    throw new SpendgateError('invalid_signature', 'The Stripe-Signature header is missing.');
  // Stripe signs its real-time authorization requests with that endpoint's secret, which may
  // differ from the webhook endpoint's: either verifies.
  const signingSecrets = secrets.flatMap((secret) =>
    [secret['signingSecret'], secret['realtimeSigningSecret']].filter(
      (value): value is string => value !== undefined,
    ),
  );
  for (const signingSecret of signingSecrets) {
    try {
      return Stripe.webhooks.constructEvent(rawBody, header, signingSecret);
    } catch (error) {
      if (!(error instanceof Stripe.errors.StripeSignatureVerificationError)) throw error;
    }
  }
  throw new SpendgateError('invalid_signature', 'The Stripe-Signature does not verify.');
}

export function isStripeEventType(type: string): type is StripeEventType {
  return (STRIPE_EVENT_TYPES as readonly string[]).includes(type);
}

// What the adapter reads of Stripe's objects (Stripe.Issuing.Authorization, .Transaction).
const minor = z.number().int().min(0).max(Number.MAX_SAFE_INTEGER);
const currency = z.string().regex(/^[a-zA-Z]{3}$/);
const merchantData = z.object({
  category_code: z.string().regex(/^[0-9]{4}$/),
  name: z.string().max(200).nullable(),
  country: z.string().max(8).nullable(),
  city: z.string().max(200).nullable(),
  network_id: z.string().max(200).nullable().optional(),
});
const networkData = z.object({ transaction_id: z.string().min(1).max(255).nullable() }).nullable();
const cardRef = z.union([z.string().min(1).max(255), z.object({ id: z.string().min(1).max(255) })]);
const authorizationShape = z.object({
  id: z.string().min(1).max(255),
  amount: minor,
  currency,
  approved: z.boolean(),
  status: z.string(),
  card: cardRef,
  merchant_amount: minor,
  merchant_currency: currency,
  merchant_data: merchantData,
  network_data: networkData,
  pending_request: z
    .object({
      amount: minor,
      currency,
      is_amount_controllable: z.boolean(),
      merchant_amount: minor,
      merchant_currency: currency,
    })
    .nullable(),
  request_history: z
    .array(z.object({ amount: minor, approved: z.boolean(), reason: z.string(), currency }))
    .max(1000),
});
const transactionShape = z.object({
  id: z.string().min(1).max(255),
  amount: z.number().int().min(-Number.MAX_SAFE_INTEGER).max(Number.MAX_SAFE_INTEGER),
  currency,
  type: z.enum(['capture', 'refund']),
  card: cardRef,
  authorization: z.union([z.string().min(1).max(255), z.object({ id: z.string() })]).nullable(),
  merchant_data: merchantData,
  network_data: networkData,
});
type StripeAuthorization = z.infer<typeof authorizationShape>;
type StripeTransaction = z.infer<typeof transactionShape>;

/** Reads `value` as `shape`, or refuses the event as malformed (param: the field at fault). */
const read = <T>(shape: z.ZodType<T>, value: unknown): T =>
  readShape(shape, value, "The Stripe event's object", (at) =>
    at === '' ? 'data.object' : `data.object.${at}`,
  );

const idOf = (ref: string | { readonly id: string }) => (typeof ref === 'string' ? ref : ref.id);

/** Stripe's merchant_data as spendgate's merchant: the MCC is `category_code`. */
function merchantOf(data: StripeAuthorization['merchant_data']): Merchant {
  const country = data.country?.toUpperCase() ?? '';
  return {
    name: data.name === null || data.name === '' ? 'unknown' : data.name,
    mcc: data.category_code,
    // ISO 3166 keeps ZZ for "unknown": Stripe omits the country of some merchants.
    country: /^[A-Z]{2}$/.test(country) ? country : 'ZZ',
    ...(data.city === null || data.city === '' ? {} : { city: data.city }),
    ...(data.network_id == null || data.network_id === '' ? {} : { id: data.network_id }),
  };
}

/**
 * The network's id of an authorization: `network_data.transaction_id`, which Stripe's later
 * transactions carry too; Stripe's own authorization id when the network gave none (test mode).
 */
function authorizationNetworkId(authorization: {
  readonly id: string;
  readonly network_data: { readonly transaction_id: string | null } | null;
}): string {
  return authorization.network_data?.transaction_id ?? authorization.id;
}

/** What an event asks of the dispatcher: the operations, and how to answer Stripe. */
export type StripeTranslation =
  | {
      readonly kind: 'request';
      readonly operation: ProcessorOperation;
      readonly controllable: boolean;
    }
  | { readonly kind: 'notification'; readonly operations: readonly ProcessorOperation[] };

export function stripeTranslation(
  event: Stripe.Event & { type: StripeEventType },
): StripeTranslation {
  switch (event.type) {
    case 'issuing_authorization.request':
      return requestOf(event.id, read(authorizationShape, event.data.object));
    case 'issuing_authorization.created':
      return {
        kind: 'notification',
        operations: createdOf(read(authorizationShape, event.data.object)),
      };
    case 'issuing_authorization.updated':
      return {
        kind: 'notification',
        operations: updatedOf(
          event.id,
          read(authorizationShape, event.data.object),
          event.data.previous_attributes?.amount,
        ),
      };
    case 'issuing_transaction.created':
      return {
        kind: 'notification',
        operations: transactionOf(read(transactionShape, event.data.object)),
      };
  }
}

/** A real-time request: the first is an authorize, one on an approved authorization an increment. */
function requestOf(eventId: string, authorization: StripeAuthorization): StripeTranslation {
  const pending = authorization.pending_request;
  if (pending === null)
    throw new SpendgateError(
      'parameter_missing',
      'An authorization request carries its pending_request.',
      'data.object.pending_request',
    );
  const networkTransactionId = authorizationNetworkId(authorization);
  const amount = { minor: BigInt(pending.amount), currency: pending.currency };
  if (authorization.approved) {
    return {
      kind: 'request',
      controllable: false,
      operation: {
        kind: 'increment',
        authorizationNetworkId: networkTransactionId,
        messageId: eventId,
        // The increment's own key: the event, which Stripe sends once per request.
        networkTransactionId: eventId,
        amount,
      },
    };
  }
  return {
    kind: 'request',
    controllable: pending.is_amount_controllable,
    operation: {
      kind: 'authorize',
      processorCardId: idOf(authorization.card),
      amount,
      ...merchantAmountOf(pending),
      merchant: merchantOf(authorization.merchant_data),
      networkTransactionId,
      partialApprovalAllowed: pending.is_amount_controllable,
    },
  };
}

function merchantAmountOf(pending: {
  readonly currency: string;
  readonly merchant_amount: number;
  readonly merchant_currency: string;
}) {
  if (pending.merchant_currency.toLowerCase() === pending.currency.toLowerCase()) return {};
  return {
    merchantAmount: { minor: BigInt(pending.merchant_amount), currency: pending.merchant_currency },
  };
}

/** Reasons of Stripe's request history that were our own answer: already recorded. */
const ANSWERED_BY_US = new Set(['webhook_approved', 'webhook_declined']);

/** A decision Stripe took without our answer becomes an advice; ours is already recorded. */
function createdOf(authorization: StripeAuthorization): ProcessorOperation[] {
  const last = authorization.request_history.at(-1);
  if (last !== undefined && ANSWERED_BY_US.has(last.reason)) return [];
  const asked = last?.amount ?? authorization.pending_request?.amount ?? authorization.amount;
  return [
    {
      kind: 'advice',
      processorCardId: idOf(authorization.card),
      amount: {
        minor: BigInt(authorization.approved ? authorization.amount : asked),
        currency: authorization.currency,
      },
      merchant: merchantOf(authorization.merchant_data),
      networkTransactionId: authorizationNetworkId(authorization),
      approved: authorization.approved,
      reason: last?.reason ?? 'stripe_decided',
    },
  ];
}

/**
 * Reversals and expiry release the hold; a pending amount that went down releases the
 * difference; one that went up, decided without our answer, is an increment of the difference.
 */
function updatedOf(
  eventId: string,
  authorization: StripeAuthorization,
  previousAmount: number | undefined,
): ProcessorOperation[] {
  const following = {
    authorizationNetworkId: authorizationNetworkId(authorization),
    messageId: eventId,
  };
  if (authorization.status === 'reversed') return [{ kind: 'reverse', amount: null, ...following }];
  if (authorization.status === 'expired')
    return [{ kind: 'reverse', amount: null, expired: true, ...following }];
  // Closed: Stripe takes no more captures of it. Its captures (issuing_transaction.created)
  // are recorded as not final, since Stripe may send several; what they left held is
  // released here (nothing, when they took it all: then nothing to do).
  if (authorization.status === 'closed') return [{ kind: 'reverse', amount: null, ...following }];
  const changed =
    authorization.status === 'pending' &&
    previousAmount !== undefined &&
    Number.isSafeInteger(previousAmount) &&
    previousAmount >= 0
      ? authorization.amount - previousAmount
      : 0;
  if (changed < 0) {
    const released = { minor: BigInt(-changed), currency: authorization.currency };
    return [{ kind: 'reverse', amount: released, ...following }];
  }
  if (changed > 0) return increaseOf(eventId, authorization, BigInt(changed), following);
  // No change of money.
  return [];
}

/**
 * A pending authorization's amount went up (Stripe's incremental authorization). When the
 * last entry of its request history is our own answer, the increment was asked of us as an
 * `issuing_authorization.request` and is recorded already under that event's id. Otherwise
 * Stripe decided it without us (its timeout setting): an increment of the difference, keyed
 * by that request history entry, so a repeat of the event, or another event telling the same
 * increase, records it once (the event's id where Stripe keeps no history entry).
 */
function increaseOf(
  eventId: string,
  authorization: StripeAuthorization,
  increase: bigint,
  following: { readonly authorizationNetworkId: string; readonly messageId: string },
): ProcessorOperation[] {
  const history = authorization.request_history;
  const last = history.at(-1);
  if (last !== undefined && ANSWERED_BY_US.has(last.reason)) return [];
  const networkTransactionId =
    last === undefined ? eventId : `${authorization.id}:request_history:${history.length - 1}`;
  return [
    {
      kind: 'increment',
      ...following,
      networkTransactionId,
      amount: { minor: increase, currency: authorization.currency },
      // Stripe approved it already: recorded as the network mandates, not decided again.
      advice: true,
    },
  ];
}

/** Captures (negative amounts: money out of the balance) and refunds (positive). */
function transactionOf(transaction: StripeTransaction): ProcessorOperation[] {
  const amount = { minor: BigInt(Math.abs(transaction.amount)), currency: transaction.currency };
  const card = idOf(transaction.card);
  const merchant = merchantOf(transaction.merchant_data);
  const authorizationId =
    transaction.authorization === null ? null : idOf(transaction.authorization);
  const networkId = transaction.network_data?.transaction_id ?? authorizationId;
  if (transaction.type === 'refund')
    return [
      {
        kind: 'refund',
        processorCardId: card,
        amount,
        merchant,
        // Stripe's transaction id: two refunds of one purchase share its network id.
        networkTransactionId: transaction.id,
        ...(networkId === null ? {} : { authorizationNetworkId: networkId }),
      },
    ];
  if (authorizationId === null || networkId === null)
    return [
      {
        kind: 'force_capture',
        processorCardId: card,
        amount,
        merchant,
        networkTransactionId: transaction.id,
      },
    ];
  return [
    {
      kind: 'capture',
      authorizationNetworkId: networkId,
      messageId: transaction.id,
      amount,
      // Stripe may capture an authorization several times (one transaction each) and tells
      // none of them last: each keeps the rest held, released when the authorization closes.
      final: false,
      processorCardId: card,
      merchant,
    },
  ];
}

/** The body Stripe's real-time authorization expects for a decision. */
export function stripeRequestAnswer(
  result: ProcessorResult | null,
  controllable: boolean,
): { approved: boolean; amount?: number; metadata: Record<string, string> } {
  if (result?.kind !== 'decision') return { approved: false, metadata: {} };
  const { outcome, approvedMinor } = result;
  const metadata: Record<string, string> = {};
  if (outcome.transaction !== null) metadata['spendgate_transaction_id'] = outcome.transaction.id;
  if (outcome.decision.declineCode !== null)
    metadata['spendgate_decline_code'] = outcome.decision.declineCode;
  if (!outcome.decision.approved || approvedMinor === null) return { approved: false, metadata };
  // Stripe takes `amount` only where the request is amount-controllable (a partial approval).
  return controllable
    ? { approved: true, amount: Number(approvedMinor), metadata }
    : { approved: true, metadata };
}
