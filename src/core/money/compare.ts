import type { Decimal } from './decimal.js';

/**
 * `x.cmp(y)` without allocating: decimal.js's own `cmp` first copies `y` into a new Decimal,
 * which costs two allocations per comparison on the authorization hot path. This is the same
 * algorithm over the public fields `d` (base 1e7 words, most significant first, no trailing
 * zero words), `e` (decimal exponent) and `s` (sign), and defers to `cmp` for the non-finite
 * values the core never produces. `test/core/money.property.test.ts` checks it against `cmp`.
 */
export function compareDecimals(x: Decimal, y: Decimal): number {
  const xd = x.d;
  const yd = y.d;
  // NaN and infinities have no digit array; let decimal.js decide.
  if (!xd || !yd) return x.cmp(y);
  const xs = x.s;
  const ys = y.s;
  const xZero = xd[0] === 0;
  const yZero = yd[0] === 0;
  if (xZero || yZero) return xZero ? (yZero ? 0 : -ys) : xs;
  if (xs !== ys) return xs;
  if (x.e !== y.e) return x.e > y.e !== xs < 0 ? 1 : -1;
  const xLength = xd.length;
  const yLength = yd.length;
  const shorter = xLength < yLength ? xLength : yLength;
  for (let index = 0; index < shorter; index++) {
    const xWord = xd[index] as number;
    const yWord = yd[index] as number;
    if (xWord !== yWord) return xWord > yWord !== xs < 0 ? 1 : -1;
  }
  if (xLength === yLength) return 0;
  return xLength > yLength !== xs < 0 ? 1 : -1;
}

/** Sorted and without duplicates by value ("1.5" and "1.50" are one), for `hasDecimal`. */
export function sortedUniqueDecimals(values: readonly Decimal[]): readonly Decimal[] {
  const sorted = [...values].sort(compareDecimals);
  return Object.freeze(
    sorted.filter(
      (value, index) => index === 0 || compareDecimals(value, sorted[index - 1] as Decimal) !== 0,
    ),
  );
}

/** Membership by value in a list from `sortedUniqueDecimals`, by halving, allocation-free. */
export function hasDecimal(sorted: readonly Decimal[], value: Decimal): boolean {
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

/** decimal.js's words hold 7 digits each. */
const WORD_DIGITS = 7;
const WORD_BASE = 1e7;
/** Below 10^15 a value's integer part is exact in a double (2^53 is about 9.007 * 10^15). */
const EXACT_EXPONENT_MAX = 14;

/**
 * `x.cmp(n)` for a safe integer `n` (an integer fact: a count, an hour, a weekday), without
 * making a Decimal of `n`: the sign of x - n, from x's integer part (exact in a double below
 * 10^15) and whether it has a fraction. Larger values go to decimal.js, which allocates.
 * `test/core/money.property.test.ts` checks it against `cmp`.
 */
export function compareDecimalInteger(x: Decimal, n: number): number {
  const words = x.d;
  if (!words || x.e > EXACT_EXPONENT_MAX) return x.cmp(n);
  if (words[0] === 0) return n === 0 ? 0 : n > 0 ? -1 : 1;
  // Integer words: the first holds (e mod 7) + 1 digits; none when |x| < 1.
  const integerWords = x.e < 0 ? 0 : Math.floor(x.e / WORD_DIGITS) + 1;
  let whole = 0;
  for (let index = 0; index < integerWords; index++) {
    whole = whole * WORD_BASE + (words[index] ?? 0);
  }
  const fraction = words.length > integerWords;
  // x = sign * (whole + fraction), with 0 <= fraction < 1.
  const signedWhole = x.s < 0 ? -whole : whole;
  // Whole parts that differ differ by at least 1, more than any fraction: they decide.
  if (signedWhole !== n) return signedWhole > n ? 1 : -1;
  return fraction ? x.s : 0;
}

/**
 * Largest |exponent| `approximateDecimal` answers for: its doubles stay normal (no underflow to
 * denormals, no overflow), so their relative error bound holds. Money is far inside it.
 */
const APPROXIMATE_EXPONENT_MAX = 280;
/** 10^k for k in 0..294, each the double nearest it (one rounding). */
const POWERS_OF_TEN: readonly number[] = Array.from(
  { length: APPROXIMATE_EXPONENT_MAX + 2 * WORD_DIGITS + 1 },
  (_, k) => Number(`1e${k}`),
);
/**
 * The margin around a constant inside which only the exact comparison decides. The
 * approximation's relative error is below 1.1e-14 (three roundings of at most 2^-53 each, and
 * the words after the third, each below 10^-14 of the value since the first word is at least
 * 1); 1e-12 is a hundred times that.
 */
const APPROXIMATION_MARGIN = 1e-12;

/**
 * A double within a relative 1.1e-14 of `x`, or NaN when `x` is not a finite Decimal within
 * 10^±280 (NaN compares false with everything, which sends the caller to the exact path). Read
 * once per decision for each money fact, so that the policy's comparisons of it with constants
 * are comparisons of doubles (`compareNear`), exact all the same.
 */
export function approximateDecimal(x: Decimal | undefined): number {
  const words = x?.d;
  if (x === undefined || !words) return NaN;
  const exponent = x.e;
  if (exponent > APPROXIMATE_EXPONENT_MAX || exponent < -APPROXIMATE_EXPONENT_MAX) return NaN;
  // The first word's weight: 10^(e - (e mod 7)), the mod taken towards minus infinity.
  const firstWeight = exponent - (((exponent % WORD_DIGITS) + WORD_DIGITS) % WORD_DIGITS);
  // The first three words as one integer (below 10^21; exact below 2^53, one rounding above).
  const leading =
    ((words[0] as number) * WORD_BASE + (words[1] ?? 0)) * WORD_BASE + (words[2] ?? 0);
  const scale = firstWeight - 2 * WORD_DIGITS;
  const magnitude =
    scale >= 0
      ? leading * (POWERS_OF_TEN[scale] as number)
      : leading / (POWERS_OF_TEN[-scale] as number);
  return x.s < 0 ? -magnitude : magnitude;
}

/**
 * A policy's money constant with doubles around it: when `approximateDecimal(x)` is above
 * `above`, x > value; when it is below `below`, x < value; between them (or NaN), only
 * `compareDecimals` can tell. Each bound is the value's approximation moved by
 * APPROXIMATION_MARGIN of its size, more than both approximations' errors together.
 * `test/core/money.property.test.ts` checks `compareNear` against `cmp`, next to the value too.
 */
export class BoundedDecimal {
  readonly below: number;
  readonly above: number;

  constructor(readonly value: Decimal) {
    const near = approximateDecimal(value);
    const margin = Math.abs(near) * APPROXIMATION_MARGIN;
    this.below = near - margin;
    this.above = near + margin;
  }
}

/**
 * `compareDecimals(x, constant.value)`, given `near = approximateDecimal(x)`: two comparisons of
 * doubles decide unless x is within the constant's bounds.
 */
export function compareNear(near: number, x: Decimal, constant: BoundedDecimal): number {
  if (near > constant.above) return 1;
  if (near < constant.below) return -1;
  return compareDecimals(x, constant.value);
}
