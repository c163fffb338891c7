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

const NO_OPTIONS: ParseAmountOptions = Object.freeze({});

/** decimal.js keeps digits in words of 7 decimal digits (base 1e7), aligned at the point. */
const WORD_DIGITS = 7;
const WORD_BASE = 1e7;
/** Integer parts the fast path takes: below 10^12, so under AMOUNT_MAX without a comparison. */
const WHOLE_DIGITS_FAST_MAX = 12;
const WHOLE_FAST_LIMIT = 1e12;
/** Fraction digits the fast path takes: two words. */
const FRACTION_DIGITS_FAST_MAX = 2 * WORD_DIGITS;
const POWERS_OF_TEN: readonly number[] = Object.freeze(
  Array.from({ length: WHOLE_DIGITS_FAST_MAX + 1 }, (_, power) => 10 ** power),
);

const ZERO_CODE = 48;
const POINT_CODE = 46;

/**
 * Parses a request amount (JSON number or decimal string) for `currency` by the rules of
 * contract section 1. Never rounds: an amount it cannot represent exactly is refused with
 * `invalid_amount` naming the field.
 *
 * Two paths, one meaning. The fast path takes the common spellings (a plain decimal string, an
 * integer, a short JSON number) with one scan of the characters and builds the Decimal's words
 * directly; it only ever accepts, and whatever it does not accept goes to the general path,
 * which refuses or accepts exactly as before. `test/core/amount-fast-path.property.test.ts`
 * holds the fast path to decimal.js's own parser, word for word, and to the same refusals.
 */
export function parseAmount(
  input: unknown,
  currency: CurrencyInfo | CurrencyCode,
  options: ParseAmountOptions = NO_OPTIONS,
): Decimal {
  const info = typeof currency === 'string' ? currencyOf(currency) : currency;
  const allowZero = options.allowZero !== false;
  let fast: Decimal | null = null;
  if (typeof input === 'string') {
    fast = plainAmount(input, info.scale, allowZero);
  } else if (typeof input === 'number') {
    if (Number.isInteger(input) && input >= 0 && input < WHOLE_FAST_LIMIT) {
      // -0 is an integer too: it is the amount 0, without a sign.
      fast = input === 0 ? (allowZero ? new Decimal(0) : null) : wholeAmount(input);
    } else if (input > 0 && input < WHOLE_FAST_LIMIT) {
      // decimal.js reads a number through its shortest round-trip spelling; so does this. At
      // most 15 digit characters means at most 15 significant digits.
      const spelled = String(input);
      if (spelled.length <= JSON_NUMBER_DIGITS_MAX + 1) {
        fast = plainAmount(spelled, info.scale, allowZero);
      }
    }
  }
  return fast ?? parseAmountGeneral(input, info, options);
}

/**
 * The fast path for a decimal string: `0` or a digit string without a leading zero, then
 * optionally a point and at least one digit; at most `scale` fraction digits, below 10^12, and
 * not zero where zero is refused. Anything else returns null for the general path to judge.
 * One pass over the characters; the fraction is read into two words of at most 7 digits, so
 * its arithmetic stays in small integers.
 */
