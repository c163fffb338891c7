import { describe, expect, it } from 'vitest';
import {
  compilePolicy,
  InvariantError,
  parseAmount,
  POLICY_BOUNDS,
  PolicyInvalidError,
  SpendgateError,
} from '../../src/core/index.js';
import { expectOwnWording, refusalOf } from '../support/refusal.js';

function refusal(policy: unknown): PolicyInvalidError {
  try {
    compilePolicy(policy, { currency: 'USDC' });
  } catch (error) {
    if (error instanceof PolicyInvalidError) return error;
    throw error;
  }
  throw new Error('expected policy_invalid');
}

const leaf = (fact: string, operator: string, value: unknown, path?: string) =>
  path === undefined ? { fact, operator, value } : { fact, operator, value, path };
const rule = (conditions: unknown, extra: Record<string, unknown> = {}) => ({
  rules: [{ name: 'r', conditions, ...extra }],
});

describe('bad policies fail compilation with the path of the fault', () => {
  it.each([
    ['not an object', [], 'policy', 'The policy must be an object, not a list.'],
    ['an unknown top-level field', { limit: [] }, 'limit', 'is not a known field'],
    [
      'an unknown operator',
      rule({ all: [leaf('amount', 'like', 1)] }),
      'rules[0].conditions.all[0].operator',
      'must be one of equal',
    ],
    [
      'an unknown fact',
      rule({ any: [leaf('balance', 'equal', 1)] }),
      'rules[0].conditions.any[0].fact',
      'unknown fact',
    ],
    [
      'both allow and block categories',
      { merchantCategories: { allow: ['5812'], block: ['7995'] } },
      'merchantCategories',
      'either allow or block',
    ],
    [
      'neither allow nor block countries',
      { merchantCountries: {} },
      'merchantCountries',
      'either allow or block',
    ],
    [
      'a malformed MCC',
      { merchantCategories: { block: ['5812', '79950'] } },
      'merchantCategories.block[1]',
      'four-digit',
    ],
    [
      'an unknown country',
      { merchantCountries: { allow: ['US', 'UK'] } },
      'merchantCountries.allow[1]',
      'alpha-2',
    ],
    [
      'a limit amount finer than the currency',
      { limits: [{ interval: 'daily', amount: '10.0000001' }] },
      'limits[0].amount',
      'more than 6 decimal places',
    ],
    [
      'a negative limit',
      { limits: [{ interval: 'daily', amount: -5 }] },
      'limits[0].amount',
      'must not be negative',
    ],
    [
      'a limit with a float-rounded amount',
      { limits: [{ interval: 'daily', amount: 0.1 + 0.2 }] },
      'limits[0].amount',
      '15 significant digits',
    ],
    [
      'a limit with amount and count',
      { limits: [{ interval: 'daily', amount: 5, count: 2 }] },
      'limits[0]',
      'either amount or count',
    ],
    [
      'a count limit per transaction',
      { limits: [{ interval: 'perTransaction', count: 2 }] },
      'limits[0].count',
      'calendar interval',
    ],
    [
      'an unknown interval',
      { limits: [{ interval: 'hourly', amount: 5 }] },
      'limits[0].interval',
      'interval must be one of "perTransaction", "daily"',
    ],
    [
      'a malformed money constant',
      rule({ all: [leaf('amount', 'greaterThan', '12,50')] }),
      'rules[0].conditions.all[0].value',
      'decimal string',
    ],
    [
      'a money list with a bad amount',
      rule({ all: [leaf('amount', 'in', ['1', 'x'])] }),
      'rules[0].conditions.all[0].value[1]',
      'decimal string',
    ],
    [
      'a string fact with a number',
      rule({ all: [leaf('mcc', 'equal', 5812)] }),
      'rules[0].conditions.all[0].value',
      'must be a string',
    ],
    [
      'an hour as a string',
      rule({ all: [leaf('hourUtc', 'equal', '8')] }),
      'rules[0].conditions.all[0].value',
      'value must be a number, not a string.',
    ],
    [
      'an ordering operator on a string',
      rule({ all: [leaf('merchantName', 'lessThan', 'b')] }),
      'rules[0].conditions.all[0].operator',
      'does not apply',
    ],
    [
      'contains on a number fact',
      rule({ all: [leaf('amount', 'contains', '1')] }),
      'rules[0].conditions.all[0].operator',
      'only to string facts',
    ],
    [
      'in without a list',
      rule({ all: [leaf('mcc', 'in', '5812')] }),
      'rules[0].conditions.all[0].value',
      'value must be a list for in, not a string.',
    ],
    [
      'a fact reference of another kind',
      rule({ all: [leaf('mcc', 'equal', { fact: 'hourUtc' })] }),
      'rules[0].conditions.all[0].value.fact',
      'fact is an integer fact, which cannot be compared with a string fact.',
    ],
    [
      'a fact reference in a list operator',
      rule({ all: [leaf('mcc', 'in', { fact: 'mcc' })] }),
      'rules[0].conditions.all[0].value',
      'value may name a fact only with equal, notEqual and the ordering operators, not in.',
    ],
    [
      'merchant without path',
      rule({ all: [leaf('merchant', 'equal', 'x')] }),
      'rules[0].conditions.all[0].path',
      'must be one of',
    ],
    [
      'a path on a scalar fact',
      rule({ all: [leaf('mcc', 'equal', '5812', '$.x')] }),
      'rules[0].conditions.all[0].path',
      'only to the merchant',
    ],
    [
      'a missing value',
      rule({ all: [{ fact: 'mcc', operator: 'equal' }] }),
      'rules[0].conditions.all[0].value',
      'is required',
    ],
    [
      'a leaf at the root',
      rule(leaf('mcc', 'equal', '5812')),
      'rules[0].conditions',
      'all, any or not at its top',
    ],
    ['missing conditions', { rules: [{ name: 'r' }] }, 'rules[0].conditions', 'is required'],
    ['an empty all', rule({ all: [] }), 'rules[0].conditions.all', 'all must not be empty.'],
    [
      'a node with two kinds',
      rule({ all: [{ any: [leaf('mcc', 'equal', '5812')], fact: 'mcc' }] }),
      'rules[0].conditions.all[0].fact',
      'is not a known field',
    ],
    [
      'an unknown mode',
      rule({ all: [leaf('mcc', 'equal', '5812')] }, { mode: 'audit' }),
      'rules[0].mode',
      'mode must be one of "enforce", "shadow".',
    ],
    [
      'an action other than decline',
      rule({ all: [leaf('mcc', 'equal', '5812')] }, { action: 'approve' }),
      'rules[0].action',
      'action must be "decline".',
    ],
    [
      'a duplicate rule name',
      {
        rules: [
          { name: 'a', conditions: { all: [leaf('mcc', 'equal', '5812')] } },
          { name: 'a', conditions: { not: leaf('mcc', 'equal', '5812') } },
        ],
      },
      'rules[1].name',
      'unique',
    ],
    [
      'a bad rule name',
      rule({ all: [leaf('mcc', 'equal', '5812')] }, { name: 'limits[0]' }),
      'rules[0].name',
      'letters, digits',
    ],
    [
      'an unknown template',
      { templates: [{ name: 'block-everything' }] },
      'templates[0].name',
      'name must name a template, but no template library was given (options.templates).',
    ],
  ])('%s', (_title, policy, param, message) => {
    const error = refusal(policy);
    expect(error.code).toBe('policy_invalid');
    expect(error.param).toBe(param);
    expect(error.message).toContain(message);
    expectOwnWording(error);
  });
});

