import http from 'node:http';
import pg from 'pg';
import { Child, freePort, sleep } from './child.js';
import { machineBusySeconds, postgresSeconds, postgresSince, processSeconds } from './cpu.js';
import { walPosition } from './wal.js';
import { runClosedLoop, Tally, type Target } from './http-load.js';
import { REDIS_URL } from './redis.js';

/**
 * What the workloads of bench/extra-workloads.ts share (issues 34, 35, 36): the service as
 * bench:http starts it, answers checked against the status and shape each message expects,
 * a closed-loop measurement with the CPU of the service and of PostgreSQL, and the table.
 */

export const CONNECTIONS = 64;
const SAMPLES_MAX = 2_000_000;
const START_MS_MAX = 120_000;
const SETTLE_MS_MAX = 30_000;
const POLL_MS = 100;

const LOG_LEVEL = process.env.BENCH_LOG_LEVEL ?? 'info';
const SERVICE_ROLE = process.env.BENCH_SERVICE_ROLE ?? 'all';
const FROM_DIST = process.env.BENCH_FROM_DIST === '1';

/** The settings line the run prints first, as bench:http's. */
export function serviceSettings(): string {
  return `service from ${FROM_DIST ? 'dist/' : 'src/ (tsx)'}, LOG_LEVEL=${LOG_LEVEL}, roles ${SERVICE_ROLE}`;
}

const PROFILE_DIR = process.env.BENCH_CPU_PROF;

/** `spendgate serve` in a child process (bench/http-service.ts), ready. */
export async function startService(
  databaseUrl: string,
  redisPrefix: string,
  masterKey: Buffer,
): Promise<{ readonly child: Child; readonly base: string }> {
  const port = await freePort();
  const child = new Child(
    'bench/http-service.ts',
    {
      DATABASE_URL: databaseUrl,
      REDIS_URL,
      REDIS_PREFIX: redisPrefix,
      HOST: '127.0.0.1',
      PORT: String(port),
      SPENDGATE_MASTER_KEY: masterKey.toString('base64'),
      LOG_LEVEL,
      // Counted in Redis as usual, limits raised: the lifecycle messages other than capture and
      // reverse are in the test-mode key class (src/http/rate-limits.ts), whose default would
      // answer 429s long before the workloads' rates.
      RATE_LIMIT_AUTHORIZATIONS_PER_SECOND: '1000000',
      RATE_LIMIT_TEST_PER_SECOND: '1000000',
      ...(FROM_DIST ? { SG_BENCH_FROM_DIST: '1' } : {}),
      // BENCH_DATABASE_WRITES_MAX: the service's DATABASE_WRITES_MAX, to measure one beside
      // another in one build.
      ...(process.env.BENCH_DATABASE_WRITES_MAX === undefined
        ? {}
        : { DATABASE_WRITES_MAX: process.env.BENCH_DATABASE_WRITES_MAX }),
      SG_BENCH_ROLE: SERVICE_ROLE,
    },
    // BENCH_CPU_PROF=<dir>: the service's CPU profile, written when it stops (as bench:http's).
    PROFILE_DIR === undefined ? [] : ['--cpu-prof', `--cpu-prof-dir=${PROFILE_DIR}`],
  );
  const base = `http://127.0.0.1:${port}`;
  await child.waitUntil(`${base}/readyz`, (status) => status === 200, START_MS_MAX);
  return { child, base };
}

/** How an answer is judged: its kind when it is what the message expects, else null. */
export type Expect = (status: number, body: string) => 'approved' | 'declined' | 'posted' | null;

/** A Tally (http-load.ts) whose 200s are not all decisions: each answer judged by `expect`. */
export class ExpectTally extends Tally {
  posted = 0;

  constructor(readonly expect: Expect) {
    super(SAMPLES_MAX);
  }

  override answer(status: number, body: string): void {
    const kind = this.expect(status, body);
    if (kind === null) {
      // A 2xx of another shape (or not the 2xx the message expects) is `unexpected`; an error
      // status counts in `non200`.
      if (status >= 200 && status < 300) this.unexpected += 1;
      else this.non200 += 1;
      if (this.samples.length < 5) this.samples.push(`${status} ${body.slice(0, 300)}`);
      return;
    }
    this.ok += 1;
    if (kind === 'approved') this.approved += 1;
    else if (kind === 'declined') this.declined += 1;
    else this.posted += 1;
  }

  /** Answers that were not what the message expects, and connection errors. */
  get wrong(): number {
    return this.non200 + this.unexpected + this.errors;
  }
}

