import type { z } from 'zod';
import { givenWords } from '../errors/given.js';
import { formatPath, PolicyInvalidError, SpendgateError } from '../errors/spendgate-error.js';
import {
  comparisonDecimal,
  ImpreciseNumber,
  JSON_NUMBER_DIGITS_MAX,
  parseAmount,
} from '../money/amount.js';
import { isCurrencyCode, type CurrencyInfo } from '../money/currencies.js';
import type { Decimal } from '../money/decimal.js';
import type { AggregateSpec } from './aggregates.js';
import { POLICY_BOUNDS } from './bounds.js';
import type { ComparisonIr, ConditionIr, MoneyIntegerIr, Operand } from './condition-ir.js';
import { isCountryCode, isMccCode } from './countries.js';
import { FACT_NAMES, FACTS, isFactName, type ScalarFact, type StringFact } from './facts.js';
import {
  LIST_OPERATORS,
  OPERATORS,
  ORDERING_OPERATORS,
  SUBSTRING_OPERATORS,
  type Operator,
} from './operators.js';
import { isPlainText } from './fast-document.js';
import {
  ExactPathNeeded,
  parseWith,
  policyError,
  UNTRACKED_PATH,
  type PathKey,
} from './parse-with.js';
import {
  allNodeSchema,
  anyNodeSchema,
  factRefSchema,
  leafNodeSchema,
  notNodeSchema,
} from './schema.js';

/** Counters shared by every check of one policy, so that bounds hold for the policy as a whole. */
export interface CheckBudget {
  conditionsLeft: number;
  listValuesLeft: number;
}

export interface CheckContext {
  readonly currency: CurrencyInfo;
  readonly budget: CheckBudget;
  /** Aggregates the checked conditions read, by key; filled in as facts are resolved. */
  readonly aggregates: Map<string, AggregateSpec>;
  /**
   * A fast compile (compile.ts): nodes are read by hand rather than by zod, no path is built,
   * and free text is taken only when plain. Its refusals are provisional: the compiler then
   * compiles again in exact mode, whose error the client gets, so only what a fast compile
   * accepts must agree with exact mode, and the property tests hold it to that.
   */
  readonly fast: boolean;
}

/** `[...path, key]`, or nothing in a fast compile, which shows no path. */
export function pathTo(
  ctx: CheckContext,
  path: readonly PathKey[],
  key: PathKey,
): readonly PathKey[] {
  return ctx.fast ? UNTRACKED_PATH : [...path, key];
}

/** Free text in a fast compile must be plain; the schema's text check judges the rest. */
export function requirePlainText(ctx: CheckContext, text: string): void {
  if (ctx.fast && !isPlainText(text)) throw new ExactPathNeeded('text that is not plain');
}

const MERCHANT_PATHS = Object.keys(FACTS.merchant.paths).join(', ');

/**
 * Checks one rule's `conditions` and returns its IR. The root must be an all/any/not node (as
 * json-rules-engine requires); depth is checked before each descent, so a hostile tree of any
 * depth costs at most `depthMax` frames.
 */
export function checkConditions(
  node: unknown,
  path: readonly PathKey[],
  ctx: CheckContext,
): ConditionIr {
  if (node === undefined) throw policyError(path, 'is required');
  if (!isPlainObject(node) || !('all' in node || 'any' in node || 'not' in node)) {
    throw policyError(path, 'must be an object with all, any or not at its top');
  }
  return checkNode(node, path, 1, ctx);
}

function checkNode(
  node: unknown,
  path: readonly PathKey[],
  depth: number,
  ctx: CheckContext,
): ConditionIr {
  if (depth > POLICY_BOUNDS.depthMax) {
    throw policyError(path, `nests deeper than ${POLICY_BOUNDS.depthMax} levels`);
  }
  ctx.budget.conditionsLeft -= 1;
  if (ctx.budget.conditionsLeft < 0) {
    throw policyError(
      path,
      `exceeds the bound of ${POLICY_BOUNDS.conditionsMax} conditions in all rules`,
    );
  }
  if (!isPlainObject(node)) throw policyError(path, 'must be a condition object');

  if ('all' in node || 'any' in node) {
    const kind = 'all' in node ? 'all' : 'any';
    let children: readonly unknown[];
    if (ctx.fast) {
      children = readChildren(node, kind);
    } else {
      children =
        kind === 'all'
          ? parseWith(allNodeSchema, node, path).all
          : parseWith(anyNodeSchema, node, path).any;
    }
    const kindPath = pathTo(ctx, path, kind);
    const checked: ConditionIr[] = [];
    for (let index = 0; index < children.length; index++) {
      checked.push(checkNode(children[index], pathTo(ctx, kindPath, index), depth + 1, ctx));
    }
    return { kind, children: checked };
  }
  if ('not' in node) {
    const not = ctx.fast ? readNot(node) : parseWith(notNodeSchema, node, path).not;
    return { kind: 'not', child: checkNode(not, pathTo(ctx, path, 'not'), depth + 1, ctx) };
  }
  if ('fact' in node) return checkLeaf(node, path, ctx);
  throw policyError(path, 'must have all, any, not or fact');
}

