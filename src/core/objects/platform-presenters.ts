import { isoTimestamp } from '../time.js';
import type {
  AccountRecord,
  BacktestRecord,
  BacktestResultRecord,
  Mode,
  PolicyRecord,
  SettlementRecord,
  WebhookDeliveryRecord,
  WebhookEndpointRecord,
} from './records.js';

/*
 * The platform's objects as the API answers them (contract sections 7, 11 and 13): the account,
 * a vault's policy, settlements and webhooks. The money path's objects are in presenters.ts,
 * with the rules both follow.
 */

export function presentAccount(account: AccountRecord, mode: Mode) {
  return {
    id: account.id,
    object: 'account' as const,
    name: account.name,
    // A key acts in one mode; the account object is answered in the mode of the key that asked.
    mode,
    twoFactorEnabled: account.twoFactorEnabled,
  };
}

export function presentPolicy(policy: PolicyRecord) {
  return {
    object: 'policy' as const,
    vaultId: policy.vaultId,
    // Only a card's own policy names its card: a vault's policy answers as it always has.
    ...(policy.cardId === undefined ? {} : { cardId: policy.cardId }),
    version: policy.version,
    ...policy.document,
    createdAt: isoTimestamp(policy.createdAtMs),
    updatedAt: isoTimestamp(policy.updatedAtMs),
  };
}

export function presentDeletedPolicy(vaultId: string, cardId?: string) {
  return {
    object: 'policy' as const,
    vaultId,
    ...(cardId === undefined ? {} : { cardId }),
    deleted: true as const,
  };
}

export function presentSettlement(settlement: SettlementRecord) {
  return {
    id: settlement.id,
    object: 'settlement' as const,
    status: settlement.status,
    recordCount: settlement.recordCount,
    capturedCount: settlement.capturedCount,
    failedCount: settlement.failedCount,
    pendingCount: settlement.recordCount - settlement.capturedCount - settlement.failedCount,
    errors: settlement.errors.map((error) => ({ ...error })),
    createdAt: isoTimestamp(settlement.createdAtMs),
    completedAt: settlement.completedAtMs === null ? null : isoTimestamp(settlement.completedAtMs),
  };
}

export function presentWebhookEndpoint(endpoint: WebhookEndpointRecord) {
  return {
    id: endpoint.id,
    object: 'webhook_endpoint' as const,
    url: endpoint.url,
    events: [...endpoint.events],
    description: endpoint.description,
    status: endpoint.status,
    createdAt: isoTimestamp(endpoint.createdAtMs),
  };
}

export function presentDeletedWebhookEndpoint(endpointId: string) {
  return { object: 'webhook_endpoint' as const, id: endpointId, deleted: true as const };
}

export function presentWebhookDelivery(delivery: WebhookDeliveryRecord) {
  return {
    id: delivery.id,
    object: 'webhook_delivery' as const,
    endpointId: delivery.endpointId,
    eventId: delivery.eventId,
    eventType: delivery.eventType,
    attempt: delivery.attempt,
    status: delivery.succeeded ? ('succeeded' as const) : ('failed' as const),
    statusCode: delivery.statusCode,
    durationMs: delivery.durationMs,
    error: delivery.error,
    createdAt: isoTimestamp(delivery.createdAtMs),
  };
}

/** Test Webhook's answer: the one attempt it made, as recorded. */
export function presentWebhookTest(
  eventId: string,
  attempt: {
    readonly delivered: boolean;
    readonly statusCode: number | null;
    readonly durationMs: number;
    readonly error: string | null;
  },
) {
  return {
    object: 'webhook_test' as const,
    eventId,
    delivered: attempt.delivered,
    statusCode: attempt.statusCode,
    durationMs: attempt.durationMs,
    error: attempt.error,
  };
}

/** Reveal Card Details' answer: the one object that carries a card's number and CVV. */
export function presentCardDetails(details: {
  readonly cardId: string;
  readonly number: string;
  readonly cvv: string;
  readonly expMonth: number;
  readonly expYear: number;
}) {
  return { object: 'card_details' as const, ...details };
}

/** Begin Two-Factor's answer: the secret, its otpauth URI and that URI as a QR code. */
export function presentTwoFactorEnrolment(
  enrolment: { readonly secret: string; readonly otpauthUri: string },
  qrCodeSvg: string,
) {
  return { object: 'two_factor_enrolment' as const, ...enrolment, qrCodeSvg };
}

/**
 * A stored backtest result as the API answers it (contract: policy_backtest.result). The
 * record (records.ts) is what a run stored; this is the one place its wire form is written,
 * so the two may part without a migration of stored results.
 */
export function presentBacktestResult(record: BacktestResultRecord) {
  return {
    authorizations: record.authorizations,
    replayed: record.replayed,
    notReplayed: { ...record.notReplayed },
    unchanged: record.unchanged,
    approvedToDeclined: record.approvedToDeclined,
    declinedToApproved: record.declinedToApproved,
    byRule: record.byRule.map((counts) => ({ ...counts })),
    shadowMatches: record.shadowMatches.map((counts) => ({ ...counts })),
    examples: record.examples.map((example) => ({
      ...example,
      merchant: { ...example.merchant },
      recorded: { ...example.recorded },
      backtest: { ...example.backtest },
    })),
  };
}

export type PresentedBacktestResult = ReturnType<typeof presentBacktestResult>;

export function presentBacktest(backtest: BacktestRecord) {
  return {
    id: backtest.id,
    object: 'policy_backtest' as const,
    vaultId: backtest.vaultId,
    cardId: backtest.cardId,
    status: backtest.status,
    startDate: backtest.startDate,
    endDate: backtest.endDate,
    policy: backtest.policy,
    progress: { replayed: backtest.replayed, total: backtest.total },
    result: backtest.result === null ? null : presentBacktestResult(backtest.result),
    failureMessage: backtest.failureMessage,
    createdAt: isoTimestamp(backtest.createdAtMs),
    completedAt: backtest.completedAtMs === null ? null : isoTimestamp(backtest.completedAtMs),
  };
}
