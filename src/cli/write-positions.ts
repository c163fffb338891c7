import type { WritePositions } from '../store/store.js';

/*
 * The accounts' write positions (store/replica-reads.ts) in Redis, where every API and worker
 * process of the deployment sees them: `{REDIS_PREFIX}:write-position:<account id>`, the WAL
 * position as 16 hexadecimal digits (so that Redis compares them as strings), raised by a
 * script that never lowers one. Each expires POSITION_TTL_MS after the account's last write:
 * an account with none reads the primary once, which sets its position again, so an expired
 * or lost key costs one primary read, never a stale one.
 */

/** The commands used, as both a Redis client and a Redis Cluster client offer them. */
export interface PositionsRedis {
  get(key: string): Promise<string | null>;
  eval(script: string, numKeys: number, ...args: string[]): Promise<unknown>;
}

/** Long past any replica lag worth reading through; short enough that idle accounts leave. */
export const POSITION_TTL_MS = 15 * 60_000;
/** Accounts raised at once (an authorization batch holds at most 64 requests). */
const RAISE_ACCOUNTS_MAX = 1_000;

const RAISE_SCRIPT = `
local kept = redis.call('GET', KEYS[1])
if (not kept) or kept < ARGV[1] then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
else
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 1`;

const HEX_DIGITS = 16;

export function redisWritePositions(redis: PositionsRedis, redisPrefix: string): WritePositions {
  const keyOf = (accountId: string) => `{${redisPrefix}}:write-position:${accountId}`;
  return {
    async raise(accountIds, position) {
      if (accountIds.length > RAISE_ACCOUNTS_MAX) {
        throw new Error(`at most ${RAISE_ACCOUNTS_MAX} accounts are raised at once`);
      }
      const value = position.toString(16).padStart(HEX_DIGITS, '0');
      // One script per key: each is a command of its own, so the keys need not share a slot.
      await Promise.all(
        accountIds.map((accountId) =>
          redis.eval(RAISE_SCRIPT, 1, keyOf(accountId), value, String(POSITION_TTL_MS)),
        ),
      );
    },
    async of(accountId) {
      const value = await redis.get(keyOf(accountId));
      if (value === null) return null;
      if (!/^[0-9a-f]{16}$/.test(value)) throw new Error('a write position reads 16 hex digits');
      return BigInt(`0x${value}`);
    },
  };
}
