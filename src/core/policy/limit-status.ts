import { assert } from '../assert.js';
import { compareDecimals } from '../money/compare.js';
import { isDecimal, ZERO, type Decimal } from '../money/decimal.js';
import { dayNumberOf, isoDate, MS_PER_DAY, utcDayNumber, windowStartDay } from '../time.js';
import type { AggregateSpec, SpendTotals } from './aggregates.js';
import type { LimitInterval, RuleMode } from './schema.js';

/*
 * Remaining limits: for each limit of a policy, what its window has used and what the next
 * authorization may still take. Computed from the same spend totals the decision reads
 * (`CompiledPolicy.aggregates`, summed by the store's one window function), with the
 * decision's own comparisons, so a figure here never disagrees with a decision: an amount
 * limit declines a purchase above `remaining` (spent + amount > allowed), a count limit
 * declines once `remaining` is 0 (count >= allowed).
 */

/** One limit of a compiled policy, as the compiler read it. */
export interface PolicyLimit {
  /** The name its decline carries: `limits[2]`, or its template's name. */
  readonly rule: string;
  /** A template may be in shadow mode: its limits then report, never decline. */
  readonly mode: RuleMode;
  readonly interval: LimitInterval;
  /** Only spend at these MCCs counts, and only purchases at them are limited; null: all. */
  readonly merchantCategories: readonly string[] | null;
  /** The most the window (or one transaction) may spend; null for a count limit. */
  readonly amount: Decimal | null;
  /** The most approvals the window may hold; null for an amount limit. */
  readonly count: number | null;
  /** The spend aggregate it compares against; null for a per-transaction limit. */
  readonly aggregate: AggregateSpec | null;
  /**
   * The billing currency (ISO 4217) the limit is written in, whose amounts it counts (issue
   * 35); null: the vault's asset.
   */
  readonly currency: string | null;
}

export interface LimitStatus {
  readonly limit: PolicyLimit;
  /**
   * Spent in the current window (a Decimal for an amount limit, an integer for a count
   * limit), the transaction being decided not included; null for a per-transaction limit.
   */
  readonly used: Decimal | number | null;
  /**
   * What the next authorization may still take without this limit declining it: an amount
   * (for a per-transaction limit, the limit itself), or a number of approvals. Never negative.
   */
  readonly remaining: Decimal | number;
  /** When the window starts again (epoch ms); null for per-transaction and all-time limits. */
  readonly resetsAtMs: number | null;
}

/** The status of each of `limits` at `nowMs` against `spend` (by aggregate key). */
export function limitStatuses(
  limits: readonly PolicyLimit[],
  spend: SpendTotals,
  nowMs: number,
): LimitStatus[] {
  assert(Number.isFinite(nowMs), 'nowMs is a finite epoch time');
  return limits.map((limit) => {
    const resetsAtMs = windowEndMs(limit.interval, nowMs);
    if (limit.aggregate === null) {
      assert(limit.amount !== null, 'a per-transaction limit is an amount');
      return { limit, used: null, remaining: limit.amount, resetsAtMs };
    }
    const used = spend[limit.aggregate.key];
    if (limit.amount !== null) {
      assert(isDecimal(used), 'an amount aggregate is supplied as a core Decimal');
      const left = limit.amount.minus(used);
      return { limit, used, remaining: compareDecimals(left, ZERO) < 0 ? ZERO : left, resetsAtMs };
    }
    assert(limit.count !== null && Number.isSafeInteger(used), 'a count aggregate is an integer');
    const count = used as number;
    return { limit, used: count, remaining: Math.max(0, limit.count - count), resetsAtMs };
  });
}

/**
 * The first moment after the UTC calendar window of `interval` holding `nowMs` (the same
 * windows as `windowStartDay`): the next midnight, Monday, first of the month or New Year.
 */
export function windowEndMs(interval: LimitInterval, nowMs: number): number | null {
  switch (interval) {
    case 'perTransaction':
    case 'allTime':
      return null;
    case 'daily':
    case 'weekly':
      return (windowStartDay(interval, nowMs) + (interval === 'daily' ? 1 : 7)) * MS_PER_DAY;
    case 'monthly':
    case 'yearly': {
      const today = isoDate(utcDayNumber(nowMs));
      const year = Number(today.slice(0, 4));
      const month = Number(today.slice(5, 7));
      const next =
        interval === 'yearly' || month === 12
          ? `${String(year + 1).padStart(4, '0')}-01-01`
          : `${today.slice(0, 4)}-${String(month + 1).padStart(2, '0')}-01`;
      return dayNumberOf(next) * MS_PER_DAY;
    }
  }
}
