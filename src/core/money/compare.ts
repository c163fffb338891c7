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
