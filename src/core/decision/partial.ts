import { assert } from '../assert.js';
import { compareDecimals } from '../money/compare.js';
import { Decimal, isDecimal, ZERO } from '../money/decimal.js';
import { NO_SPEND } from '../policy/aggregates.js';
import type { CompiledPolicy } from '../policy/compile.js';
import { limitStatuses } from '../policy/limit-status.js';
import type { DecisionInput } from './decide.js';
import type { Decision } from './result.js';

/*
 * Partial approval (contract v1.2, section 16): a request that says
 * `partialApprovalAllowed: true` (fuel pumps, split tender) and is declined for the balance or
 * an amount limit may be approved for what the vault and its limits allow, above 0. This
 * module says how much that is; the caller decides again at that amount, so a partial
 * approval passes every check a full one does (a rule on `amount` included), and answers the
 * first decline when that second decision declines too.
 */

/** Whether a decline is one that a smaller amount could turn into an approval. */
export function isAmountDecline(decision: Decision, input: DecisionInput): boolean {
  if (decision.approved) return false;
  if (decision.declineCode === 'insufficient_balance') return true;
  if (decision.declineCode !== 'authorization_failed') return false;
  const rule = decision.declineReason?.rule;
  const policy = decision.declineReason?.policy === 'card' ? input.cardPolicy : input.policy;
  // A billing-currency limit's decline stays whole: its headroom is in the billing currency,
  // and the part approved is an amount of the asset (issue 35).
  return (policy?.limits ?? []).some(
    (limit) => limit.rule === rule && limit.amount !== null && limit.currency === null,
  );
}

/**
 * The most this request may be approved for: the vault's available balance, and what each
 * enforcing amount limit (of the vault's policy and the card's own) that covers the request's
 * merchant category still allows, rounded down to `scale` (the coarser of the billing
 * currency's and the asset's, so that the network can be told the amount exactly). Null when
 * that is not above 0, or not below the amount asked.
 */
export function partialApprovalCap(input: DecisionInput, scale: number): Decimal | null {
  const { vault, request } = input;
  assert(vault !== null, 'a partial approval is of a known vault');
  assert(isDecimal(vault.available), 'available is a core Decimal');
  assert(Number.isInteger(scale) && scale >= 0, 'a scale is a whole number of digits');
  let cap = vault.available;
  const policies: [CompiledPolicy | null | undefined, DecisionInput['spend']][] = [
    [input.policy, input.spend],
    [input.cardPolicy, input.cardSpend ?? NO_SPEND],
  ];
  for (const [policy, spend] of policies) {
    if (policy === null || policy === undefined) continue;
    for (const status of limitStatuses(policy.limits, spend, input.nowMs)) {
      const { limit, remaining } = status;
      if (limit.mode !== 'enforce' || limit.amount === null || !isDecimal(remaining)) continue;
      if (limit.currency !== null) continue;
      const covers =
        limit.merchantCategories === null ||
        limit.merchantCategories.includes(request.merchant.mcc);
      if (covers && compareDecimals(remaining, cap) < 0) cap = remaining;
    }
  }
  const rounded = cap.toDecimalPlaces(scale, Decimal.ROUND_DOWN);
  if (compareDecimals(rounded, ZERO) <= 0) return null;
  return compareDecimals(rounded, request.amount) < 0 ? rounded : null;
}

/** A decision on a request that allows partial approval, and the amount it approves. */
export interface PartialDecision {
  readonly decision: Decision;
  /** What is approved (or, declined, what was asked), in the request's currency. */
  readonly amount: Decimal;
  readonly partial: boolean;
}

/**
 * `first` (the decision at the amount asked), or an approval of the cap when `first` is a
 * decline a smaller amount could turn and the request decided at the cap is approved.
 * `decideAt` decides the same request at another amount (the caller's `decide`).
 */
export function withPartialApproval(
  input: DecisionInput,
  first: Decision,
  scale: number,
  decideAt: (input: DecisionInput) => Decision,
): PartialDecision {
  const asked = { decision: first, amount: input.request.amount, partial: false };
  if (!isAmountDecline(first, input)) return asked;
  const cap = partialApprovalCap(input, scale);
  if (cap === null) return asked;
  const second = decideAt({ ...input, request: { ...input.request, amount: cap } });
  return second.approved ? { decision: second, amount: cap, partial: true } : asked;
}
