import Lithic from 'lithic';
import { z } from 'zod';
import { SpendgateError, type Merchant } from '../../core/index.js';
import type { ProcessorSecrets } from '../../store/store.js';
import type { ProcessorOperation, ProcessorResult } from './operation.js';
import { readShape } from './read-shape.js';

/*
 * Lithic (contract v1.2, section 17), translated onto the dispatcher's operations. Lithic signs
 * what it sends with Standard Webhooks headers (webhook-id, webhook-timestamp,
 * webhook-signature); the `lithic` package's own `webhooks.verifySignature` checks them, with
 * its tolerance of 5 minutes, against the connection's `asaSecret`. Two kinds of body arrive:
 *
 * - an Authorization Stream Access request (Lithic.CardAuthorization: `status` is one of
 *   ASA_STATUSES), answered synchronously with `{token, result, approved_amount?}`;
 * - a transaction event (`event_type` card_transaction.updated: Lithic.Transaction), whose last
 *   event says what followed: CLEARING captures (not final while the transaction is PENDING
 *   with an amount still held: one of several clearings), RETURN refunds, AUTHORIZATION_REVERSAL and
 *   AUTHORIZATION_EXPIRY release, AUTHORIZATION_ADVICE (and an authorization Lithic decided
 *   because our answer timed out: CUSTOMER_ASA_TIMEOUT) is an advice, a later approved
 *   AUTHORIZATION an increment (an advice of one, recorded whatever the balance, when it too
 *   says CUSTOMER_ASA_TIMEOUT).
 *
 * A partial approval (`approved_amount`, less than asked) is offered only where the request's
 * `pos.terminal.partial_approval_capable` says the terminal takes one.
 */

export const ASA_STATUSES = [
  'AUTHORIZATION',
  'CREDIT_AUTHORIZATION',
  'FINANCIAL_AUTHORIZATION',
  'FINANCIAL_CREDIT_AUTHORIZATION',
  'BALANCE_INQUIRY',
] as const satisfies readonly Lithic.CardAuthorization['status'][];
export type AsaStatus = (typeof ASA_STATUSES)[number];

export const LITHIC_EVENT_TYPES = ['card_transaction.updated'] as const;

// Only the verifier is used: no request is ever made with this client.
const verifier = new Lithic({ apiKey: 'spendgate-verifies-only' });

/** Lithic's Standard Webhooks headers, as received. */
export interface LithicSignatureHeaders {
  readonly 'webhook-id'?: string | undefined;
  readonly 'webhook-timestamp'?: string | undefined;
  readonly 'webhook-signature'?: string | undefined;
}

/**
 * The body, verified against each secret of the connection (current first, then the previous
 * one while a rotation's grace lasts), then parsed. Fails: invalid_signature (a header missing,
 * a forged or stale signature, a body not the signed one), invalid_json. Never echoes a secret.
 */
export function verifiedLithicBody(
  rawBody: Buffer,
  headers: LithicSignatureHeaders,
  secrets: readonly ProcessorSecrets[],
): unknown {
  const text = rawBody.toString('utf8');
  const present = {
    'webhook-id': headers['webhook-id'] ?? '',
    'webhook-timestamp': headers['webhook-timestamp'] ?? '',
    'webhook-signature': headers['webhook-signature'] ?? '',
  };
  if (Object.values(present).some((value) => value === ''))
    throw new SpendgateError(
      'invalid_signature',
      "Lithic's webhook signature headers are missing.",
    );
  const verified = secrets.some((secret) => {
    const asaSecret = secret['asaSecret'];
    if (asaSecret === undefined) return false;
    try {
      verifier.webhooks.verifySignature(text, present, asaSecret);
      return true;
    } catch {
      // Any failure of the verifier (bad signature, stale timestamp, a secret it cannot read)
      // is one answer: this secret does not verify.
      return false;
    }
  });
  if (!verified)
    throw new SpendgateError('invalid_signature', "Lithic's signature does not verify.");
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new SpendgateError('invalid_json', 'The Lithic message is not JSON.');
  }
}

