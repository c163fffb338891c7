/**
 * Fleet benchmark (`npm run bench:fleet`): spendgate as a fleet of `serve --role` processes on
 * one PostgreSQL and one Redis, on this machine's loopback.
 *
 * Every process is `spendgate serve` as users run it (bench/http-service.ts with
 * SG_BENCH_ROLE=api or worker: the CLI's own `serve`, settings from the environment), on a
 * database and a Redis prefix of the run's own. 200 vaults are funded, each with
 * HTTP_BENCH_POLICY (bench/workloads.ts) and a card (bench/http-setup.ts, as bench:http).
 *
 * - authorizations: 64 connections (autocannon, closed loop) round-robin over the API
 *   processes' urls (32 each with two), a card of the 200 vaults at random each time, with 1
 *   and then 2 `--role api` processes and one `--role worker` relaying their events; each
 *   BENCH_SECONDS long (10 by default) after a warm-up. Reported: authorizations/s, p50 and
 *   p99 (measured by the bench client to the microsecond), and CPU per authorization of each
 *   API process, the worker, PostgreSQL (the run's database's backends) and the bench client,
 *   from the workload's start until the outbox is drained.
 * - webhooks: 8 accounts with one endpoint each on loopback receivers in this process
 *   (test/support/receiver.ts, answering 200, signatures not verified: bench:webhooks measures
 *   that), BENCH_EVENTS events (`vault.created`, 500 per BENCH_SECOND by default) committed
 *   while no worker runs, then 1 and then 2 `--role worker` processes started together: the
 *   deliveries per second once all of them answered /readyz, and CPU per delivery.
 *
 * After each run: the ledger invariants (bench/ledger-checks.ts), every authorization answered
 * a 200 and counted in the database, every event delivered (duplicates counted). Any of these
 * failing fails the run (exit code 1). Then a table, and one line per part saying what limits
 * scaling on this machine, from the figures (bench/fleet-figures.ts).
 */
import { randomBytes, randomInt } from 'node:crypto';
import { availableParallelism, loadavg } from 'node:os';
import pg from 'pg';
import { Decimal, type Scope } from '../src/core/index.js';
import { createPgClient } from '../src/store/sql/pg-client.js';
import { openStore, type OpenedStore } from '../src/store/store.js';
import { startReceiver, type Receiver } from '../test/support/receiver.js';
import { Child, freePort, httpJson, sleep } from './child.js';
import { watchCpu } from './cpu.js';
import { withBenchDatabase } from './database.js';
import {
  cpuPerOperationUs,
  deliveryRate,
  scalingVerdict,
  type FleetRun,
  type ProcessCpu,
} from './fleet-figures.js';
import { runClosedLoop, Tally } from './http-load.js';
import { authorizationTargets, setUpVaults } from './http-setup.js';
import { checkLedger, hold, type Answered } from './ledger-checks.js';
import { forgetRedisPrefix, REDIS_URL } from './redis.js';
import { integerSetting } from './settings.js';

const CONNECTIONS = 64;
const VAULTS = 200;
const ENDPOINTS = 8;
const PRODUCER_PARALLEL = 32;
const SAMPLES_MAX = 2_000_000;
const START_MS_MAX = 120_000;
const SETTLE_MS_MAX = 30_000;
/** A webhook run that receives nothing new for this long has lost deliveries. */
const STALL_MS_MAX = 30_000;
const POLL_MS = 100;

const SECONDS = integerSetting('BENCH_SECONDS', 10, 1, 600);
const WARMUP_SECONDS = Math.min(3, SECONDS);
const EVENTS = integerSetting('BENCH_EVENTS', 500 * SECONDS, 100, 200_000);
const LOG_LEVEL = process.env.BENCH_LOG_LEVEL ?? 'info';
const CORES = availableParallelism();

/** What every process of the fleet shares: the database, Redis and its prefix, the key. */
interface Fleet {
  readonly databaseUrl: string;
  readonly database: string;
  readonly redisPrefix: string;
  readonly masterKey: Buffer;
}

interface Service {
  readonly child: Child;
  readonly base: string;
}

