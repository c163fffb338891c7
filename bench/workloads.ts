import type { Engine } from 'json-rules-engine';
import { Decimal, type DecisionInput, type Merchant } from '../src/core/index.js';
import { referenceEngineBase, rewriteMoney } from '../test/support/reference-engine.js';

/**
 * The benchmark workloads, each as a spendgate policy and as the same rules for
 * json-rules-engine, so both engines do the same work. `test/bench-workloads.test.ts` checks
 * that they reach the same decisions before any figure is trusted.
 */

// 50 MCCs a conservative program blocks: gambling, cash, quasi-cash, transfers, adult, ...
export const BLOCKED_MCCS = [
  '4829',
  '5933',
  '5935',
  '5937',
  '5960',
  '5961',
  '5962',
  '5963',
  '5964',
  '5965',
  '5966',
  '5967',
  '5968',
  '5969',
  '5993',
  '6010',
  '6011',
  '6012',
  '6050',
  '6051',
  '6211',
  '6300',
  '6381',
  '6399',
  '6513',
  '6529',
  '6530',
  '6531',
  '6532',
  '6533',
  '6534',
  '6535',
  '6536',
  '6537',
  '6538',
  '6540',
  '7273',
  '7276',
  '7277',
  '7297',
  '7321',
  '7322',
  '7361',
  '7375',
  '7399',
  '7631',
  '7995',
  '8651',
  '9222',
  '9311',
];
export const ALLOWED_COUNTRIES = ['US', 'CA', 'GB', 'DE', 'FR', 'NL', 'IE', 'ES', 'IT', 'AU'];

const leaf = (fact: string, operator: string, value: unknown, path?: string) =>
  path === undefined ? { fact, operator, value } : { fact, operator, value, path };

/** 20 custom rules of the kind card programs write: thresholds crossed with context. */
export const CUSTOM_RULES = [
  {
    name: 'big-restaurant',
    conditions: {
      all: [leaf('amount', 'greaterThan', '250'), leaf('mcc', 'in', ['5812', '5813', '5814'])],
    },
  },
  {
    name: 'casino-name',
    conditions: {
      any: [leaf('merchantName', 'contains', 'CASINO'), leaf('merchantName', 'contains', 'Casino')],
    },
  },
  {
    name: 'night-spend',
    conditions: {
      all: [leaf('amount', 'greaterThanInclusive', '100'), leaf('hourUtc', 'lessThan', 6)],
    },
  },
  { name: 'las-vegas', conditions: { all: [leaf('merchant', 'equal', 'Las Vegas', '$.city')] } },
  {
    name: 'weekend-big',
    conditions: { all: [leaf('amount', 'greaterThan', '150'), leaf('dayOfWeekUtc', 'in', [6, 7])] },
  },
  {
    name: 'hot-day',
    conditions: {
      all: [leaf('spentDaily', 'greaterThan', '1500'), leaf('amount', 'greaterThan', '50')],
    },
  },
  {
    name: 'busy-day',
    conditions: {
      all: [leaf('countDaily', 'greaterThanInclusive', 15), leaf('amount', 'greaterThan', '20')],
    },
  },
  {
    name: 'fraud-merchants',
    conditions: {
      all: [
        leaf(
          'merchantId',
          'in',
          Array.from({ length: 10 }, (_, index) => `m_fraud_${index}`),
        ),
      ],
    },
  },
  {
    name: 'wires',
    conditions: { any: [leaf('mcc', 'equal', '4829'), leaf('merchantName', 'contains', 'WIRE')] },
  },
  {
    name: 'foreign-big',
    conditions: {
      all: [leaf('amount', 'greaterThan', '400'), leaf('merchantCountry', 'notIn', ['US'])],
    },
  },
  {
    name: 'weekly-heavy',
    conditions: {
      all: [leaf('spentWeekly', 'greaterThan', '8000'), leaf('amount', 'greaterThan', '100')],
    },
  },
  {
    name: 'monthly-heavy',
    conditions: {
      all: [leaf('spentMonthly', 'greaterThan', '25000'), leaf('amount', 'greaterThan', '100')],
    },
  },
  {
    name: 'gift-cards',
    conditions: {
      all: [leaf('merchantName', 'contains', 'GIFT'), leaf('amount', 'greaterThan', '50')],
    },
  },
  {
    name: 'airline-cap',
    conditions: {
      all: [
        leaf('mcc', 'in', ['3000', '3001', '3005', '4511']),
        leaf('amount', 'greaterThan', '1500'),
      ],
    },
  },
  {
    name: 'hotel-cap',
    conditions: {
      all: [leaf('mcc', 'in', ['3501', '3502', '7011']), leaf('amount', 'greaterThan', '800')],
    },
  },
  {
    name: 'fuel-cap',
    conditions: {
      all: [leaf('mcc', 'in', ['5541', '5542']), leaf('amount', 'greaterThan', '200')],
    },
  },
  {
    name: 'round-amounts',
    conditions: {
      all: [
        leaf('amount', 'in', ['100', '200', '300', '400', '500']),
        leaf('merchantCountry', 'notIn', ['US', 'CA']),
      ],
    },
  },
  { name: 'not-usdc', conditions: { not: leaf('currency', 'equal', 'USDC') } },
  {
    name: 'late-and-far',
    conditions: {
      all: [leaf('hourUtc', 'greaterThan', 22), leaf('merchantCountry', 'notIn', ['US'])],
    },
  },
  {
    name: 'velocity-big',
    conditions: {
      all: [
        leaf('countDaily', 'greaterThan', 5),
        leaf('amount', 'greaterThan', { fact: 'spentDaily' }),
      ],
    },
  },
];

