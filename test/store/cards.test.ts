import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_BIN,
  generatePan,
  isLuhnValid,
  luhnCheckDigit,
} from '../../src/store/ops/cards.js';

/** Card numbers (contract section 8): Luhn-valid 16-digit PANs under the issuer's BIN. */
describe('card numbers', () => {
  it('checks the Luhn digit of known numbers', () => {
    expect(isLuhnValid('4242424242424242')).toBe(true);
    expect(isLuhnValid('4242424242424241')).toBe(false);
    expect(isLuhnValid('79927398713')).toBe(true);
    expect(isLuhnValid('4242 4242 4242 4242')).toBe(false);
    expect(luhnCheckDigit('7992739871')).toBe(3);
  });

  it('generates 16 Luhn-valid digits starting with the BIN', () => {
    fc.assert(
      fc.property(fc.constantFrom(DEFAULT_BIN, '535522', '37828224'), (bin) => {
        const pan = generatePan(bin);
        expect(pan).toMatch(/^\d{16}$/);
        expect(pan.startsWith(bin)).toBe(true);
        expect(isLuhnValid(pan)).toBe(true);
        // One changed digit breaks the check: Luhn catches every single-digit error.
        const last = Number(pan.at(-1));
        expect(isLuhnValid(`${pan.slice(0, -1)}${(last + 1) % 10}`)).toBe(false);
      }),
      { numRuns: 300 },
    );
  });
});
