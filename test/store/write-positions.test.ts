import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { POSITION_TTL_MS, redisWritePositions } from '../../src/cli/write-positions.js';
import { memoryWritePositions, parseLsn } from '../../src/store/replica-reads.js';
import { LOCAL_REDIS_URL } from '../support/http.js';
import { trackedRedisPrefixes } from '../support/processes.js';

/*
 * The accounts' write positions (store/replica-reads.ts): a position is only ever raised, so
 * that a slow process's older position cannot send a later read to a replica that lacks a
 * newer write; in Redis each expires a while after its account's last write.
 */

describe('write positions', () => {
  const prefixes = trackedRedisPrefixes();
  const redis = new Redis(LOCAL_REDIS_URL, { maxRetriesPerRequest: 1 });

  afterAll(async () => {
    redis.disconnect();
    await prefixes.forget();
  });

  it('reads a pg_lsn as WAL bytes', () => {
    expect(parseLsn('0/0')).toBe(0n);
    expect(parseLsn('16/B374D848')).toBe((0x16n << 32n) + 0xb374d848n);
    expect(parseLsn('FFFFFFFF/FFFFFFFF')).toBe(2n ** 64n - 1n);
    expect(() => parseLsn('16:B374D848')).toThrow();
  });

  it.each([
    ['in memory', () => memoryWritePositions(2)],
    ['in Redis', () => redisWritePositions(redis, prefixes.next())],
  ])(
    '%s: raises, never lowers, and knows nothing of an account never raised',
    async (_kind, make) => {
      const positions = make();
      expect(await positions.of('acct_a')).toBeNull();
      await positions.raise(['acct_a', 'acct_b'], parseLsn('1/10'));
      await positions.raise(['acct_a'], parseLsn('0/FFFFFFFF'));
      expect(await positions.of('acct_a')).toBe(parseLsn('1/10'));
      await positions.raise(['acct_b'], parseLsn('A/0'));
      expect(await positions.of('acct_b')).toBe(parseLsn('A/0'));
    },
  );

  it('forgets the oldest account in memory past its bound (a primary read, never a stale one)', async () => {
    const positions = memoryWritePositions(2);
    await positions.raise(['a', 'b', 'c'], 5n);
    expect([await positions.of('a'), await positions.of('b'), await positions.of('c')]).toEqual([
      null,
      5n,
      5n,
    ]);
  });

  it('keeps each Redis position under the prefix, expiring after the last write', async () => {
    const redisPrefix = prefixes.next();
    const positions = redisWritePositions(redis, redisPrefix);
    await positions.raise(['acct_a'], parseLsn('2/0'));
    const key = `{${redisPrefix}}:write-position:acct_a`;
    expect(await redis.get(key)).toBe('0000000200000000');
    const ttlMs = await redis.pttl(key);
    expect(ttlMs).toBeGreaterThan(POSITION_TTL_MS - 60_000);
    expect(ttlMs).toBeLessThanOrEqual(POSITION_TTL_MS);
    // A lower raise keeps the position and renews its life.
    await redis.pexpire(key, 1_000);
    await positions.raise(['acct_a'], parseLsn('1/0'));
    expect(await redis.get(key)).toBe('0000000200000000');
    expect(await redis.pttl(key)).toBeGreaterThan(1_000);
    await redis.set(key, 'garbage');
    await expect(positions.of('acct_a')).rejects.toThrow(/16 hex digits/);
  });
});
