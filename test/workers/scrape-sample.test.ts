import { describe, expect, it } from 'vitest';
import { ScrapeSample } from '../../src/workers/metrics.js';

/**
 * The bounds on a scrape-time reading (workers/metrics.ts): a reading serves every scrape for
 * `freshMs`, only one read is ever in flight, a scrape waits at most `waitMs`, and a failed
 * read is no value (the gauge goes absent) kept as long as a value would be. The clock is the
 * test's; the reads are promises the test settles.
 */
function reads<T>() {
  const started: { resolve: (value: T) => void; reject: (error: Error) => void }[] = [];
  const read = () =>
    new Promise<T>((resolve, reject) => {
      started.push({ resolve, reject });
    });
  return { started, read };
}

describe('a scrape-time reading', () => {
  it('is read once per freshMs however many scrapes ask', async () => {
    let nowMs = 0;
    const { started, read } = reads<number>();
    const sample = new ScrapeSample(read, { freshMs: 5000, waitMs: 60_000, nowMs: () => nowMs });
    const first = sample.value();
    started[0]?.resolve(7);
    expect(await first).toBe(7);
    nowMs = 4999;
    expect(await Promise.all([sample.value(), sample.value(), sample.value()])).toEqual([7, 7, 7]);
    expect(started).toHaveLength(1);
    nowMs = 5000;
    const again = sample.value();
    started[1]?.resolve(8);
    expect(await again).toBe(8);
    expect(started).toHaveLength(2);
  });

  it('keeps one read in flight: scrapes during a slow read wait on it, never start another', async () => {
    const { started, read } = reads<number>();
    const sample = new ScrapeSample(read, { freshMs: 0, waitMs: 60_000, nowMs: () => 0 });
    const waiting = [sample.value(), sample.value(), sample.value()];
    expect(started).toHaveLength(1);
    started[0]?.resolve(3);
    expect(await Promise.all(waiting)).toEqual([3, 3, 3]);
  });

  it('answers without the reading once waitMs has passed, and hands it to a later scrape', async () => {
    const { started, read } = reads<number>();
    // A read that never answers while the scrape waits: the scrape answers null, unblocked.
    const sample = new ScrapeSample(read, { freshMs: 60_000, waitMs: 10, nowMs: () => 0 });
    expect(await sample.value()).toBeNull();
    // The read went on; a scrape meanwhile joins it rather than starting a second.
    const later = sample.value();
    expect(started).toHaveLength(1);
    started[0]?.resolve(5);
    expect(await later).toBe(5);
  });

  it('is absent after a failed read, and asks again only once freshMs has passed', async () => {
    let nowMs = 0;
    const { started, read } = reads<number>();
    const sample = new ScrapeSample(read, { freshMs: 5000, waitMs: 60_000, nowMs: () => nowMs });
    const failed = sample.value();
    started[0]?.reject(new Error('Redis is not connected'));
    expect(await failed).toBeNull();
    nowMs = 1000;
    expect(await sample.value()).toBeNull();
    expect(started).toHaveLength(1);
    nowMs = 5000;
    const back = sample.value();
    started[1]?.resolve(1);
    expect(await back).toBe(1);
  });
});
