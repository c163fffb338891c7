import { describe, expect, it } from 'vitest';
import {
  flatReferenceEngine,
  FLAT_RULES,
  flatInput,
  ORDINARY_PURCHASE,
  REALISTIC_POLICY,
  realisticReferenceEngine,
  referenceFacts,
  spendgateInput,
  type WorkloadFacts,
} from '../bench/workloads.js';
import { compilePolicy, decide } from '../src/index.js';

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