function plainAmount(text: string, scale: number, allowZero: boolean): Decimal | null {
  const length = text.length;
  if (length === 0 || length > AMOUNT_STRING_LENGTH_MAX) return null;
  let index = 0;
  // The integer part: at most 12 digits, so exact in a double.
  let whole = 0;
  if (text.charCodeAt(0) === ZERO_CODE) {
    index = 1;
  } else {
    for (; index < length; index++) {
      const digit = text.charCodeAt(index) - ZERO_CODE;
      if (digit < 0 || digit > 9) break;
      whole = whole * 10 + digit;
    }
    if (index === 0) return null;
  }
  const wholeDigits = index;
  if (wholeDigits > WHOLE_DIGITS_FAST_MAX) return null;

  let fractionHigh = 0;
  let fractionLow = 0;
  if (index < length) {
    if (text.charCodeAt(index) !== POINT_CODE) return null;
    const fractionDigits = length - index - 1;
    // A bare point, or more digits than the currency's scale (or than two words), is not ours.
    if (fractionDigits === 0 || fractionDigits > scale) return null;
    if (fractionDigits > FRACTION_DIGITS_FAST_MAX) return null;
    const highDigits = fractionDigits < WORD_DIGITS ? fractionDigits : WORD_DIGITS;
    const highEnd = index + 1 + highDigits;
    for (index++; index < highEnd; index++) {
      const digit = text.charCodeAt(index) - ZERO_CODE;
      if (digit < 0 || digit > 9) return null;
      fractionHigh = fractionHigh * 10 + digit;
    }
    for (; index < length; index++) {
      const digit = text.charCodeAt(index) - ZERO_CODE;
      if (digit < 0 || digit > 9) return null;
      fractionLow = fractionLow * 10 + digit;
    }
    // Padded with zeros on the right to whole words: "5" of "125.5" is 5000000.
    fractionHigh *= POWERS_OF_TEN[WORD_DIGITS - highDigits] as number;
    if (fractionDigits > WORD_DIGITS)
      fractionLow *= POWERS_OF_TEN[2 * WORD_DIGITS - fractionDigits] as number;
  }
  assert(index === length && whole < WHOLE_FAST_LIMIT, 'the scan read the whole amount');
  return scannedAmount(whole, wholeDigits, fractionHigh, fractionLow, allowZero);
}

/**
 * The Decimal of a scanned amount, made of decimal.js's words directly: most significant
 * first, aligned at the point, no leading zero word and no trailing one; the exponent is that of
 * the first significant digit. `fractionHigh` and `fractionLow` are the fraction's two words,
 * padded with zeros to WORD_DIGITS each.
 */
function scannedAmount(
  whole: number,
  wholeDigits: number,
  fractionHigh: number,
  fractionLow: number,
  allowZero: boolean,
): Decimal | null {
  if (whole !== 0) {
    const high = whole >= WORD_BASE ? Math.floor(whole / WORD_BASE) : 0;
    const low = whole - high * WORD_BASE;
    const exponent = wholeDigits - 1;
    if (fractionLow !== 0) {
      return decimalOf(
        exponent,
        high !== 0 ? [high, low, fractionHigh, fractionLow] : [low, fractionHigh, fractionLow],
      );
    }
    if (fractionHigh !== 0) {
      return decimalOf(exponent, high !== 0 ? [high, low, fractionHigh] : [low, fractionHigh]);
    }
    if (high === 0) return decimalOf(exponent, [low]);
    return decimalOf(exponent, low !== 0 ? [high, low] : [high]);
  }
  if (fractionHigh !== 0) {
    const exponent = digitCount(fractionHigh) - WORD_DIGITS - 1;
    return decimalOf(exponent, fractionLow !== 0 ? [fractionHigh, fractionLow] : [fractionHigh]);
  }
  if (fractionLow !== 0)
    return decimalOf(digitCount(fractionLow) - 2 * WORD_DIGITS - 1, [fractionLow]);
  return allowZero ? new Decimal(0) : null;
}

/** Decimal digits of a positive integer below 10^12. */
function digitCount(value: number): number {
  let digits = 1;
  while (digits < WHOLE_DIGITS_FAST_MAX && value >= (POWERS_OF_TEN[digits] as number)) digits++;
  return digits;
}

/** A positive integer below 10^12 (a JSON number) as a Decimal. */
function wholeAmount(whole: number): Decimal {
  assert(whole > 0 && whole < WHOLE_FAST_LIMIT, 'a positive integer below 10^12');
  const exponent = digitCount(whole) - 1;
  if (whole < WORD_BASE) return decimalOf(exponent, [whole]);
  // Exact: both parts are integers below 2^53, and the quotient's floor is never off by one
  // at these magnitudes.
  const high = Math.floor(whole / WORD_BASE);
  const low = whole - high * WORD_BASE;
  return decimalOf(exponent, low === 0 ? [high] : [high, low]);
}

/** The fields decimal.js documents on an instance, writable for the one place that builds one. */
interface DecimalFields {
  e: number;
  d: number[];
}

/**
 * A positive Decimal of `words` (base 1e7, most significant first, aligned at the point) and
 * decimal `exponent` of its first digit: what decimal.js's own parser makes of the same digits.
 * It is made by the core's constructor (so it is a core Decimal of the same shape as any other,
 * sign +1) and then given its digits, which nothing else has seen yet.
 */
