import { assert } from '../assert.js';
import { formatAmount } from '../money/amount.js';
import { compareDecimals } from '../money/compare.js';
import { currencyOf, type CurrencyCode, type CurrencyInfo } from '../money/currencies.js';
import { isDecimal } from '../money/decimal.js';
import { declined, type Decision, type ShadowMatch } from '../decision/result.js';
import { aggregateSpec, type AggregateSpec } from './aggregates.js';
import { POLICY_BOUNDS } from './bounds.js';
import {
  checkConditions,
  moneyConstant,
  spendListValues,
  type CheckBudget,
  type CheckContext,
} from './check-conditions.js';
import { compileCondition, type Predicate } from './compile-conditions.js';
import type { EvaluationInput } from './evaluation-input.js';
import { missingAggregate } from './facts.js';
import { expandTemplate } from './expand-templates.js';
import { parseWith, policyError, type PathKey } from './parse-with.js';
import {
  limitSchema,
  policySchema,
  type LimitDocument,
  type PolicyDocument,
  type RuleMode,
} from './schema.js';
import { EMPTY_TEMPLATE_LIBRARY, type TemplateLibrary } from './template-schema.js';

/**
 * The policy compiler: validated policy document in, plain synchronous evaluator out.
 * Design note: src/core/policy/DESIGN.md.
 */

export interface CompileOptions {
  /** The vault's currency: money constants are parsed with its scale. */
  readonly currency: CurrencyCode | CurrencyInfo;
  /** Templates the policy may name; the library entry passes the built-in rules/ library. */
  readonly templates?: TemplateLibrary;
}

/** One compiled check: declines (or, in shadow mode, reports) when `test` holds. */
export interface CompiledCheck {
  readonly rule: string;
  readonly message: string;
  readonly test: Predicate;
  /** Built once: the decision an enforcing check answers. */
  readonly decision: Decision;
  /** Built once: the report a shadow check adds. */
  readonly match: ShadowMatch;
}

export interface CompiledPolicy {
  /** The document as validated, defaults applied (rule `action` and `mode`). */
  readonly document: PolicyDocument;
  readonly currency: CurrencyInfo;
  /** Exactly the spend aggregates the checks read; the store computes only these. */
  readonly aggregates: readonly AggregateSpec[];
  /** Enforcing checks in contract order: categories, countries, limits, templates, rules. */
  readonly checks: readonly CompiledCheck[];
  /** Shadow checks, all evaluated on every decision that reaches the policy. */
  readonly shadowChecks: readonly CompiledCheck[];
}

/**
 * Compiles a policy (contract section 11). Throws `PolicyInvalidError` (code `policy_invalid`,
 * `param` at the fault) for any input that is not a valid policy, and nothing else for any
 * JSON value: `test/core/policy-invalid.property.test.ts` holds it to that.
 */
export function compilePolicy(input: unknown, options: CompileOptions): CompiledPolicy {
  const currency =
    typeof options.currency === 'string' ? currencyOf(options.currency) : options.currency;
  const library = options.templates ?? EMPTY_TEMPLATE_LIBRARY;
  const document = parseWith(policySchema, input, []);
  const budget: CheckBudget = {
    conditionsLeft: POLICY_BOUNDS.conditionsMax,
    listValuesLeft: POLICY_BOUNDS.listValuesMax,
  };
  const ctx: CheckContext = { currency, budget, aggregates: new Map() };
  // Template internals come from the library, whose own bounds keep them small; only the
  // parameters a policy passes count against the policy's bounds.
  const templateCtx: CheckContext = {
    currency,
    budget: { conditionsLeft: Infinity, listValuesLeft: Infinity },
    aggregates: ctx.aggregates,
  };

  const checks: CompiledCheck[] = [];
  const shadowChecks: CompiledCheck[] = [];
  const add = (mode: RuleMode, check: CompiledCheck): void => {
    (mode === 'shadow' ? shadowChecks : checks).push(check);
  };

  if (document.merchantCategories !== undefined) {
    const lists = document.merchantCategories;
    const path: PathKey[] = ['merchantCategories', lists.allow ? 'allow' : 'block'];
    const codes = lists.allow ?? lists.block ?? [];
    spendListValues(codes.length, path, ctx);
    const set = new Set(codes);
    const test: Predicate = lists.allow
      ? (input) => !set.has(input.request.merchant.mcc)
      : (input) => set.has(input.request.merchant.mcc);
    const message = lists.allow
      ? 'Merchant category is not allowed'
      : 'Merchant category is blocked';
    add('enforce', makeCheck('merchantCategories', message, test));
  }

  if (document.merchantCountries !== undefined) {
    const lists = document.merchantCountries;
    const path: PathKey[] = ['merchantCountries', lists.allow ? 'allow' : 'block'];
    const codes = lists.allow ?? lists.block ?? [];
    spendListValues(codes.length, path, ctx);
    const set = new Set(codes);
    const test: Predicate = lists.allow
      ? (input) => !set.has(input.request.merchant.country)
      : (input) => set.has(input.request.merchant.country);
    const message = lists.allow ? 'Merchant country is not allowed' : 'Merchant country is blocked';
    add('enforce', makeCheck('merchantCountries', message, test));
  }

  (document.limits ?? []).forEach((limit, index) => {
    const path = ['limits', index];
    add('enforce', compileLimit(limit, `limits[${index}]`, path, ctx));
  });

  (document.templates ?? []).forEach((ref, index) => {
    const path = ['templates', index];
    const expanded = expandTemplate(ref, library, path, ctx);
    expanded.limits.forEach((raw, limitIndex) => {
      const limit = parseWith(limitSchema, raw, [...path, 'limits', limitIndex]);
      add(ref.mode, compileLimit(limit, expanded.name, path, templateCtx));
    });
    expanded.rules.forEach((rule, ruleIndex) => {
      const ir = checkConditions(
        rule.conditions,
        [...path, 'rules', ruleIndex, 'conditions'],
        templateCtx,
      );
      add(ref.mode, makeCheck(expanded.name, rule.message, compileCondition(ir)));
    });
  });

  const names = new Set<string>();
  (document.rules ?? []).forEach((rule, index) => {
    const path = ['rules', index];
    if (names.has(rule.name)) {
      throw policyError(
        [...path, 'name'],
        'repeats the name of an earlier rule; rule names are unique',
      );
    }
    names.add(rule.name);
    const ir = checkConditions(rule.conditions, [...path, 'conditions'], ctx);
    const message = rule.message ?? `Declined by rule ${rule.name}`;
    add(rule.mode, makeCheck(rule.name, message, compileCondition(ir)));
  });

  assert(budget.conditionsLeft >= 0 && budget.listValuesLeft >= 0, 'bounds held while checking');
  return Object.freeze({
    document,
    currency,
    aggregates: Object.freeze([...ctx.aggregates.values()]),
    checks: Object.freeze(checks),
    shadowChecks: Object.freeze(shadowChecks),
  });
}

