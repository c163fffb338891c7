/* Calendar arithmetic on epoch milliseconds in UTC, without allocating a Date. */

export const MS_PER_HOUR = 3_600_000;
export const MS_PER_DAY = 86_400_000;

/** Hour of the day in UTC, 0-23. */
export function hourUtc(epochMs: number): number {
  const hour = Math.floor(epochMs / MS_PER_HOUR) % 24;
  return hour < 0 ? hour + 24 : hour;
}

/** ISO day of the week in UTC, 1 Monday to 7 Sunday. 1970-01-01 was a Thursday (4). */
export function dayOfWeekUtc(epochMs: number): number {
  const day = (Math.floor(epochMs / MS_PER_DAY) + 3) % 7;
  return (day < 0 ? day + 7 : day) + 1;
}

/** Days since 1970-01-01 (UTC) of an epoch time. */
export function utcDayNumber(epochMs: number): number {
  return Math.floor(epochMs / MS_PER_DAY);
}

/**
 * `YYYY-MM-DD` of a day number, by Howard Hinnant's civil-from-days algorithm (exact for the
 * proleptic Gregorian calendar, no Date object).
 */
export function isoDate(dayNumber: number): string {
  const z = dayNumber + 719_468;
  const era = Math.floor(z / 146_097);
  const dayOfEra = z - era * 146_097;
  const yearOfEra = Math.floor(
    (dayOfEra -
      Math.floor(dayOfEra / 1460) +
      Math.floor(dayOfEra / 36_524) -
      Math.floor(dayOfEra / 146_096)) /
      365,
  );
  const dayOfYear =
    dayOfEra - (365 * yearOfEra + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100));
  const monthIndex = Math.floor((5 * dayOfYear + 2) / 153);
  const day = dayOfYear - Math.floor((153 * monthIndex + 2) / 5) + 1;
  const month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9;
  const year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0);
  return `${String(year).padStart(4, '0')}-${String(month).padStart(2, '0')}-${String(day).padStart(2, '0')}`;
}

/** The day number of `YYYY-MM-DD` (inverse of `isoDate`), by days-from-civil. */
export function dayNumberOf(date: string): number {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(date);
  if (match === null) throw new RangeError(`not a YYYY-MM-DD date: ${date.slice(0, 20)}`);
  const month = Number(match[2]);
  const day = Number(match[3]);
  const year = Number(match[1]) - (month <= 2 ? 1 : 0);
  const era = Math.floor(year / 400);
  const yearOfEra = year - era * 400;
  const dayOfYear = Math.floor((153 * (month > 2 ? month - 3 : month + 9) + 2) / 5) + day - 1;
  const dayOfEra =
    yearOfEra * 365 + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100) + dayOfYear;
  return era * 146_097 + dayOfEra - 719_468;
}

/**
 * First day (as a day number) of the UTC calendar window holding `epochMs`: the day itself,
 * its ISO week (from Monday), month or year. Windows of contract section 11.
 */
export function windowStartDay(
  interval: 'daily' | 'weekly' | 'monthly' | 'yearly',
  epochMs: number,
): number {
  const today = utcDayNumber(epochMs);
  switch (interval) {
    case 'daily':
      return today;
    case 'weekly':
      return today - (dayOfWeekUtc(epochMs) - 1);
    case 'monthly':
      return dayNumberOf(`${isoDate(today).slice(0, 8)}01`);
    case 'yearly':
      return dayNumberOf(`${isoDate(today).slice(0, 4)}-01-01`);
  }
}

/** ISO 8601 UTC with milliseconds (`2026-11-21T10:15:00.000Z`), as `Date#toISOString` writes it. */
export function isoTimestamp(epochMs: number): string {
  const dayNumber = utcDayNumber(epochMs);
  const msOfDay = epochMs - dayNumber * MS_PER_DAY;
  const pad = (value: number, width = 2) => String(value).padStart(width, '0');
  const hours = Math.floor(msOfDay / MS_PER_HOUR);
  const minutes = Math.floor((msOfDay % MS_PER_HOUR) / 60_000);
  const seconds = Math.floor((msOfDay % 60_000) / 1000);
  return `${isoDate(dayNumber)}T${pad(hours)}:${pad(minutes)}:${pad(seconds)}.${pad(msOfDay % 1000, 3)}Z`;
}
