import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  compilePolicy,
  PolicyInvalidError,
  SpendgateError,
  type CompiledPolicy,
} from '../../src/core/index.js';
import { compilePolicyExact, compilePolicyFast } from '../../src/core/policy/compile.js';
import { readPolicyDocument } from '../../src/core/policy/fast-document.js';
import { ExactPathNeeded } from '../../src/core/policy/parse-with.js';
import { policySchema } from '../../src/core/policy/schema.js';
import { loadRuleLibrary } from '../../src/rule-library/load.js';
import { conditions, mutate } from '../support/policy-arbitraries.js';

/**
 * The compiler's fast mode (hand-read structure, no error paths, plain text only) against its
 * exact mode (zod, full paths), which is the reference: whatever the fast mode compiles, the
 * exact mode compiles to the same document, checks and generated code; and compilePolicy's
 * answer, policy or error, is always the exact mode's.
 */
const templates = loadRuleLibrary();
const options = { currency: 'SOL' as const, templates };

const pool = <T>(...values: T[]) => fc.constantFrom(...values);

/** Text of every kind a policy may hold: plain, and what the fast mode must leave to zod. */
const text: fc.Arbitrary<string> = fc.oneof(
  { weight: 4, arbitrary: fc.string({ minLength: 1, maxLength: 12 }) },
  pool(
    'Casino',
    'm_1',
    'Paris',
    'é',
    '日本',
    '😀',
    'a\u0000b',
    'a\nb',
    '\ud800',
    'x\udfff',
    '\u007f',
  ),
  fc.string({ unit: 'binary', minLength: 1, maxLength: 8 }),
  fc.string({ minLength: 190, maxLength: 210 }),
);

/** Mostly valid values, now and then one that is not: a policy often compiles, not always. */
const mostly = <T, U>(valid: fc.Arbitrary<T>, other: fc.Arbitrary<U>) =>
  fc.oneof({ weight: 30, arbitrary: valid }, { weight: 1, arbitrary: other });

const amount = mostly<string | number, string | number>(
  pool<string | number>('100', '0.5', '2500.25', 7, 1.5),
  fc.oneof(pool<string | number>('1e3', '-1', '0.0000000001', -2, ''), text),
);
const mcc = mostly(pool('5812', '7995', '4829', '0742'), text);
const country = mostly(pool('US', 'FR', 'GB', 'XK'), text);
const interval = mostly(
  pool('daily', 'weekly', 'monthly', 'yearly', 'allTime'),
  pool('perTransaction', 'hourly'),
);

const limit = mostly(
  fc.oneof(
    fc.record(
      {
        interval: mostly(pool('perTransaction'), interval),
        amount,
        merchantCategories: fc.array(mcc, { minLength: 1, maxLength: 3 }),
      },
      { requiredKeys: ['interval', 'amount'] },
    ),
    fc.record({
      interval,
      count: mostly(fc.integer({ min: 0, max: 50 }), pool<unknown>(1.5, 2 ** 53, 1e10, '3', -1)),
    }),
  ),
  fc.record({ interval, amount, count: fc.integer({ min: 0, max: 5 }) }, { requiredKeys: [] }),
);

const codeLists = (code: fc.Arbitrary<string>) =>
  mostly(
    fc.oneof(
      fc.record({ allow: fc.array(code, { minLength: 1, maxLength: 3 }) }),
      fc.record({ block: fc.array(code, { minLength: 1, maxLength: 3 }) }),
    ),
    fc.record(
      { allow: fc.array(code, { maxLength: 3 }), block: fc.array(code, { maxLength: 3 }) },
      { requiredKeys: [] },
    ),
  );

const randomTemplateRef = fc.record(
  {
    name: mostly(pool(...templates.keys()), text),
    params: fc.dictionary(
      pool('amount', 'categories', 'countries', 'startHour', 'endHour', 'count', 'merchantIds'),
      fc.oneof(
        amount,
        fc.integer({ min: -1, max: 30 }),
        fc.array(fc.oneof(mcc, country, text), { maxLength: 3 }),
      ),
      { maxKeys: 2 },
    ),
    mode: mostly(pool('enforce', 'shadow'), pool('audit')),
  },
  { requiredKeys: ['name'] },
);
const mode = mostly(pool('enforce', 'shadow'), pool('audit'));
const templateRef = mostly(
  fc.oneof(
    fc.record({ name: pool('block-gambling', 'weekday-only'), mode }, { requiredKeys: ['name'] }),
    fc.record({
      name: pool('business-hours'),
      params: fc.record({ startHour: fc.integer({ min: 0, max: 23 }) }),
    }),
    fc.record({
      name: pool('daily-cap', 'monthly-cap', 'max-per-transaction'),
      params: fc.record({ amount }),
      mode,
    }),
    fc.record({
      name: pool('block-merchants'),
      params: fc.record({ merchantIds: fc.array(text, { minLength: 1, maxLength: 3 }) }),
    }),
    fc.record({
      name: pool('large-purchase-review'),
      params: fc.record({ amount, countries: fc.array(country, { minLength: 1, maxLength: 2 }) }),
    }),
  ),
  randomTemplateRef,
);

