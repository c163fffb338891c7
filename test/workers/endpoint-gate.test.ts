import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { EndpointGate } from '../../src/workers/endpoint-gate.js';

/**
 * The per-endpoint gate of the delivery worker: never more than its concurrency running for
 * one endpoint, as many more waiting, the rest handed back with a wait that grows with what
 * is ahead of them; endpoints never hold each other up.
 */
describe('EndpointGate', () => {
  it('runs at most `concurrency` per endpoint, whatever the order of arrivals and releases', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 4 }),
        fc.array(fc.constantFrom('a', 'b', 'c'), { minLength: 1, maxLength: 40 }),
        async (concurrency, arrivals) => {
          // Total slots equal to one endpoint's: the cap never lifts, so it is the bound here.
          const gate = new EndpointGate(concurrency, concurrency);
          const running = new Map<string, number>();
          let handedBack = 0;
          const deliveries = arrivals.map(async (endpoint) => {
            const turn = await gate.enter(endpoint);
            if ('retryInMs' in turn) {
              expect(turn.retryInMs).toBeGreaterThanOrEqual(10);
              handedBack += 1;
              return;
            }
            const now = (running.get(endpoint) ?? 0) + 1;
            running.set(endpoint, now);
            expect(now).toBeLessThanOrEqual(concurrency);
            await new Promise((resolve) => setImmediate(resolve));
            running.set(endpoint, (running.get(endpoint) ?? 1) - 1);
            turn.release(5);
          });
          await Promise.all(deliveries);
          // Each endpoint kept at most 2 x concurrency here; the rest went back.
          for (const endpoint of ['a', 'b', 'c']) {
            const count = arrivals.filter((arrival) => arrival === endpoint).length;
            expect(count - Math.min(count, 2 * concurrency)).toBeLessThanOrEqual(handedBack);
          }
        },
      ),
      { numRuns: 200 },
    );
  });

  it('hands back later the more an endpoint has ahead, and frees the slot for the next', async () => {
    const gate = new EndpointGate(1, 4);
    const first = await gate.enter('slow');
    expect('release' in first).toBe(true);
    const waiting = gate.enter('slow');
    const back1 = await gate.enter('slow');
    const back2 = await gate.enter('slow');
    expect('retryInMs' in back1 && 'retryInMs' in back2).toBe(true);
    if (!('retryInMs' in back1 && 'retryInMs' in back2)) return;
    expect(back2.retryInMs).toBeGreaterThan(back1.retryInMs);
    // Another endpoint is not held up.
    const other = await gate.enter('fast');
    expect('release' in other).toBe(true);
    if ('release' in first) first.release(1000);
    const second = await waiting;
    expect('release' in second).toBe(true);
  });

  it('lifts the cap for an endpoint that has shown it is fast, never for a slow one', async () => {
    const gate = new EndpointGate(2, 8);
    /** Enters `count` deliveries at once; those that may run now, released at `ms` each. */
    const burst = async (endpoint: string, count: number, ms: number) => {
      const turns = await Promise.all(
        Array.from({ length: count }, () =>
          Promise.race([
            gate.enter(endpoint),
            new Promise<'queued'>((resolve) => {
              setImmediate(() => {
                resolve('queued');
              });
            }),
          ]),
        ),
      );
      const running = turns.filter((turn) => typeof turn === 'object' && 'release' in turn);
      for (const turn of running)
        if (typeof turn === 'object' && 'release' in turn) turn.release(ms);
      return running.length;
    };
    // Unproven: two at once.
    expect(await burst('fast', 2, 5)).toBe(2);
    // Proven fast (two done, 5 ms each): up to 8 - 2 = 6 at once, the slots of the others kept.
    expect(await burst('fast', 7, 5)).toBe(6);
    // A slow endpoint stays at two, however many it has done.
    expect(await burst('slow', 2, 2000)).toBe(2);
    expect(await burst('slow', 2, 2000)).toBe(2);
    expect(await burst('slow', 3, 2000)).toBe(2);
  });
});
