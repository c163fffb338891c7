import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { Tally } from '../bench/http-load.js';
import { childrenCpuS, ensureWrk, histogramPercentiles, runWrk } from '../bench/wrk-load.js';
import { CARD_SLOT, ID_SLOT, wrkScript, type WrkScriptOptions } from '../bench/wrk-script.js';

/**
 * bench:http's wrk client: its percentiles, its script, and a real wrk run against a small
 * server that checks each body, so that a script wrk cannot run, a repeated id, a lost count or
 * a schedule at the wrong rate fails here rather than as a bench figure nobody can trust.
 */

const BODY = JSON.stringify({ cardId: CARD_SLOT, amount: '1.25', networkTransactionId: ID_SLOT });

function script(overrides: Partial<WrkScriptOptions> = {}): WrkScriptOptions {
  return {
    path: '/v1/authorizations',
    headers: { authorization: 'Bearer sk_test_x', 'content-type': 'application/json' },
    cards: ['card_a', 'card_b'],
    bodyTemplate: BODY,
    idPrefix: 'bench_t_',
    meanGapUs: 0,
    fixedGaps: false,
    ...overrides,
  };
}

describe("bench:http's wrk client", () => {
  it('takes nearest-rank percentiles of a histogram of microseconds', () => {
    const buckets: [number, number][] = [
      [3000, 1],
      [1000, 98],
      [9000, 1],
    ];
    expect(histogramPercentiles(buckets)).toEqual({ p50Ms: 1, p99Ms: 3, p999Ms: 9 });
    expect(histogramPercentiles([]).p99Ms).toBeNaN();
  });

  it("reads wrk's CPU from bash's times", () => {
    expect(childrenCpuS('0m0.010s 0m0.002s\n1m2.500s 0m0.250s\n')).toBeCloseTo(62.75, 6);
    expect(childrenCpuS('no times here')).toBeNaN();
  });

  it('writes the constants into the script, and a closed loop without delay()', () => {
    const closed = wrkScript(script());
    expect(closed).toContain('local CARDS = { "card_a", "card_b" }');
    expect(closed).toContain('local BODY_HEAD = "{\\"cardId\\":\\""');
    expect(closed).toContain('if MEAN_GAP_US == 0 then delay = nil end');
    expect(wrkScript(script({ meanGapUs: 64000 }))).toContain('local MEAN_GAP_US = 64000');
    expect(() => wrkScript(script({ cards: [] }))).toThrow(/card/);
    expect(() => wrkScript(script({ bodyTemplate: '{}' }))).toThrow(/slot/);
    expect(() => wrkScript(script({ idPrefix: 'é' }))).toThrow(/ASCII/);
  });

  it('runs wrk: every body its own id, every answer counted, the offered rate kept', async () => {
    const wrk = ensureWrk();
    const ids = new Set<string>();
    let repeated = 0;
    let wrongCard = 0;
    const server = http.createServer((request, response) => {
      let text = '';
      request.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
      request.on('end', () => {
        const body = JSON.parse(text) as { cardId: string; networkTransactionId: string };
        if (ids.has(body.networkTransactionId)) repeated += 1;
        ids.add(body.networkTransactionId);
        if (!['card_a', 'card_b'].includes(body.cardId)) wrongCard += 1;
        const declined = ids.size % 10 === 0;
        response.end(JSON.stringify({ approved: !declined, decidedInMicros: 250 }));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const tally = new Tally(100_000);
      const rate = 400;
      const connections = 4;
      const run = await runWrk(wrk, `http://127.0.0.1:${port}`, {
        script: script({ meanGapUs: (connections * 1e6) / rate }),
        connections,
        durationS: 2,
        tally,
      });
      expect(repeated).toBe(0);
      expect(wrongCard).toBe(0);
      expect(tally.non200 + tally.errors + tally.unexpected).toBe(0);
      // Every body the server read was answered and counted, or is among those never answered.
      expect(tally.approved + tally.declined + tally.inFlight.size).toBeGreaterThanOrEqual(
        ids.size,
      );
      expect(tally.declined).toBeGreaterThan(0);
      expect(tally.latencies.count).toBe(tally.approved + tally.declined);
      expect(tally.decidedMs.summary().p50Ms).toBe(0.25);
      expect(run.offeredPerSecond).toBe(rate);
      // A Poisson count over 2 s at 400/s: 800 +- 28 (one deviation); far outside is a bug.
      expect(run.achievedPerSecond).toBeGreaterThan(rate * 0.75);
      expect(run.achievedPerSecond).toBeLessThan(rate * 1.25);
      expect(run.fromSchedule.p50Ms).toBeLessThan(50);
      expect(run.cpuS).toBeGreaterThan(0);
      expect(run.cpuS).toBeLessThan(10);
    } finally {
      server.close();
    }
  }, 30_000);
});
