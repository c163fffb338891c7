import { describe, expect, it } from 'vitest';
import {
  compilePolicy,
  CompiledPolicyCache,
  decide,
  Decimal,
  requiredAggregates,
} from '../../src/core/index.js';
import { builtinRuleLibrary } from '../../src/rule-library/load.js';
import { decisionInput } from '../support/decision-input.js';
import { refusalOf } from '../support/refusal.js';

const compile = (policy: unknown, currency: 'USDC' | 'SOL' = 'USDC') =>
  compilePolicy(policy, { currency, templates: builtinRuleLibrary() });

const blockEverything = compile({
  rules: [
    {
      name: 'no',
      conditions: { all: [{ fact: 'amount', operator: 'greaterThanInclusive', value: 0 }] },
    },
  ],
});

describe('decide: the order of contract section 10', () => {
  it('approves with no policy when the balance covers the amount', () => {
    const decision = decide(decisionInput({ amount: '1000', available: '1000' }));
    expect(decision).toEqual({
      approved: true,
      declineCode: null,
      declineReason: null,
      shadowMatches: [],
    });
  });

  it.each([
    ['an unknown card', { card: null }, 'card_declined', 'card_not_found'],
    [
      'a frozen card',
      { card: { id: 'card_1', vaultId: 'vlt_1', status: 'frozen' as const } },
      'card_declined',
      'card_frozen',
    ],
    [
      'a cancelled card',
      { card: { id: 'card_1', vaultId: 'vlt_1', status: 'cancelled' as const } },
      'card_declined',
      'card_cancelled',
    ],
    ['a frozen vault', { vault: { status: 'frozen' as const } }, 'card_declined', 'vault_frozen'],
    ['a closed vault', { vault: { status: 'closed' as const } }, 'card_declined', 'vault_closed'],
    ['another currency', { currency: 'SOL' }, 'card_declined', 'currency_mismatch'],
    ['the policy', { policy: blockEverything }, 'authorization_failed', 'no'],
    ['the balance', { amount: '1000.000001' }, 'insufficient_balance', 'available_balance'],
  ])('declines on %s', (_title, overrides, code, rule) => {
    const decision = decide(decisionInput(overrides));
    expect(decision.approved).toBe(false);
    expect(decision.declineCode).toBe(code);
    expect(decision.declineReason?.rule).toBe(rule);
  });

  it('checks in order: the first failure wins', () => {
    // Everything fails at once; each fix uncovers the next check.
    const all = {
      card: { id: 'card_1', vaultId: 'vlt_1', status: 'frozen' as const },
      vault: { status: 'frozen' as const },
      currency: 'SOL',
      policy: blockEverything,
      amount: '5000',
    };
    expect(decide(decisionInput(all)).declineReason?.rule).toBe('card_frozen');
    expect(decide(decisionInput({ ...all, card: undefined })).declineReason?.rule).toBe(
      'vault_frozen',
    );
    expect(decide(decisionInput({ ...all, card: undefined, vault: {} })).declineReason?.rule).toBe(
      'currency_mismatch',
    );
    expect(
      decide(decisionInput({ ...all, card: undefined, vault: {}, currency: 'USDC' })).declineReason
        ?.rule,
    ).toBe('no');
    expect(
      decide(decisionInput({ ...all, card: undefined, vault: {}, currency: 'USDC', policy: null }))
        .declineCode,
    ).toBe('insufficient_balance');
  });

  it('compares the balance as decimals: 0.1 + 0.2 covers 0.3 exactly', () => {
    const available = new Decimal('0.1').plus('0.2').toFixed();
    expect(decide(decisionInput({ available, amount: '0.3' })).approved).toBe(true);
    expect(decide(decisionInput({ available, amount: '0.300001' })).approved).toBe(false);
  });
});

