import { randomFillSync, randomInt } from 'node:crypto';
import { assert } from './core/index.js';

/*
 * Object ids (contract section 1): a kind prefix and a UUIDv7 body in hex, so that sorting by
 * id is sorting by creation time (UUIDv7 starts with the millisecond timestamp and stays
 * monotonic within a process). `vlt_0193f...` is 4 + 32 characters.
 */

export const ID_PREFIXES = {
  account: 'acct',
  apiKey: 'key',
  vault: 'vlt',
  card: 'card',
  transaction: 'txn',
  transfer: 'tr',
  reserveRun: 'rsv',
  reserveRunRequest: 'rsq',
  webhookEndpoint: 'we',
  webhookDelivery: 'whd',
  settlement: 'stl',
  event: 'evt',
  request: 'req',
  posting: 'pst',
  backtest: 'bt',
  deposit: 'dep',
  processorConnection: 'pc',
} as const;

export type IdKind = keyof typeof ID_PREFIXES;

const BODY_PATTERN = '[0-9a-f]{32}';
const PATTERNS = Object.fromEntries(
  Object.entries(ID_PREFIXES).map(([kind, prefix]) => [
    kind,
    new RegExp(`^${prefix}_${BODY_PATTERN}$`),
  ]),
) as Record<IdKind, RegExp>;

/**
 * The millisecond and counter of the last id. The uuid package keeps such a counter only when
 * it reads the clock itself; ids here take the store's clock, so this module keeps its own
 * (RFC 9562 method 1): a random start each millisecond, +1 within it, and never backwards,
 * even when a test clock is moved back.
 */
const state = { msecs: -Infinity, seq: 0 };
/** The counter's 31 bits (RFC 9562 method 1, as the uuid package lays it out). */
const SEQ_MAX = 2 ** 31 - 1;

function nextTimestamp(nowMs: number): { msecs: number; seq: number } {
  if (nowMs > state.msecs) {
    state.msecs = nowMs;
    // 31 random bits: room for 2^31 more ids in this millisecond before it carries over.
    state.seq = randomInt(0, 2 ** 31);
  } else {
    state.seq += 1;
    if (state.seq > SEQ_MAX) {
      state.msecs += 1;
      state.seq = 0;
    }
  }
  return { msecs: state.msecs, seq: state.seq };
}

/**
 * Random bytes drawn from a pool refilled 4 KiB at a time: the ids of one authorization
 * batch need a few dozen random bytes each round, and a call into the system's generator per
 * id was a measured 2-5% of the authorize path's CPU (docs/performance.md).
 */
const RANDOM_POOL_BYTES = 4096;
const randomPool = Buffer.allocUnsafe(RANDOM_POOL_BYTES);
let randomPoolUsed = RANDOM_POOL_BYTES;

function randomBytesFromPool(count: number): number {
  if (randomPoolUsed + count > RANDOM_POOL_BYTES) {
    randomFillSync(randomPool);
    randomPoolUsed = 0;
  }
  const offset = randomPoolUsed;
  randomPoolUsed += count;
  return offset;
}

const HEX_OF_BYTE = Array.from({ length: 256 }, (_, byte) => byte.toString(16).padStart(2, '0'));
/** Two hex digits; every caller masks its byte to 0-255, so the table always has it. */
const hex = (byte: number): string => HEX_OF_BYTE[byte] as string;

/**
 * The 32 hex digits of a UUIDv7 (RFC 9562): 48 bits of milliseconds, the version, the 31-bit
 * counter of method 1 across the rand_a and rand_b bits (so that ids of one millisecond sort
 * in the order they were made), the variant, then 37 random bits from the pool.
 */
function uuidV7Hex(msecs: number, seq: number): string {
  const offset = randomBytesFromPool(5);
  const r = randomPool;
  const hexMs = msecs.toString(16).padStart(12, '0');
  assert(hexMs.length === 12, 'a UUIDv7 timestamp has 48 bits');
  return (
    hexMs +
    hex(0x70 | ((seq >>> 27) & 0x0f)) +
    hex((seq >>> 19) & 0xff) +
    hex(0x80 | ((seq >>> 13) & 0x3f)) +
    hex((seq >>> 5) & 0xff) +
    hex(((seq << 3) & 0xf8) | ((r[offset] as number) & 0x07)) +
    hex(r[offset + 1] as number) +
    hex(r[offset + 2] as number) +
    hex(r[offset + 3] as number) +
    hex(r[offset + 4] as number) +
    hex((r[offset] as number) >>> 3)
  );
}

export function newId(kind: IdKind, nowMs: number = Date.now()): string {
  const { msecs, seq } = nextTimestamp(nowMs);
  return `${ID_PREFIXES[kind]}_${uuidV7Hex(msecs, seq)}`;
}

/**
 * The first characters of every id of `kind` made for the millisecond `epochMs` (its kind and
 * the UUIDv7's 48-bit time): every id made earlier sorts below it, every id made then or later
 * at or above it. What a scan by time reads through a primary key.
 */
export function idTimePrefix(kind: IdKind, epochMs: number): string {
  assert(Number.isSafeInteger(epochMs) && epochMs >= 0 && epochMs < 2 ** 48, 'a 48-bit time');
  return `${ID_PREFIXES[kind]}_${epochMs.toString(16).padStart(12, '0')}`;
}

/** Whether `value` is an id of `kind`: the check a pagination cursor must pass. */
export function isIdOf(kind: IdKind, value: unknown): value is string {
  return typeof value === 'string' && PATTERNS[kind].test(value);
}