/** Starts `serve --role <role>` and waits until its /readyz answers 200. */
async function startService(fleet: Fleet, role: 'api' | 'worker'): Promise<Service> {
  const port = await freePort();
  const child = new Child('bench/http-service.ts', {
    SG_BENCH_ROLE: role,
    DATABASE_URL: fleet.databaseUrl,
    REDIS_URL,
    REDIS_PREFIX: fleet.redisPrefix,
    HOST: '127.0.0.1',
    PORT: String(port),
    WORKER_PORT: String(port),
    SPENDGATE_MASTER_KEY: fleet.masterKey.toString('base64'),
    LOG_LEVEL,
    // As bench:http: counted in Redis as usual, the limit raised above what a run sends.
    RATE_LIMIT_AUTHORIZATIONS_PER_SECOND: '1000000',
  });
  const base = `http://127.0.0.1:${port}`;
  try {
    await child.waitUntil(`${base}/readyz`, (status) => status === 200, START_MS_MAX);
  } catch (error) {
    await child.stop();
    throw error;
  }
  return { child, base };
}

/**
 * Starts one process per role together, adding each that started to `services` (whose owner
 * stops them however the run ends), even when another failed to start.
 */
async function startInto(
  services: Service[],
  fleet: Fleet,
  roles: readonly ('api' | 'worker')[],
): Promise<Service[]> {
  const results = await Promise.allSettled(roles.map((role) => startService(fleet, role)));
  const started: Service[] = [];
  for (const result of results) if (result.status === 'fulfilled') started.push(result.value);
  services.push(...started);
  const failed = results.find((result) => result.status === 'rejected');
  if (failed !== undefined) throw failed.reason;
  return started;
}

async function stopAll(services: readonly Service[]): Promise<void> {
  await Promise.all(services.map((service) => service.child.stop()));
}

/** One row of the table. */
interface Row extends FleetRun {
  readonly part: 'authorizations' | 'webhooks';
  readonly operations: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly note: string;
}

// ---------------------------------------------------------------------------------------------
// Authorizations.

interface AuthorizeState {
  readonly fleet: Fleet;
  readonly checks: pg.Pool;
  readonly target: ReturnType<typeof authorizationTargets>;
  readonly cards: readonly string[];
  readonly key: string;
  /** Every tally of the run, warm-ups included: the database holds their decisions too. */
  readonly tallies: Tally[];
}

async function outboxBacklog(checks: pg.Pool): Promise<number> {
  const { rows } = await checks.query<{ count: string }>(
    'SELECT count(*) AS count FROM outbox_unrelayed',
  );
  return Number(rows[0]?.count ?? -1);
}

/** Waits until the outbox is relayed; returns the events still waiting after SETTLE_MS_MAX. */
async function drainOutbox(checks: pg.Pool): Promise<number> {
  const deadline = Date.now() + SETTLE_MS_MAX;
  let left = await outboxBacklog(checks);
  while (left > 0 && Date.now() < deadline) {
    await sleep(POLL_MS);
    left = await outboxBacklog(checks);
  }
  return left;
}

/**
 * The API processes' batch counts, summed: batches, fallbacks, batches decided on known state
 * in one round trip and those of them found stale (src/store/authorize/one-trip.ts).
 */
async function batchStats(state: AuthorizeState, apis: readonly Service[]) {
  const headers = { authorization: `Bearer ${state.key}` };
  const sums = { batches: 0, fallbacks: 0, oneTrip: 0, stale: 0 };
  for (const api of apis) {
    const answer = (await httpJson(`${api.base}/v1/bench/authorize-stats`, headers)) as Partial<
      Record<keyof typeof sums, unknown>
    >;
    for (const key of Object.keys(sums) as (keyof typeof sums)[]) {
      const count = answer[key];
      if (typeof count !== 'number')
        throw new Error(`the batch stats route answered ${JSON.stringify(answer)}`);
      sums[key] += count;
    }
  }
  return sums;
}

