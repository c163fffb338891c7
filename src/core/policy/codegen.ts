import { assert, InvariantError } from '../assert.js';
import {
  approximateDecimal,
  BoundedDecimal,
  compareDecimalInteger,
  compareDecimals,
  compareNear,
  hasDecimal,
  sortedUniqueDecimals,
} from '../money/compare.js';
import { isCheckedTotal, isCount } from '../money/amount.js';
import type { CurrencyInfo } from '../money/currencies.js';
import { dayOfWeekUtc, hourUtc } from '../time.js';
import { NO_SHADOW_MATCHES, type Decision, type ShadowMatch } from '../decision/result.js';
import type { ComparisonIr, ConditionIr, ValueOf } from './condition-ir.js';
import type { EvaluationInput } from './evaluation-input.js';
import { aggregateUnread, type Source } from './facts.js';
import { BILLING_TOTAL } from './aggregates.js';
import type { Operator } from './operators.js';

/*
 * The code generator: checked condition IR in, plain JavaScript functions out (one per policy,
 * built with `new Function` once at compile time). Design note: ./DESIGN.md.
 *
 * Safety rests on one rule: **no text from a policy ever enters the generated source.** Every
 * value a policy holds (strings, numbers, decimals, lists, aggregate keys, decisions) is
 * passed in as an element of the constants array `k` and named `k<index>`; the source is made
 * only of this module's own literals (operators, field names from `Source`, helper names) and
 * the indexes it counts itself.
 *
 * Semantics are json-rules-engine's, operator by operator, with these intended differences
 * (all of them, with reasons, in rules/README.md; the differential test's reference engine
 * mirrors each one):
 * - money facts compare as decimals through `compareDecimals` (and with integer facts through
 *   `compareDecimalInteger`), never as floats; against constants, a double near the fact
 *   (read once) answers first wherever it is far enough from the constant to be sure
 *   (`compareNear`, `BoundedDecimal`), so the answer is the exact comparison's;
 * - `contains` / `doesNotContain` test substrings of string facts (json-rules-engine: arrays);
 * - an absent optional fact is `undefined`: it equals nothing and is in no list, and both
 *   substring tests are false for it (as json-rules-engine's fact validator makes them).
 */

export interface CheckIr {
  readonly condition: ConditionIr;
  /** What an enforcing check answers when its condition holds (built once). */
  readonly decision: Decision;
  /** What a shadow check reports when its condition holds (built once). */
  readonly match: ShadowMatch;
}

export interface Evaluators {
  /** The decision of the first enforcing check that holds, or null. */
  readonly firstDecline: (input: EvaluationInput) => Decision | null;
  /** Every shadow check that holds, in order; a shared empty array when none does. */
  readonly shadowMatches: (input: EvaluationInput) => readonly ShadowMatch[];
  /** The decision of the first of the `limits` checks that holds, or null. */
  readonly firstLimitDecline: (input: EvaluationInput) => Decision | null;
}

export type Predicate = (input: EvaluationInput) => boolean;

/** Helpers the generated code calls, passed in rather than reached through any global. */
const RUNTIME = Object.freeze({
  approximateDecimal,
  compareDecimals,
  compareNear,
  compareDecimalInteger,
  hasDecimal,
  isCheckedTotal,
  isCount,
  aggregateUnread,
  hourUtc,
  dayOfWeekUtc,
  noShadowMatches: NO_SHADOW_MATCHES,
});

const PRELUDE =
  "'use strict';\n" +
  'const cmp = rt.compareDecimals, near = rt.approximateDecimal, cmpNear = rt.compareNear,\n' +
  '  cmpInt = rt.compareDecimalInteger, hasDecimal = rt.hasDecimal,\n' +
  '  isTotal = rt.isCheckedTotal,\n' +
  '  isCount = rt.isCount, unread = rt.aggregateUnread, hourUtc = rt.hourUtc,\n' +
  '  dayOfWeekUtc = rt.dayOfWeekUtc,\n' +
  '  NONE = rt.noShadowMatches;\n';

