import { randomInt } from 'node:crypto';
import { v7 as uuidv7 } from 'uuid';

/**
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
  webhookEndpoint: 'we',
  webhookDelivery: 'whd',
  settlement: 'stl',
  event: 'evt',
  request: 'req',
  posting: 'pst',
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

function nextTimestamp(nowMs: number): { msecs: number; seq: number } {
  if (nowMs > state.msecs) {
    state.msecs = nowMs;
    // 31 random bits: room for 2^31 more ids in this millisecond before it carries over.
    state.seq = randomInt(0, 2 ** 31);
  } else {
    state.seq = (state.seq + 1) | 0;
    if (state.seq === 0) state.msecs += 1;
  }
  return { msecs: state.msecs, seq: state.seq };
}

export function newId(kind: IdKind, nowMs: number = Date.now()): string {
  const body = uuidv7(nextTimestamp(nowMs)).replaceAll('-', '');
  return `${ID_PREFIXES[kind]}_${body}`;
}

/** Whether `value` is an id of `kind`: the check a pagination cursor must pass. */
export function isIdOf(kind: IdKind, value: unknown): value is string {
  return typeof value === 'string' && PATTERNS[kind].test(value);
}
