import { assert, InvariantError } from '../assert.js';
import { compareDecimals, hasDecimal, sortedUniqueDecimals } from '../money/compare.js';
import { isDecimal } from '../money/decimal.js';
import { dayOfWeekUtc, hourUtc } from '../time.js';
import { NO_SHADOW_MATCHES, type Decision, type ShadowMatch } from '../decision/result.js';
import type { ComparisonIr, ConditionIr } from './condition-ir.js';
import type { EvaluationInput } from './evaluation-input.js';
import { missingAggregate, type Source } from './facts.js';
import type { Operator } from './operators.js';

/**
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
 * (README, "Differences from json-rules-engine"; the differential test's reference engine
 * mirrors each one):
 * - money facts compare as decimals through `compareDecimals`, never as floats;
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
}

export type Predicate = (input: EvaluationInput) => boolean;

/** Helpers the generated code calls, passed in rather than reached through any global. */
const RUNTIME = Object.freeze({
  compareDecimals,
  hasDecimal,
  isDecimal,
  missingAggregate,
  hourUtc,
  dayOfWeekUtc,
  noShadowMatches: NO_SHADOW_MATCHES,
});

const PRELUDE =
  "'use strict';\n" +
  'const cmp = rt.compareDecimals, hasDecimal = rt.hasDecimal, isDecimal = rt.isDecimal,\n' +
  '  missingAggregate = rt.missingAggregate, hourUtc = rt.hourUtc, dayOfWeekUtc = rt.dayOfWeekUtc,\n' +
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
} as const;
const MERCHANT_FIELDS = {
  name: 'merchant.name',
  mcc: 'merchant.mcc',
  country: 'merchant.country',
  city: 'merchant.city',
  id: 'merchant.id',
} as const;
const CLOCK_FIELDS = { hourUtc: 'hourUtc(nowMs)', dayOfWeekUtc: 'dayOfWeekUtc(nowMs)' } as const;

/** Constants shared by the functions of one generated program. */
class Constants {
  readonly values: unknown[] = [];

  name(value: unknown): string {
    this.values.push(value);
    return `k${this.values.length - 1}`;
  }

  declarations(): string {
    if (this.values.length === 0) return '';
    return `const ${this.values.map((_, index) => `k${index} = k[${index}]`).join(', ')};\n`;
  }
}

/** One generated function body: the sources it reads become locals, each read once. */
class Body {
  readonly #locals = new Map<string, string>();
  readonly #reads: string[] = [];

  constructor(private readonly constants: Constants) {}

