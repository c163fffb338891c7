import { assert } from '../assert.js';
import { fieldSubject, parsePath, SpendgateError } from '../errors/spendgate-error.js';
import { givenWords } from '../errors/given.js';
import { compareDecimals } from './compare.js';
import { currencyInfoOf, type CurrencyCode, type CurrencyInfo } from './currencies.js';
import { Decimal, isDecimal, ZERO } from './decimal.js';
import { ImpreciseNumber } from './imprecise-number.js';

/** Contract section 1: no amount above one trillion units of any currency. */
export const AMOUNT_MAX: Decimal = new Decimal('1000000000000');

/**
 * A double holds 15 significant decimal digits exactly; beyond that the JSON number a client
 * sent may already have been rounded by the parser, so it is refused rather than trusted.
 */
export const JSON_NUMBER_DIGITS_MAX = 15;

/** Longest decimal string worth parsing: 13 integer digits, a point and 9 fraction digits. */
const AMOUNT_STRING_LENGTH_MAX = 23;

/**
 * A running total (spend so far, an available balance) is a sum of amounts, not one: it may
 * pass AMOUNT_MAX, and is bounded instead by what the ledger's NUMERIC(38, 9) holds.
 */
export const TOTAL_LIMIT: Decimal = new Decimal('1e29');
/** Longest total worth parsing: 29 integer digits, a point and 9 fraction digits. */
const TOTAL_STRING_LENGTH_MAX = 39;

// No sign, no exponent, no leading zeros, no bare point: one spelling per value's digits.
const AMOUNT_PATTERN = /^(?:0|[1-9][0-9]*)(?:\.([0-9]+))?$/;

export { ImpreciseNumber } from './imprecise-number.js';

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
  /**
   * A running total (spend so far, an available balance) rather than one amount: below
   * TOTAL_LIMIT (10^29) instead of at most AMOUNT_MAX. Default false.
   */
  readonly total?: boolean;
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
  const info = currencyInfoOf(currency);
  return (
    fastAmount(input, info.scale, options.allowZero !== false) ??
    parseAmountGeneral(input, info, options)
  );
}

/** The fast path of parseAmount: the Decimal of a common spelling, or null for the general path. */
function fastAmount(input: unknown, scale: number, allowZero: boolean): Decimal | null {
  if (typeof input === 'string') return plainAmount(input, scale, allowZero);
  if (typeof input !== 'number') return null;
  if (Number.isInteger(input) && input >= 0 && input < WHOLE_FAST_LIMIT) {
    // -0 is an integer too: it is the amount 0, without a sign.
    return input === 0 ? (allowZero ? new Decimal(0) : null) : wholeAmount(input);
  }
  if (input > 0 && input < WHOLE_FAST_LIMIT) {
    // decimal.js reads a number through its shortest round-trip spelling; so does this. At
    // most 15 digit characters means at most 15 significant digits.
    const spelled = String(input);
    if (spelled.length <= JSON_NUMBER_DIGITS_MAX + 1) return plainAmount(spelled, scale, allowZero);
  }
  return null;
}

/** Longest comparison constant worth parsing: far past any amount, short of a runaway. */
const COMPARISON_STRING_LENGTH_MAX = 64;
// A signed decimal in plain notation: one spelling per value's digits, as amounts have.
const SIGNED_DECIMAL_PATTERN = /^-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?$/;
const IMPRECISE = `has more than ${JSON_NUMBER_DIGITS_MAX} significant digits; write it as a decimal string`;

/**
 * A constant a money fact is compared with in a rule condition: any exact decimal, signed and
 * of any scale, as a decimal string or a number of at most 15 significant digits. Unlike an
 * amount it may lie outside what an amount can be (`amount greaterThan -1` always holds,
 * `amount equal 0.0000001` never does in USDC), as a comparison in json-rules-engine may.
 * Returns the Decimal, or why the input is not one, in words that read on from the field.
 */
