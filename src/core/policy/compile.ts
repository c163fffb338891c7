import { assert } from '../assert.js';
import { SpendgateError } from '../errors/spendgate-error.js';
import { formatAmount } from '../money/amount.js';
import { isCurrencyCode, type CurrencyInfo } from '../money/currencies.js';
import { isAtPar } from '../decision/billing.js';
import type { Decimal } from '../money/decimal.js';
import { declined, type Decision, type ShadowMatch } from '../decision/result.js';
import { aggregateSpec, type AggregateSpec } from './aggregates.js';
import { POLICY_BOUNDS } from './bounds.js';
import {
  checkConditions,
  moneyConstant,
  pathTo,
  spendListValues,
  type CheckBudget,
  type CheckContext,
} from './check-conditions.js';
import { generateEvaluators, generatePredicate, type CheckIr, type Predicate } from './codegen.js';
import type { ConditionIr } from './condition-ir.js';
import type { EvaluationInput } from './evaluation-input.js';
import { expandTemplate } from './expand-templates.js';
import type { PolicyLimit } from './limit-status.js';
import type { Source } from './facts.js';
import { readLimit, readPolicyDocument } from './fast-document.js';
import {
  ExactPathNeeded,
  parseWith,
  policyError,
  UNTRACKED_PATH,
  type PathKey,
} from './parse-with.js';
import {
  limitSchema,
  policySchema,
  type LimitDocument,
  type PolicyDocument,
  type RuleDocument,
  type RuleMode,
  type TemplateRefDocument,
} from './schema.js';
import type { TemplateLibrary } from './template-schema.js';
import {
  readCompileOptions,
  type CompileOptions,
  type CompileSettings,
} from './compile-options.js';

export type { CompileOptions } from './compile-options.js';

/*
 * The policy compiler: policy document in, plain synchronous evaluator out. Validation and
 * type checking (schema.ts, check-conditions.ts) turn the document into condition IR; the code
 * generator (codegen.ts) turns the IR into functions. Design note: ./DESIGN.md.
 */

/** One check of a compiled policy: a rule, a limit, a list or a template's rule. */
export interface CompiledCheck {
  readonly rule: string;
  readonly message: string;
  readonly mode: RuleMode;
  /**
   * This check's condition alone, generated on first use: for inspecting one rule (and for
   * the tests that hold each rule to json-rules-engine). `decide` does not use it.
   */
  readonly test: Predicate;
  readonly decision: Decision;
  readonly match: ShadowMatch;
}

export interface CompiledPolicy {
  /** The document as validated, defaults applied (rule `action` and `mode`). */
  readonly document: PolicyDocument;
  readonly currency: CurrencyInfo;
  /** Exactly the spend aggregates the evaluators read; the store computes only these. */
  readonly aggregates: readonly AggregateSpec[];
  /** Enforcing checks in contract order: categories, countries, limits, templates, rules. */
  readonly checks: readonly CompiledCheck[];
  /** Shadow checks, all evaluated on every decision that reaches the policy. */
  readonly shadowChecks: readonly CompiledCheck[];
  /** The generated evaluator: the decision of the first enforcing check that holds, or null. */
  readonly firstDecline: (input: EvaluationInput) => Decision | null;
  /** The generated shadow evaluator: every shadow check that holds, in order. */
  readonly shadowMatches: (input: EvaluationInput) => readonly ShadowMatch[];
  /**
   * The enforcing limits that are not narrowed to merchant categories, alone: what an external
   * transfer must pass (contract section 12: "subject to the source vault's policy limits").
   */
  readonly firstLimitDecline: (input: EvaluationInput) => Decision | null;
  /**
   * Every limit of the policy, its own and its templates', in decision order: what Remaining
   * Limits reports (limit-status.ts), each under the rule name its decline carries.
   */
  readonly limits: readonly PolicyLimit[];
}

interface PendingCheck extends CheckIr {
  readonly rule: string;
  readonly message: string;
  readonly mode: RuleMode;
  /** A limit not narrowed to merchant categories: it applies to external transfers too. */
  readonly spendLimit: boolean;
}

