import { ConfigError, type RedisTarget } from '../config/env.js';
import { assert } from '../core/index.js';
import { redisClient } from '../redis.js';
import { queuePrefix } from './queues.js';

/*
 * One database per Redis prefix (contract section 15, v1.1). Two installations on one
 * prefix share queues: one's worker takes the other's delivery jobs, finds nothing of them in
 * its own database, and the deliveries are lost. So:
 * - the default prefix is `spendgate-<installation id>`, the id made with the database
 *   (migration 0005), so that two databases left on the default never meet;
 * - the prefix is claimed in Redis by the database's id at `{prefix}:installation`, one atomic
 *   step (CLAIM_SCRIPT) that claims an unclaimed prefix and answers who holds a claimed one.
 *   The key is in the queues' hash tag (queues.ts), so it lives in their slot on a Redis
 *   Cluster;
 * - a claim lasts CLAIM_TTL_MS (7 days) and every process of the holding database renews it
 *   every hour: a prefix is held as long as its database runs, and one left behind (a test
 *   run's, a dropped staging database's) expires by itself instead of staying forever. A
 *   database stopped for longer finds its prefix free again or, if another took it meanwhile,
 *   is refused as always. Handing a prefix over sooner is deleting the key by hand.
 * The claim is made again at every (re)connection and renewal, so a Redis restarted empty is
 * claimed anew, and a claim found taken by another database at any time is reported through
 * `lost`.
 */

/** How long a claim lasts unless renewed. */
export const CLAIM_TTL_MS = 7 * 24 * 3_600_000;
/** How often a running process renews its database's claim. */
export const CLAIM_RENEW_EVERY_MS = 3_600_000;

/**
 * The claim, atomic: an unclaimed prefix is set to this database's id (with its expiry) and
 * nil answered; a prefix this database holds has its expiry renewed; the holder is answered.
 */
const CLAIM_SCRIPT = `
local holder = redis.call('GET', KEYS[1])
if not holder then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  return false
end
if holder == ARGV[1] then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return holder`;

export function defaultRedisPrefix(installationId: string): string {
  return `spendgate-${installationId}`;
}

export function claimKey(redisPrefix: string): string {
  return `${queuePrefix(redisPrefix)}:installation`;
}

/** A ConfigError, so that the command prints its one line (src/cli/main.ts) and exits 1. */
export class RedisPrefixClaimedError extends ConfigError {
  constructor(
    readonly redisPrefix: string,
    readonly installationId: string,
    readonly holder: string,
  ) {
    super(
      `REDIS_PREFIX ${redisPrefix} is claimed on this Redis by another spendgate database ` +
        `(installation ${holder}; this database is installation ${installationId}), and two ` +
        'databases must never share queues: give this one a REDIS_PREFIX of its own, or unset ' +
        `REDIS_PREFIX for its default (${defaultRedisPrefix(installationId)}); if that other ` +
        `database is gone for good, delete the Redis key ${claimKey(redisPrefix)} and start again`,
    );
  }
}

export interface RedisPrefixClaim {
  /**
   * Resolves once this database holds the prefix; rejects with RedisPrefixClaimedError if
   * another one holds it when Redis first answers. Pending while Redis does not answer.
   */
  readonly held: Promise<void>;
  /** Resolves when another database is found holding the prefix, at the first check or later. */
  readonly lost: Promise<RedisPrefixClaimedError>;
  /** Stops claiming (shutdown); `held` and `lost` stay as they are. */
  close(): void;
}

export function claimRedisPrefix(options: {
  readonly redis: RedisTarget;
  readonly redisPrefix: string;
  readonly installationId: string;
  /** CLAIM_TTL_MS and CLAIM_RENEW_EVERY_MS unless given (tests shorten them). */
  readonly ttlMs?: number;
  readonly renewEveryMs?: number;
}): RedisPrefixClaim {
  const { redisPrefix, installationId } = options;
  const ttlMs = options.ttlMs ?? CLAIM_TTL_MS;
  const renewEveryMs = options.renewEveryMs ?? CLAIM_RENEW_EVERY_MS;
  assert(renewEveryMs > 0 && renewEveryMs * 2 <= ttlMs, 'a claim renewed well before it expires');
  const key = claimKey(redisPrefix);
  let holds: () => void = () => undefined;
  let refused: (error: RedisPrefixClaimedError) => void = () => undefined;
  let losing: (error: RedisPrefixClaimedError) => void = () => undefined;
  const held = new Promise<void>((resolve, reject) => {
    holds = resolve;
    refused = reject;
  });
  // Whoever awaits `held` sees the refusal; nobody need await it for the process to go on.
  held.catch(() => undefined);
  const lost = new Promise<RedisPrefixClaimedError>((resolve) => {
    losing = resolve;
  });
  // No queue of commands while Redis is down: the claim is made on each 'ready' instead.
  const redis = redisClient(options.redis, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    // Named in CLIENT LIST, for an operator looking for who holds a prefix.
    connectionName: `spendgate-claim-${installationId}`,
  });
  const claim = async (): Promise<void> => {
    let holder: string | null;
    try {
      const answer = await redis.eval(CLAIM_SCRIPT, 1, key, installationId, ttlMs);
      holder = typeof answer === 'string' ? answer : null;
    } catch {
      return; // the connection dropped again: the next 'ready' claims
    }
    if (holder === null || holder === installationId) {
      holds();
      return;
    }
    const error = new RedisPrefixClaimedError(redisPrefix, installationId, holder);
    refused(error);
    losing(error);
  };
  redis.on('ready', () => {
    void claim();
  });
  // Renewed while the process runs; never what keeps the process alive.
  const renewal = setInterval(() => void claim(), renewEveryMs);
  renewal.unref();
  return {
    held,
    lost,
    close() {
      clearInterval(renewal);
      redis.disconnect();
    },
  };
}