// The node schemas of schema.ts, read by hand for a fast compile: exactly their keys, their
// types and bounds; anything else goes to exact mode, where zod reads it.
function isLeafKey(key: string): boolean {
  return key === 'fact' || key === 'operator' || key === 'value' || key === 'path';
}
const OPERATOR_SET: ReadonlySet<unknown> = new Set(OPERATORS);
/** The schemas' bound on a fact name and a fact path. */
const FACT_TEXT_LENGTH_MAX = 64;

type LeafNode = z.output<typeof leafNodeSchema>;
type FactRef = z.output<typeof factRefSchema>;

function readChildren(node: Record<string, unknown>, kind: 'all' | 'any'): readonly unknown[] {
  for (const key in node) if (key !== kind) throw new ExactPathNeeded(kind);
  const children = node[kind];
  if (
    !Array.isArray(children) ||
    children.length === 0 ||
    children.length > POLICY_BOUNDS.childrenMax
  ) {
    throw new ExactPathNeeded(kind);
  }
  return children;
}

function readNot(node: Record<string, unknown>): unknown {
  for (const key in node) if (key !== 'not') throw new ExactPathNeeded('not');
  return node['not'];
}

function isFactText(value: unknown): value is string {
  return typeof value === 'string' && value.length <= FACT_TEXT_LENGTH_MAX;
}

function readLeaf(node: Record<string, unknown>): LeafNode {
  for (const key in node) if (!isLeafKey(key)) throw new ExactPathNeeded('leaf');
  const { fact, operator, path } = node;
  if (!isFactText(fact) || !OPERATOR_SET.has(operator) || !('value' in node)) {
    throw new ExactPathNeeded('leaf');
  }
  if (path !== undefined && !isFactText(path)) throw new ExactPathNeeded('leaf');
  return { fact, operator: operator as Operator, value: node['value'], path };
}

function readFactRef(node: Record<string, unknown>): FactRef {
  for (const key in node) if (key !== 'fact' && key !== 'path') throw new ExactPathNeeded('fact');
  const { fact, path } = node;
  if (!isFactText(fact)) throw new ExactPathNeeded('fact');
  if (path !== undefined && !isFactText(path)) throw new ExactPathNeeded('fact');
  return { fact, path };
}

function checkLeaf(
  node: Record<string, unknown>,
  path: readonly PathKey[],
  ctx: CheckContext,
): ConditionIr {
  const leaf = ctx.fast ? readLeaf(node) : parseWith(leafNodeSchema, node, path);
  const operator = leaf.operator;
  const lhs = resolveFact(leaf.fact, leaf.path, path, ctx);
  const valuePath = pathTo(ctx, path, 'value');
  if (leaf.value === undefined) throw policyError(valuePath, 'is required');

  if (lhs.kind === 'string' && ORDERING_OPERATORS.has(operator)) {
    throw policyError(
      [...path, 'operator'],
      `${operator} does not apply to the string fact ${leaf.fact}`,
    );
  }
  if (lhs.kind !== 'string' && SUBSTRING_OPERATORS.has(operator)) {
    throw policyError([...path, 'operator'], `${operator} applies only to string facts`);
  }

  if (isPlainObject(leaf.value) && 'fact' in leaf.value) {
    return factRefIr(lhs, leaf.value, operator, valuePath, ctx);
  }

  if (LIST_OPERATORS.has(operator)) {
    // An empty list is json-rules-engine's too: `in []` never holds, `notIn []` always does.
    if (!Array.isArray(leaf.value)) {
      throw policyError(valuePath, `must be a list for ${operator}, not ${givenWords(leaf.value)}`);
    }
    const list: readonly unknown[] = leaf.value;
    spendListValues(list.length, valuePath, ctx);
    return listIr(lhs, list, operator, valuePath, ctx);
  }

  if (SUBSTRING_OPERATORS.has(operator) && lhs.kind === 'string') {
    return substringIr(lhs, leaf.value, operator, valuePath, ctx);
  }

  return constantIr(lhs, leaf.value, operator, valuePath, ctx);
}

