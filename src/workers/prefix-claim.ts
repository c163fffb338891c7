import { ConfigError, type RedisTarget } from '../config/env.js';
import { redisClient } from '../redis.js';
import { queuePrefix } from './queues.js';

/*
 * One database per Redis prefix (contract section 15, v1.1). Two installations on one
 * prefix share queues: one's worker takes the other's delivery jobs, finds nothing of them in
 * its own database, and the deliveries are lost. So:
 * - the default prefix is `spendgate-<installation id>`, the id made with the database
 *   (migration 0005), so that two databases left on the default never meet;
 * - the prefix is claimed in Redis by the database's id: `SET {prefix}:installation <id> NX
 *   GET`, one atomic command that claims an unclaimed prefix and answers who holds a claimed
 *   one. The key is in the queues' hash tag (queues.ts), so it lives in their slot on a Redis
 *   Cluster. A claim never expires: a prefix is handed to another database only by deleting the
 *   key, by hand, once the first database is gone for good.
 * The claim is made again at every (re)connection, so a Redis restarted empty is claimed anew,
 * and a claim found taken by another database at any time is reported through `lost`.
 */

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
}): RedisPrefixClaim {
  const { redisPrefix, installationId } = options;
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
      holder = await redis.set(key, installationId, 'NX', 'GET');
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
  return {
    held,
    lost,
    close() {
      redis.disconnect();
    },
  };
}
