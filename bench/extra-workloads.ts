import { randomBytes, randomInt } from 'node:crypto';
import { loadavg } from 'node:os';
import pg from 'pg';
import { runLoad } from './concurrency-harness.js';
import { withBenchDatabase } from './database.js';
import {
  CONNECTIONS,
  CpuSpan,
  newMeasured,
  runMeasured,
  serviceSettings,
  startService,
  type BenchContext,
  type GroupResult,
  type Row,
} from './extra-harness.js';
import type { Target } from './http-load.js';
import { setUpVaults } from './http-setup.js';
import { checkLedgerInvariants, hold } from './ledger-checks.js';
import { walPosition } from './wal.js';
import { MESSAGE_WORKLOADS, runMessageWorkloads } from './message-workloads.js';
import { createNaiveSchema, naiveAuthorization } from './naive-sql.js';
import { PRICING_WORKLOADS, runPricingWorkloads, setUpSolVaults } from './pricing-workloads.js';
import {
  PROCESSOR_WORKLOADS,
  runProcessorWorkloads,
  setUpProcessors,
} from './processor-workloads.js';
import { forgetRedisPrefix } from './redis.js';
import { integerSetting } from './settings.js';
import { HTTP_BENCH_DEPOSIT, HTTP_BENCH_PURCHASE } from './workloads.js';

/**
 * The workloads of issues 34, 35 and 36 in `npm run bench:http -- --only <names>` (dispatched
 * from bench/http.bench.ts): a run of their own, on a database and Redis prefix of its own,
 * with the service as bench:http starts it and 200 USDC vaults with HTTP_BENCH_POLICY.
 *
 * - `messages` (issue 34; or some of increment, capture, capture-over, force-capture, refund,
 *   advice): bench/message-workloads.ts, against the naive SQL loop (bench/naive-sql.ts), run
 *   first as bench:http runs it, before the service starts;
 * - `processors` (issue 36; or some of stripe, lithic, marqeta): bench/processor-workloads.ts,
 *   each adapter's authorization against POST /v1/authorizations, alternated;
 * - `sol` (issue 35): bench/pricing-workloads.ts, a SOL vault priced from the local chain's Pyth
 *   feed against a USDC vault, USD billing requests, alternated.
 *
 * BENCH_SECONDS per workload (10 by default), BENCH_ROUNDS alternated rounds (2 by default).
 * After the run: the ledger invariants (bench/ledger-checks.ts), every answer the status and
 * shape its message expects, and each workload's records counted in the database; any failing
 * fails the run (exit code 1), a MISSED target does not.
 */

const GROUPS = {
  messages: MESSAGE_WORKLOADS,
  processors: PROCESSOR_WORKLOADS,
  sol: PRICING_WORKLOADS,
} as const;
const NAMES: ReadonlySet<string> = new Set([
  ...Object.keys(GROUPS),
  ...Object.values(GROUPS).flat(),
]);

const VAULTS = 200;
const NAIVE_POOL_CONNECTIONS = 16;

/** Whether `--only` names workloads of this file (all of them: mixing is refused). */
export function isExtraSelection(only: string | undefined): boolean {
  if (only === undefined) return false;
  const names = only.split(',').map((name) => name.trim());
  const ours = names.filter((name) => NAMES.has(name));
  if (ours.length > 0 && ours.length < names.length) {
    throw new Error(
      `--only mixes bench:http's own workloads with ${ours.join(', ')}, which run on their own`,
    );
  }
  return ours.length > 0;
}

function selection(only: string): ReadonlySet<string> {
  const selected = new Set<string>();
  for (const name of only.split(',').map((part) => part.trim())) {
    const group = (GROUPS as Record<string, readonly string[]>)[name];
    for (const member of group ?? [name]) selected.add(member);
  }
  return selected;
}

/** Runs the selected workloads; sets the exit code 1 when a check fails. */
export async function runExtraWorkloads(only: string): Promise<void> {
  const selected = selection(only);
  const seconds = integerSetting('BENCH_SECONDS', 10, 1, 600);
  const rounds = integerSetting('BENCH_ROUNDS', 2, 1, 20);
  const runId = randomBytes(4).toString('hex');
  const redisPrefix = `sgbench_${runId}`;
  const masterKey = randomBytes(32);
  console.log(
    `node ${process.version}, load average ${loadavg()
      .map((value) => value.toFixed(2))
      .join(
        ' ',
      )} at start, ${seconds} s per workload, ${rounds} alternated rounds, ${serviceSettings()}; workloads ${[...selected].join(', ')}`,
  );
  try {
    await withBenchDatabase(async (databaseUrl) => {
      const ok = await benchmark(
        databaseUrl,
        { runId, redisPrefix, masterKey, seconds, rounds },
        selected,
      );
      if (!ok) process.exitCode = 1;
    });
  } finally {
    await forgetRedisPrefix(redisPrefix);
  }
}

interface RunSettings {
  readonly runId: string;
  readonly redisPrefix: string;
  readonly masterKey: Buffer;
  readonly seconds: number;
  readonly rounds: number;
}

