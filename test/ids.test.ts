import { describe, expect, it } from 'vitest';
import { ID_PREFIXES, idTimePrefix, isIdOf, newId } from '../src/ids.js';

describe('ids', () => {
  it('carry their kind and sort in creation order, within one millisecond too', () => {
    const ids = Array.from({ length: 2000 }, (_, index) =>
      newId('vault', 1_800_000_000_000 + Math.floor(index / 500)),
    );
    expect(ids.every((id) => isIdOf('vault', id))).toBe(true);
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('are UUIDv7 bodies: the millisecond, version 7, the RFC 9562 variant, and random bits', () => {
    const nowMs = 1_800_000_000_123;
    const bodies = Array.from({ length: 3000 }, () => newId('transaction', nowMs).slice(4));
    for (const body of bodies) {
      expect(body.slice(0, 12)).toBe(nowMs.toString(16).padStart(12, '0'));
      expect(body[12]).toBe('7');
      expect('89ab').toContain(body[16]);
    }
    // The last 37 bits are random: 3,000 ids show far more than one distinct tail, and every
    // hex digit of the tail takes many values (a pool read at a fixed offset would not).
    const tails = bodies.map((body) => body.slice(22));
    expect(new Set(tails).size).toBe(tails.length);
    for (const digit of [22, 23, 24, 25, 26, 27, 28, 29, 31]) {
      expect(new Set(bodies.map((body) => body[digit])).size).toBeGreaterThan(8);
    }
  });

  it('sort below the time prefix of any later millisecond, and at or above their own', () => {
    // Far past every id this process made, so the ids carry the times asked for.
    const atMs = 2_500_000_000_000;
    const id = newId('event', atMs);
    expect(id.startsWith(idTimePrefix('event', atMs))).toBe(true);
    expect(id >= idTimePrefix('event', atMs)).toBe(true);
    expect(id < idTimePrefix('event', atMs + 1)).toBe(true);
    expect(idTimePrefix('transaction', 0)).toBe('txn_000000000000');
    expect(() => idTimePrefix('event', -1)).toThrow();
  });

  it('never go backwards when the clock does', () => {
    const later = newId('event', 1_900_000_000_000);
    const earlierClock = newId('event', 1_800_000_000_000);
    expect(earlierClock > later).toBe(true);
  });

  it('tell one kind from another and from malformed text', () => {
    const id = newId('card');
    expect(isIdOf('card', id)).toBe(true);
    expect(isIdOf('vault', id)).toBe(false);
    expect(isIdOf('card', `${id}0`)).toBe(false);
    expect(isIdOf('card', id.toUpperCase())).toBe(false);
    expect(isIdOf('card', 42)).toBe(false);
    expect(Object.values(ID_PREFIXES).length).toBe(new Set(Object.values(ID_PREFIXES)).size);
  });
});