// Each table maps a closed set of spendgate's own names to code; nothing else becomes code.
const COMPARE: Readonly<Partial<Record<Operator, string>>> = {
  equal: '===',
  notEqual: '!==',
  lessThan: '<',
  lessThanInclusive: '<=',
  greaterThan: '>',
  greaterThanInclusive: '>=',
};
const REQUEST_FIELDS = {
  amount: 'request.amount',
  currency: 'request.currency',
  cardId: 'request.cardId',
  // Never undefined (facts.ts): the billing currency stands in for the merchant's, the
  // request's currency for the billing one.
  merchantCurrency: 'request.merchantCurrency ?? request.billingCurrency ?? request.currency',
  billingCurrency: 'request.billingCurrency ?? request.currency',
} as const;
const MERCHANT_FIELDS = {
  name: 'merchant.name',
  mcc: 'merchant.mcc',
  country: 'merchant.country',
  city: 'merchant.city',
  id: 'merchant.id',
} as const;
const CLOCK_FIELDS = { hourUtc: 'hourUtc(nowMs)', dayOfWeekUtc: 'dayOfWeekUtc(nowMs)' } as const;

/**
 * `prefix<index>` names, made once per index and kept: a policy's program names hundreds of
 * constants and locals, and each compile would otherwise build the same strings again.
 */
class Names {
  readonly #names: string[] = [];

  constructor(private readonly prefix: string) {}

  at(index: number): string {
    assert(Number.isSafeInteger(index) && index >= 0, 'names are counted');
    for (let next = this.#names.length; next <= index; next++) {
      this.#names.push(`${this.prefix}${next}`);
    }
    return this.#names[index] as string;
  }
}

const CONSTANT_NAMES = new Names('k');
const LOCAL_NAMES = new Names('v');

/**
 * The parameter list of a program with n constants, `rt, k0, ..., kn`, as prefixes of one kept
 * string: each compile takes a slice rather than writing the names out again. Constants are
 * the factory's parameters, not `const` declarations in its body: V8 parses a long parameter
 * list several times faster than as many declarations, and an evaluator reads a captured
 * parameter as it reads a captured `const`, without the `const`'s initialisation check.
 */
const PARAMETERS = {
  text: 'rt',
  /** ends[n]: where the list with the first n constants ends in `text`. */
  ends: [2] as number[],

  of(count: number): string {
    assert(count <= CONSTANTS_MAX, 'a program has a bounded number of constants');
    for (let next = this.ends.length - 1; next < count; next++) {
      this.text += `, ${CONSTANT_NAMES.at(next)}`;
      this.ends.push(this.text.length);
    }
    return this.text.slice(0, this.ends[count]);
  },
};

/**
 * Constants one program may have: far above what a policy within its bounds needs (a decision
 * per check, a few values per condition), and below the engine's limit on parameters (65,535).
 */
const CONSTANTS_MAX = 20_000;

/** Constants shared by the functions of one generated program. */
class Constants {
  readonly values: unknown[] = [];

  name(value: unknown): string {
    const name = CONSTANT_NAMES.at(this.values.length);
    this.values.push(value);
    return name;
  }

  parameters(): string {
    return PARAMETERS.of(this.values.length);
  }
}

// Each source a function reads once into a local, by an id made of spendgate's own names.
const SOURCE_IDS = {
  request: {
    amount: 'request.amount',
    currency: 'request.currency',
    cardId: 'request.cardId',
    merchantCurrency: 'request.merchantCurrency',
    billingCurrency: 'request.billingCurrency',
  },
  merchant: {
    name: 'merchant.name',
    mcc: 'merchant.mcc',
    country: 'merchant.country',
    city: 'merchant.city',
    id: 'merchant.id',
  },
  clock: { hourUtc: 'clock.hourUtc', dayOfWeekUtc: 'clock.dayOfWeekUtc' },
} as const;
const REQUEST_AMOUNT: Source = { kind: 'request', field: 'amount' };
/** The local id of the request's billing amount: no fact's id (those are field paths). */
const BILLING_ID = 'request.billing';

// Precedence of generated code, loosest first: a || b, a && b, a < b, and a call, a name or !a.
const OR = 0;
const AND = 1;
const RELATIONAL = 2;
const ATOM = 3;

