import { formatAmount } from '../money/amount.js';
import type { CurrencyInfo } from '../money/currencies.js';
import { isDecimal, type Decimal } from '../money/decimal.js';
import type { LimitStatus } from '../policy/limit-status.js';
import { isoTimestamp } from '../time.js';
import { presentFiat } from './presenters.js';
import type { PolicyVersionRecord } from './records.js';

/*
 * A policy's history and its remaining limits as the API answers them (Remaining Limits, List
 * Policy Versions, and the answers of Restore through presentPolicy). Amounts are decimal
 * strings in the policy's currency, counts integers, times ISO 8601 UTC.
 */

export function presentPolicyVersion(version: PolicyVersionRecord) {
  return {
    object: 'policy_version' as const,
    vaultId: version.vaultId,
    cardId: version.cardId,
    version: version.version,
    change: version.change,
    restoredFrom: version.restoredFrom,
    keyId: version.keyId,
    document: version.document,
    createdAt: isoTimestamp(version.createdAtMs),
  };
}

/** What Remaining Limits reads about the policy the statuses are of. */
export interface LimitsOf {
  readonly vaultId: string;
  readonly cardId: string | null;
  readonly version: number;
  readonly currency: CurrencyInfo;
  readonly asOfMs: number;
}

export function presentPolicyLimits(of: LimitsOf, statuses: readonly LimitStatus[]) {
  // A limit in a billing currency (issue 35) shows its figures in that currency's minor units.
  const money = (value: Decimal, currency: string | null) =>
    currency === null
      ? formatAmount(value, of.currency)
      : presentFiat({ amount: value, currency }).amount;
  const figure = (value: LimitStatus['remaining'], currency: string | null) =>
    isDecimal(value) ? money(value, currency) : value;
  return {
    object: 'policy_limits' as const,
    vaultId: of.vaultId,
    cardId: of.cardId,
    version: of.version,
    currency: of.currency.code,
    asOf: isoTimestamp(of.asOfMs),
    limits: statuses.map(({ limit, used, remaining, resetsAtMs }) => ({
      rule: limit.rule,
      mode: limit.mode,
      interval: limit.interval,
      merchantCategories: limit.merchantCategories === null ? null : [...limit.merchantCategories],
      amount: limit.amount === null ? null : money(limit.amount, limit.currency),
      currency: limit.currency ?? of.currency.code,
      count: limit.count,
      used: used === null ? null : figure(used, limit.currency),
      remaining: figure(remaining, limit.currency),
      resetsAt: resetsAtMs === null ? null : isoTimestamp(resetsAtMs),
    })),
  };
}