/** A leaf whose value is text, so that text reaches constants, lists and substrings. */
const textLeaf = mostly(
  fc.oneof(
    fc.record({
      fact: pool('merchantName'),
      operator: pool('contains', 'doesNotContain', 'equal'),
      value: text,
    }),
    fc.record({
      fact: pool('merchantId', 'cardId'),
      operator: pool('in', 'notIn'),
      value: fc.array(text, { minLength: 1, maxLength: 3 }),
    }),
    fc.record({
      fact: pool('merchant'),
      path: pool('$.city', '$.name'),
      operator: pool('equal', 'notEqual'),
      value: text,
    }),
  ),
  fc.record({
    fact: pool('merchantName', 'merchantId', 'cardId', 'mcc', 'merchantCountry', 'merchant'),
    operator: pool('equal', 'notEqual', 'in', 'notIn', 'contains', 'doesNotContain'),
    value: fc.oneof(text, fc.array(text, { minLength: 1, maxLength: 3 })),
    path: pool('$.name', '$.city', '$.id', undefined),
  }),
);

const rule = fc.record(
  {
    name: mostly(pool('r', 'rule-1', 'a.b:c_d', '9lives'), text),
    action: mostly(pool('decline'), pool('approve')),
    mode: mostly(pool('enforce', 'shadow'), pool('audit')),
    message: mostly(fc.string({ minLength: 1, maxLength: 30 }), text),
    conditions: fc.oneof(
      conditions,
      fc.record({ any: fc.array(textLeaf, { minLength: 1, maxLength: 3 }) }),
    ),
  },
  { requiredKeys: ['name', 'conditions'] },
);

const policy = fc
  .record(
    {
      limits: fc.array(limit, { maxLength: 3 }),
      merchantCategories: codeLists(mcc),
      merchantCountries: codeLists(country),
      templates: fc.array(templateRef, { maxLength: 2 }),
      rules: fc.array(rule, { maxLength: 4 }),
    },
    { requiredKeys: [] },
  )
  // Rule names unique but now and then (a repeated name is refused).
  .chain((document) =>
    fc.boolean().map((repeat) => {
      if (repeat || document.rules === undefined) return document;
      return {
        ...document,
        rules: document.rules.map((r, i) => ({ ...r, name: `${r.name}-${i}` })),
      };
    }),
  );

/** Adds a key to one object node of a JSON tree: every strict object must refuse it. */
function addKey(tree: unknown, pick: number, key: string, value: unknown): unknown {
  let index = 0;
  const walk = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(walk);
    if (typeof node === 'object' && node !== null) {
      const copy: Record<string, unknown> = Object.fromEntries(
        Object.entries(node).map(([k, v]) => [k, walk(v)]),
      );
      // An own key even for __proto__, as JSON.parse makes one.
      if (index++ === pick) {
        Object.defineProperty(copy, key, {
          value,
          enumerable: true,
          writable: true,
          configurable: true,
        });
      }
      return copy;
    }
    return node;
  };
  return walk(tree);
}

/** An object that is not plain JSON: zod reads it, the fast mode leaves it to zod. */
class Thing {
  readonly kind = 'thing';
}

const oddValue = fc.oneof(
  fc.jsonValue({ maxDepth: 2 }),
  pool(
    undefined,
    JSON.parse('{"__proto__": {"all": []}}') as unknown,
    Object.create(null) as unknown,
    new Thing(),
    [undefined],
    { all: [{ fact: 'amount', operator: 'equal', value: '1' }], extra: 1 },
  ),
);

const anyPolicy = fc.oneof(
  { weight: 3, arbitrary: policy },
  fc
    .tuple(policy, fc.nat({ max: 120 }), oddValue)
    .map(([valid, pick, replacement]) => mutate(valid, pick, replacement)),
  fc
    .tuple(
      policy,
      fc.nat({ max: 40 }),
      pool(
        'extra',
        'fact',
        'value',
        'path',
        'all',
        'not',
        'mode',
        'message',
        'params',
        '__proto__',
      ),
      oddValue,
    )
    .map(([valid, pick, key, value]) => addKey(valid, pick, key, value)),
  fc.jsonValue({ maxDepth: 3 }),
);

function outcome(compile: () => CompiledPolicy): unknown {
  try {
    const compiled = compile();
    return {
      document: JSON.stringify(compiled.document),
      checks: compiled.checks.map(({ rule, message, mode, decision, match }) => ({
        rule,
        message,
        mode,
        decision,
        match,
      })),
      shadowChecks: compiled.shadowChecks.map(({ rule, message, mode }) => ({
        rule,
        message,
        mode,
      })),
      aggregates: compiled.aggregates,
      code: [compiled.firstDecline, compiled.shadowMatches, compiled.firstLimitDecline].map(String),
    };
  } catch (error) {
    if (!(error instanceof SpendgateError)) throw error;
    return { code: error.code, message: error.message, param: error.param };
  }
}