const minor = z.number().int().min(0).max(Number.MAX_SAFE_INTEGER);
const currency = z.string().regex(/^[a-zA-Z]{3}$/);
const amountShape = z.object({ amount: minor, currency });
const merchantShape = z.object({
  descriptor: z.string().max(200),
  mcc: z.string().regex(/^[0-9]{4}$/),
  country: z.string().max(8),
  city: z.string().max(200),
  acceptor_id: z.string().max(200).optional(),
});
const asaShape = z.object({
  token: z.string().min(1).max(255),
  status: z.enum(ASA_STATUSES),
  card: z.object({ token: z.string().min(1).max(255) }),
  amounts: z.object({
    cardholder: amountShape,
    hold: amountShape.nullable(),
    merchant: amountShape,
  }),
  merchant: merchantShape,
  event_token: z.string().min(1).max(255).optional(),
  // Whether the terminal takes a partial approval: only then may `approved_amount` be less.
  pos: z
    .object({
      terminal: z.object({ partial_approval_capable: z.boolean().optional() }).optional(),
    })
    .nullable()
    .optional(),
});
const eventShape = z.object({
  token: z.string().min(1).max(255),
  type: z.string().max(64),
  result: z.string().max(64),
  amounts: z.object({ cardholder: amountShape }),
  detailed_results: z.array(z.string().max(64)).max(100),
});
const transactionShape = z.object({
  token: z.string().min(1).max(255),
  card_token: z.string().min(1).max(255),
  merchant: merchantShape,
  events: z.array(eventShape).min(1).max(1000),
  status: z.string().max(32).optional(),
  // What the transaction still holds after its last event: a clearing that leaves some is
  // one of several (multi-clearing).
  amounts: z.object({ hold: z.object({ amount: minor }).nullable() }).optional(),
});
export type LithicAsaRequest = z.infer<typeof asaShape>;
type LithicTransaction = z.infer<typeof transactionShape>;

const read = <T>(shape: z.ZodType<T>, value: unknown): T =>
  readShape(shape, value, 'The Lithic message');

/** What a verified body is: an ASA request, a transaction event, or neither (refused). */
export type LithicMessage =
  | { readonly kind: 'asa'; readonly request: LithicAsaRequest }
  | { readonly kind: 'event'; readonly eventType: string; readonly transaction: LithicTransaction };

export function lithicMessageOf(body: unknown): LithicMessage {
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw new SpendgateError('parameter_invalid', 'A Lithic message is a JSON object.');
  const record = body as Record<string, unknown>;
  const eventType = record['event_type'];
  if (eventType === undefined || eventType === 'card_authorization.approval_request')
    return { kind: 'asa', request: read(asaShape, body) };
  if (
    typeof eventType === 'string' &&
    (LITHIC_EVENT_TYPES as readonly string[]).includes(eventType)
  )
    return { kind: 'event', eventType, transaction: read(transactionShape, body) };
  throw new SpendgateError(
    'parameter_invalid',
    `spendgate takes no Lithic event of type ${typeof eventType === 'string' ? eventType.slice(0, 64) : typeof eventType}.`,
    'event_type',
  );
}

/** ISO 3166 alpha-3 (Lithic's merchant country) to alpha-2, for the countries of the tests and docs. */
const ALPHA2_OF: Readonly<Record<string, string>> = {
  USA: 'US',
  CAN: 'CA',
  MEX: 'MX',
  GBR: 'GB',
  IRL: 'IE',
  FRA: 'FR',
  DEU: 'DE',
  ESP: 'ES',
  ITA: 'IT',
  NLD: 'NL',
  BEL: 'BE',
  CHE: 'CH',
  AUT: 'AT',
  PRT: 'PT',
  SWE: 'SE',
  NOR: 'NO',
  DNK: 'DK',
  FIN: 'FI',
  POL: 'PL',
  JPN: 'JP',
  AUS: 'AU',
  NZL: 'NZ',
  SGP: 'SG',
  BRA: 'BR',
  IND: 'IN',
  CHN: 'CN',
  HKG: 'HK',
  KOR: 'KR',
  ARE: 'AE',
  ZAF: 'ZA',
};

