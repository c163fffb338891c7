import type { RedisConnection } from '../redis.js';
import { assert } from '../core/index.js';

export interface ChunkedCount {
  /** False when this request would pass the limit; nothing was counted then. */
  readonly allowed: boolean;
  readonly limit: number;
  readonly remaining: number;
  readonly resetMs: number;
}

interface KeyWindow {
  window: number;
  /** The key's total in Redis, as last read (this process's sent chunks included). */
  sharedCount: number;
  /** Counted here and being added in Redis now. */
  sendingCount: number;
  /** Counted here and not sent yet. */
  unsentCount: number;
}

const WINDOW_MS = 1000;
const KEYS_MAX = 10_000;
/** A chunk's Redis key outlives its window by one, so a late chunk never starts a new count. */
const KEY_TTL_MS = 2 * WINDOW_MS;
const SEND_RETRY_MS = 100;

/**
 * A per-key count over fixed one-second windows, shared through Redis in chunks: for the card
 * network's class (10,000 per second by default), where a Redis round trip on every
 * authorization cost more than the count is worth (docs/performance.md).
 *
 * Each process counts its own requests and adds them to the key's Redis counter in chunks of
 * `chunk` (1% of the limit), reading back the total of every process; a request is refused
 * when the last total read plus this process's unsent count reaches the limit. So every process
 * still shares one count (contract section 6), and a window may admit, per process, about one
 * chunk more than the limit (a chunk, plus what arrives while one is on its way): about 1% per
 * process, the price of one round trip per chunk instead of one per request. While Redis does
 * not answer, the process's own count still bounds it.
 *
 * Windows are whole seconds of the wall clock, the same in every process. Keys live two
 * windows in Redis; the process keeps at most `KEYS_MAX` keys in memory.
 */
export class ChunkedRateCounter {
  readonly #keys = new Map<string, KeyWindow>();
  readonly #chunk: number;

  constructor(
    private readonly redis: RedisConnection | null,
    private readonly keyPrefix: string,
    readonly limit: number,
    /** Called once when a chunk cannot be sent (Redis down), and once when sending works again. */
    private readonly onRedisState: (reachable: boolean) => void = () => undefined,
  ) {
    assert(Number.isSafeInteger(limit) && limit > 0, 'the limit is a positive integer');
    this.#chunk = Math.max(1, Math.floor(limit / 100));
  }

  #redisReachable = true;
  /** While Redis does not answer, a chunk is tried at most this often, not on every request. */
  #sendNotBeforeMs = 0;

  consume(key: string, nowMs: number): ChunkedCount {
    const window = Math.floor(nowMs / WINDOW_MS);
    const resetMs = (window + 1) * WINDOW_MS - nowMs;
    const state = this.#current(key, window);
    const counted = state.sharedCount + state.sendingCount + state.unsentCount;
    if (counted >= this.limit) {
      return { allowed: false, limit: this.limit, remaining: 0, resetMs };
    }
    state.unsentCount += 1;
    // The first request of a window sends at once, so a process learns the others' count early.
    if (
      state.sendingCount === 0 &&
      (state.unsentCount >= this.#chunk || counted === 0) &&
      nowMs >= this.#sendNotBeforeMs
    ) {
      this.#send(key, state, nowMs);
    }
    return {
      allowed: true,
      limit: this.limit,
      remaining: Math.max(0, this.limit - counted - 1),
      resetMs,
    };
  }

  #current(key: string, window: number): KeyWindow {
    const known = this.#keys.get(key);
    if (known !== undefined && known.window === window) return known;
    const fresh: KeyWindow = { window, sharedCount: 0, sendingCount: 0, unsentCount: 0 };
    this.#keys.delete(key);
    this.#keys.set(key, fresh);
    if (this.#keys.size > KEYS_MAX) {
      // Insertion order: the first key is the one whose window started longest ago.
      const oldest = this.#keys.keys().next();
      if (oldest.done !== true) this.#keys.delete(oldest.value);
    }
    assert(this.#keys.size <= KEYS_MAX, 'the counter keeps at most KEYS_MAX keys');
    return fresh;
  }

  #send(key: string, state: KeyWindow, nowMs: number): void {
    if (this.redis === null) return;
    const amount = state.unsentCount;
    state.unsentCount = 0;
    state.sendingCount = amount;
    const redisKey = `${this.keyPrefix}:${key}:${state.window}`;
    this.redis
      .multi()
      .incrby(redisKey, amount)
      .pexpire(redisKey, KEY_TTL_MS)
      .exec()
      .then((replies) => {
        const total = replies?.[0]?.[1];
        // Not an assertion: Redis may answer INCRBY with an error (out of memory, a key of
        // another type) or abort the MULTI; the catch below keeps the count in this process.
        if (typeof total !== 'number') throw new Error('INCRBY answered no number');
        // A newer window may have replaced this state meanwhile; its count is its own.
        state.sharedCount = Math.max(state.sharedCount, total);
        state.sendingCount = 0;
        this.#reachable(true);
      })
      .catch(() => {
        // Kept as this process's own count: the limit still holds here while Redis is away.
        state.unsentCount += amount;
        state.sendingCount = 0;
        this.#sendNotBeforeMs = nowMs + SEND_RETRY_MS;
        this.#reachable(false);
      });
  }

  #reachable(reachable: boolean): void {
    if (reachable === this.#redisReachable) return;
    this.#redisReachable = reachable;
    this.onRedisState(reachable);
  }
}