describe('bounds', () => {
  const simple = { all: [leaf('mcc', 'equal', '5812')] };

  it(`accepts ${POLICY_BOUNDS.rulesMax} rules and refuses one more`, () => {
    const many = (count: number) => ({
      rules: Array.from({ length: count }, (_, index) => ({
        name: `r${index}`,
        conditions: simple,
      })),
    });
    expect(compilePolicy(many(POLICY_BOUNDS.rulesMax), { currency: 'USDC' }).checks).toHaveLength(
      POLICY_BOUNDS.rulesMax,
    );
    expect(refusal(many(POLICY_BOUNDS.rulesMax + 1)).param).toBe('rules');
  });

  it(`accepts ${POLICY_BOUNDS.conditionsMax} conditions and refuses one more`, () => {
    // 100 rules of 5 nodes (an all with 4 leaves) is exactly 500.
    const fourLeaves = { all: Array.from({ length: 4 }, () => leaf('amount', 'greaterThan', 1)) };
    const policy = (extra: boolean) => ({
      rules: Array.from({ length: POLICY_BOUNDS.rulesMax }, (_, index) => ({
        name: `r${index}`,
        conditions:
          extra && index === 99
            ? { all: [...fourLeaves.all, leaf('amount', 'lessThan', 9)] }
            : fourLeaves,
      })),
    });
    expect(compilePolicy(policy(false), { currency: 'USDC' }).checks).toHaveLength(100);
    const error = refusal(policy(true));
    expect(error.param).toBe('rules[99].conditions.all[4]');
    expect(error.message).toContain('500 conditions');
  });

  it(`accepts depth ${POLICY_BOUNDS.depthMax} and refuses ${POLICY_BOUNDS.depthMax + 1}, whatever the nesting`, () => {
    const nest = (depth: number): unknown => {
      let node: unknown = leaf('mcc', 'equal', '5812');
      for (let level = 1; level < depth; level++) node = { not: node };
      return node;
    };
    expect(() =>
      compilePolicy(rule(nest(POLICY_BOUNDS.depthMax)), { currency: 'USDC' }),
    ).not.toThrow();
    const error = refusal(rule(nest(POLICY_BOUNDS.depthMax + 1)));
    expect(error.param).toBe(`rules[0].conditions${'.not'.repeat(POLICY_BOUNDS.depthMax)}`);
    // A hostile depth costs no more than the bound: no stack overflow, the same typed error.
    const deep = refusal(rule(nest(50_000)));
    expect(deep.message).toContain('nests deeper than 10');
  });

  it(`accepts ${POLICY_BOUNDS.listValuesMax} list values in all and refuses one more`, () => {
    const codes = (count: number) =>
      Array.from({ length: count }, (_, index) => String(index % 10_000).padStart(4, '0'));
    const split = (extra: number) => ({
      merchantCategories: { block: codes(6000) },
      rules: [{ name: 'r', conditions: { all: [leaf('mcc', 'in', codes(4000 + extra))] } }],
    });
    expect(() => compilePolicy(split(0), { currency: 'USDC' })).not.toThrow();
    const error = refusal(split(1));
    expect(error.param).toBe('rules[0].conditions.all[0].value');
    expect(error.message).toContain('10000 list values');
  });
});

