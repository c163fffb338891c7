import { describe, expect, it } from 'vitest';
import { RATIO_MAX, reserveFigures, unitsToAmount } from '../../src/workers/reserve-formula.js';

/**
 * The arithmetic of the reconciliation of reserves: exact conversion of base units, each term
 * where it belongs, a ratio rounded down (so that just short never reads as 1), 1 when
 * nothing is owed, bounded above, and terms that cannot be true refused.
 */

const TERMS = {
  treasuryUnits: 0n,
  decimals: 9,
  unsweptDeposits: '0',
  owed: '0',
  inFlight: '0',
  inFlightLanded: '0',
};

describe('the reserve formula', () => {
  it('converts lamports and USDC base units exactly', () => {
    expect(unitsToAmount(1n, 9)).toBe('0.000000001');
    expect(unitsToAmount(18_446_744_073_709_551_615n, 9)).toBe('18446744073.709551615');
    expect(unitsToAmount(1_500_000n, 6)).toBe('1.5');
    expect(unitsToAmount(0n, 6)).toBe('0');
  });

  it('adds unswept deposits to the treasury and takes landed transfers off what is owed', () => {
    expect(
      reserveFigures({
        ...TERMS,
        treasuryUnits: 4_000_000n,
        decimals: 6,
        unsweptDeposits: '1.5',
        owed: '9',
        inFlight: '2',
        inFlightLanded: '1',
      }),
    ).toEqual({
      treasuryBalance: '4',
      reserves: '5.5',
      liabilities: '8',
      shortfall: '2.5',
      ratio: '0.6875',
      short: true,
    });
  });

  it('rounds the ratio down, so that one base unit short is below 1', () => {
    const short = reserveFigures({ ...TERMS, treasuryUnits: 999_999_999n, owed: '1' });
    expect([short.ratio, short.shortfall, short.short]).toEqual([
      '0.999999999',
      '0.000000001',
      true,
    ]);
    const third = reserveFigures({ ...TERMS, treasuryUnits: 2_000_000_000n, owed: '3' });
    expect(third.ratio).toBe('0.666666666');
    const exact = reserveFigures({ ...TERMS, treasuryUnits: 1_000_000_000n, owed: '1' });
    expect([exact.ratio, exact.shortfall, exact.short]).toEqual(['1', '0', false]);
    // One base unit short of a hundred million: still below 1, however close.
    const close = reserveFigures({
      ...TERMS,
      treasuryUnits: 99_999_999_999_999_999n,
      owed: '100000000',
    });
    expect([close.ratio, close.shortfall, close.short]).toEqual([
      '0.999999999',
      '0.000000001',
      true,
    ]);
    const over = reserveFigures({
      ...TERMS,
      treasuryUnits: 10n ** 17n,
      owed: '99999999.999999999',
    });
    expect([over.ratio, over.short]).toEqual(['1', false]);
  });

  it('reads 1 when nothing is owed, and at most RATIO_MAX', () => {
    expect(reserveFigures({ ...TERMS, treasuryUnits: 5n }).ratio).toBe('1');
    expect(reserveFigures(TERMS).ratio).toBe('1');
    expect(reserveFigures({ ...TERMS, treasuryUnits: 10n ** 19n, owed: '0.000000001' }).ratio).toBe(
      RATIO_MAX.toFixed(),
    );
  });

  it('refuses terms that cannot be true', () => {
    expect(() =>
      reserveFigures({ ...TERMS, owed: '1', inFlight: '1', inFlightLanded: '2' }),
    ).toThrow(/landed/);
    expect(() => reserveFigures({ ...TERMS, owed: '1', inFlight: '2' })).toThrow(/landed/);
    expect(() => reserveFigures({ ...TERMS, owed: '-1' })).toThrow(/owed/);
    expect(() => reserveFigures({ ...TERMS, owed: '0.0000000001' })).toThrow(/9 fraction digits/);
    expect(() => reserveFigures({ ...TERMS, treasuryUnits: -1n })).toThrow(/negative/);
  });
});
