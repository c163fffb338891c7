import { Decimal as DecimalJs } from 'decimal.js';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { approximateDecimal, BoundedDecimal, compareNear } from '../../src/core/money/compare.js';
import {
  AMOUNT_MAX,
  compareDecimalInteger,
  compareDecimals,
  CURRENCIES,
  CURRENCY_CODES,
  Decimal,
  formatAmount,
  JSON_NUMBER_DIGITS_MAX,
  parseAmount,
  SpendgateError,
} from '../../src/core/index.js';

const currency = fc.constantFrom(...CURRENCY_CODES);

/** Any amount a currency can hold, as integer minor units up to the contract's maximum. */
const minorUnits = (scale: number): fc.Arbitrary<bigint> =>
  fc.oneof(
    fc.bigInt({ min: 0n, max: 10n ** BigInt(12 + scale) }),
    fc.bigInt({ min: 0n, max: 10n ** BigInt(scale + 2) }),
  );

function spell(units: bigint, scale: number, places: number): string {
  // `places` fraction digits, at least as many as the value needs and at most the scale.
  const text = units.toString().padStart(scale + 1, '0');
  const whole = text.slice(0, text.length - scale);
  const fraction = text.slice(text.length - scale).slice(0, places);
  return places === 0 ? whole : `${whole}.${fraction}`;
}

