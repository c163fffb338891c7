import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  dayNumberOf,
  dayOfWeekUtc,
  hourUtc,
  isoDate,
  isoTimestamp,
  utcDayNumber,
  windowStartDay,
} from '../../src/core/time.js';

/** The core's allocation-free calendar arithmetic against the Date object, on any time. */
const epochMs = fc.integer({ min: Date.UTC(1970, 0, 1), max: Date.UTC(2200, 0, 1) });

describe('UTC calendar arithmetic', () => {
  it('agrees with Date on hour, weekday and date', () => {
    fc.assert(
      fc.property(epochMs, (ms) => {
        const date = new Date(ms);
        expect(hourUtc(ms)).toBe(date.getUTCHours());
        expect(dayOfWeekUtc(ms)).toBe(date.getUTCDay() === 0 ? 7 : date.getUTCDay());
        expect(isoDate(utcDayNumber(ms))).toBe(date.toISOString().slice(0, 10));
        expect(dayNumberOf(isoDate(utcDayNumber(ms)))).toBe(utcDayNumber(ms));
        expect(isoTimestamp(ms)).toBe(date.toISOString());
      }),
      { numRuns: 5000 },
    );
  });

  it('finds the first day of each window', () => {
    fc.assert(
      fc.property(epochMs, (ms) => {
        const date = new Date(ms);
        const day = (n: number) => isoDate(n);
        expect(day(windowStartDay('daily', ms))).toBe(date.toISOString().slice(0, 10));
        expect(day(windowStartDay('monthly', ms))).toBe(`${date.toISOString().slice(0, 7)}-01`);
        expect(day(windowStartDay('yearly', ms))).toBe(`${date.toISOString().slice(0, 4)}-01-01`);
        const monday = windowStartDay('weekly', ms);
        expect(dayOfWeekUtc(monday * 86_400_000)).toBe(1);
        expect(utcDayNumber(ms) - monday).toBeGreaterThanOrEqual(0);
        expect(utcDayNumber(ms) - monday).toBeLessThan(7);
      }),
      { numRuns: 3000 },
    );
  });

  it('refuses a malformed date', () => {
    expect(() => dayNumberOf('2026-1-01')).toThrow(RangeError);
  });
});
