import { Redis } from 'ioredis';

/** The Redis the benches' services use (BENCH_REDIS_URL names another). */
export const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';

/** SCAN calls one cleanup makes at most: a bound on the loop, far above a run's keys. */
const REDIS_SCANS_MAX = 100_000;

/**
 * Deletes a run's keys from the shared Redis: queues under `{prefix}:`, counters `prefix:`.
 * A failure is printed, not thrown: the figures are already out, and the prefix is the run's own.
 */
export async function forgetRedisPrefix(redisPrefix: string): Promise<void> {
  const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1, lazyConnect: true });
  try {
    await redis.connect();
    for (const pattern of [`{${redisPrefix}}:*`, `${redisPrefix}:*`]) {
      let cursor = '0';
      for (let scans = 0; scans < REDIS_SCANS_MAX; scans++) {
        const [next, keys] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
        if (keys.length > 0) await redis.del(...keys);
        cursor = next;
        if (cursor === '0') break;
      }
    }
  } catch (error) {
    console.log(`could not delete the run's Redis keys (${redisPrefix}): ${String(error)}`);
  } finally {
    redis.disconnect();
  }
}
