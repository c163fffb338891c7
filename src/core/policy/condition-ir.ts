import type { Decimal } from '../money/decimal.js';
import type { Source } from './facts.js';
import type { Operator, OrderingOperator } from './operators.js';

/**
 * A checked condition: every fact resolved to its source, every constant parsed, every operator
 * known to fit its operand types. Only this, never raw JSON, reaches the code generator.
 */
export type ConditionIr =
  | { readonly kind: 'all' | 'any'; readonly children: readonly ConditionIr[] }
  | { readonly kind: 'not'; readonly child: ConditionIr }
  | ComparisonIr
  | MoneyIntegerIr
  | SpendOverIr
  | BillingOverIr;

export type ValueKind = 'money' | 'integer' | 'string';

export type ValueOf<K extends ValueKind> = K extends 'money'
  ? Decimal
  : K extends 'integer'
    ? number
    : string;

export type Operand<T> =
  | { readonly kind: 'constant'; readonly value: T }
  | { readonly kind: 'list'; readonly values: readonly T[] }
  | { readonly kind: 'fact'; readonly source: Source };

interface Comparison<K extends ValueKind> {
  readonly kind: 'compare';
  readonly valueKind: K;
  readonly operator: Operator;
  readonly source: Source;
  readonly operand: Operand<ValueOf<K>>;
}

export type ComparisonIr = Comparison<'money'> | Comparison<'integer'> | Comparison<'string'>;

/** A windowed spend limit: `spent + request amount > max`, compared as decimals. */
export interface SpendOverIr {
  readonly kind: 'spendOver';
  readonly spent: Source;
  readonly max: Decimal;
}

/**
 * A limit written in a billing currency (issue 35): `spent + billing amount > max` in that
 * currency, `spent` null for a per-transaction limit. A request with no billing amount in it
 * (asked in the asset, or billed in another currency) cannot be counted, so it is declined.
 */
export interface BillingOverIr {
  readonly kind: 'billingOver';
  readonly currency: string;
  readonly spent: Source | null;
  readonly max: Decimal;
}

/**
 * A money fact and an integer fact compared by value (`amount greaterThan {fact: countDaily}`),
 * exactly: the integer is compared with the decimal, never the decimal rounded to a double.
 */
export interface MoneyIntegerIr {
  readonly kind: 'compareMoneyInteger';
  readonly operator: 'equal' | 'notEqual' | OrderingOperator;
  readonly money: Source;
  readonly integer: Source;
  /** Whether the money fact is the condition's own (`fact`) and the integer its `value`. */
  readonly moneyLeft: boolean;
}
