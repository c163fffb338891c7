import { describe, expect, it } from 'vitest';
import { ID_PREFIXES, isIdOf, newId } from '../src/ids.js';

describe('ids', () => {
  it('carry their kind and sort in creation order, within one millisecond too', () => {
    const ids = Array.from({ length: 2000 }, (_, index) =>
      newId('vault', 1_800_000_000_000 + Math.floor(index / 500)),
    );
    expect(ids.every((id) => isIdOf('vault', id))).toBe(true);
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
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
