import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { editDistance, nearest } from '../src/cli/suggest.js';

describe('the nearest known word to a typo', () => {
  it('finds the word a swap, a missing or an extra letter came from', () => {
    expect(nearest('kyes', ['serve', 'keys', 'reserves'])).toBe('keys');
    expect(nearest('--acount', ['--account', '--mode'])).toBe('--account');
    expect(nearest('apii', ['api', 'worker', 'all'])).toBe('api');
    expect(nearest('launch', ['serve', 'keys', 'migrate'])).toBeNull();
  });

  it('is a distance: zero only for equal words, symmetric, at most the longer length', () => {
    const word = fc.string({ maxLength: 12 });
    fc.assert(
      fc.property(word, word, (a, b) => {
        const distance = editDistance(a, b);
        expect(distance === 0).toBe(a === b);
        expect(editDistance(b, a)).toBe(distance);
        expect(distance).toBeLessThanOrEqual(Math.max(a.length, b.length));
      }),
    );
  });
});