export function comparisonDecimal(input: unknown): Decimal | string {
  // Plain amounts (the usual constants) through the amount parser's fast path.
  const fast = fastAmount(input, FRACTION_DIGITS_FAST_MAX, true);
  if (fast !== null) return fast;
  if (typeof input === 'string') {
    if (input.length > COMPARISON_STRING_LENGTH_MAX) {
      return `is too long: at most ${COMPARISON_STRING_LENGTH_MAX} characters`;
    }
    if (!SIGNED_DECIMAL_PATTERN.test(input)) return 'must be a decimal string such as "125.50"';
    const value = new Decimal(input);
    // "-0" is 0: a sign on zero would only ride along.
    return value.isZero() ? ZERO : value;
  }
  if (typeof input === 'number') {
    if (!Number.isFinite(input)) return 'must be a finite number';
    const value = new Decimal(input === 0 ? 0 : input);
    return value.precision(false) > JSON_NUMBER_DIGITS_MAX ? IMPRECISE : value;
  }
  if (input instanceof ImpreciseNumber) return IMPRECISE;
  return `must be a number or a decimal string, not ${givenWords(input)}`;
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

/** Refuses an amount: the message names the field by its last key, `param` has the path. */
function refuse(param: string, why: string): never {
  throw new SpendgateError(
    'invalid_amount',
    `${fieldSubject(parsePath(param), param)} ${why}.`,
    param,
  );
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
    const lengthMax = options.total === true ? TOTAL_STRING_LENGTH_MAX : AMOUNT_STRING_LENGTH_MAX;
    if (input.length > lengthMax) refuse(param, `is too long: at most ${lengthMax} characters`);
    const match = AMOUNT_PATTERN.exec(input);
    if (match === null) {
      if (input.startsWith('-')) refuse(param, 'must not be negative');
      refuse(param, 'must be a decimal string such as "125.50"');
    }
    // Digits as written: "1.5000000" for USDC has 7 and is refused, never silently trimmed.
    fractionDigits = match?.[1]?.length ?? 0;
    value = new Decimal(input);
  } else {
    return refuse(param, `must be a number or a decimal string, not ${givenWords(input)}`);
  }

  if (fractionDigits > info.scale) refuse(param, finerThan(info));
  checkBound(value, info, param, options);
  if (options.allowZero === false && value.isZero()) refuse(param, 'must be greater than 0');

  assert(value.isFinite() && !value.isNegative(), 'parsed amount is finite and not negative');
  return value;
}

function finerThan(info: CurrencyInfo): string {
  return `has more than ${info.scale} decimal places, the scale of ${info.code}`;
}

/** At most AMOUNT_MAX for an amount, below TOTAL_LIMIT for a total. */
function checkBound(
  value: Decimal,
  info: CurrencyInfo,
  param: string,
  options: ParseAmountOptions,
): void {
  if (options.total === true) {
    if (compareDecimals(value, TOTAL_LIMIT) >= 0) refuse(param, 'must be below 10^29');
  } else if (compareDecimals(value, AMOUNT_MAX) > 0) {
    refuse(param, `must not exceed ${formatAmount(AMOUNT_MAX, info)}`);
  }
}

/**
 * Formats an amount as the API answers it: a plain decimal string with at least two fraction
 * digits ("125.50", "0.000001"), never an exponent, never more digits than the currency has.
 */
export function formatAmount(value: Decimal, currency: CurrencyInfo | CurrencyCode): string {
  const info = currencyInfoOf(currency);
  // Refusals rather than assertions: a library caller may hand anything in.
  if (!isDecimal(value)) refuse('value', `must be a core Decimal, not ${givenWords(value)}`);
  if (!value.isFinite()) refuse('value', `must be a finite amount, not ${value.toString()}`);
  const places = value.decimalPlaces();
  if (places > info.scale) refuse('value', finerThan(info));
  return value.toFixed(Math.max(Math.min(2, info.scale), places));
}

/**
 * What a decimal.js Decimal of any copy of decimal.js 10 looks like: its documented fields and
 * its exact, plain spelling. A core Decimal is one; so is a Decimal from the caller's own
 * decimal.js, of another version or configuration, which the core reads through `toFixed()`.
 */
export interface DecimalJsValue {
  /** Digits in base 1e7 words, most significant first; null for NaN and the infinities. */
  readonly d: readonly number[] | null;
  /** Decimal exponent of the first digit. */
  readonly e: number;
  /** Sign: 1 or -1 (NaN for NaN). */
  readonly s: number;
  toFixed(): string;
}

