import { Decimal as DecimalJs } from 'decimal.js';
import { Engine, Operator } from 'json-rules-engine';
import { MONEY_FACTS, type GeneratedFacts, type GeneratedRule } from './policy-arbitraries.js';

/**
 * json-rules-engine set up as the reference for the differential test:
 * - money facts are compared by decimal operators (`decimal:<op>`) on decimal.js's own default
 *   constructor, an independent path from the core's allocation-free comparison;
 * - `contains` / `doesNotContain` also accept strings (a substring test), the one intended
 *   difference from stock json-rules-engine, which applies them to arrays only (README);
 * - undefined facts (an absent merchant id or city) are allowed and read as undefined.
 */
const MONEY: ReadonlySet<string> = new Set<string>(MONEY_FACTS);

const decimalValidator = (value: unknown): boolean =>
  (typeof value === 'string' || typeof value === 'number') && !new DecimalJs(value).isNaN();

/**
 * The comparisons of money facts, by operator name (`decimal:<op>`), on decimal.js's own
 * default constructor: for json-rules-engine here, and for fast-json-rules-engine in
 * bench/core.bench.ts, so both compare money the same way.
 */
export function decimalComparisons(): Record<string, (a: unknown, b: unknown) => boolean> {
  const compare = (a: unknown, b: unknown): number =>
    new DecimalJs(a as string).cmp(new DecimalJs(b as string));
  const list = (a: unknown, b: unknown): boolean =>
    (b as unknown[]).some((item) => compare(a, item) === 0);
  return {
    'decimal:equal': (a, b) => compare(a, b) === 0,
    'decimal:notEqual': (a, b) => compare(a, b) !== 0,
    'decimal:lessThan': (a, b) => compare(a, b) < 0,
    'decimal:lessThanInclusive': (a, b) => compare(a, b) <= 0,
    'decimal:greaterThan': (a, b) => compare(a, b) > 0,
    'decimal:greaterThanInclusive': (a, b) => compare(a, b) >= 0,
    'decimal:in': (a, b) => list(a, b),
    'decimal:notIn': (a, b) => !list(a, b),
  };
}

function decimalOperators(): Operator[] {
  return Object.entries(decimalComparisons()).map(
    ([name, compare]) => new Operator(name, compare, decimalValidator),
  );
}

const isText = (value: unknown): boolean => typeof value === 'string' || Array.isArray(value);

/** `contains` and `doesNotContain` on strings as on arrays (a substring test; see above). */
export const TEXT_COMPARISONS: Readonly<Record<string, (a: string, b: string) => boolean>> = {
  contains: (a, b) => a.indexOf(b) > -1,
  doesNotContain: (a, b) => a.indexOf(b) === -1,
};

/**
 * Rewrites conditions on money facts to the decimal operators: those whose fact is money, and
 * those comparing an integer fact with a money one (`countDaily lessThan {fact: amount}`),
 * which compare as numbers, exactly.
 */
export function rewriteMoney(node: unknown, money: ReadonlySet<string> = MONEY): unknown {
  if (Array.isArray(node)) return node.map((item) => rewriteMoney(item, money));
  if (typeof node !== 'object' || node === null) return node;
  const record = node as Record<string, unknown>;
  if ('all' in record) return { all: rewriteMoney(record.all, money) };
  if ('any' in record) return { any: rewriteMoney(record.any, money) };
  if ('not' in record) return { not: rewriteMoney(record.not, money) };
  const fact = record.fact as string;
  const value = record.value as { fact?: unknown } | null;
  const moneyValue = typeof value === 'object' && value !== null && money.has(value.fact as string);
  return money.has(fact) || moneyValue
    ? { ...record, operator: `decimal:${record.operator as string}` }
    : record;
}

/** An engine with no rules yet and the reference operators registered. */
export function referenceEngineBase(): Engine {
  const engine = new Engine([], { allowUndefinedFacts: true });
  for (const operator of decimalOperators()) engine.addOperator(operator);
  for (const [name, compare] of Object.entries(TEXT_COMPARISONS)) {
    engine.addOperator(new Operator(name, compare, isText));
  }
  return engine;
}

export function referenceEngine(
  rules: readonly Pick<GeneratedRule, 'name' | 'conditions'>[],
): Engine {
  const engine = referenceEngineBase();
  for (const rule of rules) {
    engine.addRule({
      name: rule.name,
      conditions: rewriteMoney(rule.conditions) as never,
      event: { type: rule.name },
    });
  }
  return engine;
}

/** The facts as json-rules-engine reads them, time fields from a Date as an independent path. */
export function referenceFacts(facts: GeneratedFacts): Record<string, unknown> {
  const now = new Date(facts.nowMs);
  const day = now.getUTCDay();
  return {
    amount: facts.amount,
    spentDaily: facts.spentDaily,
    spentWeekly: facts.spentWeekly,
    spentMonthly: facts.spentMonthly,
    countDaily: facts.countDaily,
    hourUtc: now.getUTCHours(),
    dayOfWeekUtc: day === 0 ? 7 : day,
    currency: facts.currency,
    cardId: facts.cardId,
    mcc: facts.merchant.mcc,
    merchantCountry: facts.merchant.country,
    merchantName: facts.merchant.name,
    merchantId: facts.merchant.id,
    merchant: facts.merchant,
  };
}

/** Each rule's outcome by name. */
export async function referenceOutcomes(
  engine: Engine,
  facts: GeneratedFacts,
): Promise<Map<string, boolean>> {
  const { results, failureResults } = await engine.run(referenceFacts(facts));
  const outcomes = new Map<string, boolean>();
  for (const result of [...results, ...failureResults])
    outcomes.set(result.name, result.result as boolean);
  return outcomes;
}
