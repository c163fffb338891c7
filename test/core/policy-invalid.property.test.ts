import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compilePolicy, PolicyInvalidError } from '../../src/core/index.js';
import { loadRuleLibrary } from '../../src/rule-library/load.js';
import { conditions, mutate, rules } from '../support/policy-arbitraries.js';
import { expectOwnWording } from '../support/refusal.js';

/**
 * Whatever JSON arrives, compilation either succeeds or throws a PolicyInvalidError whose
 * `param` points into the input: never a TypeError, a RangeError or a zod error.
 */
const templates = loadRuleLibrary();

function parsePath(param: string): (string | number)[] {
  const keys: (string | number)[] = [];
  for (const part of param.matchAll(/\[("(?:[^"\\]|\\.)*")\]|\[(\d+)\]|([^.[\]]+)/g)) {
    if (part[1] !== undefined) keys.push(JSON.parse(part[1]) as string);
    else if (part[2] !== undefined) keys.push(Number(part[2]));
    else keys.push(part[3] as string);
  }
  return keys;
}

/** The path's parent must exist in the input: the fault is at a place the client wrote. */
function parentExists(input: unknown, param: string): boolean {
  if (param === 'policy') return true;
  const keys = parsePath(param);
  let node: unknown = input;
  for (const key of keys.slice(0, -1)) {
    if (typeof node !== 'object' || node === null || !Object.hasOwn(node, key)) return false;
    node = (node as Record<string | number, unknown>)[key];
  }
  return true;
}

function compileOrRefuse(input: unknown): void {
  try {
    compilePolicy(input, { currency: 'SOL', templates });
  } catch (error) {
    expect(error).toBeInstanceOf(PolicyInvalidError);
    const refusal = error as PolicyInvalidError;
    expect(refusal.code).toBe('policy_invalid');
    expect(refusal.param).toBeTypeOf('string');
    expectOwnWording(refusal);
    expect(parentExists(input, refusal.param ?? ''), refusal.param).toBe(true);
  }
}

const pool = <T>(...values: T[]) => fc.constantFrom(...values);

describe('compilation never throws anything untyped', () => {
  it('for any JSON value', () => {
    fc.assert(fc.property(fc.jsonValue(), compileOrRefuse), { numRuns: 3000 });
  });

  it('for valid policies with one node replaced by arbitrary JSON', () => {
    const policy = fc.record({
      rules,
      limits: fc.constant([
        { interval: 'daily', amount: '100' },
        { interval: 'weekly', count: 5 },
      ]),
      merchantCategories: fc.constant({ block: ['7995'] }),
      templates: fc.constant([
        { name: 'business-hours', params: { startHour: 8 } },
        { name: 'daily-cap', params: { amount: '50' } },
      ]),
    });
    fc.assert(
      fc.property(
        policy,
        fc.nat({ max: 200 }),
        fc.jsonValue({ maxDepth: 3 }),
        (valid, pick, replacement) => {
          compileOrRefuse(mutate(valid, pick, replacement));
        },
      ),
      { numRuns: 3000 },
    );
  });

  it('for leaves with plausible but unchecked facts, operators, paths and values', () => {
    const leaf = fc.record(
      {
        fact: fc.oneof(
          pool(
            'amount',
            'mcc',
            'merchant',
            'hourUtc',
            'countDaily',
            'merchantId',
            'toString',
            '__proto__',
          ),
          fc.string(),
        ),
        operator: fc.oneof(
          pool('equal', 'in', 'contains', 'lessThan', 'notIn', 'doesNotContain'),
          fc.string(),
        ),
        value: fc.oneof(
          fc.jsonValue({ maxDepth: 2 }),
          fc.record({ fact: pool('amount', 'mcc', 'nope') }),
        ),
        path: pool('$.name', '$.city', '$', '$..*', 'name'),
      },
      { requiredKeys: [] },
    );
    fc.assert(
      fc.property(fc.array(leaf, { minLength: 1, maxLength: 4 }), (leaves) => {
        compileOrRefuse({ rules: [{ name: 'r', conditions: { any: leaves } }] });
      }),
      { numRuns: 3000 },
    );
  });

  it('for template references with arbitrary parameters', () => {
    const reference = fc.record({
      name: pool(...templates.keys(), 'nope'),
      params: fc.dictionary(
        pool('amount', 'categories', 'countries', 'startHour', 'count', 'merchantIds', 'x'),
        fc.jsonValue({ maxDepth: 1 }),
      ),
    });
    fc.assert(
      fc.property(fc.array(reference, { maxLength: 3 }), (refs) => {
        compileOrRefuse({ templates: refs });
      }),
      {
        numRuns: 2000,
      },
    );
  });

  it('valid random condition trees always compile', () => {
    fc.assert(
      fc.property(conditions, (tree) => {
        expect(
          compilePolicy({ rules: [{ name: 'r', conditions: tree }] }, { currency: 'USDC' }).checks,
        ).toHaveLength(1);
      }),
      { numRuns: 1000 },
    );
  });
});