async function benchmark(
  databaseUrl: string,
  settings: RunSettings,
  selected: ReadonlySet<string>,
): Promise<boolean> {
  const database = new URL(databaseUrl).pathname.slice(1);
  const has = (names: readonly string[]) => names.some((name) => selected.has(name));
  console.log(`setting up ${VAULTS} vaults, each with the policy and a card ...`);
  const { key, cards } = await setUpVaults(databaseUrl, settings.masterKey, VAULTS);
  const processors = has(PROCESSOR_WORKLOADS)
    ? await setUpProcessors(databaseUrl, settings.masterKey, cards)
    : null;
  const solCards = has(PRICING_WORKLOADS)
    ? await setUpSolVaults(databaseUrl, settings.masterKey, VAULTS)
    : null;
  const naive = has(MESSAGE_WORKLOADS)
    ? await naiveSql(databaseUrl, database, settings.seconds)
    : null;

  console.log('starting the service ...');
  const { child, base } = await startService(databaseUrl, settings.redisPrefix, settings.masterKey);
  const checks = new pg.Pool({ connectionString: databaseUrl, max: 1 });
  const results: GroupResult[] = [];
  try {
    const context: BenchContext = {
      base,
      runId: settings.runId,
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      cards,
      servicePid: child.pid,
      database,
      checks,
      seconds: settings.seconds,
      rounds: settings.rounds,
    };
    await warmUp(context);
    if (naive !== null) results.push(await runMessageWorkloads(context, selected, naive));
    if (processors !== null) {
      results.push(await runProcessorWorkloads(context, selected, processors));
    }
    if (solCards !== null) results.push(await runPricingWorkloads(context, solCards));
  } finally {
    await child.stop();
    await checks.end();
  }
  console.log('\nchecks on the ledger (any failing fails the run)');
  const ledgerHolds = await checkLedgerInvariants(databaseUrl);
  const answersHold = results.every((result) => result.checksHold);
  console.log(`${hold(answersHold)} every workload's answers and records (above)`);
  return ledgerHolds && answersHold;
}

/** bench:http's naive SQL baseline (bench/naive-sql.ts), measured the same way. */
async function naiveSql(databaseUrl: string, database: string, seconds: number): Promise<Row> {
  console.log('baseline: naive SQL ...');
  const pool = new pg.Pool({ connectionString: databaseUrl, max: NAIVE_POOL_CONNECTIONS });
  try {
    await createNaiveSchema(pool, VAULTS, HTTP_BENCH_DEPOSIT);
    const authorize = naiveAuthorization(pool, VAULTS, HTTP_BENCH_PURCHASE.amount);
    await runLoad('naive SQL warm-up', CONNECTIONS, 1000, authorize);
    const cpu = new CpuSpan(null, database);
    const walBefore = await walPosition(pool);
    cpu.start();
    const result = await runLoad('naive SQL', CONNECTIONS, seconds * 1000, authorize);
    cpu.stop();
    const walBytes = (await walPosition(pool)) - walBefore;
    const perRequest = (cpuSeconds: number) => (cpuSeconds * 1e6) / Math.max(1, result.operations);
    return {
      name: 'naive SQL',
      requests: result.operations,
      perSecond: result.perSecond,
      p50Ms: result.p50Ms,
      p99Ms: result.p99Ms,
      maxMs: Number.NaN,
      wrong: result.errors,
      nodeCpuUs: perRequest(cpu.nodeS),
      postgresCpuUs: perRequest(cpu.postgresS),
      clientCpuUs: perRequest(cpu.clientS),
      walBytesPerRequest: walBytes / Math.max(1, result.operations),
      otherCores: cpu.otherCores(),
      note: `${CONNECTIONS} clients, pool ${NAIVE_POOL_CONNECTIONS}, one transaction per authorization; its Node CPU is the SQL client (pg) in the bench process`,
    };
  } finally {
    await pool.end();
  }
}

/** The pool, the policy cache and the JIT warm, as bench:http's warm-up: authorizations. */
async function warmUp(context: BenchContext): Promise<void> {
  console.log('warming up ...');
  let n = 0;
  const measured = newMeasured(
    (status, body) => (status === 200 && body.includes('"approved":true') ? 'approved' : null),
    context.servicePid,
    context.database,
  );
  const target: Target = {
    url: context.base,
    path: '/v1/authorizations',
    headers: context.headers,
    nextBody: () => {
      n += 1;
      const id = `${context.runId}_warm_${n}`;
      return {
        id,
        body: JSON.stringify({
          cardId: context.cards[randomInt(context.cards.length)],
          amount: HTTP_BENCH_PURCHASE.amount,
          currency: HTTP_BENCH_PURCHASE.currency,
          merchant: HTTP_BENCH_PURCHASE.merchant,
          networkTransactionId: id,
        }),
      };
    },
  };
  await runMeasured(measured, target, Math.min(3, context.seconds), context.checks);
  if (measured.tally.wrong > 0) {
    throw new Error(`the warm-up answered: ${measured.tally.samples.join('\n')}`);
  }
}
