import {
  assert,
  assetPriceOf,
  countedBilling,
  CURRENCIES,
  decide,
  DEFAULT_HOLD_EXPIRY,
  decisionVaultOf,
  holdExpiresAtMs,
  isCurrencyCode,
  isAtPar,
  isDecision,
  NO_PRICING,
  NO_SPEND,
  rateRecordOf,
  replayedOutcome,
  STAND_IN_DECLINED,
  toVaultAsset,
  withPartialApproval,
  ZERO,
  type AuthorizationOutcome,
  type CurrencyCode,
  type Decimal,
  type DecisionInput,
  type AssetPrice,
  type HoldExpirySettings,
  type PartialDecision,
  type Pricing,
  type Scope,
  type TransactionRecord,
} from '../../core/index.js';
import { asReadInput } from '../../core/decision/read-once.js';
import { newId } from '../../ids.js';
import {
  cardKey,
  repeatKeyOf,
  type AuthorizeInput,
  type AuthorizeRequest,
  type CardPolicyState,
  type LockedBatch,
  type LockedRow,
  type VaultState,
} from './batch.js';

/*
 * The decision over a batch, in memory and nothing else: no statement, no await, no state but
 * the batch's. Both ways of running a batch end here, on what the lock read (two-trips.ts) or
 * on what known state recalls (one-trip.ts), and then write what it recorded (write.ts).
 */

/** What decideEach reads of a batch, and adds its approvals to (the vaults, the card policies). */
export type BatchState = Pick<LockedBatch, 'cards' | 'vaults' | 'previous' | 'cardPolicies'>;

/**
 * Decides each request in order, in memory: a later request sees the holds and spend of the
 * earlier ones on the same vault, exactly as if they had run one after another. Synchronous,
 * so the one-round-trip path (one-trip.ts) sends its write before any await. Returns,
 * in request order, each outcome, or the id of the first decision of a networkTransactionId
 * the database holds (batch.previous), and the transactions to record.
 */
export function decideEach(
  requests: readonly AuthorizeRequest[],
  batch: BatchState,
  spendDay: string,
  nowMs: number,
  holdExpiry: HoldExpirySettings = DEFAULT_HOLD_EXPIRY,
  pricing: Pricing = NO_PRICING,
): { decided: (AuthorizationOutcome | string)[]; recorded: TransactionRecord[] } {
  const outcomes: (AuthorizationOutcome | string)[] = [];
  const decidedInBatch = new Map<string, AuthorizationOutcome>();
  const recorded: TransactionRecord[] = [];
  for (const request of requests) {
    const { scope, input } = request;
    const repeatKey = repeatKeyOf(scope, input);
    const earlier = decidedInBatch.get(repeatKey);
    if (earlier !== undefined) {
      outcomes.push(earlier.transaction === null ? earlier : replayedOutcome(earlier.transaction));
      continue;
    }
    const locked = batch.cards.get(cardKey(input.cardId, scope.accountId, scope.mode));
    const card = locked !== undefined && tiedAsExpected(locked, input) ? locked : undefined;
    if (card === undefined) {
      const decision = decide({
        card: null,
        vault: null,
        policy: null,
        spend: {},
        at: nowMs,
        // An unknown card is declined before any amount is read: a billing currency's one
        // (USD) is no asset the core's reader takes, so it is handed over as the asset's form.
        request: isCurrencyCode(input.currency) ? input : { ...input, currency: 'USDC' },
      });
      outcomes.push({ decision, standIn: false, transaction: null, replayed: false });
      continue;
    }
    const previousId = batch.previous.get(repeatKey);
    if (previousId !== undefined) {
      outcomes.push(previousId);
      continue;
    }
    const vault = batch.vaults.get(card.vault_id);
    assert(vault !== undefined, "a locked card's vault is locked");
    const cardPolicy = batch.cardPolicies.get(card.card_id);
    const options = { holdExpiry, pricing };
    // No closure for an untraced request: tracing off costs this one field read.
    const outcome =
      request.trace === undefined
        ? decideOne(request, card, vault, cardPolicy, spendDay, nowMs, options)
        : request.trace.decision(() =>
            decideOne(request, card, vault, cardPolicy, spendDay, nowMs, options),
          );
    decidedInBatch.set(repeatKey, outcome);
    recorded.push(outcome.transaction);
    outcomes.push(outcome);
  }
  return { decided: outcomes, recorded };
}

