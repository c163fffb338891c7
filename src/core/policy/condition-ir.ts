import type { Decimal } from '../money/decimal.js';
import type { EvaluationInput } from './evaluation-input.js';
import type { Operator } from './operators.js';

/**
 * A checked condition tree: every fact resolved to its reader, every constant parsed, every
 * operator known to fit its operand types. Only this, never raw JSON, reaches the compiler.
 */
export type ConditionIr =
  | { readonly kind: 'all' | 'any'; readonly children: readonly ConditionIr[] }
  | { readonly kind: 'not'; readonly child: ConditionIr }
  | MoneyLeaf
  | IntegerLeaf
  | StringLeaf;

type Operand<T> =
  | { readonly kind: 'constant'; readonly value: T }
  | { readonly kind: 'list'; readonly values: readonly T[] }
  | { readonly kind: 'fact'; readonly read: (input: EvaluationInput) => T };

export interface MoneyLeaf {
  readonly kind: 'money';
  readonly operator: Operator;
  readonly read: (input: EvaluationInput) => Decimal;
  readonly operand: Operand<Decimal>;
}
export interface IntegerLeaf {
  readonly kind: 'integer';
  readonly operator: Operator;
  readonly read: (input: EvaluationInput) => number;
  readonly operand: Operand<number>;
}
export interface StringLeaf {
  readonly kind: 'string';
  readonly operator: Operator;
  readonly read: (input: EvaluationInput) => string | undefined;
  readonly operand: Operand<string | undefined>;
}
