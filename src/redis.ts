import { Redis, type RedisOptions } from 'ioredis';

const RECONNECT_MS_MAX = 5_000;

/**
 * Every Redis client of the service (rate limits and readiness, queue producers, queue
 * workers) is made here, so all of them ride out a Redis outage the same way: the connection
 * is retried in the background (every 200 ms, backing off to 5 s), and an unreachable Redis is
 * reported by /readyz and the callers' fallbacks, never by a crash on an unhandled error
 * event. `options` says what each kind of client does with commands while Redis is down.
 */
export function redisClient(url: string, options: RedisOptions): Redis {
  const redis = new Redis(url, {
    retryStrategy: (attempt) => Math.min(attempt * 200, RECONNECT_MS_MAX),
    ...options,
  });
  redis.on('error', () => undefined);
  return redis;
}
