import { describe, expect, it } from 'vitest';
import { isIsoCurrency, isoCurrencyOf, requestCurrencyOf } from '../../src/http/iso-currencies.js';
import { SpendgateError } from '../../src/core/index.js';

describe('ISO 4217 currencies', () => {
  it('reads each code to its own minor units, from the maintained table', () => {
    expect([isoCurrencyOf('USD', 'c').scale, isoCurrencyOf('JPY', 'c').scale]).toEqual([2, 0]);
    expect([isoCurrencyOf('BHD', 'c').scale, isoCurrencyOf('EUR', 'c').network]).toEqual([3, null]);
  });

  it('refuses what no card network bills in: metals, test and no-currency codes, and typos', () => {
    for (const code of ['XAU', 'XTS', 'XXX', 'usd', 'US', 'USDC', 'toString']) {
      expect(isIsoCurrency(code), code).toBe(false);
      const refused = (() => {
        try {
          isoCurrencyOf(code, 'merchantCurrency');
        } catch (error) {
          return error;
        }
        return null;
      })();
      expect(refused).toBeInstanceOf(SpendgateError);
      expect((refused as SpendgateError).code).toBe('invalid_currency');
      expect((refused as SpendgateError).param).toBe('merchantCurrency');
    }
  });

  it('takes a request in a vault asset or an ISO 4217 code', () => {
    expect(requestCurrencyOf('USDC', 'currency')).toMatchObject({ code: 'USDC', scale: 6 });
    expect(requestCurrencyOf('USD', 'currency')).toMatchObject({ code: 'USD', scale: 2 });
    expect(() => requestCurrencyOf('EURC', 'currency')).toThrow(/neither a vault asset/);
  });
});
