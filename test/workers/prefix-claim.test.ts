import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig, redisServer } from '../../src/config/env.js';
import {
  claimKey,
  claimRedisPrefix,
  defaultRedisPrefix,
  RedisPrefixClaimedError,
  type RedisPrefixClaim,
} from '../../src/workers/prefix-claim.js';
import { LOCAL_REDIS_URL } from '../support/http.js';
import {
  trackedRedisPrefixes,
  freePort,
  startRedisServer,
  stopAll,
  waitFor,
} from '../support/processes.js';

/**
 * One database per Redis prefix (contract section 15, v1.1): a database claims its
 * prefix in Redis by its installation id, a prefix another database holds is refused, and the
 * claim waits for a Redis that is down. Two real service processes on one Redis are tested in
 * installations.test.ts.
 */
const prefixes = trackedRedisPrefixes();
const prefix = prefixes.next;
const claims: RedisPrefixClaim[] = [];
const redis = new Redis(LOCAL_REDIS_URL, { maxRetriesPerRequest: 1 });

afterAll(async () => {
  for (const claim of claims) claim.close();
  await stopAll();
  await prefixes.forget();
  redis.disconnect();
});

function installationId(): string {
  return randomBytes(8).toString('hex');
}

function claim(redisPrefix: string, id: string, redisUrl = LOCAL_REDIS_URL): RedisPrefixClaim {
  const made = claimRedisPrefix({ redis: redisServer(redisUrl), redisPrefix, installationId: id });
  claims.push(made);
  return made;
}

describe('the Redis prefix claim', () => {
  it('defaults the prefix to the installation id, and tells a prefix set by hand from none', () => {
    expect(defaultRedisPrefix('0123456789abcdef')).toBe('spendgate-0123456789abcdef');
    expect(loadConfig({}).redisPrefix).toBeNull();
    expect(loadConfig({ REDIS_PREFIX: '' }).redisPrefix).toBeNull();
    expect(loadConfig({ REDIS_PREFIX: 'blue' }).redisPrefix).toBe('blue');
    expect(() => loadConfig({ REDIS_PREFIX: 'a b' })).toThrow(/REDIS_PREFIX/);
  });

  it('claims a free prefix for its database, in the queues hash tag, and holds it again at its next start', async () => {
    const redisPrefix = prefix();
    const id = installationId();
    const first = claim(redisPrefix, id);
    await first.held;
    expect(claimKey(redisPrefix)).toBe(`{${redisPrefix}}:installation`);
    expect(await redis.get(`{${redisPrefix}}:installation`)).toBe(id);
    first.close();
    await claim(redisPrefix, id).held;
  });

  it('refuses a prefix another database holds, naming REDIS_PREFIX and what to do', async () => {
    const redisPrefix = prefix();
    const owner = installationId();
    await claim(redisPrefix, owner).held;
    const intruder = installationId();
    const refused = claim(redisPrefix, intruder);
    const error = await refused.held.then(
      () => null,
      (reason: unknown) => reason,
    );
    expect(error).toBeInstanceOf(RedisPrefixClaimedError);
    const message = (error as Error).message;
    expect(message).toContain(`REDIS_PREFIX ${redisPrefix} is claimed`);
    expect(message).toContain(`installation ${owner}`);
    expect(message).toContain(`unset REDIS_PREFIX for its default (spendgate-${intruder})`);
    expect(message).toContain(`delete the Redis key {${redisPrefix}}:installation`);
    expect(message).not.toContain('\n');
    expect(await refused.lost).toBe(error);
    // The owner's claim is untouched.
    expect(await redis.get(claimKey(redisPrefix))).toBe(owner);
  });

  it('claims again at every reconnection, and reports a claim another database took meanwhile', async () => {
    const redisPrefix = prefix();
    const id = installationId();
    const held = claim(redisPrefix, id);
    await held.held;
    let lost: RedisPrefixClaimedError | null = null;
    void held.lost.then((error) => (lost = error));
    // Redis restarted empty, then another database claimed the prefix first.
    await redis.set(claimKey(redisPrefix), 'another0database');
    await killClaimConnection(id);
    await waitFor(
      () => lost !== null,
      10_000,
      () => 'the claim was not checked again',
    );
    expect((lost as RedisPrefixClaimedError | null)?.message).toContain('another0database');
  });

  it('renews its claim while it runs, and leaves none behind once stopped (the claim expires)', async () => {
    const redisPrefix = prefix();
    const id = installationId();
    const made = claimRedisPrefix({
      redis: redisServer(LOCAL_REDIS_URL),
      redisPrefix,
      installationId: id,
      ttlMs: 1_000,
      renewEveryMs: 200,
    });
    claims.push(made);
    await made.held;
    const ttlMs = await redis.pttl(claimKey(redisPrefix));
    expect(ttlMs).toBeGreaterThan(0);
    expect(ttlMs).toBeLessThanOrEqual(1_000);
    // Past its first expiry: renewed, still this database's.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(await redis.get(claimKey(redisPrefix))).toBe(id);
    made.close();
    await waitFor(
      async () => (await redis.exists(claimKey(redisPrefix))) === 0,
      3_000,
      () => 'the claim of a stopped database never expired',
    );
    // The default claim expires too, in days rather than never.
    await claim(redisPrefix, id).held;
    expect(await redis.pttl(claimKey(redisPrefix))).toBeGreaterThan(6 * 24 * 3_600_000);
  });

  it('waits for a Redis that is down, and claims once it answers', async () => {
    const port = await freePort();
    const redisPrefix = prefix();
    const waiting = claim(redisPrefix, installationId(), `redis://127.0.0.1:${port}`);
    let held = false;
    void waiting.held.then(() => (held = true));
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(held).toBe(false);
    const server = await startRedisServer(port);
    try {
      await waitFor(
        () => held,
        15_000,
        () => 'the claim was not made once Redis answered',
      );
    } finally {
      await server.stop('SIGKILL');
    }
  });
});

/** Drops the claim's own connection (by its name), as a Redis restart would. */
async function killClaimConnection(id: string): Promise<void> {
  const list = (await redis.client('LIST')) as string;
  const line = list.split('\n').find((entry) => entry.includes(`name=spendgate-claim-${id}`));
  const clientId = /(?:^| )id=(\d+)/.exec(line ?? '')?.[1];
  if (clientId === undefined) throw new Error(`no claim connection for ${id}`);
  await redis.client('KILL', 'ID', clientId);
}
