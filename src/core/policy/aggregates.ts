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
): AggregateSpec {
  const mccs =
    merchantCategories === null ? null : Object.freeze([...new Set(merchantCategories)].sort());
  const key = `${measure}:${interval}${mccs === null ? '' : `:${mccs.join('+')}`}`;
  return Object.freeze({ key, measure, interval, merchantCategories: mccs });
}