  read(source: Source): string {
    const id =
      source.kind === 'aggregate'
        ? `aggregate ${source.aggregate.key}`
        : `${source.kind} ${source.field}`;
    const known = this.#locals.get(id);
    if (known !== undefined) return known;
    const local = `v${this.#locals.size}`;
    this.#locals.set(id, local);
    switch (source.kind) {
      case 'request':
        this.#reads.push(`const ${local} = ${REQUEST_FIELDS[source.field]};`);
        break;
      case 'merchant':
        this.#reads.push(`const ${local} = ${MERCHANT_FIELDS[source.field]};`);
        break;
      case 'clock':
        this.#reads.push(`const ${local} = ${CLOCK_FIELDS[source.field]};`);
        break;
      case 'aggregate': {
        const key = this.constants.name(source.aggregate.key);
        const valid =
          source.aggregate.measure === 'amount'
            ? `isDecimal(${local})`
            : `typeof ${local} === 'number'`;
        this.#reads.push(
          `const ${local} = spend[${key}];`,
          `if (!(${valid})) throw missingAggregate(${key});`,
        );
        break;
      }
    }
    return local;
  }

  prologue(): string {
    return (
      'const request = input.request, merchant = request.merchant, spend = input.spend, nowMs = input.nowMs;\n' +
      this.#reads.join('\n')
    );
  }

  expression(ir: ConditionIr): string {
    switch (ir.kind) {
      case 'all':
      case 'any': {
        assert(ir.children.length > 0, 'boolean nodes have children');
        const joined = ir.children
          .map((child) => this.expression(child))
          .join(ir.kind === 'all' ? ' && ' : ' || ');
        return `(${joined})`;
      }
      case 'not':
        return `!${this.expression(ir.child)}`;
      case 'spendOver': {
        const spent = this.read(ir.spent);
        const amount = this.read({ kind: 'request', field: 'amount' });
        return `(cmp(${spent}.plus(${amount}), ${this.constants.name(ir.max)}) > 0)`;
      }
      case 'compare':
        return this.comparison(ir);
    }
  }

  private comparison(ir: ComparisonIr): string {
    const left = this.read(ir.source);
    const operand = ir.operand;
    if (operand.kind === 'list') {
      const list =
        ir.valueKind === 'money'
          ? `hasDecimal(${this.constants.name(sortedUniqueDecimals(operand.values as never))}, ${left})`
          : `${this.constants.name(new Set<unknown>(operand.values))}.has(${left})`;
      if (ir.operator === 'in') return list;
      assert(ir.operator === 'notIn', 'lists go with in or notIn');
      return `!${list}`;
    }
    const right =
      operand.kind === 'fact' ? this.read(operand.source) : this.constants.name(operand.value);
    if (ir.operator === 'contains' || ir.operator === 'doesNotContain') {
      assert(ir.valueKind === 'string' && operand.kind === 'constant', 'substrings of strings');
      // An absent optional fact contains nothing, so both tests are false for it (README).
      const negate = ir.operator === 'doesNotContain' ? '!' : '';
      return `(${left} !== undefined && ${negate}${left}.includes(${right}))`;
    }
    const token = COMPARE[ir.operator];
    if (token === undefined) throw new InvariantError(`the checker let ${ir.operator} through`);
    if (ir.valueKind === 'money') return `(cmp(${left}, ${right}) ${token} 0)`;
    return `(${left} ${token} ${right})`;
  }
}

/** Generated code is untyped: each caller states, by a cast, what its source returns. */
function build(constants: Constants, functions: string): unknown {
  const source = `${PRELUDE}${constants.declarations()}return ${functions};`;
  // The one dynamic evaluation in spendgate, on source made as the header above describes.
  // eslint-disable-next-line @typescript-eslint/no-implied-eval
  const factory = new Function('k', 'rt', source) as (
    k: readonly unknown[],
    rt: typeof RUNTIME,
  ) => unknown;
  return factory(constants.values, RUNTIME);
}

export function generateEvaluators(
  enforce: readonly CheckIr[],
  shadow: readonly CheckIr[],
): Evaluators {
  const constants = new Constants();
  const declineBody = new Body(constants);
  const declines = enforce.map(
    (check) =>
      `if (${declineBody.expression(check.condition)}) return ${constants.name(check.decision)};`,
  );
  const shadowBody = new Body(constants);
  const matches = shadow.map(
    (check) =>
      `if (${shadowBody.expression(check.condition)}) (matches ??= []).push(${constants.name(check.match)});`,
  );
  return build(
    constants,
    `{\n firstDecline: function firstDecline(input) {\n${declineBody.prologue()}\n${declines.join('\n')}\nreturn null;\n},\n` +
      ` shadowMatches: function shadowMatches(input) {\n${shadowBody.prologue()}\nlet matches = null;\n${matches.join('\n')}\n` +
      'return matches === null ? NONE : matches;\n}\n}',
  ) as Evaluators;
}

/** One condition as a predicate of its own, for per-rule inspection and tests. */
export function generatePredicate(condition: ConditionIr): Predicate {
  const constants = new Constants();
  const body = new Body(constants);
  const expression = body.expression(condition);
  return build(
    constants,
    `function test(input) {\n${body.prologue()}\nreturn ${expression};\n}`,
  ) as Predicate;
}
