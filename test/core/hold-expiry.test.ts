import { describe, expect, it } from 'vitest';
import { DEFAULT_HOLD_EXPIRY, holdExpiresAtMs, isLongHoldMcc } from '../../src/core/index.js';

/** Holds by merchant category (contract v1.2, section 16): 31 days for stays, 7 otherwise. */
describe('hold expiry by merchant category', () => {
  const DAY_MS = 86_400_000;
  const nowMs = Date.UTC(2026, 2, 2);

  it('gives lodging, car rental and cruise lines 31 days, at both ends of each range', () => {
    for (const mcc of ['3351', '3500', '3501', '3999', '4411', '7011', '7512']) {
      expect([mcc, holdExpiresAtMs(mcc, nowMs) - nowMs]).toEqual([mcc, 31 * DAY_MS]);
    }
  });

  it('gives every other merchant, and a malformed or missing MCC, 7 days', () => {
    for (const mcc of [
      '3350',
      '4000',
      '4410',
      '4412',
      '5812',
      '7010',
      '7513',
      '',
      '70111',
      'abcd',
      null,
      undefined,
    ]) {
      expect(isLongHoldMcc(mcc)).toBe(false);
      expect(holdExpiresAtMs(mcc, nowMs) - nowMs).toBe(7 * DAY_MS);
    }
  });

  it('takes both lives from the settings', () => {
    const settings = { defaultMs: 3_600_000, longMs: 2 * 3_600_000 };
    expect(holdExpiresAtMs('7011', nowMs, settings)).toBe(nowMs + 2 * 3_600_000);
    expect(holdExpiresAtMs('5812', nowMs, settings)).toBe(nowMs + 3_600_000);
    expect(DEFAULT_HOLD_EXPIRY).toEqual({ defaultMs: 7 * DAY_MS, longMs: 31 * DAY_MS });
    expect(() => holdExpiresAtMs('5812', Number.NaN)).toThrow();
    expect(() => holdExpiresAtMs('5812', nowMs, { defaultMs: 0, longMs: 1 })).toThrow();
  });
});
