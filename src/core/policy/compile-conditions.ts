import { assert, InvariantError } from '../assert.js';
import { compareDecimals } from '../money/compare.js';
import type { Decimal } from '../money/decimal.js';
import type { ConditionIr, IntegerLeaf, MoneyLeaf, StringLeaf } from './condition-ir.js';
import type { EvaluationInput } from './evaluation-input.js';

/**
 * Turns a checked condition tree into one synchronous predicate made of small closures. Every
 * constant is already parsed; lists become Sets (or a sorted array searched by halves for
 * decimals, which have no value equality a Set could use); nothing here allocates per call.
 * The semantics are json-rules-engine's, operator by operator, except where the README's
 * "Differences from json-rules-engine" says otherwise.
 */
export type Predicate = (input: EvaluationInput) => boolean;

export function compileCondition(ir: ConditionIr): Predicate {
  switch (ir.kind) {
    case 'all':
      return compileAll(ir.children.map(compileCondition));
    case 'any':
      return compileAny(ir.children.map(compileCondition));
    case 'not': {
      const child = compileCondition(ir.child);
      return (input) => !child(input);
    }
    case 'money':
      return compileMoney(ir);
    case 'integer':
      return compileInteger(ir);
    case 'string':
      return compileString(ir);
  }
}

function compileAll(children: readonly Predicate[]): Predicate {
  assert(children.length > 0, 'all has children (the schema refuses an empty list)');
  const [first, second] = children;
  if (children.length === 1 && first !== undefined) return first;
  if (children.length === 2 && first !== undefined && second !== undefined) {
    return (input) => first(input) && second(input);
  }
  const count = children.length;
  return (input) => {
    for (let index = 0; index < count; index++) {
      if (!(children[index] as Predicate)(input)) return false;
    }
    return true;
  };
}

function compileAny(children: readonly Predicate[]): Predicate {
  assert(children.length > 0, 'any has children (the schema refuses an empty list)');
  const [first, second] = children;
  if (children.length === 1 && first !== undefined) return first;
  if (children.length === 2 && first !== undefined && second !== undefined) {
    return (input) => first(input) || second(input);
  }
  const count = children.length;
  return (input) => {
    for (let index = 0; index < count; index++) {
      if ((children[index] as Predicate)(input)) return true;
    }
    return false;
  };
}

/** Decimal comparison through `compareDecimals`: exact, never a float, allocation-free. */
function compileMoney(leaf: MoneyLeaf): Predicate {
  const read = leaf.read;
  const operand = leaf.operand;
  if (operand.kind === 'list') {
    const sorted = sortedUnique(operand.values);
    if (leaf.operator === 'in') return (input) => hasDecimal(sorted, read(input));
    assert(leaf.operator === 'notIn', 'a money list takes in or notIn');
    return (input) => !hasDecimal(sorted, read(input));
  }
  if (operand.kind === 'constant') {
    const value = operand.value;
    switch (leaf.operator) {
      case 'equal':
        return (input) => compareDecimals(read(input), value) === 0;
      case 'notEqual':
        return (input) => compareDecimals(read(input), value) !== 0;
      case 'lessThan':
        return (input) => compareDecimals(read(input), value) < 0;
      case 'lessThanInclusive':
        return (input) => compareDecimals(read(input), value) <= 0;
      case 'greaterThan':
        return (input) => compareDecimals(read(input), value) > 0;
      case 'greaterThanInclusive':
        return (input) => compareDecimals(read(input), value) >= 0;
      default:
        return unreachableOperator(leaf.operator, 'money');
    }
  }
  const other = operand.read;
  switch (leaf.operator) {
    case 'equal':
      return (input) => compareDecimals(read(input), other(input)) === 0;
    case 'notEqual':
      return (input) => compareDecimals(read(input), other(input)) !== 0;
    case 'lessThan':
      return (input) => compareDecimals(read(input), other(input)) < 0;
    case 'lessThanInclusive':
      return (input) => compareDecimals(read(input), other(input)) <= 0;
    case 'greaterThan':
      return (input) => compareDecimals(read(input), other(input)) > 0;
    case 'greaterThanInclusive':
      return (input) => compareDecimals(read(input), other(input)) >= 0;
    default:
      return unreachableOperator(leaf.operator, 'money');
  }
}