function makeCheck(rule: string, message: string, test: Predicate): CompiledCheck {
  return Object.freeze({
    rule,
    message,
    test,
    decision: declined('authorization_failed', rule, message),
    match: Object.freeze({ rule, message }),
  });
}

const INTERVAL_WORDS = {
  perTransaction: 'Per-transaction',
  daily: 'Daily',
  weekly: 'Weekly',
  monthly: 'Monthly',
  yearly: 'Yearly',
  allTime: 'All-time',
} as const;

/**
 * A limit becomes one check. Windowed amount limits read their aggregate and add the request
 * amount: that sum is the one Decimal a decision allocates per such limit.
 */
function compileLimit(
  limit: LimitDocument,
  rule: string,
  path: readonly PathKey[],
  ctx: CheckContext,
): CompiledCheck {
  const mccList = limit.merchantCategories ?? null;
  if (mccList !== null) spendListValues(mccList.length, [...path, 'merchantCategories'], ctx);
  const mccs = mccList === null ? null : new Set(mccList);
  const where = mccList === null ? '' : ` at merchant categories ${mccList.join(', ')}`;
  const applies: Predicate =
    mccs === null ? () => true : (input) => mccs.has(input.request.merchant.mcc);
  const words = INTERVAL_WORDS[limit.interval];

  if (limit.amount !== undefined) {
    const max = moneyConstant(limit.amount, [...path, 'amount'], ctx);
    const shown = `${formatAmount(max, ctx.currency)} ${ctx.currency.code}`;
    if (limit.interval === 'perTransaction') {
      const message = `Amount exceeds the per-transaction limit of ${shown}${where}`;
      return makeCheck(
        rule,
        message,
        (input) => applies(input) && compareDecimals(input.request.amount, max) > 0,
      );
    }
    const spec = aggregateSpec('amount', limit.interval, mccList);
    ctx.aggregates.set(spec.key, spec);
    const key = spec.key;
    const message = `${words} spend limit of ${shown}${where} would be exceeded`;
    return makeCheck(rule, message, (input) => {
      if (!applies(input)) return false;
      const spent = input.spend[key];
      if (!isDecimal(spent)) throw missingAggregate(key);
      return compareDecimals(spent.plus(input.request.amount), max) > 0;
    });
  }

  const countMax = limit.count;
  assert(
    countMax !== undefined && limit.interval !== 'perTransaction',
    'schema: count limits are windowed',
  );
  const spec = aggregateSpec('count', limit.interval, mccList);
  ctx.aggregates.set(spec.key, spec);
  const key = spec.key;
  const message = `${words} limit of ${countMax} transactions${where} reached`;
  return makeCheck(rule, message, (input: EvaluationInput) => {
    if (!applies(input)) return false;
    const count = input.spend[key];
    if (typeof count !== 'number') throw missingAggregate(key);
    // This transaction would be number count + 1.
    return count + 1 > countMax;
  });
}