function fastOutcome(input: unknown): unknown {
  try {
    return outcome(() => compilePolicyFast(input, options));
  } catch (error) {
    if (error instanceof ExactPathNeeded) return 'gave up';
    throw error;
  }
}

function isRefusal(value: unknown): boolean {
  return typeof value === 'object' && value !== null && 'param' in value;
}

describe('the fast compile', () => {
  it('compiles exactly what the exact mode compiles, to the same policy, or gives up', () => {
    let compiled = 0;
    fc.assert(
      fc.property(anyPolicy, (input) => {
        const fast = fastOutcome(input);
        const exact = outcome(() => compilePolicyExact(input, options));
        if (fast !== 'gave up' && !isRefusal(fast)) {
          compiled++;
          expect(fast).toEqual(exact);
        }
        // The entry's answer is always the exact mode's, error message and param included.
        expect(outcome(() => compilePolicy(input, options))).toEqual(exact);
      }),
      { numRuns: 4000 },
    );
    // The generators must reach the fast path, or this test proves nothing.
    expect(compiled).toBeGreaterThan(200);
  });

  it('takes the valid policies of the other property tests without giving up', () => {
    fc.assert(
      fc.property(fc.array(conditions, { minLength: 1, maxLength: 5 }), (trees) => {
        const input = {
          rules: trees.map((tree, index) => ({ name: `r${index}`, conditions: tree })),
        };
        expect(fastOutcome(input)).toEqual(outcome(() => compilePolicyExact(input, options)));
      }),
      { numRuns: 500 },
    );
  });

  it('reads a document as zod does, key order and defaults included, or leaves it to zod', () => {
    // Plain text only: the schema's text check is then passed by both readings alike.
    const plainText = (text: string): boolean => {
      for (let index = 0; index < text.length; index++) {
        const code = text.charCodeAt(index);
        if (code < 0x20 || code === 0x7f || (code >= 0xd800 && code <= 0xdfff)) return false;
      }
      return true;
    };
    const plain = (value: unknown): boolean => {
      if (typeof value === 'string') return plainText(value);
      if (Array.isArray(value)) return value.every(plain);
      if (typeof value !== 'object' || value === null) return true;
      return Object.entries(value).every(([key, item]) => plainText(key) && plain(item));
    };
    let read = 0;
    fc.assert(
      fc.property(anyPolicy, (input) => {
        fc.pre(plain(input));
        const fast = readPolicyDocument(input);
        if (fast === null) return;
        read++;
        const parsed = policySchema.safeParse(input);
        expect(parsed.success).toBe(true);
        expect(JSON.stringify(fast)).toBe(JSON.stringify(parsed.data));
        expect(fast).toStrictEqual(parsed.data);
      }),
      { numRuns: 4000 },
    );
    expect(read).toBeGreaterThan(200);
  });

  it('gives way to the exact mode on text that is not plain, wherever a policy holds it', () => {
    const odd = pool('a\u0000b', '\ud800', 'x\udfffy', 'a\u0001', 'tab\there', 'del\u007f');
    const places = [
      (t: string) => ({ rules: [{ name: 'r', message: t, conditions: { not: LEAF } }] }),
      (t: string) => ({
        rules: [
          {
            name: 'r',
            conditions: { all: [{ fact: 'merchantName', operator: 'equal', value: t }] },
          },
        ],
      }),
      (t: string) => ({
        rules: [
          {
            name: 'r',
            conditions: { any: [{ fact: 'merchantId', operator: 'in', value: ['m', t] }] },
          },
        ],
      }),
      (t: string) => ({
        rules: [
          {
            name: 'r',
            conditions: { any: [{ fact: 'merchantName', operator: 'contains', value: t }] },
          },
        ],
      }),
      (t: string) => ({ templates: [{ name: 'block-merchants', params: { merchantIds: [t] } }] }),
    ];
    fc.assert(
      fc.property(odd, fc.nat({ max: places.length - 1 }), (t, place) => {
        const input = (places[place] as (t: string) => unknown)(t);
        expect(fastOutcome(input)).toBe('gave up');
        const exact = outcome(() => compilePolicyExact(input, options));
        expect(outcome(() => compilePolicy(input, options))).toEqual(exact);
      }),
    );
  });

  it('refuses through the exact mode, with its error', () => {
    const error = (() => {
      try {
        compilePolicy({ rules: [{ name: 'r', conditions: { all: [{ fact: 'nope' }] } }] }, options);
      } catch (caught) {
        return caught;
      }
      return undefined;
    })();
    expect(error).toBeInstanceOf(PolicyInvalidError);
    expect((error as PolicyInvalidError).param).toBe('rules[0].conditions.all[0].operator');
  });
});

const LEAF = { fact: 'amount', operator: 'greaterThan', value: '1' };