function merchantOf(merchant: z.infer<typeof merchantShape>): Merchant {
  const country = merchant.country.toUpperCase();
  const alpha2 = /^[A-Z]{2}$/.test(country) ? country : (ALPHA2_OF[country] ?? 'ZZ');
  return {
    name: merchant.descriptor.trim() === '' ? 'unknown' : merchant.descriptor.trim(),
    mcc: merchant.mcc,
    // ISO 3166 keeps ZZ for "unknown": a country outside the table above.
    country: alpha2,
    ...(merchant.city.trim() === '' ? {} : { city: merchant.city.trim() }),
    ...(merchant.acceptor_id === undefined || merchant.acceptor_id === ''
      ? {}
      : { id: merchant.acceptor_id }),
  };
}

const minorOf = (amount: { amount: number; currency: string }) => ({
  minor: BigInt(amount.amount),
  currency: amount.currency,
});

/**
 * The operations an ASA request asks, in order; the first one's decision is the answer. A
 * credit authorization asks nothing (money in is posted as a refund when it settles); a
 * financial credit is settled already, so it is the refund.
 */
export function asaOperations(request: LithicAsaRequest): ProcessorOperation[] {
  const merchant = merchantOf(request.merchant);
  // The hold Lithic places (padded for fuel, say) is what a hold of ours must cover.
  const amount = minorOf(request.amounts.hold ?? request.amounts.cardholder);
  const asking = {
    processorCardId: request.card.token,
    merchant,
    networkTransactionId: request.token,
    ...(request.amounts.merchant.currency.toUpperCase() ===
    request.amounts.cardholder.currency.toUpperCase()
      ? {}
      : { merchantAmount: minorOf(request.amounts.merchant) }),
  };
  switch (request.status) {
    case 'AUTHORIZATION':
      return [
        {
          kind: 'authorize',
          ...asking,
          amount,
          // Lithic declines a partial approval a terminal cannot take: ask for one only there.
          partialApprovalAllowed: request.pos?.terminal?.partial_approval_capable === true,
        },
      ];
    case 'BALANCE_INQUIRY':
      return [{ kind: 'authorize', ...asking, amount: { minor: 0n, currency: amount.currency } }];
    case 'FINANCIAL_AUTHORIZATION':
      return [
        { kind: 'authorize', ...asking, amount },
        {
          kind: 'capture',
          authorizationNetworkId: request.token,
          messageId: `${request.token}:financial`,
          amount: null,
          final: true,
          processorCardId: request.card.token,
          merchant,
        },
      ];
    case 'CREDIT_AUTHORIZATION':
      return [];
    case 'FINANCIAL_CREDIT_AUTHORIZATION':
      return [
        {
          kind: 'refund',
          processorCardId: request.card.token,
          amount: minorOf(request.amounts.cardholder),
          merchant,
          networkTransactionId: request.token,
        },
      ];
  }
}

/** The operations a transaction event's last event records (none for what moves no money). */
export function transactionOperations(transaction: LithicTransaction): ProcessorOperation[] {
  const last = transaction.events.at(-1);
  if (last === undefined) return [];
  const amount = minorOf(last.amounts.cardholder);
  const merchant = merchantOf(transaction.merchant);
  const following = { authorizationNetworkId: transaction.token, messageId: last.token };
  switch (last.type) {
    case 'AUTHORIZATION':
      return authorizationEventOf(transaction, last, amount, merchant);
    case 'AUTHORIZATION_ADVICE':
      return [adviceOf(transaction, last, amount, merchant)];
    case 'CLEARING':
      return [
        {
          kind: 'capture',
          ...following,
          amount,
          final: !stillHolding(transaction),
          processorCardId: transaction.card_token,
          merchant,
        },
      ];
    case 'RETURN':
      return [
        {
          kind: 'refund',
          processorCardId: transaction.card_token,
          amount,
          merchant,
          networkTransactionId: last.token,
          authorizationNetworkId: transaction.token,
        },
      ];
    case 'AUTHORIZATION_REVERSAL':
      return [{ kind: 'reverse', ...following, amount: amount.minor === 0n ? null : amount }];
    case 'AUTHORIZATION_EXPIRY':
      return [{ kind: 'reverse', ...following, amount: null, expired: true }];
    default:
      // Balance inquiries, credit authorizations and their advice, corrections: no hold moves.
      return [];
  }
}