export const REALISTIC_POLICY = {
  limits: [
    { interval: 'perTransaction', amount: '500' },
    { interval: 'daily', amount: '2000' },
    { interval: 'monthly', amount: '300', merchantCategories: ['5812'] },
    { interval: 'daily', count: 20 },
  ],
  merchantCategories: { block: BLOCKED_MCCS },
  merchantCountries: { allow: ALLOWED_COUNTRIES },
  templates: [
    { name: 'block-gambling' },
    { name: 'business-hours', params: { startHour: 6, endHour: 22 } },
    { name: 'large-purchase-review', params: { amount: '1000' } },
  ],
  rules: CUSTOM_RULES,
};

export interface WorkloadFacts {
  amount: string;
  mcc: string;
  country: string;
  name: string;
  city?: string;
  merchantId?: string;
  nowMs: number;
  spentDaily: string;
  spentWeekly: string;
  spentMonthly: string;
  spentMonthlyAt5812: string;
  countDaily: number;
}

/** An ordinary approved purchase: every check runs, none declines (the common, slowest case). */
export const ORDINARY_PURCHASE: WorkloadFacts = {
  amount: '42.50',
  mcc: '5411',
  country: 'US',
  name: 'Whole Foods',
  city: 'Austin',
  merchantId: 'm_wf_1',
  nowMs: Date.UTC(2026, 10, 18, 15, 30),
  spentDaily: '310.25',
  spentWeekly: '1200',
  spentMonthly: '4800.75',
  spentMonthlyAt5812: '120',
  countDaily: 4,
};

function merchantOf(facts: WorkloadFacts): Merchant {
  return {
    name: facts.name,
    mcc: facts.mcc,
    country: facts.country,
    city: facts.city,
    id: facts.merchantId,
  };
}

export function spendgateInput(facts: WorkloadFacts): Omit<DecisionInput, 'policy'> {
  return {
    card: { id: 'card_1', vaultId: 'vlt_1', status: 'active' },
    vault: { id: 'vlt_1', status: 'active', currency: 'USDC', available: new Decimal('100000') },
    spend: {
      'amount:daily': new Decimal(facts.spentDaily),
      'amount:weekly': new Decimal(facts.spentWeekly),
      'amount:monthly': new Decimal(facts.spentMonthly),
      'amount:monthly:5812': new Decimal(facts.spentMonthlyAt5812),
      'count:daily': facts.countDaily,
    },
    nowMs: facts.nowMs,
    request: {
      cardId: 'card_1',
      amount: new Decimal(facts.amount),
      currency: 'USDC',
      merchant: merchantOf(facts),
    },
  };
}

export function referenceFacts(facts: WorkloadFacts): Record<string, unknown> {
  const now = new Date(facts.nowMs);
  const day = now.getUTCDay();
  return {
    amount: facts.amount,
    currency: 'USDC',
    mcc: facts.mcc,
    merchantCountry: facts.country,
    merchantName: facts.name,
    merchantId: facts.merchantId,
    cardId: 'card_1',
    hourUtc: now.getUTCHours(),
    dayOfWeekUtc: day === 0 ? 7 : day,
    spentDaily: facts.spentDaily,
    spentWeekly: facts.spentWeekly,
    spentMonthly: facts.spentMonthly,
    spentMonthlyAt5812: facts.spentMonthlyAt5812,
    countDaily: facts.countDaily,
    merchant: merchantOf(facts),
  };
}

const MONEY = new Set([
  'amount',
  'spentDaily',
  'spentWeekly',
  'spentMonthly',
  'projectedDaily',
  'projectedMonthlyAt5812',
]);

/** A rule as json-rules-engine and fast-json-rules-engine read it. */
export interface ReferenceRule {
  readonly name: string;
  readonly priority: number;
  readonly conditions: unknown;
  readonly event: { readonly type: string };
}