export interface Row {
  readonly name: string;
  readonly requests: number;
  readonly perSecond: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly maxMs: number;
  readonly wrong: number;
  /** CPU per answered request, microseconds (for naive SQL, Node is its SQL client). */
  readonly nodeCpuUs: number;
  readonly postgresCpuUs: number;
  readonly clientCpuUs: number;
  readonly walBytesPerRequest: number;
  readonly otherCores: number;
  readonly note: string;
}

/** CPU seconds of the service, of PostgreSQL and of this process, accumulated over spans. */
export class CpuSpan {
  nodeS = 0;
  postgresS = 0;
  clientS = 0;
  machineS = 0;
  elapsedS = 0;
  #mark: {
    node: number;
    postgres: Map<string, number>;
    client: NodeJS.CpuUsage;
    machine: number;
    at: number;
  } | null = null;

  constructor(
    readonly nodePid: number | null,
    readonly database: string,
  ) {}

  start(): void {
    this.#mark = {
      node: this.nodePid === null ? 0 : processSeconds(this.nodePid),
      postgres: postgresSeconds(this.database),
      client: process.cpuUsage(),
      machine: machineBusySeconds(),
      at: performance.now(),
    };
  }

  stop(): void {
    const mark = this.#mark;
    if (mark === null) throw new Error('CpuSpan.stop before start');
    const client = process.cpuUsage(mark.client);
    const clientS = (client.user + client.system) / 1e6;
    this.clientS += clientS;
    this.nodeS += this.nodePid === null ? clientS : processSeconds(this.nodePid) - mark.node;
    this.postgresS += postgresSince(mark.postgres, this.database);
    this.machineS += machineBusySeconds() - mark.machine;
    this.elapsedS += (performance.now() - mark.at) / 1000;
    this.#mark = null;
  }

  /** Busy cores of everything else than the service, PostgreSQL and this process. */
  otherCores(): number {
    const own = this.postgresS + this.clientS + (this.nodePid === null ? 0 : this.nodeS);
    return Math.max(0, this.machineS - own) / Math.max(1e-9, this.elapsedS);
  }
}

export interface Measured {
  readonly tally: ExpectTally;
  readonly cpu: CpuSpan;
  /** Seconds the load ran (not the outbox's drain after it). */
  loadS: number;
  /** WAL bytes the cluster wrote over the same spans as the CPU. */
  walBytes: number;
}

/** A workload's measurement, accumulated over one or more runs (the alternated rounds). */
export function newMeasured(expect: Expect, servicePid: number, database: string): Measured {
  return {
    tally: new ExpectTally(expect),
    cpu: new CpuSpan(servicePid, database),
    loadS: 0,
    walBytes: 0,
  };
}

/**
 * Runs `target` in a closed loop for `seconds` into `measured`: CPU counted from the start
 * until the outbox is drained, as bench:http counts it (the relay's work for the events).
 */
export async function runMeasured(
  measured: Measured,
  target: Target,
  seconds: number,
  checks: pg.Pool,
  connections = CONNECTIONS,
): Promise<void> {
  const walBefore = await walPosition(checks);
  measured.cpu.start();
  measured.loadS += await runClosedLoop(target, {
    connections,
    durationS: seconds,
    tally: measured.tally,
  });
  await drainOutbox(checks);
  measured.cpu.stop();
  measured.walBytes += (await walPosition(checks)) - walBefore;
}

/** Waits (bounded) until the outbox has relayed every event; returns the events left. */
export async function drainOutbox(checks: pg.Pool): Promise<number> {
  const backlog = async () =>
    Number(
      (await checks.query<{ count: string }>('SELECT count(*) AS count FROM outbox_unrelayed'))
        .rows[0]?.count ?? -1,
    );
  for (let waitedMs = 0; waitedMs < SETTLE_MS_MAX; waitedMs += POLL_MS) {
    if ((await backlog()) === 0) return 0;
    await sleep(POLL_MS);
  }
  return backlog();
}

export function rowOf(name: string, measured: Measured, note = ''): Row {
  const { tally, cpu } = measured;
  const requests = tally.latencies.count + tally.latencies.dropped;
  const perRequest = (seconds: number) => (seconds * 1e6) / Math.max(1, requests);
  const { p50Ms, p99Ms, maxMs } = tally.latencies.summary();
  return {
    name,
    requests,
    perSecond: requests / Math.max(1e-9, measured.loadS),
    p50Ms,
    p99Ms,
    maxMs,
    wrong: tally.wrong,
    nodeCpuUs: perRequest(cpu.nodeS),
    postgresCpuUs: perRequest(cpu.postgresS),
    clientCpuUs: perRequest(cpu.clientS),
    walBytesPerRequest: measured.walBytes / Math.max(1, requests),
    otherCores: cpu.otherCores(),
    note,
  };
}

