import { InvariantError } from '../assert.js';
import { isDecimal, type Decimal } from '../money/decimal.js';
import { dayOfWeekUtc, hourUtc } from '../time.js';
import { aggregateSpec, type AggregateSpec } from './aggregates.js';
import type { EvaluationInput } from './evaluation-input.js';

/**
 * The facts a rule condition may name (contract section 11), each with its type and the field
 * of `EvaluationInput` it reads. Types are checked when a policy compiles, so a condition that
 * compares a string fact with a number is refused instead of silently never matching.
 */
export type StringFormat = 'mcc' | 'country' | 'currency' | 'text';

export interface MoneyFact {
  readonly kind: 'money';
  readonly aggregate: AggregateSpec | null;
  readonly read: (input: EvaluationInput) => Decimal;
}
export interface IntegerFact {
  readonly kind: 'integer';
  readonly min: number;
  readonly max: number;
  readonly aggregate: AggregateSpec | null;
  readonly read: (input: EvaluationInput) => number;
}
export interface StringFact {
  readonly kind: 'string';
  readonly format: StringFormat;
  /** Whether the value may be absent (merchant city and id are optional in a request). */
  readonly optional: boolean;
  readonly read: (input: EvaluationInput) => string | undefined;
}
export interface ObjectFact {
  readonly kind: 'object';
  /** The `path` values the fact accepts, each naming a string field. */
  readonly paths: Readonly<Record<string, StringFact>>;
}
export type ScalarFact = MoneyFact | IntegerFact | StringFact;
export type Fact = ScalarFact | ObjectFact;

/** A caller that did not supply an aggregate the policy listed has a bug: fail loudly. */
export function missingAggregate(key: string): InvariantError {
  return new InvariantError(`spend aggregate ${key} was not supplied`);
}

function spentFact(aggregate: AggregateSpec): MoneyFact {
  const key = aggregate.key;
  return {
    kind: 'money',
    aggregate,
    read: (input) => {
      const value = input.spend[key];
      // Explicit branch, not assert(): no message string is built on the hot path.
      if (!isDecimal(value)) throw missingAggregate(key);
      return value;
    },
  };
}

function stringFact(
  format: StringFormat,
  optional: boolean,
  read: (input: EvaluationInput) => string | undefined,
): StringFact {
  return { kind: 'string', format, optional, read };
}

const countDailySpec = aggregateSpec('count', 'daily', null);

export const FACTS = {
  amount: { kind: 'money', aggregate: null, read: (input) => input.request.amount },
  currency: stringFact('currency', false, (input) => input.request.currency),
  mcc: stringFact('mcc', false, (input) => input.request.merchant.mcc),
  merchantCountry: stringFact('country', false, (input) => input.request.merchant.country),
  merchantName: stringFact('text', false, (input) => input.request.merchant.name),
  merchantId: stringFact('text', true, (input) => input.request.merchant.id),
  cardId: stringFact('text', false, (input) => input.request.cardId),
  hourUtc: {
    kind: 'integer',
    min: 0,
    max: 23,
    aggregate: null,
    read: (input) => hourUtc(input.nowMs),
  },
  dayOfWeekUtc: {
    kind: 'integer',
    min: 1,
    max: 7,
    aggregate: null,
    read: (input) => dayOfWeekUtc(input.nowMs),
  },
  spentDaily: spentFact(aggregateSpec('amount', 'daily', null)),
  spentWeekly: spentFact(aggregateSpec('amount', 'weekly', null)),
  spentMonthly: spentFact(aggregateSpec('amount', 'monthly', null)),
  countDaily: {
    kind: 'integer',
    min: 0,
    max: 1_000_000_000,
    aggregate: countDailySpec,
    read: (input) => {
      const value = input.spend[countDailySpec.key];
      if (typeof value !== 'number') throw missingAggregate(countDailySpec.key);
      return value;
    },
  },
  merchant: {
    kind: 'object',
    paths: {
      '$.name': stringFact('text', false, (input) => input.request.merchant.name),
      '$.mcc': stringFact('mcc', false, (input) => input.request.merchant.mcc),
      '$.country': stringFact('country', false, (input) => input.request.merchant.country),
      '$.city': stringFact('text', true, (input) => input.request.merchant.city),
      '$.id': stringFact('text', true, (input) => input.request.merchant.id),
    },
  },
} as const satisfies Record<string, Fact>;

export type FactName = keyof typeof FACTS;

export const FACT_NAMES: readonly FactName[] = Object.freeze(Object.keys(FACTS) as FactName[]);

export function isFactName(value: string): value is FactName {
  return Object.hasOwn(FACTS, value);
}