describe('error classes and wording', () => {
  it('gives each error class its own name', () => {
    expect(refusal([]).name).toBe('PolicyInvalidError');
    expect(String(refusal([]))).toMatch(/^PolicyInvalidError: /);
    expect(new SpendgateError('invalid_amount').name).toBe('SpendgateError');
    expect(new InvariantError('x').name).toBe('InvariantError');
  });

  it('names the field by its last key and leaves the path to param, for amounts too', () => {
    const error = refusalOf(() => parseAmount('-1', 'USDC', { param: 'transaction.amount' }));
    expect([error.param, error.message]).toEqual([
      'transaction.amount',
      'amount must not be negative.',
    ]);
    const item = refusal({ merchantCategories: { block: ['5812', 'x'] } });
    expect([item.param, item.message]).toEqual([
      'merchantCategories.block[1]',
      'Item 1 of block must be a four-digit merchant category code such as "5812".',
    ]);
  });

  it('says what type was given, in its own words rather than zod', () => {
    expect(refusal({ rules: 5 }).message).toBe('rules must be a list, not an integer.');
    expect(refusal({ limits: [{ interval: 'daily', count: 1.5 }] }).message).toBe(
      'count must be an integer, not 1.5.',
    );
    expect(refusal(rule({ all: [leaf('mcc', 'equal', 5812)] })).message).toBe(
      'value must be a string, not an integer.',
    );
    expect(refusal(rule({ all: [leaf('amount', 'equal', { fact: 'mcc' })] })).message).toBe(
      'fact is a string fact, which cannot be compared with a money fact.',
    );
  });
});