describe('decide: policies', () => {
  it('declines by category, country, limits, templates and rules, in that order', () => {
    const policy = compile({
      merchantCategories: { block: ['7995'] },
      merchantCountries: { allow: ['US', 'CA'] },
      limits: [
        { interval: 'perTransaction', amount: '500' },
        { interval: 'daily', amount: '2000' },
        { interval: 'monthly', amount: '300', merchantCategories: ['5812'] },
        { interval: 'daily', count: 20 },
      ],
      templates: [{ name: 'business-hours', params: { startHour: 8, endHour: 18 } }],
      rules: [
        {
          name: 'no-austin',
          message: 'Not in Austin',
          conditions: {
            all: [{ fact: 'merchant', path: '$.city', operator: 'equal', value: 'Austin' }],
          },
        },
      ],
    });
    const spend = {
      'amount:daily': new Decimal('100'),
      'amount:monthly:5812': new Decimal('250'),
      'count:daily': 3,
    };
    const rule = (overrides: Parameters<typeof decisionInput>[0]) =>
      decide(decisionInput({ policy, spend, ...overrides })).declineReason?.rule ?? null;

    expect(rule({ amount: '10' })).toBeNull();
    expect(rule({ merchant: { mcc: '7995', country: 'FR' } })).toBe('merchantCategories');
    expect(rule({ merchant: { country: 'FR' } })).toBe('merchantCountries');
    expect(rule({ amount: '500.01', merchant: { mcc: '5411' } })).toBe('limits[0]');
    expect(rule({ amount: '500', merchant: { mcc: '5411' } })).toBeNull();
    expect(
      rule({
        amount: '400',
        merchant: { mcc: '5411' },
        spend: { ...spend, 'amount:daily': new Decimal('1600.000001') },
      }),
    ).toBe('limits[1]');
    expect(
      rule({
        amount: '400',
        merchant: { mcc: '5411' },
        spend: { ...spend, 'amount:daily': new Decimal('1600') },
      }),
    ).toBeNull();
    expect(rule({ amount: '50.01' })).toBe('limits[2]');
    expect(rule({ amount: '50.01', merchant: { mcc: '5814' } })).toBeNull();
    expect(rule({ spend: { ...spend, 'count:daily': 20 } })).toBe('limits[3]');
    expect(rule({ spend: { ...spend, 'count:daily': 19 } })).toBeNull();
    expect(rule({ at: '2026-11-18T19:00:00Z' })).toBe('business-hours');
    expect(rule({ merchant: { city: 'Austin' } })).toBe('no-austin');

    expect(
      requiredAggregates(policy)
        .map((spec) => spec.key)
        .sort(),
    ).toEqual(['amount:daily', 'amount:monthly:5812', 'count:daily']);
    expect(requiredAggregates(null)).toEqual([]);
  });

  it('reports shadow rules on every outcome without declining', () => {
    const policy = compile({
      rules: [
        {
          name: 'watch-big',
          mode: 'shadow',
          message: 'big',
          conditions: { all: [{ fact: 'amount', operator: 'greaterThan', value: '100' }] },
        },
        {
          name: 'watch-casino',
          mode: 'shadow',
          conditions: { all: [{ fact: 'merchantName', operator: 'contains', value: 'Casino' }] },
        },
        {
          name: 'block-huge',
          conditions: { all: [{ fact: 'amount', operator: 'greaterThan', value: '900' }] },
        },
      ],
    });
    const big = decide(
      decisionInput({ policy, amount: '150', merchant: { name: 'Casino Royale' } }),
    );
    expect(big.approved).toBe(true);
    expect(big.shadowMatches).toEqual([
      { rule: 'watch-big', message: 'big' },
      { rule: 'watch-casino', message: 'Declined by rule watch-casino' },
    ]);
    const huge = decide(decisionInput({ policy, amount: '950' }));
    expect(huge.declineReason?.rule).toBe('block-huge');
    expect(huge.shadowMatches.map((match) => match.rule)).toEqual(['watch-big']);
    const poor = decide(decisionInput({ policy, amount: '150', available: '10' }));
    expect(poor.declineCode).toBe('insufficient_balance');
    expect(poor.shadowMatches.map((match) => match.rule)).toEqual(['watch-big']);
    // A card decline never reaches the policy, so there is nothing to report.
    expect(decide(decisionInput({ policy, amount: '150', card: null })).shadowMatches).toEqual([]);
    expect(decide(decisionInput({ policy, amount: '10' })).shadowMatches).toEqual([]);
  });

  it('runs a template in shadow mode when the policy says so', () => {
    const policy = compile({ templates: [{ name: 'block-gambling', mode: 'shadow' }] });
    const decision = decide(decisionInput({ policy, merchant: { mcc: '7995' } }));
    expect(decision.approved).toBe(true);
    expect(decision.shadowMatches.map((match) => match.rule)).toEqual(['block-gambling']);
  });

  it('refuses a missing aggregate as missing, naming it, and reads the ones it is given', () => {
    const policy = compile({ limits: [{ interval: 'weekly', amount: '10' }] });
    const missing = refusalOf(() => decide(decisionInput({ policy })));
    expect([missing.code, missing.param, missing.message]).toEqual([
      'parameter_missing',
      'spend["amount:weekly"]',
      '"amount:weekly" is required: the policy reads this aggregate (see policy.aggregates).',
    ]);
    // A number is an amount like any other: read exactly, not refused as "not supplied".
    expect(
      decide(decisionInput({ policy, amount: '7', spend: { 'amount:weekly': 3 } })).approved,
    ).toBe(true);
    expect(
      decide(decisionInput({ policy, amount: '7', spend: { 'amount:weekly': new Decimal(3) } }))
        .approved,
    ).toBe(true);
    expect(
      decide(decisionInput({ policy, amount: '7.000001', spend: { 'amount:weekly': '3' } }))
        .declineReason?.rule,
    ).toBe('limits[0]');
  });

  it("refuses a policy compiled for another currency than the vault's", () => {
    const sol = compile({ limits: [{ interval: 'perTransaction', amount: '1.000000001' }] }, 'SOL');
    const error = refusalOf(() =>
      decide(decisionInput({ policy: sol, vault: { currency: 'USDC' } })),
    );
    expect([error.code, error.param, error.message]).toEqual([
      'parameter_invalid',
      'policy',
      'policy was compiled for SOL, but the vault holds USDC.',
    ]);
  });

  it('derives hour and weekday from the decision time in UTC', () => {
    const policy = compile({ templates: [{ name: 'weekday-only' }] });
    expect(decide(decisionInput({ policy, at: '2026-11-20T23:59:59.999Z' })).approved).toBe(true);
    expect(decide(decisionInput({ policy, at: '2026-11-21T00:00:00.000Z' })).approved).toBe(false);
  });
});

