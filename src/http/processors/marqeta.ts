import { timingSafeEqual } from 'node:crypto';
import { z } from 'zod';
import { Decimal, SpendgateError, type Merchant } from '../../core/index.js';
import type { ProcessorSecrets } from '../../store/store.js';
import { minorOf } from './minor-units.js';
import type { MinorAmount, ProcessorOperation, ProcessorResult } from './operation.js';
import { readShape } from './read-shape.js';

/*
 * Marqeta Gateway JIT Funding (contract v1.2, section 17), translated onto the dispatcher's
 * operations. Marqeta authenticates to a gateway with HTTP basic auth (the username and
 * password configured on the program gateway funding source); the request is a transaction
 * with a `gpa_order.jit_funding` object, and the answer echoes that object: 200 to fund,
 * 402 with a `decline_reason` to refuse. Marqeta gives a gateway 3 s.
 *
 * What each JIT method becomes (the `type` of the transaction names the same thing):
 * pgfs.authorization and pgfs.authorization.account_verification → authorize;
 * pgfs.authorization.incremental → increment; pgfs.authorization.advice → advice (an
 * advice on a known authorization releases the difference), or, on a transaction of type
 * authorization.incremental, an increment Marqeta approved in stand-in (recorded as
 * approved, whatever the balance); pgfs.authorization.capture → capture (not final where
 * the clearing says it is one of several and not the last: see finalClearing);
 * pgfs.authorization.reversal → reverse; pgfs.refund and pgfs.original.credit.authorization →
 * refund; pgfs.pindebit (and its cashback and ATM withdrawal forms) and pgfs.auth_plus_capture
 * → authorize then capture; pgfs.force_capture → force capture; pgfs.balanceinquiry → nothing
 * recorded (the answer funds 0).
 */

// Each of these is a value of jit_funding.method in Marqeta's Core API (docs/processors.md
// gives the page); Marqeta names more (chargebacks, direct deposit, the .standin forms), which
// this adapter refuses as an unknown method.
export const JIT_METHODS = [
  'pgfs.authorization',
  'pgfs.authorization.account_verification',
  'pgfs.authorization.incremental',
  'pgfs.authorization.advice',
  'pgfs.authorization.capture',
  'pgfs.authorization.reversal',
  'pgfs.refund',
  'pgfs.original.credit.authorization',
  'pgfs.pindebit',
  'pgfs.pindebit.cashback',
  'pgfs.pindebit.atm.withdrawal',
  'pgfs.auth_plus_capture',
  'pgfs.force_capture',
  'pgfs.balanceinquiry',
] as const;
export type JitMethod = (typeof JIT_METHODS)[number];

/**
 * Marqeta's gateway budget: its request times out after 3 s (confirmed, Managing Timeouts;
 * the program gateway funding source's timeout_millis can set it otherwise).
 */
export const MARQETA_BUDGET_MS = 3_000;

const sameText = (given: string, expected: string): boolean => {
  const a = Buffer.from(given, 'utf8');
  const b = Buffer.from(expected, 'utf8');
  return a.length === b.length && timingSafeEqual(a, b);
};

/**
 * Checks the basic-auth header against each credential pair of the connection (current
 * first, then the previous ones while a rotation's grace lasts). Fails: invalid_signature
 * (no header, not basic, a wrong pair). Never echoes the header or a secret.
 */
export function verifyMarqetaAuth(
  header: string | undefined,
  secrets: readonly ProcessorSecrets[],
): void {
  const match = /^Basic ([A-Za-z0-9+/=]{1,1024})$/.exec(header ?? '');
  const decoded = match?.[1] === undefined ? '' : Buffer.from(match[1], 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon > 0) {
    const username = decoded.slice(0, colon);
    const password = decoded.slice(colon + 1);
    const verified = secrets.some((secret) => {
      const expectedUser = secret['username'];
      const expectedPassword = secret['password'];
      if (expectedUser === undefined || expectedPassword === undefined) return false;
      // Both compared whatever the first gives: no early exit to time.
      const userMatches = sameText(username, expectedUser);
      return sameText(password, expectedPassword) && userMatches;
    });
    if (verified) return;
  }
  throw new SpendgateError('invalid_signature', "The gateway's basic auth does not verify.");
}

