import { Decimal as DecimalJs } from 'decimal.js';

/**
 * spendgate's own decimal.js constructor. decimal.js rounds every result to 20 significant
 * digits by default, yet an amount may need 22 (1,000,000,000,000 with SOL's 9 decimals) and a
 * running total more, so arithmetic on money must never go through the default constructor.
 * A private clone keeps the global decimal.js of an embedding service untouched; the core
 * asserts `instanceof Decimal` on every money input so that no value of another configuration
 * sneaks into a sum.
 */
export const Decimal = DecimalJs.clone({
  // 64 digits hold any sum of amounts that fits the ledger (NUMERIC(38,9) at most) with room.
  precision: 64,
  rounding: DecimalJs.ROUND_HALF_EVEN,
  // Plain notation in toString() for every value we can hold: never "1e-7" in an API body.
  toExpNeg: -64,
  toExpPos: 64,
});
export type Decimal = InstanceType<typeof Decimal>;

/**
 * Whether `value` is a core Decimal: made by this constructor (or by arithmetic on one), so
 * that its sums keep 64 digits. Not `instanceof`: every decimal.js constructor of one copy of
 * the package shares one prototype, so a Decimal of the default configuration (20 digits,
 * which rounds a sum of SOL amounts) is `instanceof` this one too. decimal.js gives each value
 * its constructor as an own property; that is the test.
 */
export function isDecimal(value: unknown): value is Decimal {
  return (
    typeof value === 'object' &&
    value !== null &&
    (value as { readonly constructor?: unknown }).constructor === Decimal &&
    // A plain copy of a Decimal ({ ...decimal }) keeps its own `constructor` field, not its
    // methods: found by read-once.property.test.ts as a TypeError inside decide.
    value instanceof Decimal
  );
}

export const ZERO: Decimal = new Decimal(0);