/**
 * An amount as the library takes it: a core Decimal, a decimal.js Decimal of any copy (read
 * exactly, through its plain spelling), a decimal string ("125.50") or a finite number (at most
 * 15 significant digits, so that it is the number the caller wrote). Each is read once, by the
 * rules of `parseAmount`, and never rounded.
 */
export type AmountLike = Decimal | DecimalJsValue | string | number;

/**
 * An amount as a store operation takes it: what a client sent (a decimal string, or a JSON
 * number as json-body.ts read it), or a Decimal from a library caller. The operation reads
 * it against the currency of the row it holds (`amountIn`), so no caller needs a read of its
 * own first just to learn the currency.
 */
export type AmountInput = AmountLike | ImpreciseNumber;

/**
 * decimal.js's own test for a Decimal of any copy (its `isDecimalInstance`): the prototype's
 * `toStringTag` string. `instanceof` would refuse the caller's copy.
 */
const DECIMAL_JS_TAG = '[object Decimal]';

/** Whether `value` is a Decimal of some copy of decimal.js (a core Decimal included). */
export function isDecimalJsValue(value: unknown): value is DecimalJsValue {
  return (
    typeof value === 'object' &&
    value !== null &&
    (value as { readonly toStringTag?: unknown }).toStringTag === DECIMAL_JS_TAG &&
    typeof (value as { readonly toFixed?: unknown }).toFixed === 'function'
  );
}

/**
 * Exponents beyond which a Decimal is refused before it is spelled out: any amount or total
 * has its first digit below 10^29 and its last at 10^-9, and `toFixed()` of 1e999999999 would
 * spell a billion digits.
 */
const EXPONENT_MAX = 40;
/** Words (7 digits each) a Decimal may have before it is refused unspelled: 70 digits. */
const WORDS_MAX = 10;
// A Decimal's plain spelling: what `toFixed()` writes for a finite value.
const PLAIN_DECIMAL = /^-?(?:0|[1-9][0-9]*)(?:\.[0-9]*[1-9])?$/;

/**
 * `input` as an exact amount of `currency`: a Decimal of any copy is checked as it is (finite,
 * not negative, -0 read as 0, at most the currency's decimals, within its bound); a string or
 * number is parsed by `parseAmount`. Refused with `invalid_amount` naming `options.param`.
 */
export function amountIn(
  input: AmountInput,
  currency: CurrencyInfo | CurrencyCode,
  options: ParseAmountOptions = NO_OPTIONS,
): Decimal {
  const info = currencyInfoOf(currency);
  if (isDecimal(input)) return checkedDecimal(input, info, options);
  if (isDecimalJsValue(input)) {
    return checkedDecimal(foreignDecimal(input, info, options), info, options);
  }
  if (
    typeof input !== 'string' &&
    typeof input !== 'number' &&
    !(input instanceof ImpreciseNumber)
  ) {
    refuse(
      options.param ?? 'amount',
      `must be a Decimal, a decimal string or a number, not ${givenWords(input)}`,
    );
  }
  return parseAmount(input, info, options);
}

/** Exponents (of the first digit) below which no comparison with a bound is needed. */
const AMOUNT_EXPONENT_SAFE = 12;
const TOTAL_EXPONENT_SAFE = 29;

/**
 * A Decimal's amount checks, without spelling it out: the refusals of parseAmount, in order.
 * On the authorize path every amount comes through here, so the common case (a positive value
 * of few digits) reads the fields decimal.js documents (`d`, `e`, `s`, as compareDecimals
 * does) rather than calling methods that build values.
 */
function checkedDecimal(value: Decimal, info: CurrencyInfo, options: ParseAmountOptions): Decimal {
  const words = value.d;
  // NaN and the infinities have no digits.
  if (!words)
    return refuse(options.param ?? 'amount', `must be a finite amount, not ${value.toString()}`);
  if (words[0] === 0) {
    if (options.allowZero === false) refuse(options.param ?? 'amount', 'must be greater than 0');
    // -0 is the amount 0, as a JSON -0 is at the HTTP edge; the sign would ride along in sums.
    return value.s < 0 ? ZERO : value;
  }
  if (value.s < 0) refuse(options.param ?? 'amount', 'must not be negative');
  if (!fitsScale(words, value.e, info.scale)) refuse(options.param ?? 'amount', finerThan(info));
  const safe = options.total === true ? TOTAL_EXPONENT_SAFE : AMOUNT_EXPONENT_SAFE;
  if (value.e >= safe) checkBound(value, info, options.param ?? 'amount', options);
  return value;
}