/** The card still has the processor tie the request was sent under, if it names one. */
function tiedAsExpected(card: LockedRow, input: AuthorizeRequest['input']): boolean {
  const expected = input.processorCard;
  return (
    expected === undefined ||
    (card.processor_connection_id === expected.connectionId &&
      card.processor_card_id === expected.cardId)
  );
}

/**
 * Decides a request for a locked card against its vault as this batch has left it, and adds an
 * approval's hold and spend to the vault in memory, for the requests after it. The request's
 * amount is first converted into the vault's asset (contract v1.2, section 16: the network asks
 * in the card's billing currency); a request that allows it may be approved in part; a 0.00
 * account verification is approved with no hold and completes at once.
 */
function decideOne(
  request: AuthorizeRequest,
  card: LockedRow,
  vault: VaultState,
  cardPolicy: CardPolicyState | undefined,
  spendDay: string,
  nowMs: number,
  { holdExpiry, pricing }: { holdExpiry: HoldExpirySettings; pricing: Pricing },
): AuthorizationOutcome & { readonly transaction: TransactionRecord } {
  const { scope, input, budget } = request;
  const lateForBudget = budget?.aborted === true;
  const conversion = toVaultAsset({
    amount: input.amount,
    currency: input.currency,
    billingCurrency: card.billing_currency,
    asset: CURRENCIES[vault.currency],
    price: priceFor(pricing, scope, input.currency, card.billing_currency, vault, nowMs),
    holdBuffer: pricing.holdBuffer,
  });
  // Unconverted (a decline), the amount is recorded as asked when it is in an asset, else as 0.
  const asked = isDecision(conversion)
    ? isCurrencyCode(input.currency)
      ? input.amount
      : ZERO
    : conversion.amount;
  const decideAt = (amount: Decimal): DecisionInput => ({
    card: { id: input.cardId, vaultId: vault.id, status: card.card_status },
    vault: decisionVaultOf(vault),
    policy: vault.policy,
    spend: vault.policy === null ? {} : vault.counters.totals(vault.policy.aggregates, nowMs),
    cardPolicy: cardPolicy?.policy ?? null,
    cardSpend:
      cardPolicy === undefined
        ? NO_SPEND
        : cardPolicy.counters.totals(cardPolicy.policy.aggregates, nowMs),
    nowMs,
    request: assetRequest(input, amount, vault.currency, card.billing_currency),
  });
  const decided: PartialDecision = lateForBudget
    ? { decision: STAND_IN_DECLINED, amount: asked, partial: false }
    : isDecision(conversion)
      ? { decision: conversion, amount: asked, partial: false }
      : decideAllowingPartial(decideAt(asked), input, vault.currency);
  const transaction = authorizationRecord(
    scope,
    vault,
    input,
    decided,
    asked,
    lateForBudget,
    nowMs,
    holdExpiry,
    isDecision(conversion) ? null : conversion.rate,
  );
  if (transaction.status === 'pending') {
    const held = decided.amount;
    vault.pending = vault.pending.plus(held);
    vault.pendingDelta = vault.pendingDelta.plus(held);
    vault.counters.addApproval(spendDay, input.merchant.mcc, held);
    cardPolicy?.counters.addApproval(spendDay, input.merchant.mcc, held);
    const billing = countedBilling(
      { amount: input.amount, currency: input.currency },
      vault.currency,
    );
    vault.counters.addBilling(spendDay, input.merchant.mcc, billing);
    cardPolicy?.counters.addBilling(spendDay, input.merchant.mcc, billing);
  }
  return { decision: decided.decision, standIn: lateForBudget, transaction, replayed: false };
}

/**
 * The request the policy sees: as it came when it is in the asset (no copy on the common
 * path); else in the asset, with the currencies the merchantCurrency and billingCurrency facts
 * read (contract v1.2, section 16).
 */
