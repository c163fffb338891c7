import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { WRITES_WAITING_MAX, WriteGate } from '../../src/store/sql/write-gate.js';
import { testDatabase } from '../support/databases.js';
import { openTestStore } from '../support/store.js';

/** A promise and the function that settles it, for work that ends when a test says. */
function held(): { promise: Promise<void>; release: () => void } {
  let release: () => void = () => undefined;
  const promise = new Promise<void>((resolve) => {
    release = resolve;
  });
  return { promise, release };
}

const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('the write gate', () => {
  it('lets openMax through, then the rest in the order they came', async () => {
    const gate = new WriteGate(2);
    const started: number[] = [];
    const releases = Array.from({ length: 5 }, () => held());
    const runs = releases.map((work, index) =>
      gate.run(async () => {
        started.push(index);
        await work.promise;
        return index;
      }),
    );
    await turn();
    expect(started).toEqual([0, 1]);
    expect(gate.stats()).toEqual({ open: 2, waiting: 3 });
    releases[1]?.release();
    await turn();
    expect(started).toEqual([0, 1, 2]);
    for (const work of releases) work.release();
    expect(await Promise.all(runs)).toEqual([0, 1, 2, 3, 4]);
    expect(started).toEqual([0, 1, 2, 3, 4]);
    expect(gate.stats()).toEqual({ open: 0, waiting: 0 });
  });

  it('frees the slot of work that failed', async () => {
    const gate = new WriteGate(1);
    await expect(gate.run(() => Promise.reject(new Error('refused')))).rejects.toThrow('refused');
    expect(await gate.run(() => Promise.resolve('next'))).toBe('next');
    expect(gate.stats()).toEqual({ open: 0, waiting: 0 });
  });

  it('lets work started inside another through without a slot of its own', async () => {
    const gate = new WriteGate(1);
    const inner = await gate.run(() => gate.run(() => Promise.resolve(gate.stats())));
    expect(inner).toEqual({ open: 1, waiting: 0 });
  });

  it('refuses with 503 once WRITES_WAITING_MAX are waiting', async () => {
    const gate = new WriteGate(1);
    const work = held();
    const runs = Array.from({ length: WRITES_WAITING_MAX + 1 }, () => gate.run(() => work.promise));
    await expect(gate.run(() => work.promise)).rejects.toMatchObject({
      code: 'service_unavailable',
    });
    work.release();
    await Promise.all(runs);
    expect(gate.stats()).toEqual({ open: 0, waiting: 0 });
  });

  it('never has more than openMax open, and runs everything (property)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 6 }),
        fc.array(fc.record({ turns: fc.integer({ min: 0, max: 4 }), fails: fc.boolean() }), {
          maxLength: 40,
        }),
        async (openMax, works) => {
          const gate = new WriteGate(openMax);
          let open = 0;
          let openMost = 0;
          const outcomes = await Promise.allSettled(
            works.map((work, index) =>
              gate.run(async () => {
                open += 1;
                openMost = Math.max(openMost, open);
                for (let step = 0; step < work.turns; step++) await turn();
                open -= 1;
                if (work.fails) throw new Error(`work ${index} failed`);
                return index;
              }),
            ),
          );
          expect(openMost).toBeLessThanOrEqual(openMax);
          expect(outcomes.map((outcome) => outcome.status)).toEqual(
            works.map((work) => (work.fails ? 'rejected' : 'fulfilled')),
          );
          expect(gate.stats()).toEqual({ open: 0, waiting: 0 });
        },
      ),
      { numRuns: 60 },
    );
  });

  it("holds the store's writes to writesOpenMax, and lets a nested one through", async () => {
    const database = testDatabase('pg');
    try {
      const t = await openTestStore(database, { writesOpenMax: 1 });
      const first = held();
      const holding = t.store.transaction(async () => {
        await first.promise;
        return 'held';
      });
      const waiting = t.store.transaction(() => Promise.resolve('waited'));
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(t.store.writeStats()).toEqual({ open: 1, waiting: 1 });
      first.release();
      expect(await Promise.all([holding, waiting])).toEqual(['held', 'waited']);
      // Inside a write, another write of the same work does not wait for its own slot.
      const nested = await t.store.transaction(() =>
        t.store.transaction(() => Promise.resolve(t.store.writeStats())),
      );
      expect(nested).toEqual({ open: 1, waiting: 0 });
      expect(t.store.writeStats()).toEqual({ open: 0, waiting: 0 });
    } finally {
      await database.close();
    }
  });
});