/** A leaf whose value names another fact: both facts of one kind, compared as they are. */
function factRefIr(
  lhs: ScalarFact,
  value: Record<string, unknown>,
  operator: Operator,
  valuePath: readonly PathKey[],
  ctx: CheckContext,
): ConditionIr {
  if (LIST_OPERATORS.has(operator) || SUBSTRING_OPERATORS.has(operator)) {
    // No fact is a list, and a substring of another fact is not a rule anyone has asked for:
    // both are refused rather than given json-rules-engine's string-indexOf meaning.
    throw policyError(
      valuePath,
      `may name a fact only with equal, notEqual and the ordering operators, not ${operator}`,
    );
  }
  const ref = ctx.fast ? readFactRef(value) : parseWith(factRefSchema, value, valuePath);
  const rhs = resolveFact(ref.fact, ref.path, valuePath, ctx);
  if (rhs.kind === lhs.kind) return leafIr(lhs, rhs, operator);
  // Numbers compare with numbers: money with an integer fact, exactly (condition-ir.ts).
  if (lhs.kind !== 'string' && rhs.kind !== 'string') {
    // List and substring operators were refused above: what is left is equality or order.
    const order = operator as MoneyIntegerIr['operator'];
    return lhs.kind === 'money'
      ? {
          kind: 'compareMoneyInteger',
          operator: order,
          money: lhs.source,
          integer: rhs.source,
          moneyLeft: true,
        }
      : {
          kind: 'compareMoneyInteger',
          operator: order,
          money: rhs.source,
          integer: lhs.source,
          moneyLeft: false,
        };
  }
  throw policyError(
    pathTo(ctx, valuePath, 'fact'),
    `is ${withArticle(rhs.kind)} fact, which cannot be compared with ${withArticle(lhs.kind)} fact`,
  );
}

/** A substring operator's leaf: a string fact against a bounded, plain string. */
function substringIr(
  lhs: StringFact,
  value: unknown,
  operator: Operator,
  valuePath: readonly PathKey[],
  ctx: CheckContext,
): ConditionIr {
  if (
    typeof value !== 'string' ||
    value.length === 0 ||
    value.length > POLICY_BOUNDS.stringValueLengthMax
  ) {
    throw policyError(
      valuePath,
      `must be a string of 1 to ${POLICY_BOUNDS.stringValueLengthMax} characters`,
    );
  }
  requirePlainText(ctx, value);
  return {
    kind: 'compare',
    valueKind: 'string',
    operator,
    source: lhs.source,
    operand: { kind: 'constant', value },
  };
}

/** Counts list values against the policy-wide bound. */
export function spendListValues(count: number, path: readonly PathKey[], ctx: CheckContext): void {
  ctx.budget.listValuesLeft -= count;
  if (ctx.budget.listValuesLeft < 0) {
    throw policyError(
      path,
      `exceeds the bound of ${POLICY_BOUNDS.listValuesMax} list values in the policy`,
    );
  }
}

function resolveFact(
  name: string,
  factPath: string | undefined,
  nodePath: readonly PathKey[],
  ctx: CheckContext,
): ScalarFact {
  if (!isFactName(name)) {
    throw policyError(
      [...nodePath, 'fact'],
      `names an unknown fact; facts are ${FACT_NAMES.join(', ')}`,
    );
  }
  const fact = FACTS[name];
  if (fact.kind === 'object') {
    const paths: Readonly<Record<string, StringFact>> = fact.paths;
    const field =
      factPath !== undefined && Object.hasOwn(paths, factPath) ? paths[factPath] : undefined;
    if (field === undefined) {
      throw policyError(
        [...nodePath, 'path'],
        `must be one of ${MERCHANT_PATHS} for the ${name} fact`,
      );
    }
    return field;
  }
  if (factPath !== undefined) {
    throw policyError([...nodePath, 'path'], `applies only to the merchant fact, not ${name}`);
  }
  if (fact.source.kind === 'aggregate') {
    ctx.aggregates.set(fact.source.aggregate.key, fact.source.aggregate);
  }
  return fact;
}

function leafIr(lhs: ScalarFact, rhs: ScalarFact, operator: Operator): ConditionIr {
  // The caller checked that both sides are of one kind, so the pair is one of the union's
  // members; TypeScript cannot follow that through lhs.kind, hence the cast.
  const operand = { kind: 'fact', source: rhs.source } as const;
  return {
    kind: 'compare',
    valueKind: lhs.kind,
    operator,
    source: lhs.source,
    operand,
  } as ComparisonIr;
}

function listIr(
  lhs: ScalarFact,
  list: readonly unknown[],
  operator: Operator,
  path: readonly PathKey[],
  ctx: CheckContext,
): ConditionIr {
  const values: (Decimal | number | string)[] = [];
  for (let index = 0; index < list.length; index++) {
    values.push(parseConstant(lhs, list[index], pathTo(ctx, path, index), ctx));
  }
  return comparisonIr(lhs, operator, { kind: 'list', values });
}