function assetRequest(
  input: AuthorizeInput,
  amount: Decimal,
  asset: CurrencyCode,
  billingCurrency: string,
): DecisionInput['request'] {
  const billing = countedBilling({ amount: input.amount, currency: input.currency }, asset);
  if (
    amount === input.amount &&
    input.currency === asset &&
    input.merchantAmount == null &&
    billing === undefined
  ) {
    return input;
  }
  return {
    ...input,
    amount,
    currency: asset,
    billingCurrency,
    merchantCurrency: input.merchantAmount?.currency,
    billing,
  };
}

/**
 * The asset's price in the billing currency, from memory (the feeds are read in the
 * background: an authorization never waits on the chain), or null: none needed (the request is
 * in the asset, or at par) or none usable (the conversion then declines `rate_unavailable`).
 */
function priceFor(
  pricing: Pricing,
  scope: Scope,
  currency: string,
  billingCurrency: string,
  vault: VaultState,
  nowMs: number,
): AssetPrice | null {
  if (currency === vault.currency || currency !== billingCurrency) return null;
  if (isAtPar(currency, vault.currency)) return null;
  return assetPriceOf(pricing.book, scope.mode, vault.currency, currency, nowMs, pricing.bounds);
}

/** The decision at the amount asked, or (when the request allows it) at what can be approved. */
function decideAllowingPartial(
  input: DecisionInput,
  request: AuthorizeInput,
  asset: CurrencyCode,
): PartialDecision {
  // The edge read the request and the counters hold core Decimals: nothing to read again.
  const first = decide(asReadInput(input));
  if (first.approved || request.partialApprovalAllowed !== true) {
    return { decision: first, amount: input.request.amount, partial: false };
  }
  // The network is told the approved amount in the currency it asked in: no finer than that.
  const scale = Math.min(request.amountScale ?? CURRENCIES[asset].scale, CURRENCIES[asset].scale);
  return withPartialApproval(input, first, scale, (atCap) => decide(asReadInput(atCap)));
}

function authorizationRecord(
  scope: Scope,
  vault: VaultState,
  input: AuthorizeInput,
  decided: PartialDecision,
  asked: Decimal,
  standIn: boolean,
  nowMs: number,
  holdExpiry: HoldExpirySettings,
  rate: AssetPrice | null,
): TransactionRecord {
  const { decision, amount } = decided;
  // An approved 0.00 is an account verification: nothing held, nothing to capture.
  const status = !decision.approved ? 'declined' : amount.isZero() ? 'completed' : 'pending';
  return {
    id: newId('transaction', nowMs),
    accountId: scope.accountId,
    mode: scope.mode,
    vaultId: vault.id,
    type: 'card_authorization',
    status,
    // An asset the edge read the amount in is the row's currency even on a currency-mismatch
    // decline; a billing currency's amount is recorded in the vault's asset.
    currency: isCurrencyCode(input.currency) ? input.currency : vault.currency,
    amount,
    capturedAmount: ZERO,
    holdRemaining: status === 'pending' ? amount : ZERO,
    cardId: input.cardId,
    transferId: null,
    merchant: input.merchant,
    networkTransactionId: input.networkTransactionId,
    declineCode: decision.declineCode,
    declineReason: decision.declineReason,
    shadowMatches: decision.shadowMatches,
    failureReason: null,
    standIn,
    hasMetadata: false,
    createdAtMs: nowMs,
    completedAtMs: status === 'completed' ? nowMs : null,
    lifecycle: {
      billing: { amount: input.amount, currency: input.currency },
      merchantAmount: input.merchantAmount ?? null,
      rate: rate === null ? null : rateRecordOf(rate),
      requestedAmount: decided.partial ? asked : null,
      partial: decided.partial,
      advice: false,
      expiresAtMs:
        status === 'pending' ? holdExpiresAtMs(input.merchant.mcc, nowMs, holdExpiry) : null,
      refundedAmount: ZERO,
      policyWouldDecline: null,
      originalTransactionId: null,
    },
  };
}