/** A warm-up, then the measured workload, on `apis` with `worker` relaying. */
async function measureAuthorizations(
  state: AuthorizeState,
  apis: readonly Service[],
  worker: Service,
): Promise<Row> {
  const urls = apis.map((api) => api.base);
  const card = () => state.cards[randomInt(state.cards.length)] as string;
  const target = state.target(urls, '/v1/authorizations', card);
  const newTally = () => {
    const tally = new Tally(SAMPLES_MAX);
    state.tallies.push(tally);
    return tally;
  };
  const name = `${apis.length} API + 1 worker`;
  console.log(`${name}: warming up ${WARMUP_SECONDS} s, measuring ${SECONDS} s ...`);
  // The new process's pool, policy cache and JIT, before anything is measured.
  await runClosedLoop(target, {
    connections: CONNECTIONS,
    durationS: WARMUP_SECONDS,
    tally: newTally(),
  });
  await drainOutbox(state.checks);
  const statsBefore = await batchStats(state, apis);
  const named = new Map(apis.map((api, index) => [`API ${index + 1}`, api.child.pid]));
  named.set('worker 1', worker.child.pid);
  const watch = watchCpu(named, state.fleet.database);
  const started = performance.now();
  const tally = newTally();
  const elapsedS = await runClosedLoop(target, {
    connections: CONNECTIONS,
    durationS: SECONDS,
    tally,
  });
  const undrained = await drainOutbox(state.checks);
  const measuredS = (performance.now() - started) / 1000;
  const { cpu, otherCores } = watch.since();
  const statsAfter = await batchStats(state, apis);
  const batches = statsAfter.batches - statsBefore.batches;
  const fallbacks = statsAfter.fallbacks - statsBefore.fallbacks;
  const oneTrip = statsAfter.oneTrip - statsBefore.oneTrip;
  const stale = statsAfter.stale - statsBefore.stale;
  const operations = tally.latencies.count + tally.latencies.dropped;
  const { p50Ms, p99Ms } = tally.latencies.summary();
  return {
    part: 'authorizations',
    name,
    operations,
    perSecond: operations / elapsedS,
    p50Ms,
    p99Ms,
    measuredS,
    cpu,
    otherCores,
    note: [
      `${batches} batches (${(operations / Math.max(1, batches)).toFixed(1)} per batch, ${oneTrip} in one trip, ${stale} of them stale), ${fallbacks} fallbacks`,
      undrained === 0 ? '' : `${undrained} events still unrelayed after ${SETTLE_MS_MAX} ms`,
    ]
      .filter((part) => part.length > 0)
      .join('; '),
  };
}

/** The checks after an authorization run (`ok` false when one is broken), and the counts. */
async function checkAuthorizations(
  state: AuthorizeState,
): Promise<{ readonly ok: boolean; readonly answered: Answered }> {
  let approved = 0;
  let declined = 0;
  let standIn = 0;
  let wrong = 0;
  const unanswered: string[] = [];
  const samples: string[] = [];
  for (const tally of state.tallies) {
    approved += tally.approved;
    declined += tally.declined;
    standIn += tally.standIn;
    wrong += tally.non200 + tally.errors + tally.unexpected + tally.noop;
    unanswered.push(...tally.inFlight);
    samples.push(...tally.samples);
  }
  for (const sample of samples.slice(0, 5)) console.log(`sample answer: ${sample}`);
  const { ledgerHolds, countsAgree } = await checkLedger(state.fleet.databaseUrl, {
    approved,
    declined,
    unanswered,
  });
  console.log(
    `${hold(wrong === 0)} every answer a 200 decision (${wrong} non-200, connection errors or of another shape)`,
  );
  // The policy approves the bench's purchase (test/bench-workloads.test.ts): a decline that is
  // not a stand-in means the run measured something else than it says.
  const policyDeclines = declined - standIn;
  console.log(
    `${hold(policyDeclines === 0)} the authorizations approved: ${approved} approved, ${declined} declined, of which ${standIn} stand-ins past the time budget`,
  );
  return {
    ok: ledgerHolds && countsAgree && wrong === 0 && policyDeclines === 0,
    answered: { approved, declined, unanswered },
  };
}

async function authorizations(
  fleet: Fleet,
  runId: string,
): Promise<{ rows: Row[]; ok: boolean; answered: Answered }> {
  console.log(`setting up ${VAULTS} vaults, each with the policy and a card ...`);
  const { key, cards } = await setUpVaults(fleet.databaseUrl, fleet.masterKey, VAULTS);
  const checks = new pg.Pool({ connectionString: fleet.databaseUrl, max: 1 });
  const state: AuthorizeState = {
    fleet,
    checks,
    target: authorizationTargets(runId, key),
    cards,
    key,
    tallies: [],
  };
  const services: Service[] = [];
  const rows: Row[] = [];
  let ok = true;
  let answered: Answered = { approved: 0, declined: 0, unanswered: [] };
  const check = async () => {
    const checked = await checkAuthorizations(state);
    ok = checked.ok && ok;
    answered = checked.answered;
  };
  try {
    console.log('starting 1 worker and 1 API process (spendgate serve --role) ...');
    const [worker, first] = (await startInto(services, fleet, ['worker', 'api'])) as [
      Service,
      Service,
    ];
    rows.push(await measureAuthorizations(state, [first], worker));
    console.log('\nchecks after 1 API process (any failing fails the run)');
    await check();

    console.log('\nstarting a second API process ...');
    const [second] = (await startInto(services, fleet, ['api'])) as [Service];
    rows.push(await measureAuthorizations(state, [first, second], worker));
    console.log('\nchecks after 2 API processes (any failing fails the run)');
    await check();
  } finally {
    await stopAll(services);
    await checks.end();
  }
  return { rows, ok, answered };
}

