/** Calendar arithmetic on epoch milliseconds in UTC, without allocating a Date. */

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