describe('CompiledPolicyCache', () => {
  it('compiles once per (vault, version) and evicts the least recently used past its bound', () => {
    const cache = new CompiledPolicyCache(2);
    let compiles = 0;
    const get = (vault: string, version: number) =>
      cache.getOrCompile(vault, version, () => {
        compiles += 1;
        return compile({ limits: [{ interval: 'perTransaction', amount: String(version) }] });
      });
    const first = get('vlt_a', 1);
    expect(get('vlt_a', 1)).toBe(first);
    expect(compiles).toBe(1);
    get('vlt_b', 1);
    get('vlt_a', 1); // a is now the most recent
    get('vlt_c', 1); // evicts b
    expect(cache.size).toBe(2);
    expect(cache.get('vlt_b', 1)).toBeUndefined();
    expect(cache.get('vlt_a', 1)).toBe(first);
    expect(get('vlt_a', 2)).not.toBe(first); // a new version; evicts c, now the least recent
    expect(cache.get('vlt_c', 1)).toBeUndefined();
    expect(cache.size).toBe(2);
    cache.evictVault('vlt_a');
    expect(cache.size).toBe(0);
    expect(compiles).toBe(4);
  });

  it('refuses a bound or version that is not a positive integer', () => {
    const bound = refusalOf(() => new CompiledPolicyCache(0));
    expect([bound.code, bound.param, bound.message]).toEqual([
      'parameter_invalid',
      'entriesMax',
      'entriesMax must be a positive integer, not 0.',
    ]);
    expect(refusalOf(() => new CompiledPolicyCache(1).get('vlt_a', 0)).param).toBe('version');
  });
});
