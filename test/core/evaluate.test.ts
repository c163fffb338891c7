import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compilePolicy, decide, Decimal, evaluate, type Facts } from '../../src/core/index.js';
import { facts as generatedFacts, rules } from '../support/policy-arbitraries.js';
import { refusalOf } from '../support/refusal.js';

/**
 * `evaluate(policy, facts)`: the rule engine without cards, vaults or balances. It answers what
 * the policy step of `decide` answers, on the same facts.
 */
const policy = compilePolicy({
  limits: [{ interval: 'daily', amount: '2000' }],
  rules: [
    {
      name: 'no-big-foreign',
      conditions: {
        all: [
          { fact: 'amount', operator: 'greaterThan', value: 200 },
          { fact: 'merchantCountry', operator: 'notIn', value: ['US'] },
        ],
      },
    },
    {
      name: 'night-owl',
      mode: 'shadow',
      conditions: { all: [{ fact: 'hourUtc', operator: 'lessThan', value: 6 }] },
    },
  ],
});
const bistro = { name: 'Le Bistro', mcc: '5812', country: 'FR' };
const facts = (overrides: Partial<Facts> = {}): Facts => ({
  amount: '150',
  merchant: bistro,
  spend: { 'amount:daily': '1800' },
  at: '2026-11-18T10:00:00Z',
  ...overrides,
});

describe('evaluate', () => {
  it('answers the policy step: approved, or the first enforcing check that holds', () => {
    expect(evaluate(policy, facts())).toEqual({
      approved: true,
      declineCode: null,
      declineReason: null,
      shadowMatches: [],
    });
    expect(evaluate(policy, facts({ amount: 200.01 })).declineReason).toEqual({
      rule: 'limits[0]',
      message: 'Daily spend limit of 2000.00 USDC would be exceeded',
    });
    const foreign = evaluate(policy, facts({ amount: '250', spend: { 'amount:daily': 0 } }));
    expect([foreign.declineCode, foreign.declineReason?.rule]).toEqual([
      'authorization_failed',
      'no-big-foreign',
    ]);
  });

  it('takes the time as a Date, epoch milliseconds or an ISO 8601 timestamp', () => {
    const at = '2026-11-18T03:00:00Z';
    for (const form of [at, Date.parse(at), new Date(at), '2026-11-18T04:00:00+01:00']) {
      expect(evaluate(policy, facts({ at: form })).shadowMatches).toEqual([
        { rule: 'night-owl', message: 'Declined by rule night-owl' },
      ]);
    }
  });

  it('reads an absent card id as an absent fact: it equals nothing and is in no list', () => {
    const byCard = compilePolicy({
      rules: [
        { name: 'is-a', conditions: { all: [{ fact: 'cardId', operator: 'equal', value: 'a' }] } },
        {
          name: 'not-listed',
          mode: 'shadow',
          conditions: { all: [{ fact: 'cardId', operator: 'notIn', value: ['a'] }] },
        },
      ],
    });
    expect(evaluate(byCard, facts({ cardId: 'a' })).declineReason?.rule).toBe('is-a');
    const absent = evaluate(byCard, facts());
    expect([absent.approved, absent.shadowMatches.map((match) => match.rule)]).toEqual([
      true,
      ['not-listed'],
    ]);
  });

  it.each([
    [
      'facts that are not an object',
      null,
      'parameter_invalid',
      'facts',
      'facts must be an object, not null.',
    ],
    [
      'no amount',
      { ...facts(), amount: undefined },
      'parameter_missing',
      'amount',
      'amount is required.',
    ],
    [
      'a negative amount',
      facts({ amount: '-1' }),
      'invalid_amount',
      'amount',
      'amount must not be negative.',
    ],
    [
      'a merchant without a country',
      facts({ merchant: { name: 'x', mcc: '5812' } as never }),
      'parameter_missing',
      'merchant.country',
      'country is required.',
    ],
    [
      'a time without a zone',
      facts({ at: '2026-11-18T10:00:00' }),
      'parameter_invalid',
      'at',
      'at must be a Date, epoch milliseconds or an ISO 8601 timestamp such as "2026-11-18T10:00:00Z", not a string.',
    ],
    [
      'an invalid Date',
      facts({ at: new Date(Number.NaN) }),
      'parameter_invalid',
      'at',
      'at must be a Date, epoch milliseconds or an ISO 8601 timestamp such as "2026-11-18T10:00:00Z", not an invalid Date.',
    ],
    [
      'no spend for a limit',
      facts({ spend: {} }),
      'parameter_missing',
      'spend["amount:daily"]',
      '"amount:daily" is required: the policy reads this aggregate (see policy.aggregates).',
    ],
    [
      'spend of another type',
      facts({ spend: { 'amount:daily': true as never } }),
      'invalid_amount',
      'spend["amount:daily"]',
      '"amount:daily" must be a Decimal, a decimal string or a number, not a boolean.',
    ],
  ])('refuses %s, naming the fact', (_what, value, code, param, message) => {
    const error = refusalOf(() => evaluate(policy, value as Facts));
    expect([error.code, error.param, error.message]).toEqual([code, param, message]);
  });

  it('refuses a policy compilePolicy did not make', () => {
    const error = refusalOf(() => evaluate({ ...policy }, facts()));
    expect([error.code, error.param]).toEqual(['parameter_invalid', 'policy']);
  });

  it('agrees with decide on random policies and facts', () => {
    fc.assert(
      fc.property(rules, generatedFacts, (generatedRules, generated) => {
        const currency = generated.currency === 'SOL' ? 'SOL' : 'USDC';
        const compiled = compilePolicy({ rules: generatedRules }, { currency });
        const spent = {
          'amount:daily': generated.spentDaily,
          'amount:weekly': generated.spentWeekly,
          'amount:monthly': generated.spentMonthly,
          'count:daily': generated.countDaily,
        };
        const viaDecide = decide({
          card: { id: generated.cardId, vaultId: 'vlt_1', status: 'active' },
          vault: { id: 'vlt_1', status: 'active', currency, available: new Decimal('1e13') },
          policy: compiled,
          spend: spent,
          at: generated.nowMs,
          request: {
            cardId: generated.cardId,
            amount: generated.amount,
            currency,
            merchant: generated.merchant,
          },
        });
        const viaEvaluate = evaluate(compiled, {
          amount: generated.amount,
          merchant: generated.merchant,
          spend: spent,
          at: generated.nowMs,
          cardId: generated.cardId,
        });
        // The currency fact is the policy's in evaluate; the generator's may differ in decide
        // only where the vault's currency is not the request's, which this input never has.
        // A 0.00 request is an account verification to decide (no policy), a fact to evaluate.
        if (new Decimal(generated.amount).isZero()) expect(viaDecide.approved).toBe(true);
        else expect(viaEvaluate).toEqual(viaDecide);
      }),
      { numRuns: 500 },
    );
  });
});