/**
 * Compiles a policy (contract section 11). Throws `PolicyInvalidError` (code `policy_invalid`,
 * `param` at the fault) for any input that is not a valid policy, and nothing else for any
 * JSON value: `test/core/policy-invalid.property.test.ts` holds it to that.
 *
 * Two modes, one answer (DESIGN.md, "Compile time"). The fast mode reads the document and its
 * condition nodes by hand, builds no error paths and takes free text only when it is plain; it
 * either compiles the policy or gives up. On giving up, or on any refusal, the exact mode
 * compiles the same input again with zod and full paths, and its answer (the policy, or the
 * error the client gets) is the answer. So a valid policy costs one fast compile, and an
 * invalid one a fast attempt and an exact compile.
 */
export function compilePolicy(input: unknown, options?: CompileOptions): CompiledPolicy {
  const settings = readCompileOptions(options);
  try {
    return compileIn(true, input, settings);
  } catch (error) {
    // A fast compile's refusals are provisional; anything else thrown is a bug, and goes on.
    if (!(error instanceof ExactPathNeeded) && !(error instanceof SpendgateError)) throw error;
  }
  return compileIn(false, input, settings);
}

/**
 * The exact mode alone: zod for every structure, every path built. What `compilePolicy` falls
 * back to, and the reference the tests hold the fast mode to.
 */
export function compilePolicyExact(input: unknown, options?: CompileOptions): CompiledPolicy {
  return compileIn(false, input, readCompileOptions(options));
}

/**
 * The fast mode alone: throws `ExactPathNeeded` or a (provisional) `SpendgateError` where it
 * gives up. For the tests that hold it to the exact mode; `compilePolicy` is the entry.
 */
export function compilePolicyFast(input: unknown, options?: CompileOptions): CompiledPolicy {
  return compileIn(true, input, readCompileOptions(options));
}

function compileIn(fast: boolean, input: unknown, settings: CompileSettings): CompiledPolicy {
  const { currency, templates: library } = settings;
  const document = fast ? readPolicyDocument(input) : parseWith(policySchema, input, []);
  if (document === null) throw new ExactPathNeeded('a document the fast reading is not sure of');
  // In contract order (categories, countries, limits, templates, rules): the order the checks
  // are decided in, and the order a policy's faults are found in.
  const compilation = startCompilation(currency, fast);
  addListChecks(compilation, document);
  addLimitChecks(compilation, document);
  addTemplateChecks(compilation, document, library);
  addRuleChecks(compilation, document);
  return finishCompilation(compilation, document);
}

/** What the compile steps share: how conditions are checked, and the checks so far, in order. */
interface Compilation {
  readonly fast: boolean;
  /** For the policy's own conditions, counted against the policy's bounds. */
  readonly ctx: CheckContext;
  /** For a template's internals: the same aggregates, no budget. */
  readonly templateCtx: CheckContext;
  readonly pending: PendingCheck[];
  readonly limits: PolicyLimit[];
}

function startCompilation(currency: CurrencyInfo, fast: boolean): Compilation {
  const budget: CheckBudget = {
    conditionsLeft: POLICY_BOUNDS.conditionsMax,
    listValuesLeft: POLICY_BOUNDS.listValuesMax,
  };
  const ctx: CheckContext = { currency, budget, aggregates: new Map(), fast };
  // Template internals come from the library, whose own bounds keep them small; only the
  // parameters a policy passes count against the policy's bounds.
  const templateCtx: CheckContext = {
    currency,
    budget: { conditionsLeft: Infinity, listValuesLeft: Infinity },
    aggregates: ctx.aggregates,
    fast,
  };
  return { fast, ctx, templateCtx, pending: [], limits: [] };
}

function addCheck(
  compilation: Compilation,
  mode: RuleMode,
  rule: string,
  message: string,
  condition: ConditionIr,
  spendLimit = false,
): void {
  compilation.pending.push({
    rule,
    message,
    mode,
    spendLimit,
    condition,
    decision: declined('authorization_failed', rule, message),
    match: Object.freeze({ rule, message }),
  });
}

/** The merchant category and country lists: one enforcing check each. */
function addListChecks(compilation: Compilation, document: PolicyDocument): void {
  const { fast, ctx } = compilation;
  const lists = [
    ['merchantCategories', MCC, 'category', document.merchantCategories],
    ['merchantCountries', COUNTRY, 'country', document.merchantCountries],
  ] as const;
  for (const [name, source, noun, list] of lists) {
    if (list === undefined) continue;
    const codes = list.allow ?? list.block ?? [];
    spendListValues(
      codes.length,
      fast ? UNTRACKED_PATH : [name, list.allow ? 'allow' : 'block'],
      ctx,
    );
    const message = `Merchant ${noun} is ${list.allow ? 'not allowed' : 'blocked'}`;
    addCheck(
      compilation,
      'enforce',
      name,
      message,
      inList(source, codes, list.allow !== undefined),
    );
  }
}

