import type { Decimal } from '../money/decimal.js';

/*
 * Spend aggregates: what a vault has already spent in a calendar window, which limits and the
 * `spent*` / `countDaily` facts compare against. A compiled policy lists exactly the aggregates
 * it reads (`CompiledPolicy.aggregates`), so the store computes only those.
 *
 * Spend counts approved card authorizations (pending and completed) and external transfers,
 * before the transaction being decided.
 */

export type AggregateInterval = 'daily' | 'weekly' | 'monthly' | 'yearly' | 'allTime';
export type AggregateMeasure = 'amount' | 'count';

export interface AggregateSpec {
  /** Stable key the store answers under, e.g. `amount:daily` or `count:monthly:5812+5814`. */
  readonly key: string;
  readonly measure: AggregateMeasure;
  /** UTC calendar window: day, ISO week, month, year, or all time. */
  readonly interval: AggregateInterval;
  /** Only spend at these MCCs counts; null counts all spend. Sorted, without duplicates. */
  readonly merchantCategories: readonly string[] | null;
  /**
   * A billing currency (ISO 4217, issue 35): the aggregate sums the billing amounts that
   * approvals asked in it, not what they held in the vault's asset. null: the vault's asset.
   */
  readonly currency: string | null;
}

/**
 * Values of the aggregates a policy needs, by `AggregateSpec.key`: a core Decimal for `amount`
 * aggregates, an integer for `count` ones.
 */
export type SpendTotals = Readonly<Record<string, Decimal | number>>;

export const NO_SPEND: SpendTotals = Object.freeze({});

export function aggregateSpec(
  measure: AggregateMeasure,
  interval: AggregateInterval,
  merchantCategories: readonly string[] | null,
  currency: string | null = null,
): AggregateSpec {
  const mccs =
    merchantCategories === null ? null : Object.freeze([...new Set(merchantCategories)].sort());
  const key =
    `${measure}:${interval}${mccs === null ? '' : `:${mccs.join('+')}`}` +
    (currency === null ? '' : `@${currency}`);
  return Object.freeze({ key, measure, interval, merchantCategories: mccs, currency });
}

/**
 * How billing totals are checked: a decimal at the database's scale (numeric(38, 9)); any ISO
 * 4217 currency's minor units fit in it.
 */
export const BILLING_TOTAL = Object.freeze({
  code: 'billing',
  name: 'billing currency',
  network: null,
  scale: 9,
});