const amountShape = z.number().min(0).max(1e12);
// The jit_funding fields as Marqeta's Core API names them (token, method, user_token and
// amount are the ones a response must carry).
const jitShape = z.object({
  token: z.string().min(1).max(255),
  method: z.enum(JIT_METHODS),
  user_token: z.string().max(255).optional(),
  acting_user_token: z.string().max(255).optional(),
  amount: amountShape,
  // The first JIT message of a related set (absent on that first one).
  original_jit_funding_token: z.string().max(255).optional(),
});
const jitRequestShape = z.object({
  type: z.string().max(80),
  token: z.string().min(1).max(255),
  card_token: z.string().min(1).max(255),
  amount: amountShape,
  currency_code: z.string().regex(/^[a-zA-Z]{3}$/),
  preceding_related_transaction_token: z.string().min(1).max(255).optional(),
  // Multi-clearing, as Marqeta's transaction object names it: is_final_clearing marks the last
  // clearing of an authorization; the sequence fields number the clearings ("02" of "04").
  is_final_clearing: z.boolean().optional(),
  // Read loosely: a clearing is money already moved, never refused for an odd sequence.
  multi_clearing_sequence_number: z.string().max(16).optional(),
  multi_clearing_sequence_count: z.string().max(16).optional(),
  card_acceptor: z.object({
    mid: z.string().max(200).optional(),
    mcc: z.string().regex(/^[0-9]{4}$/),
    name: z.string().max(200).optional(),
    city: z.string().max(200).optional(),
    country_code: z.string().max(8).optional(),
  }),
  gpa_order: z.object({ jit_funding: jitShape }),
});
export type JitRequest = z.infer<typeof jitRequestShape>;
export type JitFunding = z.infer<typeof jitShape>;

/** The JIT request, or parameter_invalid at the field at fault. */
export function readJitRequest(body: unknown): JitRequest {
  return readShape(jitRequestShape, body, 'The Marqeta JIT request');
}

// Built once: zod compiles an object schema on its first parse, so one made per request was
// compiled per request (a third of the Marqeta door's own time in its profile).
const jitFundingBody = z.object({ gpa_order: z.object({ jit_funding: jitShape }) });

/** The jit_funding object of a body, where one can be read (to answer a refusal in kind). */
export function jitFundingOf(body: unknown): JitFunding | null {
  const parsed = jitFundingBody.safeParse(body);
  return parsed.success ? parsed.data.gpa_order.jit_funding : null;
}

const ALPHA2_OF: Readonly<Record<string, string>> = {
  USA: 'US',
  CAN: 'CA',
  GBR: 'GB',
  FRA: 'FR',
  DEU: 'DE',
  ESP: 'ES',
  ITA: 'IT',
  NLD: 'NL',
  IRL: 'IE',
  AUS: 'AU',
  JPN: 'JP',
  MEX: 'MX',
  BRA: 'BR',
  SGP: 'SG',
  IND: 'IN',
  CHE: 'CH',
};

function merchantOf(acceptor: JitRequest['card_acceptor']): Merchant {
  const country = (acceptor.country_code ?? '').toUpperCase();
  return {
    name: acceptor.name?.trim() || 'unknown',
    mcc: acceptor.mcc,
    // ISO 3166 keeps ZZ for "unknown": Marqeta sends alpha-3, some outside the table.
    country: /^[A-Z]{2}$/.test(country) ? country : (ALPHA2_OF[country] ?? 'ZZ'),
    ...(acceptor.city === undefined || acceptor.city.trim() === '' ? {} : { city: acceptor.city }),
    ...(acceptor.mid === undefined || acceptor.mid === '' ? {} : { id: acceptor.mid }),
  };
}

/**
 * Marqeta's amounts are decimal numbers of major units: read through their shortest text
 * (what Marqeta wrote), never computed on as floats. More decimals than the currency has:
 * invalid_amount.
 */