export const fixed = (value: number, digits: number) =>
  Number.isFinite(value) ? value.toFixed(digits) : '-';
export const met = (ok: boolean) => (ok ? 'met   ' : 'MISSED');

/** The rows as a table, each with its ratio against `baseline` (req/s and Node CPU). */
export function printRows(title: string, rows: readonly Row[], baseline: Row): void {
  console.log(`\n${title}\n`);
  console.log(
    `| workload | req/s | p50 ms | p99 ms | max ms | wrong answers | Node CPU us/req | PostgreSQL CPU us/req | client CPU us/req | WAL bytes/req | req/s vs ${baseline.name} | Node CPU vs ${baseline.name} | other load (cores) |`,
  );
  console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
  for (const row of rows) {
    console.log(
      `| ${row.name} | ${fixed(row.perSecond, 0)} | ${fixed(row.p50Ms, 2)} | ${fixed(row.p99Ms, 2)} | ${fixed(row.maxMs, 1)} | ${row.wrong} | ${fixed(row.nodeCpuUs, 0)} | ${fixed(row.postgresCpuUs, 0)} | ${fixed(row.clientCpuUs, 0)} | ${fixed(row.walBytesPerRequest, 0)} | ${fixed(row.perSecond / baseline.perSecond, 2)}x | ${fixed(row.nodeCpuUs / baseline.nodeCpuUs, 2)}x | ${fixed(row.otherCores, 2)} |`,
    );
  }
  for (const row of rows) if (row.note.length > 0) console.log(`- ${row.name}: ${row.note}`);
}

/**
 * POSTs each body to `base` + `path(index)` with `concurrency` keep-alive connections, in
 * order of index; returns each answer's status and body. For a workload's preconditions (the
 * holds the captures and increments need), not measured.
 */
export async function postAll(
  base: string,
  headers: Readonly<Record<string, string>>,
  requests: readonly { readonly path: string; readonly body: string }[],
  concurrency = CONNECTIONS,
): Promise<{ status: number; body: string }[]> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency });
  const answers = new Array<{ status: number; body: string }>(requests.length);
  let next = 0;
  const worker = async () => {
    for (let index = next++; index < requests.length; index = next++) {
      const request = requests[index];
      if (request === undefined) break;
      answers[index] = await post(agent, `${base}${request.path}`, headers, request.body);
    }
  };
  try {
    await Promise.all(Array.from({ length: concurrency }, worker));
  } finally {
    agent.destroy();
  }
  return answers;
}

function post(
  agent: http.Agent,
  url: string,
  headers: Readonly<Record<string, string>>,
  body: string,
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const request = http.request(
      url,
      { method: 'POST', agent, headers: { ...headers }, timeout: 10_000 },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => {
          resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString() });
        });
      },
    );
    request.on('timeout', () => request.destroy(new Error(`${url} timed out`)));
    request.on('error', reject);
    request.end(body);
  });
}

/** `count` of a query's single `count` column. */
export async function countOf(
  checks: pg.Pool,
  sql: string,
  values: readonly unknown[],
): Promise<number> {
  const { rows } = await checks.query<{ count: string }>(sql, [...values]);
  return Number(rows[0]?.count ?? -1);
}

/**
 * The database's count of a workload's records against its answers: every expected answer
 * recorded, and no more than were sent (a request cut off when the load stopped may or may
 * not have been).
 */
export function countsAgree(
  name: string,
  recorded: number,
  tally: ExpectTally,
  what: string,
): boolean {
  const answered = tally.approved + tally.posted;
  const ok = recorded >= answered && recorded <= answered + tally.inFlight.size;
  console.log(
    `${ok ? 'hold  ' : 'BROKEN'} ${name}: ${recorded} ${what} in the database, for ${answered} answered and ${tally.inFlight.size} cut off when the load stopped`,
  );
  return ok;
}

/** What a group of workloads runs against: the service, its key, cards and database. */
export interface BenchContext {
  readonly base: string;
  readonly runId: string;
  /** The card network's key (authorizations:write) and JSON. */
  readonly headers: Readonly<Record<string, string>>;
  /** The USDC vaults' cards (HTTP_BENCH_POLICY, funded far above a run). */
  readonly cards: readonly string[];
  readonly servicePid: number;
  readonly database: string;
  readonly checks: pg.Pool;
  readonly seconds: number;
  /** Alternated rounds for the ratio workloads (processors, SOL), each `seconds` long. */
  readonly rounds: number;
}

/** A group's figures and checks. */
export interface GroupResult {
  readonly rows: readonly Row[];
  /** Every answer as expected and every count agreeing (a MISSED target does not count). */
  readonly checksHold: boolean;
}