function decimalOf(exponent: number, words: number[]): Decimal {
  assert(words.length > 0 && words[0] !== 0 && words[words.length - 1] !== 0, 'words are trimmed');
  // 0 is the constructor's cheapest input (no digits to read, no instance check to pass).
  const value = new Decimal(0);
  // decimal.js types its fields readonly; this value is fresh and not yet shared.
  const fields = value as unknown as DecimalFields;
  fields.e = exponent;
  fields.d = words;
  return value;
}

function refuse(param: string, why: string): never {
  throw new SpendgateError('invalid_amount', `${param} ${why}.`, param);
}

/** The general path: every input, every refusal, in the order the contract's tests hold. */
function parseAmountGeneral(
  input: unknown,
  info: CurrencyInfo,
  options: ParseAmountOptions,
): Decimal {
  const param = options.param ?? 'amount';

  let value: Decimal;
  let fractionDigits: number;
  if (typeof input === 'number') {
    if (!Number.isFinite(input)) refuse(param, 'must be a finite number');
    if (input < 0) refuse(param, 'must not be negative');
    // decimal.js reads a number through its shortest round-trip spelling, the literal the
    // client most likely wrote; more than 15 digits means that spelling is not to be trusted.
    // -0 passes `< 0`; it is the amount 0, and a Decimal of -0 would carry the sign along.
    value = new Decimal(input === 0 ? 0 : input);
    if (value.precision(false) > JSON_NUMBER_DIGITS_MAX) {
      refuse(
        param,
        `has more than ${JSON_NUMBER_DIGITS_MAX} significant digits; send it as a decimal string`,
      );
    }
    fractionDigits = value.decimalPlaces();
  } else if (input instanceof ImpreciseNumber) {
    return refuse(
      param,
      `has more than ${JSON_NUMBER_DIGITS_MAX} significant digits; send it as a decimal string`,
    );
  } else if (typeof input === 'string') {
    if (input.length > AMOUNT_STRING_LENGTH_MAX) refuse(param, 'is too long');
    const match = AMOUNT_PATTERN.exec(input);
    if (match === null) {
      if (input.startsWith('-')) refuse(param, 'must not be negative');
      refuse(param, 'must be a decimal string such as "125.50"');
    }
    // Digits as written: "1.5000000" for USDC has 7 and is refused, never silently trimmed.
    fractionDigits = match?.[1]?.length ?? 0;
    value = new Decimal(input);
  } else {
    return refuse(param, 'must be a number or a decimal string');
  }

  if (fractionDigits > info.scale) {
    refuse(param, `has more than ${info.scale} decimal places, the scale of ${info.code}`);
  }
  if (value.gt(AMOUNT_MAX)) refuse(param, `must not exceed ${formatAmount(AMOUNT_MAX, info)}`);
  if (options.allowZero === false && value.isZero()) refuse(param, 'must be greater than 0');

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

/**
 * An amount as a store operation takes it: what a client sent (a decimal string, or a JSON
 * number as json-body.ts read it), or a core Decimal from a library caller. The operation reads
 * it against the currency of the row it holds (`amountIn`), so no caller needs a read of its
 * own first just to learn the currency.
 */
export type AmountInput = Decimal | string | number | ImpreciseNumber;

/** `input` as an exact amount of `currency`, refused (`invalid_amount`) as parseAmount refuses. */
export function amountIn(
  input: AmountInput,
  currency: CurrencyInfo | CurrencyCode,
  options: ParseAmountOptions = NO_OPTIONS,
): Decimal {
  // A Decimal goes through its plain spelling, so every form meets exactly the same checks.
  return parseAmount(isDecimal(input) ? input.toFixed() : input, currency, options);
}

/**
 * An amount as the store reads it back (the text of a NUMERIC(38, 9) column, at most 9
 * fraction digits, trailing zeros included): the fast scan of `parseAmount` where it applies,
 * decimal.js's parser otherwise. For history read in bulk (a backtest reads millions of rows),
 * where decimal.js's parser was the largest cost of a row; never for what a client sends.
 */
export function storedAmount(text: string): Decimal {
  return plainAmount(text, STORED_SCALE, true) ?? new Decimal(text);
}

/** The scale of the store's amount columns, NUMERIC(38, 9). */
const STORED_SCALE = 9;
