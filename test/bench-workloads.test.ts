import { describe, expect, it } from 'vitest';
import {
  BLOCKED_MCCS,
  CUSTOM_RULES,
  flatReferenceEngine,
  FLAT_RULES,
  flatInput,
  HTTP_BENCH_DEPOSIT,
  HTTP_BENCH_POLICY,
  HTTP_BENCH_PURCHASE,
  ORDINARY_PURCHASE,
  REALISTIC_POLICY,
  realisticReferenceEngine,
  referenceFacts,
  spendgateInput,
  type WorkloadFacts,
} from '../bench/workloads.js';
import { compilePolicy, Decimal, decide, type SpendTotals } from '../src/index.js';

/**
 * The benchmark compares two engines doing the same work; this test holds them to it. If the
 * workloads drifted apart, the benchmark's ratio would measure different work.
 */
describe('benchmark workloads are equivalent in both engines', () => {
  const policy = compilePolicy(REALISTIC_POLICY, { currency: 'USDC' });
  const engine = realisticReferenceEngine();

  const variants: [string, Partial<WorkloadFacts>][] = [
    ['the ordinary purchase', {}],
    ['a blocked category', { mcc: '6011' }],
    ['a foreign country', { country: 'BR' }],
    ['the per-transaction limit', { amount: '500.01' }],
    ['the daily limit', { amount: '400', spentDaily: '1600.01' }],
    ['the restaurant limit', { mcc: '5812', amount: '180.01' }],
    ['the daily count', { countDaily: 20 }],
    ['business hours', { nowMs: Date.UTC(2026, 10, 18, 23, 0) }],
    ['a casino by name', { name: 'Grand Casino' }],
    ['Las Vegas', { city: 'Las Vegas' }],
    ['a fraud merchant', { merchantId: 'm_fraud_7' }],
    ['a round foreign amount', { amount: '300', country: 'GB' }],
    ['the weekly spend', { spentWeekly: '8000.01', amount: '100.01' }],
  ];

  it.each(variants)('%s', async (_title, change) => {
    const facts = { ...ORDINARY_PURCHASE, ...change };
    const decision = decide({ ...spendgateInput(facts), policy });
    const { results } = await engine.run(referenceFacts(facts));
    const declinedBy = results.map((result) => result.name);
    // json-rules-engine reports every matching rule; spendgate names the first in policy order.
    expect(decision.declineReason?.rule ?? null).toBe(declinedBy[0] ?? null);
    if (change === variants[0]?.[1]) expect(decision.approved).toBe(true);
  });

  it('flat rules: every rule has the same outcome, about half of them matching', async () => {
    const flat = compilePolicy({ rules: FLAT_RULES }, { currency: 'USDC' });
    const input = flatInput();
    const { results, failureResults } = await flatReferenceEngine().run(
      referenceFacts(ORDINARY_PURCHASE),
    );
    const expected = new Map(
      [...results, ...failureResults].map((result) => [result.name, result.result]),
    );
    for (const check of flat.checks)
      expect(check.test(input), check.rule).toBe(expected.get(check.rule));
    expect(results.length).toBeGreaterThan(5);
    expect(failureResults.length).toBeGreaterThan(5);
  });
});

/**
 * The HTTP benchmark counts every decline as a broken run, so its policy must approve its
 * purchase at any hour of any day, however much the vault has spent during a run.
 */
describe('the HTTP benchmark policy', () => {
  const policy = compilePolicy(HTTP_BENCH_POLICY, { currency: 'USDC' });

  it('has the parts the authorize bench needs', () => {
    const limits = HTTP_BENCH_POLICY.limits.map((limit) =>
      'count' in limit ? `${limit.interval} count` : `${limit.interval} amount`,
    );
    expect(limits).toEqual([
      'perTransaction amount',
      'daily amount',
      'monthly amount',
      'daily count',
    ]);
    expect(HTTP_BENCH_POLICY.merchantCategories.block).toBe(BLOCKED_MCCS);
    expect(new Set(BLOCKED_MCCS).size).toBe(50);
    expect(HTTP_BENCH_POLICY.merchantCountries.allow.length).toBeGreaterThan(0);
    expect(HTTP_BENCH_POLICY.rules).toBe(CUSTOM_RULES);
    expect(CUSTOM_RULES.length).toBe(20);
    expect(policy.checks.length).toBe(2 + 4 + 20);
  });

  // Authorizations a vault has had today: none, a few, and an hour at 10,000/s.
  const countsToday = [0, 1, 6, 1000, 36_000_000];
  // Every hour of a week (Monday 2 March 2026 onwards), and the last hour of a month.
  const clocksMs = [
    ...Array.from({ length: 7 * 24 }, (_, hour) => Date.UTC(2026, 2, 2, hour, 17)),
    Date.UTC(2026, 2, 31, 23, 59),
  ];

  it.each(countsToday)('approves the purchase at every hour after %i today', (count) => {
    const amount = new Decimal(HTTP_BENCH_PURCHASE.amount);
    const spentToday = amount.times(count);
    // The most a month can hold: every day of it like today.
    const spend: SpendTotals = Object.fromEntries(
      policy.aggregates.map((spec) => {
        const days = spec.interval === 'daily' ? 1 : spec.interval === 'weekly' ? 7 : 31;
        return [
          spec.key,
          spec.measure === 'count' ? count * days : spentToday.times(days),
        ] as const;
      }),
    );
    expect(Object.keys(spend).sort()).toEqual([
      'amount:daily',
      'amount:monthly',
      'amount:weekly',
      'count:daily',
    ]);
    for (const nowMs of clocksMs) {
      const decision = decide({
        card: { id: 'card_1', vaultId: 'vlt_1', status: 'active' },
        vault: {
          id: 'vlt_1',
          status: 'active',
          currency: 'USDC',
          available: new Decimal(HTTP_BENCH_DEPOSIT).minus(spentToday.times(31)),
        },
        policy,
        spend,
        at: nowMs,
        request: {
          cardId: 'card_1',
          amount,
          currency: HTTP_BENCH_PURCHASE.currency,
          merchant: HTTP_BENCH_PURCHASE.merchant,
        },
      });
      expect(decision.declineReason, new Date(nowMs).toISOString()).toBeNull();
      expect(decision.approved).toBe(true);
    }
  });
});
