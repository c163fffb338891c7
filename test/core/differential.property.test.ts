import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compilePolicy, decide, Decimal, type DecisionInput } from '../../src/core/index.js';
import { facts, rules, type GeneratedFacts } from '../support/policy-arbitraries.js';
import { referenceEngine, referenceOutcomes } from '../support/reference-engine.js';

/**
 * The compiled evaluator against json-rules-engine on random valid policies and random facts:
 * every rule's outcome must agree, and so must the decision built from them (first enforcing
 * rule in order declines; every matching shadow rule is reported).
 */
/** 10,000 in `npm test`; the fast loop (vitest.unit.config.ts) runs fewer. */
const CASES = Number(process.env['SPENDGATE_DIFFERENTIAL_CASES'] ?? 10_000);

function decisionInput(
  generated: GeneratedFacts,
  policy: ReturnType<typeof compilePolicy>,
): DecisionInput {
  return {
    card: { id: generated.cardId, vaultId: 'vlt_1', status: 'active' },
    // The vault's currency is the request's, so the currency check passes and the policy decides.
    vault: {
      id: 'vlt_1',
      status: 'active',
      currency: generated.currency,
      available: new Decimal('1e13'),
    },
    policy,
    spend: {
      'amount:daily': new Decimal(generated.spentDaily),
      'amount:weekly': new Decimal(generated.spentWeekly),
      'amount:monthly': new Decimal(generated.spentMonthly),
      'count:daily': generated.countDaily,
    },
    nowMs: generated.nowMs,
    request: {
      cardId: generated.cardId,
      amount: new Decimal(generated.amount),
      currency: generated.currency,
      merchant: generated.merchant,
    },
  };
}

describe('compiled evaluator vs json-rules-engine', () => {
  it(`agrees on every rule and decision over ${CASES} random policies and facts`, async () => {
    let matched = 0;
    let evaluated = 0;
    await fc.assert(
      fc.asyncProperty(rules, facts, async (generatedRules, generatedFacts) => {
        const currency = generatedFacts.currency === 'SOL' ? 'SOL' : 'USDC';
        const policy = compilePolicy({ rules: generatedRules }, { currency });
        const input = decisionInput(generatedFacts, policy);
        const expected = await referenceOutcomes(referenceEngine(generatedRules), generatedFacts);

        for (const check of [...policy.checks, ...policy.shadowChecks]) {
          const outcome = expected.get(check.rule);
          expect(outcome, check.rule).toBeTypeOf('boolean');
          expect(check.test(input), check.rule).toBe(outcome);
          evaluated += 1;
          if (outcome === true) matched += 1;
        }

        const firstEnforced = generatedRules.find(
          (rule) => rule.mode === 'enforce' && expected.get(rule.name),
        );
        const shadows = generatedRules.filter(
          (rule) => rule.mode === 'shadow' && expected.get(rule.name),
        );
        const decision = decide(input);
        // A 0.00 request is an account verification: approved with no policy (section 16).
        if (input.request.amount.isZero()) {
          expect(decision).toEqual(decide({ ...input, policy: null }));
          expect(decision.approved).toBe(true);
          return;
        }
        expect(decision.approved).toBe(firstEnforced === undefined);
        expect(decision.declineReason?.rule ?? null).toBe(firstEnforced?.name ?? null);
        expect(decision.declineCode).toBe(
          firstEnforced === undefined ? null : 'authorization_failed',
        );
        expect(decision.shadowMatches.map((match) => match.rule)).toEqual(
          shadows.map((rule) => rule.name),
        );
      }),
      { numRuns: CASES },
    );
    // The generator must exercise both outcomes, or agreement proves little.
    expect(evaluated).toBeGreaterThan(CASES);
    expect(matched / evaluated).toBeGreaterThan(0.15);
    expect(matched / evaluated).toBeLessThan(0.85);
  });
});