function compileInteger(leaf: IntegerLeaf): Predicate {
  const read = leaf.read;
  const operand = leaf.operand;
  if (operand.kind === 'list') {
    const set = new Set(operand.values);
    if (leaf.operator === 'in') return (input) => set.has(read(input));
    assert(leaf.operator === 'notIn', 'an integer list takes in or notIn');
    return (input) => !set.has(read(input));
  }
  if (operand.kind === 'constant') {
    const value = operand.value;
    switch (leaf.operator) {
      case 'equal':
        return (input) => read(input) === value;
      case 'notEqual':
        return (input) => read(input) !== value;
      case 'lessThan':
        return (input) => read(input) < value;
      case 'lessThanInclusive':
        return (input) => read(input) <= value;
      case 'greaterThan':
        return (input) => read(input) > value;
      case 'greaterThanInclusive':
        return (input) => read(input) >= value;
      default:
        return unreachableOperator(leaf.operator, 'integer');
    }
  }
  const other = operand.read;
  switch (leaf.operator) {
    case 'equal':
      return (input) => read(input) === other(input);
    case 'notEqual':
      return (input) => read(input) !== other(input);
    case 'lessThan':
      return (input) => read(input) < other(input);
    case 'lessThanInclusive':
      return (input) => read(input) <= other(input);
    case 'greaterThan':
      return (input) => read(input) > other(input);
    case 'greaterThanInclusive':
      return (input) => read(input) >= other(input);
    default:
      return unreachableOperator(leaf.operator, 'integer');
  }
}

/**
 * Strings compare by identity of their characters (`===`), as json-rules-engine's equal does.
 * An absent optional fact (merchant id or city) is `undefined`: it equals nothing, is in no
 * list, and contains nothing; so `notEqual` and `notIn` hold for it and `doesNotContain` does not.
 */
function compileString(leaf: StringLeaf): Predicate {
  const read = leaf.read;
  const operand = leaf.operand;
  if (operand.kind === 'list') {
    const set = new Set(operand.values);
    if (leaf.operator === 'in') return (input) => set.has(read(input));
    assert(leaf.operator === 'notIn', 'a string list takes in or notIn');
    return (input) => !set.has(read(input));
  }
  if (operand.kind === 'constant') {
    const value = operand.value;
    switch (leaf.operator) {
      case 'equal':
        return (input) => read(input) === value;
      case 'notEqual':
        return (input) => read(input) !== value;
      case 'contains': {
        assert(value !== undefined, 'a substring is a string');
        return (input) => {
          const text = read(input);
          return text !== undefined && text.includes(value);
        };
      }
      case 'doesNotContain': {
        assert(value !== undefined, 'a substring is a string');
        return (input) => {
          const text = read(input);
          return text !== undefined && !text.includes(value);
        };
      }
      default:
        return unreachableOperator(leaf.operator, 'string');
    }
  }
  const other = operand.read;
  switch (leaf.operator) {
    case 'equal':
      return (input) => read(input) === other(input);
    case 'notEqual':
      return (input) => read(input) !== other(input);
    default:
      return unreachableOperator(leaf.operator, 'string');
  }
}

function unreachableOperator(operator: string, kind: string): never {
  throw new InvariantError(`checker let ${operator} through for a ${kind} fact`);
}

function sortedUnique(values: readonly Decimal[]): readonly Decimal[] {
  const sorted = [...values].sort((a, b) => a.cmp(b));
  return sorted.filter((value, index) => index === 0 || !value.eq(sorted[index - 1] as Decimal));
}

function hasDecimal(sorted: readonly Decimal[], value: Decimal): boolean {
  let low = 0;
  let high = sorted.length - 1;
  while (low <= high) {
    const middle = (low + high) >>> 1;
    const order = compareDecimals(sorted[middle] as Decimal, value);
    if (order === 0) return true;
    if (order < 0) low = middle + 1;
    else high = middle - 1;
  }
  return false;
}
