import fc from 'fast-check';
import { Decimal } from '../../src/core/index.js';
import { rules } from './policy-arbitraries.js';

/**
 * Random policies whose limits and rules read spend sums, and purchases to run under them: the
 * property tests that hold a store's spend counters to a decision (Simulate Policy against
 * authorize, a backtest against a second vault run live) draw from these.
 */

/** The merchant categories limits name; purchases also come from one no limit names. */
export const SPEND_MCCS = ['5812', '5411', '7995'] as const;
const UNNAMED_MCC = '4829';

export const cents = (value: number): Decimal => new Decimal(value).dividedBy(100);

const limit = fc
  .record({
    interval: fc.constantFrom('daily', 'weekly', 'monthly', 'yearly', 'allTime'),
    measure: fc.constantFrom('amount', 'count'),
    amountCents: fc.integer({ min: 0, max: 60_000 }),
    count: fc.integer({ min: 0, max: 6 }),
    merchantCategories: fc.option(fc.subarray([...SPEND_MCCS], { minLength: 1 }), {
      nil: undefined,
    }),
  })
  .map(({ interval, measure, amountCents, count, merchantCategories }) => ({
    interval,
    ...(measure === 'amount' ? { amount: cents(amountCents).toFixed() } : { count }),
    ...(merchantCategories === undefined ? {} : { merchantCategories }),
  }));

/** Rules on the spend facts, which read the same sums as the limits, in the given modes. */
function spendRule(modes: readonly ('enforce' | 'shadow')[]) {
  return fc
    .record({
      fact: fc.constantFrom('spentDaily', 'spentWeekly', 'spentMonthly', 'countDaily'),
      operator: fc.constantFrom('greaterThan', 'lessThanInclusive'),
      bound: fc.integer({ min: 0, max: 40_000 }),
      mode: fc.constantFrom(...modes),
    })
    .map(({ fact, operator, bound, mode }) => ({
      mode,
      conditions: {
        all: [
          { fact, operator, value: fact === 'countDaily' ? bound % 7 : cents(bound).toFixed() },
        ],
      },
    }));
}

/** A policy of 1-4 spend limits, maybe a per-transaction one, spend rules and other rules. */
export function spendPolicy(modes: readonly ('enforce' | 'shadow')[] = ['enforce']) {
  return fc
    .record({
      limits: fc.array(limit, { minLength: 1, maxLength: 4 }),
      perTransaction: fc.option(fc.integer({ min: 100, max: 40_000 }), { nil: undefined }),
      spendRules: fc.array(spendRule(modes), { maxLength: 2 }),
      otherRules: fc.option(rules, { nil: undefined, freq: 4 }),
    })
    .map(({ limits, perTransaction, spendRules, otherRules }) => {
      const all = [
        ...spendRules.map((rule, index) => ({ ...rule, name: `spend-${index}` })),
        ...(otherRules ?? []),
      ];
      return {
        limits: [
          ...(perTransaction === undefined
            ? []
            : [{ interval: 'perTransaction', amount: cents(perTransaction).toFixed() }]),
          ...limits,
        ],
        ...(all.length === 0 ? {} : { rules: all }),
      };
    });
}

/** A purchase of up to 300.00, in a category limits name or one none does. */
export const purchase = fc.record({
  kind: fc.constant('purchase' as const),
  amountCents: fc.integer({ min: 1, max: 30_000 }),
  mcc: fc.constantFrom(...SPEND_MCCS, UNNAMED_MCC),
});
