import fc from 'fast-check';

/**
 * Random valid policies and facts for the property tests. Values are drawn from small pools so
 * that conditions hold about as often as they fail: a generator whose conditions never match
 * would let a wrong evaluator agree with the reference by accident.
 */

export const MONEY_FACTS = ['amount', 'spentDaily', 'spentWeekly', 'spentMonthly'] as const;
export const INTEGER_FACTS = {
  hourUtc: [0, 23],
  dayOfWeekUtc: [1, 7],
  countDaily: [0, 30],
} as const;
const STRING_POOLS = {
  mcc: ['5812', '5814', '7995', '6011', '5411', '4829'],
  merchantCountry: ['US', 'CA', 'GB', 'FR', 'IR'],
  merchantName: ['Cafe Rio', 'Casino Royale', 'casino', 'ACME Corp', 'Shop'],
  merchantId: ['m_1', 'm_2', 'm_3'],
  cardId: ['card_a', 'card_b'],
  currency: ['USDC', 'SOL'],
  city: ['Austin', 'Paris', 'London'],
} as const;
const MERCHANT_PATHS = {
  '$.name': 'merchantName',
  '$.mcc': 'mcc',
  '$.country': 'merchantCountry',
  '$.city': 'city',
  '$.id': 'merchantId',
} as const;
const STRING_FACTS = [
  'mcc',
  'merchantCountry',
  'merchantName',
  'merchantId',
  'cardId',
  'currency',
] as const;
const SUBSTRINGS = ['Casino', 'casino', 'Rio', 'o', 'm_', '1', '58', 'US', 'z'];

/** Decimal strings with up to 6 fraction digits, clustered near a few round values. */
export const decimalString: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom('0', '1', '1.5', '1.50', '10', '100', '100.000001', '200', '250.75'),
  fc
    .tuple(fc.integer({ min: 0, max: 1_000_000 }), fc.integer({ min: 0, max: 6 }), fc.nat())
    .map(([whole, places, seed]) => {
      if (places === 0) return String(whole);
      const fraction = String(seed % 10 ** places).padStart(places, '0');
      return `${whole}.${fraction}`;
    }),
);

/**
 * A comparison constant beyond what an amount can be: negative, or finer than any currency
 * (up to 12 fraction digits), as a condition may write it since json-rules-engine would.
 */
const outOfRangeDecimal: fc.Arbitrary<string> = fc.oneof(
  decimalString.map((text) => (text === '0' ? '-1' : `-${text}`)),
  fc
    .tuple(fc.integer({ min: 0, max: 1000 }), fc.integer({ min: 7, max: 12 }), fc.nat())
    .map(([whole, places, seed]) => {
      const fraction = String((seed % 10 ** places) + 1).padStart(places, '0');
      return `${whole}.${fraction}`;
    }),
);

/**
 * A money constant as a policy may write it: a decimal string, or the JSON number of the same
 * value (exact: the strings above have at most 13 significant digits); now and then one no
 * amount can equal.
 */
const moneyValue: fc.Arbitrary<string | number> = fc
  .oneof({ weight: 5, arbitrary: decimalString }, { weight: 1, arbitrary: outOfRangeDecimal })
  .chain((text) =>
    fc.constantFrom<string | number>(
      text,
      // A number only where the double holds the text exactly (at most 15 digits).
      text.replace(/^-?0*\.?0*/, '').replace('.', '').length <= 15 ? Number(text) : text,
    ),
  );

type Json = unknown;

/** Written out here, not imported from the core, so the generator does not share its bugs. */
const comparisonOperator = fc.constantFrom(
  'equal',
  'notEqual',
  'lessThan',
  'lessThanInclusive',
  'greaterThan',
  'greaterThanInclusive',
);

/** A fact a number fact may be compared with: a money or an integer one, as json-rules-engine compares numbers. */
const numberFactRef = fc.record({
  fact: fc.constantFrom(
    ...MONEY_FACTS,
    ...(Object.keys(INTEGER_FACTS) as (keyof typeof INTEGER_FACTS)[]),
  ),
});

function moneyLeaf(): fc.Arbitrary<Json> {
  return fc.oneof(
    fc.record({
      fact: fc.constantFrom(...MONEY_FACTS),
      operator: comparisonOperator,
      value: fc.oneof(moneyValue, numberFactRef),
    }),
    fc.record({
      fact: fc.constantFrom(...MONEY_FACTS),
      operator: fc.constantFrom('in', 'notIn'),
      // Empty lists too: `in []` never holds, `notIn []` always does.
      value: fc.array(moneyValue, { minLength: 0, maxLength: 4 }),
    }),
  );
}

function integerLeaf(): fc.Arbitrary<Json> {
  const facts = Object.keys(INTEGER_FACTS) as (keyof typeof INTEGER_FACTS)[];
  return fc.constantFrom(...facts).chain((fact) => {
    const [min, max] = INTEGER_FACTS[fact];
    // Mostly within the fact's range; now and then outside it, or not an integer at all
    // (`countDaily greaterThan -1`, `hourUtc lessThan 8.5`), which compare as numbers do.
    const value = fc.oneof(
      { weight: 6, arbitrary: fc.integer({ min, max }) },
      { weight: 1, arbitrary: fc.integer({ min: min - 3, max: max + 3 }) },
      { weight: 1, arbitrary: fc.integer({ min: min - 1, max }).map((whole) => whole + 0.5) },
    );
    return fc.oneof(
      fc.record({
        fact: fc.constant(fact),
        operator: comparisonOperator,
        value: fc.oneof(value, numberFactRef),
      }),
      fc.record({
        fact: fc.constant(fact),
        operator: fc.constantFrom('in', 'notIn'),
        value: fc.array(value, { minLength: 0, maxLength: 4 }),
      }),
    );
  });
}

