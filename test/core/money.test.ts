import { describe, expect, it } from 'vitest';
import {
  AMOUNT_MAX,
  currencyOf,
  Decimal,
  formatAmount,
  parseAmount,
} from '../../src/core/index.js';
import { refusalOf } from '../support/refusal.js';

describe('parseAmount', () => {
  it.each([
    ['125.50', 'USDC', '125.5'],
    ['0', 'USDC', '0'],
    ['0.000001', 'USDC', '0.000001'],
    ['0.000000001', 'SOL', '0.000000001'],
    ['1000000000000', 'USDC', '1000000000000'],
    ['999999999999.999999999', 'SOL', '999999999999.999999999'],
  ] as const)('reads the decimal string %s for %s exactly', (input, currency, expected) => {
    const value = parseAmount(input, currency);
    expect(value.toFixed()).toBe(expected);
    expect(value).toBeInstanceOf(Decimal);
  });

  it.each([
    [12.5, 'USDC', '12.5'],
    [0.1, 'USDC', '0.1'],
    [0.3, 'SOL', '0.3'],
    [123456789.123456, 'USDC', '123456789.123456'],
    [1e12, 'USDC', '1000000000000'],
    [1e-6, 'USDC', '0.000001'],
  ] as const)(
    'reads the JSON number %s for %s as the decimal it spells',
    (input, currency, expected) => {
      expect(parseAmount(input, currency).toFixed()).toBe(expected);
    },
  );

  it.each([
    ['1.0000001', 'USDC', 'has more than 6 decimal places'],
    ['1.5000000', 'USDC', 'has more than 6 decimal places'],
    ['0.0000000001', 'SOL', 'has more than 9 decimal places'],
    ['-1', 'USDC', 'must not be negative'],
    ['1e3', 'USDC', 'must be a decimal string'],
    ['+1', 'USDC', 'must be a decimal string'],
    ['01', 'USDC', 'must be a decimal string'],
    ['.5', 'USDC', 'must be a decimal string'],
    ['1.', 'USDC', 'must be a decimal string'],
    [' 1', 'USDC', 'must be a decimal string'],
    ['', 'USDC', 'must be a decimal string'],
    ['NaN', 'USDC', 'must be a decimal string'],
    ['Infinity', 'USDC', 'must be a decimal string'],
    ['1000000000000.000001', 'USDC', 'must not exceed'],
    ['10000000000000', 'USDC', 'must not exceed'],
    ['1'.repeat(40), 'USDC', 'is too long'],
  ] as const)('refuses the string %j for %s', (input, currency, why) => {
    const error = refusalOf(() => parseAmount(input, currency, { param: 'initialDeposit' }));
    expect(error.code).toBe('invalid_amount');
    expect(error.param).toBe('initialDeposit');
    expect(error.message).toContain(why);
    expect(error.message.startsWith('initialDeposit ')).toBe(true);
  });

  it.each([
    [Number.NaN, 'must be a finite number'],
    [Number.POSITIVE_INFINITY, 'must be a finite number'],
    [-0.5, 'must not be negative'],
    [0.30000000000000004, 'more than 15 significant digits'],
    [1234567890.1234567, 'more than 15 significant digits'],
    [1e-7, 'has more than 6 decimal places'],
    [1e13, 'must not exceed'],
  ])('refuses the JSON number %s', (input, why) => {
    const error = refusalOf(() => parseAmount(input, 'USDC'));
    expect(error.code).toBe('invalid_amount');
    expect(error.param).toBe('amount');
    expect(error.message).toContain(why);
  });

  it.each([[null], [undefined], [true], [[1]], [{ value: 1 }], [10n]])(
    'refuses a %s, which is no amount',
    (input) => {
      expect(refusalOf(() => parseAmount(input, 'USDC')).message).toContain(
        'must be a number or a decimal string',
      );
    },
  );

  it('reads -0 as 0, without a sign', () => {
    const zero = parseAmount(-0, 'USDC');
    expect(zero.isZero() && !zero.isNegative()).toBe(true);
    expect(formatAmount(zero, 'USDC')).toBe('0.00');
  });

  it('refuses zero where the caller says zero is no amount', () => {
    expect(parseAmount('0', 'USDC').isZero()).toBe(true);
    const error = refusalOf(() =>
      parseAmount('0.000000', 'USDC', { allowZero: false, param: 'amount' }),
    );
    expect(error.message).toBe('amount must be greater than 0.');
  });

  it('refuses an unknown currency with invalid_currency', () => {
    const error = refusalOf(() => currencyOf('DOGE', 'currency'));
    expect(error.code).toBe('invalid_currency');
    expect(error.param).toBe('currency');
    expect(refusalOf(() => currencyOf('constructor')).code).toBe('invalid_currency');
    expect(refusalOf(() => parseAmount('1', 'BTC' as 'USDC')).code).toBe('invalid_currency');
  });

  it('keeps 22 significant digits exact, where the default decimal.js precision would round', () => {
    const big = parseAmount('999999999999.999999999', 'SOL');
    const sum = big.plus(parseAmount('0.000000001', 'SOL'));
    expect(sum.toFixed()).toBe('1000000000000');
    expect(AMOUNT_MAX.eq(sum)).toBe(true);
  });
});

describe('formatAmount', () => {
  it.each([
    ['125.5', 'USDC', '125.50'],
    ['125', 'USDC', '125.00'],
    ['0', 'SOL', '0.00'],
    ['0.000001', 'USDC', '0.000001'],
    ['1.123', 'SOL', '1.123'],
    ['1000000000000', 'USDC', '1000000000000.00'],
    ['0.000000001', 'SOL', '0.000000001'],
  ] as const)('formats %s %s as %s', (value, currency, expected) => {
    expect(formatAmount(new Decimal(value), currency)).toBe(expected);
  });

  it('refuses to format a value finer than the currency (a bug upstream, not a rounding job)', () => {
    const finer = refusalOf(() => formatAmount(new Decimal('0.0000001'), 'USDC'));
    expect([finer.code, finer.message]).toEqual([
      'invalid_amount',
      'value has more than 6 decimal places, the scale of USDC.',
    ]);
    // A library caller may hand in anything: a refusal, never an assertion or a TypeError.
    expect(refusalOf(() => formatAmount('1.5' as never, 'USDC')).message).toBe(
      'value must be a core Decimal, not a string.',
    );
    expect(refusalOf(() => formatAmount(new Decimal(1), 'EUR' as never)).code).toBe(
      'invalid_currency',
    );
  });
});
