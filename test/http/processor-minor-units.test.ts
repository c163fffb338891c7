import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Decimal } from '../../src/core/index.js';
import { decimalOf, minorOf } from '../../src/http/processors/minor-units.js';

/**
 * Processors' integer minor units read exactly, at each currency's own minor units (ISO 4217
 * through currency-codes): no float on the way, and back to the same integer.
 */
describe('minor units', () => {
  it('reads USD, JPY and BHD at 2, 0 and 3 places', () => {
    expect(decimalOf({ minor: 1234n, currency: 'usd' }, 'amount')).toEqual({
      amount: '12.34',
      currency: 'USD',
    });
    expect(decimalOf({ minor: '1234', currency: 'JPY' }, 'amount').amount).toBe('1234');
    expect(decimalOf({ minor: 1234n, currency: 'bhd' }, 'amount').amount).toBe('1.234');
  });

  it('goes back to the same integer, for any amount up to 20 digits (property)', () => {
    fc.assert(
      fc.property(
        fc.bigInt({ min: 0n, max: 10n ** 20n - 1n }),
        fc.constantFrom('USD', 'JPY', 'BHD', 'EUR'),
        (minor, currency) => {
          const read = decimalOf({ minor, currency }, 'amount');
          expect(minorOf(new Decimal(read.amount), currency)).toBe(minor);
        },
      ),
    );
  });

  it("reads as decimal.js's division does, leading zeros included (property)", () => {
    fc.assert(
      fc.property(
        fc.stringMatching(/^[0-9]{1,20}$/),
        fc.constantFrom('USD', 'JPY', 'BHD', 'EUR'),
        (minor, currency) => {
          const scale = { USD: 2, JPY: 0, BHD: 3, EUR: 2 }[currency];
          const divided = new Decimal(minor).dividedBy(new Decimal(10).pow(scale)).toFixed(scale);
          expect(decimalOf({ minor, currency }, 'amount').amount).toBe(divided);
        },
      ),
    );
  });

  it('refuses what is not whole minor units, or no currency', () => {
    for (const minor of ['-1', '1.5', '', '1e3', '1'.repeat(21)]) {
      expect(() => decimalOf({ minor, currency: 'USD' }, 'amount')).toThrow(
        expect.objectContaining({ code: 'invalid_amount', param: 'amount' }),
      );
    }
    expect(() => decimalOf({ minor: 1n, currency: 'XYZ' }, 'amount')).toThrow(
      expect.objectContaining({ code: 'invalid_currency' }),
    );
  });
});
