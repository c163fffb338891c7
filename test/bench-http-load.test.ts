import { describe, expect, it } from 'vitest';
import { LatencySamples, percentileMs, Tally } from '../bench/http-load.js';

/** The HTTP bench's judgements rest on these: a wrong percentile would misjudge a target. */
describe('the HTTP bench load helpers', () => {
  it('takes nearest-rank percentiles of ascending samples', () => {
    const hundred = Float64Array.from({ length: 100 }, (_, index) => index + 1);
    expect(percentileMs(hundred, 0.5)).toBe(50);
    expect(percentileMs(hundred, 0.99)).toBe(99);
    expect(percentileMs(hundred, 1)).toBe(100);
    expect(percentileMs(Float64Array.from([7]), 0.99)).toBe(7);
    expect(percentileMs(new Float64Array(0), 0.5)).toBeNaN();
  });

  it('keeps fractions of a millisecond, sorts numerically, and bounds its memory', () => {
    const samples = new LatencySamples(4);
    for (const ms of [10, 2.4, 9, 2.6, 100]) samples.record(ms);
    expect(samples.count).toBe(4);
    expect(samples.dropped).toBe(1);
    expect(samples.summary()).toEqual({ p50Ms: 2.6, p99Ms: 10, maxMs: 10 });
  });

  it('classifies answers by status and body', () => {
    const tally = new Tally(10);
    tally.answer(200, '{"approved":true,"declineCode":null}');
    tally.answer(200, '{"approved":false,"standIn":true}');
    tally.answer(200, '{"approved":false,"declineCode":"card_declined"}');
    tally.answer(200, '{"ok":true}');
    tally.answer(200, '{"something":"else"}');
    tally.answer(429, '{"error":{}}');
    expect(tally).toMatchObject({
      ok: 5,
      non200: 1,
      approved: 1,
      declined: 2,
      standIn: 1,
      noop: 1,
      unexpected: 1,
    });
    expect(tally.samples.length).toBe(4);
  });
});