/**
 * A transaction still pending with an amount held after a clearing: Lithic clears it in
 * several (a split shipment), and more clearings are to come, so this one keeps the rest held.
 * Settled, or nothing held any more: the last.
 */
function stillHolding(transaction: LithicTransaction): boolean {
  return transaction.status === 'PENDING' && (transaction.amounts?.hold?.amount ?? 0) > 0;
}

/**
 * An AUTHORIZATION event. The first: our ASA answer, recorded when we gave it (in stand-in
 * too: the stand-in records owe it to the ledger), unless Lithic says our answer did not
 * arrive in time (`CUSTOMER_ASA_TIMEOUT`): then Lithic's fallback decided, and that decision is
 * an advice, which wins over whatever we recorded late (contract v1.2, section 16). A later
 * one is an incremental authorization: approved, an increment keyed by its event token (asked
 * of us or decided on the fallback, Lithic tells it here once); declined, nothing was held.
 */
function authorizationEventOf(
  transaction: LithicTransaction,
  last: z.infer<typeof eventShape>,
  amount: { minor: bigint; currency: string },
  merchant: Merchant,
): ProcessorOperation[] {
  if (transaction.events.length > 1) {
    if (last.result !== 'APPROVED') return [];
    return [
      {
        kind: 'increment',
        authorizationNetworkId: transaction.token,
        messageId: last.token,
        networkTransactionId: last.token,
        amount,
        // Lithic's fallback approved it when our answer timed out: recorded, not decided.
        ...(last.detailed_results.includes('CUSTOMER_ASA_TIMEOUT') ? { advice: true } : {}),
      },
    ];
  }
  if (!last.detailed_results.includes('CUSTOMER_ASA_TIMEOUT')) return [];
  return [adviceOf(transaction, last, amount, merchant)];
}

function adviceOf(
  transaction: LithicTransaction,
  last: z.infer<typeof eventShape>,
  amount: { minor: bigint; currency: string },
  merchant: Merchant,
): ProcessorOperation {
  return {
    kind: 'advice',
    processorCardId: transaction.card_token,
    amount,
    merchant,
    networkTransactionId: transaction.token,
    approved: last.result === 'APPROVED',
    reason: last.detailed_results.join(',') || last.result,
  };
}

/** ASA's decline results, by spendgate's decline code. */
const RESULT_OF_DECLINE: Readonly<Record<string, string>> = {
  insufficient_balance: 'INSUFFICIENT_FUNDS',
  card_declined: 'CARD_PAUSED',
  authorization_failed: 'UNAUTHORIZED_MERCHANT',
};

/** The ASA response body for a decision: APPROVED (approved_amount only when partial). */
export function asaAnswer(
  token: string,
  result: ProcessorResult | null,
  askedMinor: bigint,
): { token: string; result: string; approved_amount?: number } {
  if (result === null || result.kind !== 'decision') return { token, result: 'APPROVED' };
  const { outcome, approvedMinor } = result;
  if (!outcome.decision.approved || approvedMinor === null)
    return {
      token,
      result: RESULT_OF_DECLINE[outcome.decision.declineCode ?? ''] ?? 'UNAUTHORIZED_MERCHANT',
    };
  return approvedMinor < askedMinor
    ? { token, result: 'APPROVED', approved_amount: Number(approvedMinor) }
    : { token, result: 'APPROVED' };
}

/** A refusal (unknown card, malformed request) as an ASA decline. */
export function asaRefusal(
  token: string,
  code: SpendgateError['code'],
): { token: string; result: string } {
  return { token, result: code === 'card_not_found' ? 'CARD_PAUSED' : 'UNAUTHORIZED_MERCHANT' };
}