describe('money properties', () => {
  it('parse then format then parse is the identity, and the digits are exact', () => {
    fc.assert(
      fc.property(
        currency.chain((code) => fc.tuple(fc.constant(code), minorUnits(CURRENCIES[code].scale))),
        ([code, units]) => {
          const scale = CURRENCIES[code].scale;
          const text = spell(units, scale, scale);
          const value = parseAmount(text, code);
          // Exact: the value times 10^scale is the integer we started from.
          expect(value.times(new Decimal(10).pow(scale)).toFixed()).toBe(units.toString());
          const shown = formatAmount(value, code);
          expect(parseAmount(shown, code).eq(value)).toBe(true);
          expect(shown).toMatch(/^[0-9]+\.[0-9]{2,}$/);
          expect(shown.split('.')[1]?.length ?? 0).toBeLessThanOrEqual(scale);
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('a string with more fraction digits than the scale is refused, never rounded', () => {
    fc.assert(
      fc.property(
        currency,
        fc.nat({ max: 10 ** 6 }),
        fc.integer({ min: 1, max: 5 }),
        (code, whole, extra) => {
          const scale = CURRENCIES[code].scale;
          const text = `${whole}.${'0'.repeat(scale)}${'1'.repeat(extra)}`;
          expect(() => parseAmount(text, code)).toThrow(SpendgateError);
        },
      ),
    );
  });

  it('a JSON number is accepted exactly when it is within bounds, scale and 15 digits', () => {
    fc.assert(
      fc.property(currency, fc.double({ min: -1e14, max: 1e14, noNaN: true }), (code, input) => {
        const spelled = new DecimalJs(input);
        const acceptable =
          input >= 0 &&
          spelled.precision(false) <= JSON_NUMBER_DIGITS_MAX &&
          spelled.decimalPlaces() <= CURRENCIES[code].scale &&
          spelled.lte(AMOUNT_MAX.toFixed());
        let parsed: Decimal | SpendgateError;
        try {
          parsed = parseAmount(input, code);
        } catch (error) {
          if (!(error instanceof SpendgateError)) throw error;
          parsed = error;
        }
        if (acceptable) {
          expect(parsed).toBeInstanceOf(Decimal);
          expect((parsed as Decimal).eq(spelled.toFixed())).toBe(true);
          expect((parsed as Decimal).isNegative()).toBe(false);
        } else {
          expect(parsed).toBeInstanceOf(SpendgateError);
          expect((parsed as SpendgateError).code).toBe('invalid_amount');
        }
      }),
      { numRuns: 2000 },
    );
  });

  it('the bound is inclusive: the maximum parses, one unit more does not', () => {
    fc.assert(
      fc.property(currency, (code) => {
        const scale = CURRENCIES[code].scale;
        expect(parseAmount('1000000000000', code).eq(AMOUNT_MAX)).toBe(true);
        const over = `1000000000000.${'0'.repeat(scale - 1)}1`;
        expect(() => parseAmount(over, code)).toThrow(/must not exceed/);
      }),
    );
  });

  it('compareDecimals agrees with decimal.js cmp on any pair, signs and lengths', () => {
    const decimal = fc.oneof(
      fc
        .tuple(fc.bigInt({ min: -(10n ** 30n), max: 10n ** 30n }), fc.integer({ min: 0, max: 25 }))
        .map(([digits, places]) =>
          new Decimal(digits.toString()).dividedBy(new Decimal(10).pow(places)),
        ),
      fc
        .constantFrom('0', '-0', '1', '-1', '0.1', '10000000', '1e-20', '9999999.9999999')
        .map((x) => new Decimal(x)),
    );
    fc.assert(
      fc.property(decimal, decimal, (x, y) => {
        expect(compareDecimals(x, y)).toBe(x.cmp(y));
        expect(compareDecimals(x, x)).toBe(0);
      }),
      { numRuns: 5000 },
    );
  });
});

describe('comparing a decimal with an integer fact', () => {
  /** Decimals near integers and far from them, signed, of few and of many digits. */
  const decimal = fc.oneof(
    fc.integer({ min: -1_000_000, max: 1_000_000 }).map(String),
    fc
      .tuple(fc.integer({ min: -1000, max: 1000 }), fc.integer({ min: 0, max: 999_999_999 }))
      .map(([whole, fraction]) => `${whole}.${String(fraction).padStart(9, '0')}`),
    fc.constantFrom('0', '-0', '0.5', '-0.5', '1e14', '1e15', '-1e15', '123456789012345.5', '1e20'),
    fc.bigInt({ min: -(10n ** 17n), max: 10n ** 17n }).map(String),
  );
  const integer = fc.oneof(
    fc.integer({ min: -5, max: 30 }),
    fc.integer({ min: -1_000_000, max: 1_000_000 }),
    fc.maxSafeInteger(),
    fc.constantFrom(0, -0, 1e15, -1e15, Number.MAX_SAFE_INTEGER, Number.MIN_SAFE_INTEGER),
  );

  it('compareDecimalInteger(x, n) is x.cmp(n)', () => {
    fc.assert(
      fc.property(decimal, integer, (text, n) => {
        const x = new Decimal(text);
        expect(compareDecimalInteger(x, n), `${text} vs ${n}`).toBe(x.cmp(n));
        // On a value's own integer part too, where only the fraction decides.
        const whole = x.trunc();
        if (whole.abs().lt(Number.MAX_SAFE_INTEGER)) {
          expect(compareDecimalInteger(x, whole.toNumber())).toBe(x.cmp(whole));
        }
      }),
      { numRuns: 5000 },
    );
  });
});

describe('comparing a money fact with a constant through doubles', () => {
  /** The generated code's rule: the bounds decide outside them, compareDecimals inside. */
  const fastCompare = (x: Decimal, c: Decimal): number =>
    compareNear(approximateDecimal(x), x, new BoundedDecimal(c));
  const places = fc.integer({ min: 0, max: 30 });
  const decimal = fc.oneof(
    fc
      .tuple(fc.bigInt({ min: -(10n ** 40n), max: 10n ** 40n }), places)
      .map(([digits, scale]) =>
        new Decimal(digits.toString()).dividedBy(new Decimal(10).pow(scale)),
      ),
    fc
      .constantFrom('0', '-0', '1', '-1', '1e-300', '1e300', '1e-280', '9999999.9999999', '1e-7')
      .map((x) => new Decimal(x)),
  );
  /** A constant, and values at and within a few units of its last places, either side. */
  const nearPair = fc
    .tuple(decimal, fc.integer({ min: -3, max: 3 }), fc.integer({ min: 0, max: 40 }))
    .map(
      ([c, units, scale]) =>
        [c.plus(new Decimal(units).dividedBy(new Decimal(10).pow(scale))), c] as const,
    );

  it('answers as decimal.js cmp, for values far from the constant and next to it', () => {
    fc.assert(
      fc.property(fc.oneof(fc.tuple(decimal, decimal), nearPair), ([x, c]) => {
        expect(fastCompare(x, c), `${x.toString()} vs ${c.toString()}`).toBe(x.cmp(c));
      }),
      { numRuns: 10_000 },
    );
  });

  it('decides most comparisons by the doubles alone, and none it cannot prove', () => {
    const x = new Decimal('42.50');
    expect(approximateDecimal(x)).toBe(42.5);
    expect(approximateDecimal(new Decimal('-0.05'))).toBe(-0.05);
    expect(approximateDecimal(new Decimal('1e-300'))).toBeNaN();
    expect(approximateDecimal(undefined)).toBeNaN();
    const { below, above } = new BoundedDecimal(new Decimal('100'));
    expect(below).toBeLessThan(100);
    expect(above).toBeGreaterThan(100);
    // Within the margin the doubles say nothing: 100 + 1e-20 is left to compareDecimals.
    const justAbove = approximateDecimal(new Decimal('100.00000000000000000001'));
    expect(justAbove > above || justAbove < below).toBe(false);
  });
});