function addLimitChecks(compilation: Compilation, document: PolicyDocument): void {
  const { fast, ctx } = compilation;
  const limits = document.limits ?? [];
  for (let index = 0; index < limits.length; index++) {
    const limit = limits[index] as LimitDocument;
    const path = fast ? UNTRACKED_PATH : ['limits', index];
    const { message, condition, measured } = limitIr(limit, path, ctx);
    // An external transfer has no billing amount: a billing-currency limit is card spend's.
    const spendLimit = limit.merchantCategories === undefined && measured.currency === null;
    const rule = `limits[${index}]`;
    addCheck(compilation, 'enforce', rule, message, condition, spendLimit);
    compilation.limits.push(Object.freeze({ rule, mode: 'enforce', ...measured }));
  }
}

/** Each template a policy names, expanded: its limits, then its rules, in the template's mode. */
function addTemplateChecks(
  compilation: Compilation,
  document: PolicyDocument,
  library: TemplateLibrary,
): void {
  const { fast, ctx, templateCtx } = compilation;
  const templates = document.templates ?? [];
  for (let index = 0; index < templates.length; index++) {
    const ref = templates[index] as TemplateRefDocument;
    const path = fast ? UNTRACKED_PATH : ['templates', index];
    const expanded = expandTemplate(ref, library, path, ctx);
    expanded.limits.forEach((raw, limitIndex) => {
      const limit = fast
        ? templateLimit(raw)
        : parseWith(limitSchema, raw, [...path, 'limits', limitIndex]);
      const { message, condition, measured } = limitIr(limit, path, templateCtx);
      const spendLimit = limit.merchantCategories === undefined && measured.currency === null;
      addCheck(compilation, ref.mode, expanded.name, message, condition, spendLimit);
      compilation.limits.push(Object.freeze({ rule: expanded.name, mode: ref.mode, ...measured }));
    });
    expanded.rules.forEach((rule, ruleIndex) => {
      const rulePath = fast ? UNTRACKED_PATH : [...path, 'rules', ruleIndex, 'conditions'];
      const condition = checkConditions(rule.conditions, rulePath, templateCtx);
      addCheck(compilation, ref.mode, expanded.name, rule.message, condition);
    });
  }
}

/** The policy's own rules, whose names are unique. */
function addRuleChecks(compilation: Compilation, document: PolicyDocument): void {
  const { fast, ctx } = compilation;
  const names = new Set<string>();
  const rules = document.rules ?? [];
  for (let index = 0; index < rules.length; index++) {
    const rule = rules[index] as RuleDocument;
    if (names.has(rule.name)) {
      throw policyError(
        ['rules', index, 'name'],
        'repeats the name of an earlier rule; rule names are unique',
      );
    }
    names.add(rule.name);
    const rulePath = fast ? UNTRACKED_PATH : ['rules', index, 'conditions'];
    const condition = checkConditions(rule.conditions, rulePath, ctx);
    const message = rule.message ?? `Declined by rule ${rule.name}`;
    addCheck(compilation, rule.mode, rule.name, message, condition);
  }
}

/** The checks, split into enforcing and shadow, and the evaluators generated from them. */
function finishCompilation(compilation: Compilation, document: PolicyDocument): CompiledPolicy {
  const { ctx, pending } = compilation;
  const { budget } = ctx;
  assert(budget.conditionsLeft >= 0 && budget.listValuesLeft >= 0, 'bounds held while checking');
  const enforce = pending.filter((check) => check.mode === 'enforce');
  const shadow = pending.filter((check) => check.mode === 'shadow');
  const evaluators = generateEvaluators(
    enforce,
    shadow,
    enforce.filter((check) => check.spendLimit),
    ctx.currency,
  );
  const policy: CompiledPolicy = {
    document,
    currency: ctx.currency,
    aggregates: Object.freeze([...ctx.aggregates.values()]),
    checks: Object.freeze(enforce.map((check) => compiledCheck(check, ctx.currency))),
    shadowChecks: Object.freeze(shadow.map((check) => compiledCheck(check, ctx.currency))),
    firstDecline: evaluators.firstDecline,
    shadowMatches: evaluators.shadowMatches,
    firstLimitDecline: evaluators.firstLimitDecline,
    limits: Object.freeze([...compilation.limits]),
  };
  // Not enumerable: a copy made by spreading the policy is not a compiled policy.
  Object.defineProperty(policy, COMPILED, { value: true, enumerable: false });
  return Object.freeze(policy);
}