/**
 * Workload 1's rules for a json-rules-engine-format engine: the same checks in the same order,
 * limits through derived facts (`projectedDaily`, `projectedMonthlyAt5812`: spend plus this
 * amount), the templates written out as the rules they expand to, money compared by the
 * `decimal:` operators (test/support/reference-engine.ts).
 */
export function realisticReferenceRules(): ReferenceRule[] {
  const rules: { name: string; conditions: unknown }[] = [
    { name: 'merchantCategories', conditions: { all: [leaf('mcc', 'in', BLOCKED_MCCS)] } },
    {
      name: 'merchantCountries',
      conditions: { all: [leaf('merchantCountry', 'notIn', ALLOWED_COUNTRIES)] },
    },
    { name: 'limits[0]', conditions: { all: [leaf('amount', 'greaterThan', '500')] } },
    { name: 'limits[1]', conditions: { all: [leaf('projectedDaily', 'greaterThan', '2000')] } },
    {
      name: 'limits[2]',
      conditions: {
        all: [leaf('mcc', 'in', ['5812']), leaf('projectedMonthlyAt5812', 'greaterThan', '300')],
      },
    },
    { name: 'limits[3]', conditions: { all: [leaf('countDaily', 'greaterThanInclusive', 20)] } },
    {
      name: 'block-gambling',
      conditions: { all: [leaf('mcc', 'in', ['7995', '7800', '7801', '7802', '9406'])] },
    },
    {
      name: 'business-hours',
      conditions: { any: [leaf('hourUtc', 'lessThan', 6), leaf('hourUtc', 'greaterThan', 22)] },
    },
    {
      name: 'large-purchase-review',
      conditions: {
        all: [
          leaf('amount', 'greaterThanInclusive', '1000'),
          leaf('merchantCountry', 'notIn', ['US']),
        ],
      },
    },
    ...CUSTOM_RULES,
  ];
  return inReferenceFormat(rules);
}

/**
 * Rules as json-rules-engine's format writes them: money compared by the `decimal:` operators,
 * and priorities that make the engines report rules in policy order (higher runs first).
 */
function inReferenceFormat(
  rules: readonly { readonly name: string; readonly conditions: unknown }[],
): ReferenceRule[] {
  return rules.map((rule, index) => ({
    name: rule.name,
    priority: rules.length - index,
    conditions: rewriteMoney(rule.conditions, MONEY),
    event: { type: rule.name },
  }));
}

/**
 * Workload 1's derived facts, computed as json-rules-engine's facts below compute them: for an
 * engine without computed facts (fast-json-rules-engine), on each call.
 */
export function withProjections(facts: Record<string, unknown>): Record<string, unknown> {
  const amount = facts.amount as string;
  return {
    ...facts,
    projectedDaily: new Decimal(facts.spentDaily as string).plus(amount).toFixed(),
    projectedMonthlyAt5812: new Decimal(facts.spentMonthlyAt5812 as string).plus(amount).toFixed(),
  };
}

/** Workload 1 for json-rules-engine: its rules, the derived facts computed as it asks. */
export function realisticReferenceEngine(): Engine {
  const engine = referenceEngineBase();
  engine.addFact('projectedDaily', async (_params, almanac) => {
    const [spent, amount] = await Promise.all([
      almanac.factValue<string>('spentDaily'),
      almanac.factValue<string>('amount'),
    ]);
    return new Decimal(spent).plus(amount).toFixed();
  });
  engine.addFact('projectedMonthlyAt5812', async (_params, almanac) => {
    const [spent, amount] = await Promise.all([
      almanac.factValue<string>('spentMonthlyAt5812'),
      almanac.factValue<string>('amount'),
    ]);
    return new Decimal(spent).plus(amount).toFixed();
  });
  for (const rule of realisticReferenceRules()) engine.addRule(rule as never);
  return engine;
}

/** Workload 2 reads the ordinary purchase's facts: 15:30 UTC on a Wednesday, MCC 5411, US. */
export function flatInput(): DecisionInput {
  return { ...spendgateInput(ORDINARY_PURCHASE), policy: null };
}

/**
 * Workload 2: 30 flat `all` rules of 2 to 4 comparisons on plain number and string facts,
 * the shape public rule-engine benchmarks use. No money facts, so json-rules-engine runs its
 * own native operators and pays no decimal cost.
 */
export const FLAT_FACT_VALUES = {
  hourUtc: 15,
  countDaily: 4,
  dayOfWeekUtc: 3,
  mcc: '5411',
  merchantCountry: 'US',
  currency: 'USDC',
};