/**
 * Whether `value` is a core Decimal that `amountIn` would hand back as it is: positive, finite,
 * within the currency's scale and below the bound. The authorize path's amounts all are; this
 * answers for them with a few field reads, and anything else goes to `amountIn`.
 */
export function isCheckedAmount(
  value: unknown,
  info: CurrencyInfo,
  total: boolean,
): value is Decimal {
  if (!isDecimal(value)) return false;
  const words = value.d;
  return (
    !!words &&
    words[0] !== 0 &&
    value.s === 1 &&
    value.e < (total ? TOTAL_EXPONENT_SAFE : AMOUNT_EXPONENT_SAFE) &&
    fitsScale(words, value.e, info.scale)
  );
}

/**
 * Whether `value` is a spend total in the core's form: a core Decimal that is zero, or that
 * `amountIn` with `total` would hand back as it is. What generated evaluators accept unread.
 */
export function isCheckedTotal(value: unknown, info: CurrencyInfo): value is Decimal {
  if (!isDecimal(value)) return false;
  const words = value.d;
  if (!words) return false;
  if (words[0] === 0) return true;
  const exponent = value.e;
  if (value.s !== 1 || exponent >= TOTAL_EXPONENT_SAFE) return false;
  // Digits past the scale must all be trailing zeros of the last word (fitsScale, inline: this
  // runs for every aggregate of every decision).
  const last = words.length - 1;
  const excess = (last - Math.floor(exponent / WORD_DIGITS)) * WORD_DIGITS - info.scale;
  if (excess <= 0) return true;
  return excess < WORD_DIGITS && (words[last] as number) % (POWERS_OF_TEN[excess] as number) === 0;
}

/** Whether `value` is a count of transactions: an integer of 0 or more. */
export function isCount(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}

/**
 * Whether a non-zero finite value has at most `scale` fraction digits, from its words (aligned
 * at the point, the last one not zero) as decimal.js's `decimalPlaces()` counts them, with one
 * division: the digits past the scale must all be trailing zeros of the last word.
 */
function fitsScale(words: readonly number[], exponent: number, scale: number): boolean {
  const last = words.length - 1;
  const excess = (last - Math.floor(exponent / WORD_DIGITS)) * WORD_DIGITS - scale;
  if (excess <= 0) return true;
  // A word is below 10^7 and not zero: it never ends in 7 zeros.
  if (excess >= WORD_DIGITS) return false;
  return (words[last] as number) % (POWERS_OF_TEN[excess] as number) === 0;
}

/**
 * A Decimal of another copy of decimal.js as a core Decimal, through its exact plain spelling
 * (`toFixed()` without arguments never rounds). Its size is bounded before it is spelled.
 */
function foreignDecimal(
  value: DecimalJsValue,
  info: CurrencyInfo,
  options: ParseAmountOptions,
): Decimal {
  const param = options.param ?? 'amount';
  const { d, e } = value;
  if (Array.isArray(d) && d.length > 0 && typeof e === 'number') {
    if (e > EXPONENT_MAX)
      refuse(
        param,
        options.total === true
          ? 'must be below 10^29'
          : `must not exceed ${formatAmount(AMOUNT_MAX, info)}`,
      );
    if (e < -EXPONENT_MAX || d.length > WORDS_MAX) refuse(param, finerThan(info));
  }
  let text: unknown;
  try {
    text = value.toFixed();
  } catch {
    return refuse(param, 'is a Decimal whose value could not be read');
  }
  if (text === 'NaN' || text === 'Infinity' || text === '-Infinity') {
    refuse(param, `must be a finite amount, not ${text}`);
  }
  if (typeof text !== 'string' || text.length > 2 * EXPONENT_MAX + 2 || !PLAIN_DECIMAL.test(text)) {
    return refuse(param, 'is a Decimal whose value could not be read');
  }
  return new Decimal(text);
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