/**
 * The mark of every policy this module compiled, a symbol no other code can name. `decide`
 * and `evaluate` run a policy's generated code, so they take only these: an object that merely
 * looks like a compiled policy (or one from another copy of spendgate, whose code checks
 * amounts against its own Decimal) is refused. A property read, cheaper than a WeakSet's.
 */
const COMPILED: unique symbol = Symbol('spendgate.compiledPolicy');

/** Whether `value` is a policy `compilePolicy` of this copy of spendgate compiled. */
export function isCompiledPolicy(value: unknown): value is CompiledPolicy {
  return (
    typeof value === 'object' &&
    value !== null &&
    (value as { readonly [COMPILED]?: unknown })[COMPILED] === true
  );
}

/** A template's limit, its parameters substituted, read by hand in a fast compile. */
function templateLimit(raw: unknown): LimitDocument {
  const limit = readLimit(raw);
  if (limit === null) throw new ExactPathNeeded('a template limit');
  return limit;
}

function compiledCheck(check: PendingCheck, currency: CurrencyInfo): CompiledCheck {
  return Object.freeze(new Check(check, currency));
}

/** A compiled check; its predicate is generated on first use, from the IR it keeps. */
class Check implements CompiledCheck {
  readonly rule: string;
  readonly message: string;
  readonly mode: RuleMode;
  readonly decision: Decision;
  readonly match: ShadowMatch;
  readonly #condition: ConditionIr;
  readonly #currency: CurrencyInfo;
  #test: Predicate | undefined;

  constructor(check: PendingCheck, currency: CurrencyInfo) {
    this.rule = check.rule;
    this.message = check.message;
    this.mode = check.mode;
    this.decision = check.decision;
    this.match = check.match;
    this.#condition = check.condition;
    this.#currency = currency;
  }

  get test(): Predicate {
    this.#test ??= generatePredicate(this.#condition, this.#currency);
    return this.#test;
  }
}

const MCC: Source = { kind: 'merchant', field: 'mcc' };
const COUNTRY: Source = { kind: 'merchant', field: 'country' };
const AMOUNT: Source = { kind: 'request', field: 'amount' };

/** `source in codes`, or `notIn` for an allow list (which declines what it does not name). */
function inList(source: Source, codes: readonly string[], allowList: boolean): ConditionIr {
  return {
    kind: 'compare',
    valueKind: 'string',
    operator: allowList ? 'notIn' : 'in',
    source,
    operand: { kind: 'list', values: codes },
  };
}

const INTERVAL_WORDS = {
  perTransaction: 'Per-transaction',
  daily: 'Daily',
  weekly: 'Weekly',
  monthly: 'Monthly',
  yearly: 'Yearly',
  allTime: 'All-time',
} as const;

/** A limit in a billing currency (issue 35): `billingOver`, over billing amounts. */
function billingLimitIr(
  limit: LimitDocument,
  amount: NonNullable<LimitDocument['amount']>,
  billingCurrency: string,
  shared: {
    path: readonly PathKey[];
    ctx: CheckContext;
    where: string;
    words: string;
    narrow: (condition: ConditionIr) => ConditionIr;
    measure: (
      aggregate: AggregateSpec | null,
      amount: Decimal | null,
      count: number | null,
    ) => Omit<PolicyLimit, 'rule' | 'mode'>;
  },
): { message: string; condition: ConditionIr; measured: Omit<PolicyLimit, 'rule' | 'mode'> } {
  const { path, ctx, where, words, narrow, measure } = shared;
  const max = moneyConstant(amount, pathTo(ctx, path, 'amount'), ctx);
  const shown = `${max.toFixed(Math.max(2, max.decimalPlaces()))} ${billingCurrency}`;
  const interval = limit.interval;
  const perTransaction = interval === 'perTransaction';
  const aggregate =
    interval === 'perTransaction'
      ? null
      : aggregateSpec('amount', interval, limit.merchantCategories ?? null, billingCurrency);
  if (aggregate !== null) ctx.aggregates.set(aggregate.key, aggregate);
  return {
    measured: measure(aggregate, max, null),
    message: perTransaction
      ? `Amount exceeds the per-transaction limit of ${shown}${where}`
      : `${words} spend limit of ${shown}${where} would be exceeded`,
    condition: narrow({
      kind: 'billingOver',
      currency: billingCurrency,
      spent: aggregate === null ? null : { kind: 'aggregate', aggregate },
      max,
    }),
  };
}