export function minorAmountOf(amount: number, currency: string, param: string): MinorAmount {
  const decimal = new Decimal(amount.toString());
  const minor = minorOf(decimal, currency.toUpperCase());
  const back = new Decimal(minor.toString()).dividedBy(new Decimal(10).pow(minorScale(currency)));
  if (!back.equals(decimal))
    throw new SpendgateError(
      'invalid_amount',
      'The amount has more decimals than its currency.',
      param,
    );
  return { minor, currency };
}

/** The operations a JIT request asks, in order; the first one's result is the answer. */
export function jitOperations(request: JitRequest): ProcessorOperation[] {
  const method = request.gpa_order.jit_funding.method;
  const amount = minorAmountOf(
    request.gpa_order.jit_funding.amount,
    request.currency_code,
    'gpa_order.jit_funding.amount',
  );
  const merchant = merchantOf(request.card_acceptor);
  const card = request.card_token;
  // Confirmed on a clearing (Marqeta documents the field on final transaction types); on an
  // incremental or an advice not confirmed from Marqeta's public docs (docs/processors.md).
  const original = request.preceding_related_transaction_token ?? request.token;
  const asking = { processorCardId: card, merchant, networkTransactionId: request.token, amount };
  const following = { authorizationNetworkId: original, messageId: request.token };
  const capture = (id: string): ProcessorOperation => ({
    kind: 'capture',
    authorizationNetworkId: id,
    messageId: `${request.token}:capture`,
    amount: null,
    final: true,
    processorCardId: card,
    merchant,
  });
  switch (method) {
    case 'pgfs.authorization':
    case 'pgfs.authorization.account_verification':
      return [{ kind: 'authorize', ...asking }];
    case 'pgfs.authorization.incremental':
      return [{ kind: 'increment', ...following, networkTransactionId: request.token, amount }];
    case 'pgfs.authorization.advice':
      return [adviceOf(request, { asking, following, original })];
    case 'pgfs.authorization.capture':
      return [
        {
          kind: 'capture',
          ...following,
          amount,
          final: finalClearing(request),
          processorCardId: card,
          merchant,
        },
      ];
    case 'pgfs.authorization.reversal':
      return [{ kind: 'reverse', ...following, amount }];
    case 'pgfs.refund':
    case 'pgfs.original.credit.authorization':
      return [refundOf(request, amount, merchant)];
    case 'pgfs.pindebit':
    case 'pgfs.pindebit.cashback':
    case 'pgfs.pindebit.atm.withdrawal':
    case 'pgfs.auth_plus_capture':
      return [{ kind: 'authorize', ...asking }, capture(request.token)];
    case 'pgfs.force_capture':
      return [
        {
          kind: 'force_capture',
          processorCardId: card,
          amount,
          merchant,
          networkTransactionId: request.token,
        },
      ];
    case 'pgfs.balanceinquiry':
      return [];
  }
}

/**
 * Whether a clearing is the last of its authorization (the rest of the hold released).
 * is_final_clearing where Marqeta gives it; else the sequence, the last when its number reaches
 * the count; else the only clearing. Marqeta's docs do not say whether is_final_clearing is
 * sent as false on the earlier clearings, hence the sequence.
 */
function finalClearing(request: JitRequest): boolean {
  if (request.is_final_clearing !== undefined) return request.is_final_clearing;
  const number = request.multi_clearing_sequence_number ?? '';
  const count = request.multi_clearing_sequence_count ?? '';
  if (!/^[0-9]{1,4}$/.test(number) || !/^[0-9]{1,4}$/.test(count)) return true;
  return Number(number) >= Number(count);
}

/**
 * An advice: of an incremental authorization Marqeta approved in stand-in, the hold it raised
 * grows by the amount, whatever the balance (approved already, not decided); of any other,
 * the authorization it approved is recorded as approved.
 */
