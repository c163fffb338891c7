import { assert } from '../assert.js';
import { SpendgateError } from '../errors/spendgate-error.js';
import { currencyOf, type CurrencyCode, type CurrencyInfo } from './currencies.js';
import { Decimal, isDecimal } from './decimal.js';

/** Contract section 1: no amount above one trillion units of any currency. */
export const AMOUNT_MAX: Decimal = new Decimal('1000000000000');

/**
 * A double holds 15 significant decimal digits exactly; beyond that the JSON number a client
 * sent may already have been rounded by the parser, so it is refused rather than trusted.
 */
export const JSON_NUMBER_DIGITS_MAX = 15;

/** Longest decimal string worth parsing: 13 integer digits, a point and 9 fraction digits. */
const AMOUNT_STRING_LENGTH_MAX = 23;

// No sign, no exponent, no leading zeros, no bare point: one spelling per value's digits.
const AMOUNT_PATTERN = /^(?:0|[1-9][0-9]*)(?:\.([0-9]+))?$/;

/**
 * A JSON number literal with more than 15 significant digits, kept as the client wrote it. A
 * double cannot hold it exactly, so a JSON parser that made it a number would round it before
 * anyone could refuse it; the HTTP adapter's lossless parser hands it over as this instead,
 * and parseAmount refuses it. Pure data: the core only reads `literal`.
 */
export class ImpreciseNumber {
  constructor(readonly literal: string) {}

  toJSON(): string {
    return this.literal;
  }
}

/** Significant digits of a JSON number literal as written (`0.0120` has 3, `1.2e5` has 2). */
export function significantDigits(literal: string): number {
  const mantissa = literal.replace(/^-/, '').split(/[eE]/)[0] ?? '';
  const digits = mantissa.replace('.', '').replace(/^0+/, '');
  return mantissa.includes('.') ? digits.length : digits.replace(/0+$/, '').length;
}

export interface ParseAmountOptions {
  /** Field name (JSON path) for the error's `param`. Default `amount`. */
  readonly param?: string;
  /** Whether 0 is acceptable (a $0 card verification is; a transfer of 0 is not). Default true. */
  readonly allowZero?: boolean;
}

/**
 * Parses a request amount (JSON number or decimal string) for `currency` by the rules of
 * contract section 1. Never rounds: an amount it cannot represent exactly is refused with
 * `invalid_amount` naming the field.
 */
export function parseAmount(
  input: unknown,
  currency: CurrencyInfo | CurrencyCode,
  options: ParseAmountOptions = {},
): Decimal {
  const info = typeof currency === 'string' ? currencyOf(currency) : currency;
  const param = options.param ?? 'amount';
  const refuse = (why: string): never => {
    throw new SpendgateError('invalid_amount', `${param} ${why}.`, param);
  };

  let value: Decimal;
  let fractionDigits: number;
  if (typeof input === 'number') {
    if (!Number.isFinite(input)) refuse('must be a finite number');
    if (input < 0) refuse('must not be negative');
    // decimal.js reads a number through its shortest round-trip spelling, the literal the
    // client most likely wrote; more than 15 digits means that spelling is not to be trusted.
    // -0 passes `< 0`; it is the amount 0, and a Decimal of -0 would carry the sign along.
    value = new Decimal(input === 0 ? 0 : input);
    if (value.precision(false) > JSON_NUMBER_DIGITS_MAX) {
      refuse(
        `has more than ${JSON_NUMBER_DIGITS_MAX} significant digits; send it as a decimal string`,
      );
    }
    fractionDigits = value.decimalPlaces();
  } else if (input instanceof ImpreciseNumber) {
    return refuse(
      `has more than ${JSON_NUMBER_DIGITS_MAX} significant digits; send it as a decimal string`,
    );
  } else if (typeof input === 'string') {
    if (input.length > AMOUNT_STRING_LENGTH_MAX) refuse('is too long');
    const match = AMOUNT_PATTERN.exec(input);
    if (match === null) {
      if (input.startsWith('-')) refuse('must not be negative');
      refuse('must be a decimal string such as "125.50"');
    }
    // Digits as written: "1.5000000" for USDC has 7 and is refused, never silently trimmed.
    fractionDigits = match?.[1]?.length ?? 0;
    value = new Decimal(input);
  } else {
    return refuse('must be a number or a decimal string');
  }

  if (fractionDigits > info.scale) {
    refuse(`has more than ${info.scale} decimal places, the scale of ${info.code}`);
  }
  if (value.gt(AMOUNT_MAX)) refuse('must not exceed 1000000000000');
  if (options.allowZero === false && value.isZero()) refuse('must be greater than 0');

  assert(value.isFinite() && !value.isNegative(), 'parsed amount is finite and not negative');
  return value;
}

/**
 * Formats an amount as the API answers it: a plain decimal string with at least two fraction
 * digits ("125.50", "0.000001"), never an exponent, never more digits than the currency has.
 */
export function formatAmount(value: Decimal, currency: CurrencyInfo | CurrencyCode): string {
  const info = typeof currency === 'string' ? currencyOf(currency) : currency;
  assert(isDecimal(value) && value.isFinite(), 'formatAmount takes a finite core Decimal');
  const places = value.decimalPlaces();
  assert(places <= info.scale, `amount ${value.toFixed()} is finer than ${info.code} allows`);
  return value.toFixed(Math.max(Math.min(2, info.scale), places));
}