// ---------------------------------------------------------------------------------------------
// Webhooks.

interface WebhookState {
  readonly fleet: Fleet;
  readonly store: OpenedStore;
  readonly scopes: Scope[];
  readonly receivers: Receiver[];
  vaults: number;
}

/**
 * `ENDPOINTS` accounts, each with an endpoint for `vault.created` on a receiver of its own,
 * into the state's lists (each receiver as soon as it listens, for the owner to close).
 */
async function setUpEndpoints(state: WebhookState): Promise<void> {
  const { fleet, store } = state;
  for (let index = 0; index < ENDPOINTS; index += 1) {
    // Node's own keep-alive timeout, as a customer's server would have: connections reused.
    const receiver = await startReceiver({ path: `/hooks/${index}`, keepAliveTimeoutMs: 5000 });
    state.receivers.push(receiver);
    const { id } = await store.findOrCreateAccount(`bench-fleet-${fleet.redisPrefix}-${index}`);
    const scope: Scope = { accountId: id, mode: 'test' };
    state.scopes.push(scope);
    await store.createWebhookEndpoint(scope, {
      url: receiver.url,
      events: ['vault.created'],
      description: `bench fleet ${index}`,
    });
  }
}

/** Commits `count` events (a vault created without a deposit each), round-robin over scopes. */
async function produceEvents(state: WebhookState, count: number): Promise<void> {
  let issued = 0;
  await Promise.all(
    Array.from({ length: PRODUCER_PARALLEL }, async () => {
      while (issued < count) {
        const scope = state.scopes[issued % state.scopes.length] as Scope;
        issued += 1;
        state.vaults += 1;
        await state.store.createVault(scope, {
          name: `w${state.vaults}`,
          currency: 'USDC',
          metadata: {},
          initialDeposit: new Decimal(0),
        });
      }
    }),
  );
}

/** Waits until the receivers hold `count` deliveries, or nothing new arrived for STALL_MS_MAX. */
async function awaitDeliveries(receivers: readonly Receiver[], count: number): Promise<number> {
  const received = () => receivers.reduce((sum, receiver) => sum + receiver.received.length, 0);
  let last = received();
  let lastChangeMs = Date.now();
  while (last < count && Date.now() - lastChangeMs < STALL_MS_MAX) {
    await sleep(POLL_MS);
    const now = received();
    if (now !== last) lastChangeMs = Date.now();
    last = now;
  }
  return last;
}

/** A backlog of EVENTS events, then `workers` worker processes started together to drain it. */
async function measureDeliveries(state: WebhookState, workers: number): Promise<Row> {
  const name = `${workers} worker${workers === 1 ? '' : 's'}`;
  console.log(`${name}: committing ${EVENTS} events with no worker running ...`);
  for (const receiver of state.receivers) receiver.received.splice(0);
  await produceEvents(state, EVENTS);
  console.log(`${name}: starting, delivering ...`);
  const services: Service[] = [];
  try {
    await startInto(
      services,
      state.fleet,
      Array.from({ length: workers }, () => 'worker' as const),
    );
    const fromMs = Date.now();
    const named = new Map(
      services.map((service, index) => [`worker ${index + 1}`, service.child.pid]),
    );
    const watch = watchCpu(named, state.fleet.database);
    const started = performance.now();
    const received = await awaitDeliveries(state.receivers, EVENTS);
    const measuredS = (performance.now() - started) / 1000;
    const { cpu, otherCores } = watch.since();
    const arrivals = state.receivers.flatMap((receiver) => receiver.received);
    const rate = deliveryRate(
      arrivals.map((arrival) => arrival.receivedAtMs),
      fromMs,
    );
    const distinct = new Set(arrivals.map((arrival) => arrival.id)).size;
    const ok = distinct === EVENTS;
    console.log(
      `${hold(ok)} every event delivered: ${distinct} distinct of ${EVENTS}, ${received - distinct} duplicates; ${EVENTS - rate.counted} delivered before every worker was ready (not in the rate)`,
    );
    return {
      part: 'webhooks',
      name,
      operations: rate.counted,
      perSecond: rate.perSecond,
      p50Ms: Number.NaN,
      p99Ms: Number.NaN,
      measuredS,
      cpu,
      otherCores,
      note: ok ? '' : `LOST ${EVENTS - distinct} events`,
    };
  } finally {
    await stopAll(services);
  }
}