/** A string fact reference: a plain fact, or the merchant object with a path. */
const stringRef: fc.Arbitrary<{ fact: string; path?: string; pool: readonly string[] }> = fc.oneof(
  fc.constantFrom(...STRING_FACTS).map((fact) => ({ fact, pool: STRING_POOLS[fact] })),
  fc
    .constantFrom(...(Object.keys(MERCHANT_PATHS) as (keyof typeof MERCHANT_PATHS)[]))
    .map((path) => ({
      fact: 'merchant',
      path,
      pool: STRING_POOLS[MERCHANT_PATHS[path]],
    })),
);

function stringLeaf(): fc.Arbitrary<Json> {
  return stringRef.chain(({ fact, path, pool }) => {
    const head = path === undefined ? { fact } : { fact, path };
    const value = fc.constantFrom(...pool);
    return fc
      .oneof(
        fc.record({
          operator: fc.constantFrom('equal', 'notEqual'),
          value: fc.oneof(
            value,
            stringRef.map((ref) =>
              ref.path === undefined ? { fact: ref.fact } : { fact: ref.fact, path: ref.path },
            ),
          ),
        }),
        fc.record({
          operator: fc.constantFrom('in', 'notIn'),
          value: fc.array(value, { minLength: 0, maxLength: 4 }),
        }),
        fc.record({
          operator: fc.constantFrom('contains', 'doesNotContain'),
          value: fc.constantFrom(...SUBSTRINGS),
        }),
      )
      .map((rest) => ({ ...head, ...rest }));
  });
}

/** A condition tree of bounded depth, rooted (as json-rules-engine requires) in all/any/not. */
export const conditions: fc.Arbitrary<Json> = fc.letrec<{ node: Json; root: Json }>((tie) => ({
  node: fc.oneof(
    // Root (depth 1) plus at most 8 levels: within the policy bound of 10.
    { depthSize: 'small', withCrossShrink: true, maxDepth: 8, depthIdentifier: 'condition' },
    moneyLeaf(),
    integerLeaf(),
    stringLeaf(),
    fc.record({ all: fc.array(tie('node'), { minLength: 1, maxLength: 4 }) }),
    fc.record({ any: fc.array(tie('node'), { minLength: 1, maxLength: 4 }) }),
    fc.record({ not: tie('node') }),
  ),
  root: fc.oneof(
    fc.record({ all: fc.array(tie('node'), { minLength: 1, maxLength: 4 }) }),
    fc.record({ any: fc.array(tie('node'), { minLength: 1, maxLength: 4 }) }),
    fc.record({ not: tie('node') }),
  ),
})).root;

export interface GeneratedRule {
  name: string;
  mode: 'enforce' | 'shadow';
  conditions: Json;
}

export const rules: fc.Arbitrary<GeneratedRule[]> = fc
  .array(fc.tuple(fc.constantFrom<'enforce' | 'shadow'>('enforce', 'shadow'), conditions), {
    minLength: 1,
    maxLength: 8,
  })
  .map((list) =>
    list.map(([mode, tree], index) => ({ name: `rule-${index}`, mode, conditions: tree })),
  );

export interface GeneratedFacts {
  amount: string;
  spentDaily: string;
  spentWeekly: string;
  spentMonthly: string;
  countDaily: number;
  nowMs: number;
  currency: string;
  cardId: string;
  merchant: { name: string; mcc: string; country: string; city?: string; id?: string };
}

const optional = <T>(arb: fc.Arbitrary<T>): fc.Arbitrary<T | undefined> =>
  fc.option(arb, { nil: undefined });

export const facts: fc.Arbitrary<GeneratedFacts> = fc.record({
  amount: decimalString,
  spentDaily: decimalString,
  spentWeekly: decimalString,
  spentMonthly: decimalString,
  countDaily: fc.integer({ min: 0, max: 30 }),
  nowMs: fc.integer({ min: Date.UTC(2020, 0, 1), max: Date.UTC(2030, 0, 1) }),
  currency: fc.constantFrom(...STRING_POOLS.currency),
  cardId: fc.constantFrom(...STRING_POOLS.cardId),
  merchant: fc
    .record({
      name: fc.constantFrom(...STRING_POOLS.merchantName),
      mcc: fc.constantFrom(...STRING_POOLS.mcc),
      country: fc.constantFrom(...STRING_POOLS.merchantCountry),
      city: optional(fc.constantFrom(...STRING_POOLS.city)),
      id: optional(fc.constantFrom(...STRING_POOLS.merchantId)),
    })
    .map(({ city, id, ...rest }) => ({
      ...rest,
      ...(city === undefined ? {} : { city }),
      ...(id === undefined ? {} : { id }),
    })),
});

/** Replaces the node at depth-first position `pick` of a JSON tree with `replacement`. */
export function mutate(tree: unknown, pick: number, replacement: unknown): unknown {
  let index = 0;
  const walk = (node: unknown): unknown => {
    if (index++ === pick) return replacement;
    if (Array.isArray(node)) return node.map(walk);
    if (typeof node === 'object' && node !== null) {
      return Object.fromEntries(Object.entries(node).map(([key, value]) => [key, walk(value)]));
    }
    return node;
  };
  return walk(tree);
}
