/**
 * The wait before the next webhook attempt once `attemptsMade` attempts have failed: the
 * schedule's entry (a setting; config/env.ts has the contract's, CONTRACT_RETRY_DELAYS_MS),
 * with up to 10% jitter so that an endpoint coming back is not hit by every waiting delivery
 * at once.
 */
export function retryDelayMs(
  schedule: readonly number[],
  attemptsMade: number,
  random: () => number = Math.random,
): number {
  const base = schedule[Math.min(Math.max(attemptsMade, 1), schedule.length) - 1] ?? 0;
  return Math.round(base * (1 + 0.1 * random()));
}

/** The latest an attempt scheduled by retryDelayMs can be due: its entry with the whole 10%. */
export function retryDelayMsMax(schedule: readonly number[], attemptsMade: number): number {
  return retryDelayMs(schedule, attemptsMade, () => 1);
}