/** A source's local id, made of spendgate's own names. */
function sourceId(source: Source): string {
  // Aggregate keys ("amount:daily") hold a colon, so they never equal a field's id.
  switch (source.kind) {
    case 'request':
      return SOURCE_IDS.request[source.field];
    case 'merchant':
      return SOURCE_IDS.merchant[source.field];
    case 'clock':
      return SOURCE_IDS.clock[source.field];
    case 'aggregate':
      return source.aggregate.key;
  }
}

/**
 * The money sources compared with two or more constants in these conditions: only for them does
 * a double near the fact (one `approximateDecimal` a call) cost less than exact comparisons.
 */
function sourcesComparedOften(conditions: readonly ConditionIr[]): ReadonlySet<string> {
  const counts = new Map<string, number>();
  const visit = (ir: ConditionIr): void => {
    if (ir.kind === 'all' || ir.kind === 'any') ir.children.forEach(visit);
    else if (ir.kind === 'not') visit(ir.child);
    else if (ir.kind === 'compare' && ir.valueKind === 'money' && ir.operand.kind === 'constant') {
      const id = sourceId(ir.source);
      counts.set(id, (counts.get(id) ?? 0) + 1);
    }
  };
  conditions.forEach(visit);
  return new Set([...counts].filter(([, count]) => count >= 2).map(([id]) => id));
}

/** One generated function body: the sources it reads become locals, each read once. */
class Body {
  readonly #locals = new Map<string, string>();
  #reads = '';
  #currencyName: string | null = null;
  #billingTotalName: string | null = null;

  readonly #comparedOften: ReadonlySet<string>;

  /** `conditions`: all this body will hold, so that it knows which facts to approximate. */
  constructor(
    private readonly constants: Constants,
    private readonly currencyInfo: CurrencyInfo,
    conditions: readonly ConditionIr[],
  ) {
    this.#comparedOften = sourcesComparedOften(conditions);
  }

  /** The constant billing totals are checked against (BILLING_TOTAL). */
  private billingTotal(): string {
    this.#billingTotalName ??= this.constants.name(BILLING_TOTAL);
    return this.#billingTotalName;
  }

