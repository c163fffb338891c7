import type { Tally } from './http-load.js';
import { CARD_SLOT, ID_SLOT } from './wrk-script.js';
import { runWrk, type WrkRun } from './wrk-load.js';
import { HTTP_BENCH_PURCHASE } from './workloads.js';

/**
 * bench:http's workloads driven by wrk (bench/wrk-load.ts), the shapes of issue 38's table:
 * saturating on 200 vaults and on one, Poisson arrivals at about 1,000/s and 1,700/s, and an
 * idle service sent one request every 20 ms.
 */

export const WRK_ROLES = ['wrk-idle', 'poisson-1000', 'poisson-1700', 'wrk-spread', 'wrk-hot'];
export type WrkRole = 'wrk-idle' | 'poisson-1000' | 'poisson-1700' | 'wrk-spread' | 'wrk-hot';

/** The Poisson workloads' offered rates, a second. */
export const POISSON_RATES: Readonly<Record<'poisson-1000' | 'poisson-1700', number>> = {
  'poisson-1000': 1000,
  'poisson-1700': 1700,
};
/** The idle workload's gap between requests. */
export const IDLE_GAP_MS = 20;

export interface WrkContext {
  readonly wrk: string;
  readonly base: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly spreadCards: readonly string[];
  readonly hotCard: string;
  readonly runId: string;
  readonly connections: number;
  readonly durationS: number;
}

type Work = (tally: Tally) => Promise<{ elapsedS: number; note?: string; clientCpuS?: number }>;

const BODY_TEMPLATE = JSON.stringify({
  cardId: CARD_SLOT,
  amount: HTTP_BENCH_PURCHASE.amount,
  currency: HTTP_BENCH_PURCHASE.currency,
  merchant: HTTP_BENCH_PURCHASE.merchant,
  networkTransactionId: ID_SLOT,
});

const ms = (value: number) => (Number.isFinite(value) ? value.toFixed(2) : '-');

function runNote(run: WrkRun): string {
  const offered =
    run.offeredPerSecond === null
      ? 'closed loop'
      : `offered ${run.offeredPerSecond.toFixed(0)}/s, achieved ${run.achievedPerSecond.toFixed(0)}/s`;
  const { fromSchedule, wrkFromSend, lag } = run;
  return `wrk: ${offered}; from the schedule p50 ${ms(fromSchedule.p50Ms)}, p99 ${ms(fromSchedule.p99Ms)}, p99.9 ${ms(fromSchedule.p999Ms)} ms; wrk's own from the send p50 ${ms(wrkFromSend.p50Ms)}, p99 ${ms(wrkFromSend.p99Ms)}, p99.9 ${ms(wrkFromSend.p999Ms)} ms; the client's send lag p50 ${ms(lag.p50Ms)}, p99 ${ms(lag.p99Ms)} ms`;
}

/** The wrk workloads, in the order run: the latency ones first, as the Node ones. */
export function wrkWorkloads(
  context: WrkContext,
): readonly { readonly role: WrkRole; readonly name: string; readonly work: Work }[] {
  const { connections } = context;
  let runs = 0;
  const work =
    (cards: readonly string[], threads: number, meanGapUs: number, fixedGaps = false): Work =>
    async (tally) => {
      const run = await runWrk(context.wrk, context.base, {
        script: {
          path: '/v1/authorizations',
          headers: context.headers,
          cards,
          bodyTemplate: BODY_TEMPLATE,
          // Each workload's ids its own: a run has several.
          idPrefix: `bench_${context.runId}_w${String((runs += 1))}_`,
          meanGapUs,
          fixedGaps,
        },
        connections: threads,
        durationS: context.durationS,
        tally,
      });
      return { elapsedS: run.elapsedS, note: runNote(run), clientCpuS: run.cpuS };
    };
  // A connection's mean gap so that `connections` of them offer `rate` a second in all.
  const poisson = (rate: number) =>
    work(context.spreadCards, connections, (connections * 1e6) / rate);
  return [
    {
      role: 'wrk-idle',
      name: `wrk idle: one request every ${IDLE_GAP_MS} ms`,
      work: work(context.spreadCards, 1, IDLE_GAP_MS * 1000, true),
    },
    {
      role: 'poisson-1000',
      name: `wrk Poisson ${POISSON_RATES['poisson-1000']}/s, ${connections} connections`,
      work: poisson(POISSON_RATES['poisson-1000']),
    },
    {
      role: 'poisson-1700',
      name: `wrk Poisson ${POISSON_RATES['poisson-1700']}/s, ${connections} connections`,
      work: poisson(POISSON_RATES['poisson-1700']),
    },
    {
      role: 'wrk-spread',
      name: `wrk spread: ${context.spreadCards.length} vaults`,
      work: work(context.spreadCards, connections, 0),
    },
    {
      role: 'wrk-hot',
      name: 'wrk hot: one vault',
      work: work([context.hotCard], connections, 0),
    },
  ];
}