/**
 * The billing currency a limit is written in (issue 35), or null for the vault's asset (no
 * `currency`, or the asset's own code). Another asset's code is refused: a SOL vault's limit
 * cannot be in USDC, which no transaction of it is held or billed in.
 */
function limitBillingCurrency(
  limit: LimitDocument,
  path: readonly PathKey[],
  ctx: CheckContext,
): string | null {
  const currency = limit.currency;
  // At par (USD on a USDC vault) a billing amount is the asset amount: an asset limit.
  if (currency === undefined || currency === ctx.currency.code) return null;
  if (isAtPar(currency, ctx.currency.code)) return null;
  if (isCurrencyCode(currency) || currency.length !== 3) {
    throw policyError(
      pathTo(ctx, path, 'currency'),
      `must be the vault's asset (${ctx.currency.code}) or a billing currency (ISO 4217, such as "USD")`,
    );
  }
  return currency;
}

/**
 * A limit becomes one condition. A windowed amount limit adds the request amount to its
 * aggregate: that sum is the one Decimal a decision allocates per such limit.
 */
function limitIr(
  limit: LimitDocument,
  path: readonly PathKey[],
  ctx: CheckContext,
): { message: string; condition: ConditionIr; measured: Omit<PolicyLimit, 'rule' | 'mode'> } {
  const mccList = limit.merchantCategories ?? null;
  if (mccList !== null) {
    spendListValues(mccList.length, pathTo(ctx, path, 'merchantCategories'), ctx);
  }
  const where = mccList === null ? '' : ` at merchant categories ${mccList.join(', ')}`;
  const narrow = (condition: ConditionIr): ConditionIr =>
    mccList === null
      ? condition
      : { kind: 'all', children: [inList(MCC, mccList, false), condition] };
  const words = INTERVAL_WORDS[limit.interval];
  const currency = limitBillingCurrency(limit, path, ctx);
  const { interval } = limit;
  const measure = (aggregate: AggregateSpec | null, amount: Decimal | null, count: number | null) =>
    ({ interval, merchantCategories: mccList, amount, count, aggregate, currency }) as const;
  if (limit.amount !== undefined && currency !== null) {
    const shared = { path, ctx, where, words, narrow, measure };
    return billingLimitIr(limit, limit.amount, currency, shared);
  }

  if (limit.amount !== undefined) {
    const max = moneyConstant(limit.amount, pathTo(ctx, path, 'amount'), ctx);
    const shown = `${formatAmount(max, ctx.currency)} ${ctx.currency.code}`;
    if (limit.interval === 'perTransaction') {
      return {
        measured: measure(null, max, null),
        message: `Amount exceeds the per-transaction limit of ${shown}${where}`,
        condition: narrow({
          kind: 'compare',
          valueKind: 'money',
          operator: 'greaterThan',
          source: AMOUNT,
          operand: { kind: 'constant', value: max },
        }),
      };
    }
    const aggregate = aggregateSpec('amount', limit.interval, mccList);
    ctx.aggregates.set(aggregate.key, aggregate);
    return {
      measured: measure(aggregate, max, null),
      message: `${words} spend limit of ${shown}${where} would be exceeded`,
      condition: narrow({ kind: 'spendOver', spent: { kind: 'aggregate', aggregate }, max }),
    };
  }

  const countMax = limit.count;
  assert(
    countMax !== undefined && limit.interval !== 'perTransaction',
    'schema: count limits are windowed',
  );
  const aggregate = aggregateSpec('count', limit.interval, mccList);
  ctx.aggregates.set(aggregate.key, aggregate);
  return {
    measured: measure(aggregate, null, countMax),
    message: `${words} limit of ${countMax} transactions${where} reached`,
    // This transaction would be number count + 1: over the limit once count >= countMax.
    condition: narrow({
      kind: 'compare',
      valueKind: 'integer',
      operator: 'greaterThanInclusive',
      source: { kind: 'aggregate', aggregate },
      operand: { kind: 'constant', value: countMax },
    }),
  };
}