function constantIr(
  lhs: ScalarFact,
  value: unknown,
  operator: Operator,
  path: readonly PathKey[],
  ctx: CheckContext,
): ConditionIr {
  return comparisonIr(lhs, operator, {
    kind: 'constant',
    value: parseConstant(lhs, value, path, ctx),
  });
}

/** A constant parsed by its fact's kind: a Decimal for money, a number, or a string. */
function parseConstant(
  lhs: ScalarFact,
  value: unknown,
  path: readonly PathKey[],
  ctx: CheckContext,
): Decimal | number | string {
  switch (lhs.kind) {
    case 'money':
      return comparisonMoney(value, path);
    case 'integer':
      return comparisonNumber(value, path);
    case 'string':
      return stringConstant(lhs, value, path, ctx);
  }
}

function comparisonIr(
  lhs: ScalarFact,
  operator: Operator,
  operand: Operand<Decimal | number | string>,
): ConditionIr {
  // parseConstant made every value of the operand of lhs.kind, so the pair is one of the
  // union's members; TypeScript cannot follow that through the switch, hence the cast.
  return {
    kind: 'compare',
    valueKind: lhs.kind,
    operator,
    source: lhs.source,
    operand,
  } as ComparisonIr;
}

/** Parses a money constant with the vault currency's scale, as a request amount would be. */
export function moneyConstant(
  value: unknown,
  path: readonly PathKey[],
  ctx: CheckContext,
): Decimal {
  // A fast compile shows no error, so it needs no path to name the field by.
  if (ctx.fast) return parseAmount(value, ctx.currency);
  try {
    return parseAmount(value, ctx.currency, { param: formatPath(path) });
  } catch (error) {
    if (error instanceof SpendgateError)
      throw new PolicyInvalidError(error.message, formatPath(path));
    throw error;
  }
}

/**
 * A constant a money fact is compared with: any exact decimal (`comparisonDecimal`), negative
 * or finer than the currency included, since a comparison means what it says whatever the
 * fact's range (`amount greaterThan -1` always holds).
 */
function comparisonMoney(value: unknown, path: readonly PathKey[]): Decimal {
  const read = comparisonDecimal(value);
  if (typeof read === 'string') throw policyError(path, read);
  return read;
}

/**
 * A constant an integer fact is compared with: any finite JSON number, within the fact's range
 * or not (`countDaily greaterThan -1` always holds, `hourUtc lessThan 8.5` is `hourUtc <= 8`),
 * as json-rules-engine compares. Not a string: `"5"` never equals 5 there, and is a mistake.
 */
function comparisonNumber(value: unknown, path: readonly PathKey[]): number {
  if (value instanceof ImpreciseNumber) {
    throw policyError(path, `has more than ${JSON_NUMBER_DIGITS_MAX} significant digits`);
  }
  if (typeof value !== 'number' || !Number.isFinite(value)) {
    throw policyError(path, `must be a number, not ${givenWords(value)}`);
  }
  // -0 equals 0 everywhere it is compared; written as 0, the program's constants stay plain.
  return value === 0 ? 0 : value;
}

function stringConstant(
  fact: StringFact,
  value: unknown,
  path: readonly PathKey[],
  ctx: CheckContext,
): string {
  if (typeof value !== 'string')
    throw policyError(path, `must be a string, not ${givenWords(value)}`);
  switch (fact.format) {
    case 'mcc':
      if (!isMccCode(value)) throw policyError(path, 'must be a four-digit merchant category code');
      break;
    case 'country':
      if (!isCountryCode(value))
        throw policyError(path, 'must be an ISO 3166-1 alpha-2 country code');
      break;
    case 'currency':
      if (!isCurrencyCode(value)) throw policyError(path, 'must be a supported currency code');
      break;
    case 'isoCurrency':
      // The core keeps no ISO 4217 table: the form of a code (EUR), or a vault asset (USDC).
      if (!/^[A-Z]{3}$/.test(value) && !isCurrencyCode(value)) {
        throw policyError(path, 'must be an ISO 4217 currency code, like EUR');
      }
      break;
    case 'text':
      if (value.length === 0 || value.length > POLICY_BOUNDS.stringValueLengthMax) {
        throw policyError(
          path,
          `must be a string of 1 to ${POLICY_BOUNDS.stringValueLengthMax} characters`,
        );
      }
      requirePlainText(ctx, value);
      break;
  }
  return value;
}

/** "an integer", "a money": the article English gives the word. */
function withArticle(word: string): string {
  return /^[aeiou]/.test(word) ? `an ${word}` : `a ${word}`;
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
