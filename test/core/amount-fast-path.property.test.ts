import { Decimal as DecimalJs } from 'decimal.js';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  AMOUNT_MAX,
  CURRENCIES,
  CURRENCY_CODES,
  Decimal,
  JSON_NUMBER_DIGITS_MAX,
  parseAmount,
  SpendgateError,
} from '../../src/core/index.js';

/**
 * parseAmount's fast path (a scan that builds the Decimal's words itself) against decimal.js's
 * own parser and against the contract's rule written out here independently: the same words,
 * exponent and sign for every accepted amount, and a refusal for exactly what the rule refuses.
 */
const currency = fc.constantFrom(...CURRENCY_CODES);

// The contract's spelling of a decimal string, as its own test writes it.
const SPELLING = /^(?:0|[1-9][0-9]*)(?:\.([0-9]+))?$/;

function outcome(input: unknown, code: keyof typeof CURRENCIES, allowZero: boolean): unknown {
  try {
    const value = parseAmount(input, code, { allowZero, param: 'amount' });
    expect(value).toBeInstanceOf(Decimal);
    return { s: value.s, e: value.e, d: [...value.d] };
  } catch (error) {
    if (!(error instanceof SpendgateError)) throw error;
    expect(error.code).toBe('invalid_amount');
    return 'refused';
  }
}

/** What decimal.js's parser makes of an acceptable amount, or 'refused'. */
function expected(input: unknown, code: keyof typeof CURRENCIES, allowZero: boolean): unknown {
  const scale = CURRENCIES[code].scale;
  let value: InstanceType<typeof Decimal>;
  if (typeof input === 'string') {
    const match = SPELLING.exec(input);
    if (input.length > 23 || match === null || (match[1]?.length ?? 0) > scale) return 'refused';
    value = new Decimal(input);
  } else if (typeof input === 'number') {
    if (!Number.isFinite(input) || input < 0) return 'refused';
    value = new Decimal(input === 0 ? 0 : input);
    if (value.precision(false) > JSON_NUMBER_DIGITS_MAX || value.decimalPlaces() > scale) {
      return 'refused';
    }
  } else {
    return 'refused';
  }
  if (value.gt(AMOUNT_MAX) || (!allowZero && value.isZero())) return 'refused';
  return { s: value.s, e: value.e, d: [...value.d] };
}

const digits = (min: number, max: number) =>
  fc
    .array(fc.constantFrom('0', '0', '0', '1', '2', '5', '9'), { minLength: min, maxLength: max })
    .map((list) => list.join(''));

/** Strings near the fast path's edges: leading zeros, 7 and 14 digit words, 12 and 13 digits. */
const amountText: fc.Arbitrary<string> = fc.oneof(
  fc
    .tuple(digits(1, 14), fc.option(digits(0, 16), { nil: undefined }))
    .map(([whole, fraction]) => (fraction === undefined ? whole : `${whole}.${fraction}`)),
  fc
    .tuple(fc.bigInt({ min: 0n, max: 10n ** 13n }), digits(1, 10))
    .map(([whole, fraction]) => `${whole}.${fraction}`),
  fc.constantFrom(
    '0',
    '0.0',
    '00',
    '-0',
    '-1',
    '+1',
    '1e3',
    '.5',
    '1.',
    '',
    ' 1',
    '10000000',
    '10000000.0000001',
    '999999999999.999999999',
    '1000000000000',
    '1000000000000.000000',
    '1000000000000.000001',
    '0.000000001',
    '0.0000000001',
  ),
  fc.string({ maxLength: 12 }),
);

describe('parseAmount fast path', () => {
  it('reads decimal strings word for word as decimal.js does, refusing what the rule refuses', () => {
    fc.assert(
      fc.property(amountText, currency, fc.boolean(), (text, code, allowZero) => {
        expect(outcome(text, code, allowZero)).toEqual(expected(text, code, allowZero));
      }),
      { numRuns: 20_000 },
    );
  });

  it('reads JSON numbers word for word as decimal.js does, refusing what the rule refuses', () => {
    const number = fc.oneof(
      fc.double({ min: -1, max: 2e12, noNaN: true }),
      fc.integer({ min: 0, max: 2 ** 40 }),
      fc
        .nat({ max: 10 ** 9 })
        .chain((units) => fc.integer({ min: 0, max: 10 }).map((places) => units / 10 ** places)),
      fc.constantFrom(0, -0, 1e-7, 1e-6, 1e7, 1e12, 1e12 - 1, 1e12 + 1, 0.1 + 0.2, Infinity),
    );
    fc.assert(
      fc.property(number, currency, fc.boolean(), (value, code, allowZero) => {
        expect(outcome(value, code, allowZero)).toEqual(expected(value, code, allowZero));
      }),
      { numRuns: 20_000 },
    );
  });

  it('builds Decimals that behave as parsed ones in arithmetic and comparison', () => {
    fc.assert(
      fc.property(amountText, amountText, (left, right) => {
        let a: InstanceType<typeof Decimal>;
        let b: InstanceType<typeof Decimal>;
        try {
          a = parseAmount(left, 'SOL');
          b = parseAmount(right, 'SOL');
        } catch {
          return;
        }
        // The oracle parses with decimal.js's own parser (64 digits: sums need 23).
        const [parsedLeft, parsedRight] = [new Decimal(left), new Decimal(right)];
        expect(a.plus(b).toFixed()).toBe(parsedLeft.plus(parsedRight).toFixed());
        expect(a.minus(b).toFixed()).toBe(parsedLeft.minus(parsedRight).toFixed());
        expect(a.cmp(b)).toBe(parsedLeft.cmp(parsedRight));
        expect(a.toFixed()).toBe(new DecimalJs(left).toFixed());
      }),
      { numRuns: 5_000 },
    );
  });
});