export const FLAT_RULES = Array.from({ length: 30 }, (_, index) => {
  const comparisons = [
    leaf('hourUtc', index % 2 === 0 ? 'greaterThan' : 'lessThan', index % 24),
    leaf('countDaily', 'greaterThanInclusive', (index % 7) + 1),
    leaf('mcc', index % 4 === 0 ? 'equal' : 'notEqual', String(5404 + index)),
    leaf('merchantCountry', index % 3 === 0 ? 'equal' : 'notEqual', ['US', 'CA', 'FR'][index % 3]),
  ].slice(0, 2 + (index % 3));
  return { name: `flat-${index}`, conditions: { all: comparisons } };
});

/** Workload 2's rules for a json-rules-engine-format engine, reported in policy order. */
export function flatReferenceRules(): ReferenceRule[] {
  // No money fact among them: the rewrite leaves them as they are.
  return inReferenceFormat(FLAT_RULES);
}

export function flatReferenceEngine(): Engine {
  const engine = referenceEngineBase();
  for (const rule of flatReferenceRules()) engine.addRule(rule as never);
  return engine;
}

/** A 100-rule policy for the compile-time benchmark: the custom rules five times over. */
export const HUNDRED_RULE_POLICY = {
  rules: Array.from({ length: 100 }, (_, index) => ({
    ...(CUSTOM_RULES[index % CUSTOM_RULES.length] as object),
    name: `rule-${index}`,
  })),
};

/** The 100-rule policy's rules for a json-rules-engine-format engine (its compile time). */
export function hundredReferenceRules(): ReferenceRule[] {
  return inReferenceFormat(HUNDRED_RULE_POLICY.rules as { name: string; conditions: unknown }[]);
}

/**
 * The HTTP benchmark's policy: a per-transaction limit, a daily and a monthly amount
 * limit, a daily count limit, the 50-code MCC block list, the country allow list and the 20
 * custom rules. Unlike REALISTIC_POLICY it has no business-hours template and no 20-a-day count,
 * so that HTTP_BENCH_PURCHASE is approved at any hour and the limits never run out during a
 * run, even on the hot vault: at 10,000 authorizations/s for an hour a vault spends 45 million
 * and counts 36 million, under every limit below (`test/bench-workloads.test.ts` checks it).
 */
export const HTTP_BENCH_POLICY = {
  limits: [
    { interval: 'perTransaction', amount: '500' },
    { interval: 'daily', amount: '1000000000' },
    { interval: 'monthly', amount: '10000000000' },
    { interval: 'daily', count: 1_000_000_000 },
  ],
  merchantCategories: { block: BLOCKED_MCCS },
  merchantCountries: { allow: ALLOWED_COUNTRIES },
  rules: CUSTOM_RULES,
};

/** What each vault of the HTTP benchmark is funded with: far above what a run can spend. */
export const HTTP_BENCH_DEPOSIT = '100000000000';

/** The HTTP benchmark's purchase: every check of HTTP_BENCH_POLICY runs, none declines it. */
export const HTTP_BENCH_PURCHASE = {
  amount: '1.25',
  currency: 'USDC',
  merchant: { name: 'Whole Foods', mcc: '5411', country: 'US', city: 'Austin', id: 'm_wf_1' },
} as const;

/**
 * Workload 7, the shape of issue 38: 20 rules of 3 conditions each (amount above a limit,
 * merchant country in a list, hour of day below a bound), the 50-code MCC block list and the
 * country allow list, first match. The ordinary purchase (15:30 UTC, US) matches none of
 * them, so every check runs.
 */
const THREE_CONDITION_COUNTRIES = [
  ['US', 'CA'],
  ['GB', 'IE', 'FR'],
  ['DE', 'NL'],
  ['ES', 'IT', 'AU'],
];
export const THREE_CONDITION_RULES = Array.from({ length: 20 }, (_, index) => ({
  name: `three-${index}`,
  conditions: {
    all: [
      leaf('amount', 'greaterThan', String(200 + index * 25)),
      leaf('merchantCountry', 'in', THREE_CONDITION_COUNTRIES[index % 4]),
      leaf('hourUtc', 'lessThan', (index % 6) + 1),
    ],
  },
}));

export const THREE_CONDITION_POLICY = {
  merchantCategories: { block: BLOCKED_MCCS },
  merchantCountries: { allow: ALLOWED_COUNTRIES },
  rules: THREE_CONDITION_RULES,
};

/** Workload 7's checks for a json-rules-engine-format engine, in policy order. */
export function threeConditionReferenceRules(): ReferenceRule[] {
  return inReferenceFormat([
    { name: 'merchantCategories', conditions: { all: [leaf('mcc', 'in', BLOCKED_MCCS)] } },
    {
      name: 'merchantCountries',
      conditions: { all: [leaf('merchantCountry', 'notIn', ALLOWED_COUNTRIES)] },
    },
    ...THREE_CONDITION_RULES,
  ]);
}

export function threeConditionReferenceEngine(): Engine {
  const engine = referenceEngineBase();
  for (const rule of threeConditionReferenceRules()) engine.addRule(rule as never);
  return engine;
}