  /** The request's billing amount (`request.billing`, possibly undefined), read once. */
  private billing(): string {
    const known = this.#locals.get(BILLING_ID);
    if (known !== undefined) return known;
    const local = LOCAL_NAMES.at(this.#locals.size);
    this.#locals.set(BILLING_ID, local);
    this.#reads += `const ${local} = request.billing;\n`;
    return local;
  }

  /** The constant holding the policy's currency, which spend totals are checked against. */
  private currency(): string {
    this.#currencyName ??= this.constants.name(this.currencyInfo);
    return this.#currencyName;
  }

  read(source: Source): string {
    const id = sourceId(source);
    const known = this.#locals.get(id);
    if (known !== undefined) return known;
    const local = LOCAL_NAMES.at(this.#locals.size);
    this.#locals.set(id, local);
    switch (source.kind) {
      case 'request':
        this.#reads += `const ${local} = ${REQUEST_FIELDS[source.field]};\n`;
        break;
      case 'merchant':
        this.#reads += `const ${local} = ${MERCHANT_FIELDS[source.field]};\n`;
        break;
      case 'clock':
        this.#reads += `const ${local} = ${CLOCK_FIELDS[source.field]};\n`;
        break;
      case 'aggregate': {
        // Only a value in the core's own form is read here; anything else (absent, a string,
        // another Decimal) throws for decide() and evaluate() to read it (facts.ts).
        const key = this.constants.name(source.aggregate.key);
        const valid =
          source.aggregate.measure === 'count'
            ? `isCount(${local})`
            : source.aggregate.currency === null
              ? `isTotal(${local},${this.currency()})`
              : `isTotal(${local},${this.billingTotal()})`;
        this.#reads += `const ${local} = spend[${key}];\nif (!${valid}) throw unread(${key});\n`;
        break;
      }
    }
    return local;
  }

  /** A double near a money local (`approximateDecimal`), computed once after the local is read. */
  private approximation(local: string): string {
    // Field ids and aggregate keys never begin with a tilde: no source's id collides.
    const id = `~${local}`;
    const known = this.#locals.get(id);
    if (known !== undefined) return known;
    const name = LOCAL_NAMES.at(this.#locals.size);
    this.#locals.set(id, name);
    this.#reads += `const ${name} = near(${local});\n`;
    return name;
  }

  prologue(): string {
    return (
      'const request = input.request, merchant = request.merchant, spend = input.spend, nowMs = input.nowMs;\n' +
      this.#reads
    );
  }

  /**
   * The code of a condition, parenthesised only where JavaScript's precedence needs it (the
   * source is what V8 parses for each new policy, so every byte counts). Sets `#level` to the
   * precedence of the code returned, for the caller to wrap it if it must.
   */
  expression(ir: ConditionIr): string {
    switch (ir.kind) {
      case 'all':
      case 'any': {
        const children = ir.children;
        assert(children.length > 0, 'boolean nodes have children');
        // && binds tighter than ||: only an any inside an all needs parentheses.
        const joiner = ir.kind === 'all' ? '&&' : '||';
        const level = ir.kind === 'all' ? AND : OR;
        let joined = '';
        for (let index = 0; index < children.length; index++) {
          const child = this.expression(children[index] as ConditionIr);
          const code = this.#level < level ? `(${child})` : child;
          joined += index === 0 ? code : joiner + code;
        }
        this.#level = children.length === 1 ? this.#level : level;
        return joined;
      }
      case 'not': {
        const child = this.expression(ir.child);
        const code = this.#level < ATOM ? `!(${child})` : `!${child}`;
        this.#level = ATOM;
        return code;
      }
      case 'spendOver': {
        const spent = this.read(ir.spent);
        const amount = this.read(REQUEST_AMOUNT);
        this.#level = RELATIONAL;
        return `cmp(${spent}.plus(${amount}),${this.constants.name(ir.max)})>0`;
      }
      case 'billingOver': {
        // Not billed in the limit's currency: it cannot be counted, so the limit declines it.
        const billing = this.billing();
        const spent = ir.spent === null ? null : this.read(ir.spent);
        const amount = spent === null ? `${billing}.amount` : `${spent}.plus(${billing}.amount)`;
        this.#level = OR;
        return (
          `${billing}===undefined||${billing}.currency!==${this.constants.name(ir.currency)}||` +
          `cmp(${amount},${this.constants.name(ir.max)})>0`
        );
      }
      case 'compare':
        return this.comparison(ir);
      case 'compareMoneyInteger': {
        const token = COMPARE[ir.operator];
        assert(token !== undefined, 'money and integer facts compare by equality or order');
        const compared = `cmpInt(${this.read(ir.money)},${this.read(ir.integer)})`;
        this.#level = RELATIONAL;
        // integer OP money is 0 OP (money - integer)'s sign.
        return ir.moneyLeft ? `${compared}${token}0` : `0${token}${compared}`;
      }
    }
  }

  /** The precedence of the code `expression` returned last. */
  #level = ATOM;

  private comparison(ir: ComparisonIr): string {
    const left = this.read(ir.source);
    const operand = ir.operand;
    if (operand.kind === 'list') {
      const list =
        ir.valueKind === 'money'
          ? `hasDecimal(${this.constants.name(sortedUniqueDecimals(operand.values as never))},${left})`
          : `${this.constants.name(new Set<unknown>(operand.values))}.has(${left})`;
      this.#level = ATOM;
      if (ir.operator === 'in') return list;
      assert(ir.operator === 'notIn', 'lists go with in or notIn');
      return `!${list}`;
    }
    if (
      ir.valueKind === 'money' &&
      ir.operand.kind === 'constant' &&
      this.#comparedOften.has(sourceId(ir.source))
    ) {
      return this.moneyConstant(left, ir.operator, ir.operand.value);
    }
    const right =
      operand.kind === 'fact' ? this.read(operand.source) : this.constants.name(operand.value);
    if (ir.operator === 'contains' || ir.operator === 'doesNotContain') {
      assert(ir.valueKind === 'string' && operand.kind === 'constant', 'substrings of strings');
      // An absent optional fact contains nothing, so both tests are false for it (rules/README.md).
      const negate = ir.operator === 'doesNotContain' ? '!' : '';
      this.#level = AND;
      return `${left}!==undefined&&${negate}${left}.includes(${right})`;
    }
    const token = COMPARE[ir.operator];
    if (token === undefined) throw new InvariantError(`the checker let ${ir.operator} through`);
    this.#level = RELATIONAL;
    if (ir.valueKind === 'money') return `cmp(${left},${right})${token}0`;
    return `${left}${token}${right}`;
  }

  /**
   * A money fact against a policy's constant, for a fact compared with several. The constants
   * are rarely near the fact: two comparisons of doubles decide, and the exact comparison runs
   * only within the constant's bounds (the same answer: BoundedDecimal).
   */
  private moneyConstant(left: string, operator: Operator, value: ValueOf<'money'>): string {
    const token = COMPARE[operator];
    if (token === undefined) throw new InvariantError(`the checker let ${operator} through`);
    this.#level = RELATIONAL;
    const bounded = this.constants.name(new BoundedDecimal(value));
    return `cmpNear(${this.approximation(left)},${left},${bounded})${token}0`;
  }
}

/** Generated code is untyped: each caller states, by a cast, what its source returns. */
function build(constants: Constants, functions: string): unknown {
  // The one dynamic evaluation in spendgate, on source made as the header above describes.
  // eslint-disable-next-line @typescript-eslint/no-implied-eval
  const factory = new Function(constants.parameters(), `${PRELUDE}return ${functions};`) as (
    rt: typeof RUNTIME,
    ...k: unknown[]
  ) => unknown;
  return factory(RUNTIME, ...constants.values);
}

/**
 * The three evaluators of a policy, from one generated program (one `new Function`): the first
 * enforcing decline, the shadow matches, and the first decline of `limits` (a subset of
 * `enforce`) alone. Each function reads its own sources; the constants are shared.
 */
export function generateEvaluators(
  enforce: readonly CheckIr[],
  shadow: readonly CheckIr[],
  limits: readonly CheckIr[],
  currency: CurrencyInfo,
): Evaluators {
  const constants = new Constants();
  return build(
    constants,
    `{\n firstDecline: ${firstDeclineSource('firstDecline', enforce, constants, currency)},\n` +
      ` shadowMatches: ${shadowMatchesSource(shadow, constants, currency)},\n` +
      ` firstLimitDecline: ${firstDeclineSource('firstLimitDecline', limits, constants, currency)}\n}`,
  ) as Evaluators;
}

function firstDeclineSource(
  name: 'firstDecline' | 'firstLimitDecline',
  checks: readonly CheckIr[],
  constants: Constants,
  currency: CurrencyInfo,
): string {
  const body = new Body(
    constants,
    currency,
    checks.map((check) => check.condition),
  );
  let declines = '';
  for (const check of checks) {
    declines += `if(${body.expression(check.condition)})return ${constants.name(check.decision)};\n`;
  }
  return `function ${name}(input) {\n${body.prologue()}\n${declines}return null;\n}`;
}

function shadowMatchesSource(
  checks: readonly CheckIr[],
  constants: Constants,
  currency: CurrencyInfo,
): string {
  const body = new Body(
    constants,
    currency,
    checks.map((check) => check.condition),
  );
  let matches = '';
  for (const check of checks) {
    matches += `if(${body.expression(check.condition)})(matches??=[]).push(${constants.name(check.match)});\n`;
  }
  return (
    `function shadowMatches(input) {\n${body.prologue()}\nlet matches = null;\n${matches}` +
    'return matches === null ? NONE : matches;\n}'
  );
}

/** One condition as a predicate of its own, for per-rule inspection and tests. */
export function generatePredicate(condition: ConditionIr, currency: CurrencyInfo): Predicate {
  const constants = new Constants();
  const body = new Body(constants, currency, [condition]);
  const expression = body.expression(condition);
  return build(
    constants,
    `function test(input) {\n${body.prologue()}\nreturn ${expression};\n}`,
  ) as Predicate;
}
