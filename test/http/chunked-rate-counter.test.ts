import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { redisServer } from '../../src/config/env.js';
import { ChunkedRateCounter } from '../../src/http/chunked-rate-counter.js';
import { createRedis } from '../../src/http/health.js';

/**
 * The card network's count, against the real Redis: several processes (here, counters on
 * their own connections) share one count per key and window, each overshooting by less than
 * one chunk; a window starts from zero; with Redis away, each process still bounds itself.
 */
describe('ChunkedRateCounter', () => {
  const redis = createRedis(redisServer('redis://127.0.0.1:6379'));
  const others = [
    createRedis(redisServer('redis://127.0.0.1:6379')),
    createRedis(redisServer('redis://127.0.0.1:6379')),
  ];
  const prefix = `sg-test-${randomBytes(4).toString('hex')}:rate`;
  // The clients queue nothing while connecting: a count sent before `ready` would fail.
  beforeAll(async () => {
    await Promise.all(
      [redis, ...others].map((client) =>
        client.status === 'ready'
          ? Promise.resolve()
          : new Promise((resolve) => client.once('ready', resolve)),
      ),
    );
  });
  afterAll(async () => {
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length > 0) await redis.del(...keys);
    for (const client of [redis, ...others]) client.disconnect();
  });

  /** Lets the chunks in flight reach Redis and their totals come back. */
  const settle = () => new Promise((resolve) => setTimeout(resolve, 10));
  /** A moment early in a wall-clock second, so a test's requests share one window. */
  const windowStartMs = () => (Math.floor(Date.now() / 1000) + 2) * 1000;

  it('shares one count between processes, each overshooting by about one chunk at most', async () => {
    const limit = 1000; // chunks of 10
    const counters = [redis, ...others].map(
      (client) => new ChunkedRateCounter(client, prefix, limit),
    );
    const nowMs = windowStartMs();
    let allowed = 0;
    // 100 rounds of 5 requests per process, the chunks answered between rounds: about one
    // second of real time, within the two seconds a window's key lives in Redis.
    for (let round = 0; round < 100; round += 1) {
      for (const counter of counters) {
        for (let index = 0; index < 5; index += 1) {
          if (counter.consume('key_shared', nowMs + round).allowed) allowed += 1;
        }
      }
      await settle();
    }
    // 1,500 asked; the limit plus at most a chunk and a round (what arrives while a chunk is
    // on its way) per process admitted.
    expect(allowed).toBeGreaterThanOrEqual(limit);
    expect(allowed).toBeLessThanOrEqual(limit + counters.length * (10 + 5));
    const total = Number(await redis.get(`${prefix}:key_shared:${nowMs / 1000}`));
    expect(total).toBeLessThanOrEqual(allowed);
    expect(total).toBeGreaterThanOrEqual(allowed - counters.length * 10);
  });

  it('counts each key and each window apart, with the headers of the window', () => {
    const counter = new ChunkedRateCounter(redis, prefix, 3);
    const nowMs = windowStartMs() + 250;
    const first = [1, 2, 3, 4].map(() => counter.consume('key_a', nowMs));
    expect(first.map((count) => count.allowed)).toEqual([true, true, true, false]);
    expect(first.map((count) => count.remaining)).toEqual([2, 1, 0, 0]);
    expect(first[0]?.resetMs).toBe(750);
    expect(counter.consume('key_b', nowMs).allowed).toBe(true);
    expect(counter.consume('key_a', nowMs + 750).allowed).toBe(true);
  });

  it('bounds each process by itself while Redis does not answer, and says so once', async () => {
    const down = createRedis(redisServer('redis://127.0.0.1:1'));
    const states: boolean[] = [];
    try {
      const counter = new ChunkedRateCounter(down, prefix, 200, (reachable) => {
        states.push(reachable);
      });
      const nowMs = windowStartMs();
      let allowed = 0;
      for (let index = 0; index < 500; index += 1) {
        if (counter.consume('key_down', nowMs + Math.floor(index / 100)).allowed) allowed += 1;
        if (index % 50 === 0) await settle();
      }
      expect(allowed).toBe(200);
      expect(states).toEqual([false]);
    } finally {
      down.disconnect();
    }
  });
});