async function webhooks(fleet: Fleet, answered: Answered): Promise<{ rows: Row[]; ok: boolean }> {
  const store = await openStore({
    client: createPgClient({ connectionString: fleet.databaseUrl, connectionsMax: 8 }),
    masterKey: fleet.masterKey,
  });
  const scopes: Scope[] = [];
  const receivers: Receiver[] = [];
  const state: WebhookState = { fleet, store, scopes, receivers, vaults: 0 };
  const rows: Row[] = [];
  let ok = true;
  try {
    await setUpEndpoints(state);
    for (const workers of [1, 2]) {
      rows.push(await measureDeliveries(state, workers));
      console.log(`\nchecks after ${workers} worker(s) (any failing fails the run)`);
      // The authorizations' counts again: delivering events must not change a decision.
      const { ledgerHolds, countsAgree } = await checkLedger(fleet.databaseUrl, answered);
      ok = ledgerHolds && countsAgree && ok;
    }
  } finally {
    await Promise.all(receivers.map((receiver) => receiver.close()));
    await store.close();
  }
  return { rows, ok: ok && rows.every((row) => row.note === '') };
}

// ---------------------------------------------------------------------------------------------
// The report.

const fixed = (value: number, digits: number) =>
  Number.isFinite(value) ? value.toFixed(digits) : '-';

function cpuColumn(row: Row, names: readonly string[]): string[] {
  return names.map((name) => {
    const entry = row.cpu.find((process: ProcessCpu) => process.name === name);
    return entry === undefined ? '-' : fixed(cpuPerOperationUs(entry.cpuS, row.operations), 0);
  });
}

function report(rows: readonly Row[]): void {
  const names = ['API 1', 'API 2', 'worker 1', 'worker 2', 'PostgreSQL', 'bench client'];
  console.log(
    `\n${CORES} cores; authorizations: ${CONNECTIONS} connections round-robin over the API processes, ${SECONDS} s, ${VAULTS} vaults; webhooks: ${EVENTS} events over ${ENDPOINTS} endpoints. CPU in us per authorization (per delivery), from the workload's start until the outbox is drained (the last delivery)\n`,
  );
  console.log(
    `| part | fleet | per s | p50 ms | p99 ms | ${names.map((name) => `${name} CPU us`).join(' | ')} | busy cores | other load (cores) |`,
  );
  console.log(`|---|---|---:|---:|---:|${names.map(() => '---:').join('|')}|---:|---:|`);
  for (const row of rows) {
    const ownS = row.cpu.reduce((sum, process) => sum + process.cpuS, 0);
    console.log(
      `| ${row.part} | ${row.name} | ${fixed(row.perSecond, 0)} | ${fixed(row.p50Ms, 2)} | ${fixed(row.p99Ms, 2)} | ${cpuColumn(row, names).join(' | ')} | ${fixed(ownS / row.measuredS, 2)} | ${fixed(row.otherCores, 2)} |`,
    );
  }
  for (const row of rows) if (row.note.length > 0) console.log(`- ${row.name}: ${row.note}`);
  console.log('\nwhat limits scaling here');
  for (const part of ['authorizations', 'webhooks'] as const) {
    const [one, two] = rows.filter((row) => row.part === part);
    if (one !== undefined && two !== undefined) console.log(scalingVerdict(part, one, two, CORES));
  }
}

// ---------------------------------------------------------------------------------------------
// The run.

async function main(): Promise<void> {
  const runId = randomBytes(4).toString('hex');
  const redisPrefix = `sgbench_${runId}`;
  console.log(
    `node ${process.version}, ${CORES} cores, load average ${loadavg()
      .map((value) => value.toFixed(2))
      .join(' ')} at start, ${SECONDS} s per workload, LOG_LEVEL=${LOG_LEVEL}`,
  );
  let ok = false;
  try {
    await withBenchDatabase(async (databaseUrl) => {
      const fleet: Fleet = {
        databaseUrl,
        // Its backends' CPU is read by database name.
        database: new URL(databaseUrl).pathname.slice(1),
        redisPrefix,
        masterKey: randomBytes(32),
      };
      const authorized = await authorizations(fleet, runId);
      const delivered = await webhooks(fleet, authorized.answered);
      report([...authorized.rows, ...delivered.rows]);
      ok = authorized.ok && delivered.ok;
    });
  } finally {
    await forgetRedisPrefix(redisPrefix);
  }
  if (!ok) process.exitCode = 1;
}

// Last: every constant above is initialized by now.
await main();
