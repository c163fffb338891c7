import { InvariantError } from '../assert.js';
import { aggregateSpec, type AggregateSpec } from './aggregates.js';

export type StringFormat = 'mcc' | 'country' | 'currency' | 'isoCurrency' | 'text';

/**
 * Where a fact's value lives, by name rather than by closure, so that the code generator can
 * read each source once into a local. Every name here is spendgate's own, never a client's.
 */
export type Source =
  | {
      readonly kind: 'request';
      readonly field: 'amount' | 'currency' | 'cardId' | 'merchantCurrency' | 'billingCurrency';
    }
  | { readonly kind: 'merchant'; readonly field: 'name' | 'mcc' | 'country' | 'city' | 'id' }
  | { readonly kind: 'clock'; readonly field: 'hourUtc' | 'dayOfWeekUtc' }
  | { readonly kind: 'aggregate'; readonly aggregate: AggregateSpec };

export interface MoneyFact {
  readonly kind: 'money';
  readonly source: Source;
}
export interface IntegerFact {
  readonly kind: 'integer';
  readonly min: number;
  readonly max: number;
  readonly source: Source;
}
export interface StringFact {
  readonly kind: 'string';
  readonly format: StringFormat;
  /** Whether the value may be absent (merchant city and id are optional in a request). */
  readonly optional: boolean;
  readonly source: Source;
}
export interface ObjectFact {
  readonly kind: 'object';
  /** The `path` values the fact accepts, each naming a string field. */
  readonly paths: Readonly<Record<string, StringFact>>;
}
export type ScalarFact = MoneyFact | IntegerFact | StringFact;
export type Fact = ScalarFact | ObjectFact;

/**
 * Thrown by an evaluator whose input lacks an aggregate the policy lists, or holds it in
 * another form than a checked core Decimal (amounts) or integer (counts). `decide` and
 * `evaluate` catch it and read the caller's spend (converting what can be converted, refusing
 * the rest with a SpendgateError that names the key), so the authorize path, whose spend is
 * already in the core's form, pays for no reading. From an evaluator called directly, it is
 * the caller's bug, and fails loudly.
 */
export class AggregateUnread extends InvariantError {
  override readonly name: string = 'AggregateUnread';

  constructor(readonly key: string) {
    super(`spend aggregate ${key} was not supplied as a checked core Decimal or count`);
  }
}

export function aggregateUnread(key: string): AggregateUnread {
  return new AggregateUnread(key);
}

const merchant = (
  field: 'name' | 'mcc' | 'country' | 'city' | 'id',
  format: StringFormat,
  optional: boolean,
): StringFact => ({ kind: 'string', format, optional, source: { kind: 'merchant', field } });

const request = (
  field: 'currency' | 'cardId' | 'merchantCurrency' | 'billingCurrency',
  format: StringFormat,
): StringFact => ({
  kind: 'string',
  format,
  optional: false,
  source: { kind: 'request', field },
});

const spent = (interval: 'daily' | 'weekly' | 'monthly'): MoneyFact => ({
  kind: 'money',
  source: { kind: 'aggregate', aggregate: aggregateSpec('amount', interval, null) },
});

/**
 * The facts a rule condition may name (contract section 11), each with its type and the place
 * in `EvaluationInput` it is read from (its `source`). Types are checked when a policy
 * compiles, so a condition that compares a string fact with a number is refused instead of
 * silently never matching.
 */
export const FACTS = {
  amount: { kind: 'money', source: { kind: 'request', field: 'amount' } },
  currency: request('currency', 'currency'),
  mcc: merchant('mcc', 'mcc', false),
  merchantCountry: merchant('country', 'country', false),
  merchantName: merchant('name', 'text', false),
  merchantId: merchant('id', 'text', true),
  cardId: request('cardId', 'text'),
  // Contract v1.2, section 16: what the merchant charged in, and the card's billing currency.
  // Never absent: without a merchant currency the merchant is taken to have charged in the
  // billing currency, and without a billing currency (a request in the asset) the asset is it.
  merchantCurrency: request('merchantCurrency', 'isoCurrency'),
  billingCurrency: request('billingCurrency', 'isoCurrency'),
  hourUtc: { kind: 'integer', min: 0, max: 23, source: { kind: 'clock', field: 'hourUtc' } },
  dayOfWeekUtc: {
    kind: 'integer',
    min: 1,
    max: 7,
    source: { kind: 'clock', field: 'dayOfWeekUtc' },
  },
  spentDaily: spent('daily'),
  spentWeekly: spent('weekly'),
  spentMonthly: spent('monthly'),
  countDaily: {
    kind: 'integer',
    min: 0,
    max: 1_000_000_000,
    source: { kind: 'aggregate', aggregate: aggregateSpec('count', 'daily', null) },
  },
  merchant: {
    kind: 'object',
    paths: {
      '$.name': merchant('name', 'text', false),
      '$.mcc': merchant('mcc', 'mcc', false),
      '$.country': merchant('country', 'country', false),
      '$.city': merchant('city', 'text', true),
      '$.id': merchant('id', 'text', true),
    },
  },
} as const satisfies Record<string, Fact>;

export type FactName = keyof typeof FACTS;

export const FACT_NAMES: readonly FactName[] = Object.freeze(Object.keys(FACTS) as FactName[]);

export function isFactName(value: string): value is FactName {
  return Object.hasOwn(FACTS, value);
}