function adviceOf(
  request: JitRequest,
  message: {
    asking: {
      processorCardId: string;
      merchant: Merchant;
      networkTransactionId: string;
      amount: MinorAmount;
    };
    following: { authorizationNetworkId: string; messageId: string };
    original: string;
  },
): ProcessorOperation {
  const { asking, following, original } = message;
  // Not confirmed from Marqeta's public docs: that an increment approved in stand-in reaches
  // the gateway as this method on a transaction of this type (docs/processors.md).
  if (request.type === 'authorization.incremental') {
    const { amount } = asking;
    return {
      kind: 'increment',
      ...following,
      networkTransactionId: request.token,
      amount,
      advice: true,
    };
  }
  return {
    kind: 'advice',
    ...asking,
    networkTransactionId: original,
    approved: true,
    reason: 'marqeta_advice',
  };
}

/** Money back to the card: a refund, tied to the purchase when Marqeta names it. */
function refundOf(
  request: JitRequest,
  amount: MinorAmount,
  merchant: Merchant,
): ProcessorOperation {
  return {
    kind: 'refund',
    processorCardId: request.card_token,
    amount,
    merchant,
    networkTransactionId: request.token,
    ...(request.preceding_related_transaction_token === undefined
      ? {}
      : { authorizationNetworkId: request.preceding_related_transaction_token }),
  };
}

/** Marqeta's decline reasons (each a documented decline_reason), by spendgate's code. */
const DECLINE_REASON_OF: Readonly<Record<string, string>> = {
  insufficient_balance: 'INSUFFICIENT_FUNDS',
  card_declined: 'CARD_NOT_ACTIVE',
  authorization_failed: 'TRANSACTION_NOT_PERMITTED',
  card_not_found: 'INVALID_CARD',
  invalid_amount: 'INVALID_AMOUNT',
  transaction_not_found: 'TRANSACTION_NOT_PERMITTED',
};

export interface JitAnswer {
  readonly status: 200 | 402;
  readonly body: { readonly jit_funding: Record<string, unknown> };
}

/** The jit_funding answer: the request's object echoed, with the amount funded or a decline. */
export function jitAnswer(
  funding: JitFunding,
  currency: string,
  result: ProcessorResult | null,
): JitAnswer {
  const echo = {
    token: funding.token,
    method: funding.method,
    ...(funding.user_token === undefined ? {} : { user_token: funding.user_token }),
    ...(funding.acting_user_token === undefined
      ? {}
      : { acting_user_token: funding.acting_user_token }),
    ...(funding.original_jit_funding_token === undefined
      ? {}
      : { original_jit_funding_token: funding.original_jit_funding_token }),
  };
  if (result === null || result.kind === 'posting')
    return { status: 200, body: { jit_funding: { ...echo, amount: funding.amount } } };
  const { outcome, approvedMinor } = result;
  if (!outcome.decision.approved || approvedMinor === null)
    return jitDecline(
      funding,
      DECLINE_REASON_OF[outcome.decision.declineCode ?? ''] ?? 'TRANSACTION_NOT_PERMITTED',
    );
  const scale = new Decimal(10).pow(minorScale(currency));
  return {
    status: 200,
    body: {
      jit_funding: {
        ...echo,
        amount: new Decimal(approvedMinor.toString()).dividedBy(scale).toNumber(),
      },
    },
  };
}

const minorScale = (currency: string) => {
  // The currency was read by minorAmountOf already: its scale is the minor units' exponent.
  const one = minorOf(new Decimal(1), currency.toUpperCase());
  return one.toString().length - 1;
};

/** A refusal or a decline: 402 with the object and its reason. */
export function jitDecline(funding: JitFunding, reason: string): JitAnswer {
  return {
    status: 402,
    body: {
      jit_funding: {
        token: funding.token,
        method: funding.method,
        ...(funding.user_token === undefined ? {} : { user_token: funding.user_token }),
        amount: funding.amount,
        decline_reason: reason,
      },
    },
  };
}

export const declineReasonOf = (code: string): string =>
  DECLINE_REASON_OF[code] ?? 'TRANSACTION_NOT_PERMITTED';
