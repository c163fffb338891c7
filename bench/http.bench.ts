/**
 * HTTP benchmark (`npm run bench:http`), against the local PostgreSQL and Redis: authorizations
 * per second and p50/p99 through the whole service (Fastify adapter, authentication, rate
 * limits, the store), with autocannon, 64 connections, on loopback. Workloads, in one run:
 *
 * - baseline: a route in the same server that does no work (`POST /v1/bench/noop`, answering
 *   `{ ok: true }`), behind the same authentication and rate-limit hooks and body parser;
 * - bare Fastify: the same empty route on a Fastify instance with nothing registered (reported
 *   for reference: what the framework alone costs on this machine);
 * - spread: POST /v1/authorizations over 1,000 funded vaults, a card chosen at random each time;
 * - hot: the same on one vault and card.
 *
 * Every authorization has a unique networkTransactionId; every answer must be a 200, and the
 * approvals and declines are counted and checked against the database after the run.
 *
 * The server runs in a child process of its own (this file again, with SG_BENCH_HTTP_DATABASE
 * set), so autocannon and the service do not share one event loop. Each run uses a database of
 * its own, dropped at the end. BENCH_SECONDS sets each workload's duration (10 by default);
 * BENCH_CPU_PROF=<dir> writes a CPU profile of the server process there.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import Fastify from 'fastify';
import { Decimal, type Scope } from '../src/core/index.js';
import { createRedis } from '../src/http/health.js';
import { createServer } from '../src/http/server.js';
import { checkInvariants } from '../src/store/invariants.js';
import { createPgClient } from '../src/store/sql/pg-client.js';
import { openStore } from '../src/store/store.js';
import { machineBusySeconds, postgresSeconds, postgresSince } from './cpu.js';
import { withBenchDatabase } from './database.js';
import { ALLOWED_COUNTRIES, BLOCKED_MCCS, CUSTOM_RULES } from './workloads.js';

const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
const CONNECTIONS = 64;
const VAULTS = 1000;
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const WARMUP_SECONDS = Math.min(3, SECONDS);
const SETUP_PARALLEL = 16;
const TARGET_PER_SECOND = 2000;
const TARGET_P99_MS = 50;

/**
 * A realistic policy whose checks all run and none declines the bench's purchase, whatever the
 * hour: limits per transaction and per day (the daily one far above what a run spends),
 * a 50-code MCC block list, a country allow list, a template and a custom rule. (The core's
 * REALISTIC_POLICY also has business-hours and a 20-a-day count, which would decline a run at
 * night or on the hot card.)
 */
const POLICY = {
  limits: [
    { interval: 'perTransaction', amount: '500' },
    { interval: 'daily', amount: '1000000' },
  ],
  merchantCategories: { block: BLOCKED_MCCS },
  merchantCountries: { allow: ALLOWED_COUNTRIES },
  templates: [{ name: 'block-gambling' }],
  rules: CUSTOM_RULES.filter((rule) => rule.name === 'casino-name'),
};
const MERCHANT = { name: 'Whole Foods', mcc: '5411', country: 'US', city: 'Austin', id: 'm_wf_1' };
const AMOUNT = '1.25';

/** What the server process tells the bench once it listens. */
interface Ready {
  readonly type: 'ready';
  readonly base: string;
  readonly bareBase: string;
  readonly key: string;
  readonly cards: readonly string[];
  readonly setupMs: number;
}
interface CpuAnswer {
  readonly type: 'cpu';
  readonly micros: number;
}
interface Stopped {
  readonly type: 'stopped';
  readonly batches: number;
  readonly fallbacks: number;
}
type ServerMessage = Ready | CpuAnswer | Stopped;

// ---------------------------------------------------------------------------------------------
// The server process.

async function serve(databaseUrl: string): Promise<void> {
  const started = performance.now();
  const client = createPgClient({ connectionString: databaseUrl });
  const store = await openStore({ client, masterKey: randomBytes(32) });
  const account = await store.findOrCreateAccount('bench-http');
  const scope: Scope = { accountId: account.id, mode: 'test' };
  const { key } = await store.createApiKey({
    accountId: account.id,
    mode: 'test',
    scopes: ['authorizations:write'],
  });
  const cards: string[] = [];
  for (let first = 0; first < VAULTS; first += SETUP_PARALLEL) {
    const group = Array.from({ length: Math.min(SETUP_PARALLEL, VAULTS - first) }, (_, offset) =>
      (async () => {
        const { vault } = await store.createVault(scope, {
          name: `v${first + offset}`,
          currency: 'USDC',
          metadata: {},
          initialDeposit: new Decimal('1000000'),
        });
        await store.setPolicy(scope, vault.id, POLICY);
        return (
          await store.createCard(scope, {
            vaultId: vault.id,
            cardholderName: 'Bench',
            metadata: {},
          })
        ).id;
      })(),
    );
    cards.push(...(await Promise.all(group)));
  }

  const redis = createRedis(REDIS_URL);
  await new Promise<void>((resolve, reject) => {
    redis.once('ready', resolve);
    setTimeout(() => {
      reject(new Error(`Redis at ${REDIS_URL} not ready within 5 s`));
    }, 5000).unref();
  });
  const unthrottled = 1_000_000;
  const app = createServer(
    {
      logLevel: 'silent',
      modes: ['test'],
      rateLimits: {
        livePerSecond: unthrottled,
        testPerSecond: unthrottled,
        authorizationsPerSecond: unthrottled,
      },
      redisPrefix: `sgbench-${process.pid}-${randomBytes(4).toString('hex')}`,
      authorize: { budgetMs: 1500, standIn: 'decline' },
      cardBin: '424242',
      solanaRpcUrl: null,
    },
    {
      store,
      redis,
      extraRoutes: (api) => {
        api.post('/v1/bench/noop', { config: { requiredScope: null } }, (_request, reply) =>
          reply.send({ ok: true }),
        );
      },
    },
  );
  const base = await app.listen({ port: 0, host: '127.0.0.1' });
  const bare = Fastify({ logger: false });
  bare.post('/noop', (_request, reply) => reply.send({ ok: true }));
  const bareBase = await bare.listen({ port: 0, host: '127.0.0.1' });

  const send = (message: ServerMessage) => process.send?.(message);
  process.on('message', (message: { type: string }) => {
    if (message.type === 'cpu') {
      const used = process.cpuUsage();
      send({ type: 'cpu', micros: used.user + used.system });
      return;
    }
    if (message.type === 'stop') {
      void (async () => {
        await app.close();
        await bare.close();
        redis.disconnect();
        const stats = store.authorizeStats();
        await store.close();
        send({ type: 'stopped', ...stats });
        process.disconnect();
      })();
    }
  });
  send({ type: 'ready', base, bareBase, key, cards, setupMs: performance.now() - started });
}

// ---------------------------------------------------------------------------------------------
// The bench process.

function ask<T extends ServerMessage>(
  child: ChildProcess,
  type: T['type'],
  message?: object,
): Promise<T> {
  return new Promise((resolve, reject) => {
    const onMessage = (answer: ServerMessage) => {
      if (answer.type !== type) return;
      child.off('message', onMessage);
      child.off('exit', onExit);
      resolve(answer as T);
    };
    const onExit = (code: number | null) => {
      child.off('message', onMessage);
      reject(new Error(`the server process exited (${code}) before answering ${type}`));
    };
    child.on('message', onMessage);
    child.once('exit', onExit);
    if (message !== undefined) child.send(message);
  });
}

interface HttpResult {
  readonly name: string;
  readonly requests: number;
  readonly perSecond: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly non2xx: number;
  readonly errors: number;
  /** Authorizations only: approved and declined answers, stand-ins among the declines. */
  readonly approved: number;
  readonly declined: number;
  readonly standIn: number;
  /** Answers whose body was not the expected shape. */
  readonly mismatches: number;
  readonly elapsedS: number;
  readonly cpu: {
    readonly server: number;
    readonly postgres: number;
    readonly bench: number;
    readonly machine: number;
  };
}

await (process.env.SG_BENCH_HTTP_DATABASE === undefined
  ? main()
  : serve(process.env.SG_BENCH_HTTP_DATABASE));

async function main(): Promise<void> {
  await withBenchDatabase(async (databaseUrl) => {
    // Its backends' CPU is read by database name.
    const name = new URL(databaseUrl).pathname.slice(1);
    let child: ChildProcess | undefined;
    try {
      console.log(`setting up ${VAULTS} vaults with cards and a policy (server process) ...`);
      const profileDir = process.env.BENCH_CPU_PROF;
      child = fork(fileURLToPath(import.meta.url), [], {
        env: { ...process.env, SG_BENCH_HTTP_DATABASE: databaseUrl },
        execArgv: [
          ...process.execArgv,
          ...(profileDir === undefined ? [] : ['--cpu-prof', `--cpu-prof-dir=${profileDir}`]),
        ],
      });
      const server = child;
      const ready = await ask<Ready>(server, 'ready');
      console.log(`setup took ${(ready.setupMs / 1000).toFixed(1)} s`);

      // Every networkTransactionId sent and not yet answered: at the end of a timed run, the
      // requests in flight are decided by the server but never answered to autocannon.
      const unanswered = new Set<string>();
      let sequence = 0;
      const random = () => Math.floor(Math.random() * VAULTS);
      const authorization = (cardId: string) => {
        sequence += 1;
        const networkTransactionId = `bench_${process.pid}_${sequence}`;
        return {
          networkTransactionId,
          body: JSON.stringify({
            cardId,
            amount: AMOUNT,
            currency: 'USDC',
            merchant: MERCHANT,
            networkTransactionId,
          }),
        };
      };
      const samples: string[] = [];

      const run = async (
        label: string,
        target: { url: string; path: string; authorizes: boolean },
        seconds: number,
        pickCard: () => string,
      ): Promise<HttpResult> => {
        const counts = { approved: 0, declined: 0, standIn: 0, mismatches: 0 };
        const cpuBefore = {
          server: (await ask<CpuAnswer>(server, 'cpu', { type: 'cpu' })).micros,
          postgres: postgresSeconds(name),
          bench: process.cpuUsage(),
          machine: machineBusySeconds(),
        };
        const started = performance.now();
        const result = await autocannon({
          url: target.url,
          connections: CONNECTIONS,
          duration: seconds,
          headers: { authorization: `Bearer ${ready.key}`, 'content-type': 'application/json' },
          requests: [
            {
              method: 'POST',
              path: target.path,
              setupRequest: (request, context) => {
                const { networkTransactionId, body } = authorization(pickCard());
                (context as { id?: string }).id = networkTransactionId;
                if (target.authorizes) unanswered.add(networkTransactionId);
                return { ...request, body };
              },
              onResponse: (status, body, context) => {
                const id = (context as { id?: string }).id;
                if (id !== undefined) unanswered.delete(id);
                if (status !== 200) {
                  if (samples.length < 5) samples.push(`${label}: ${status} ${body.slice(0, 300)}`);
                  return;
                }
                if (!target.authorizes) {
                  if (body !== '{"ok":true}') counts.mismatches += 1;
                } else if (body.includes('"approved":true')) {
                  counts.approved += 1;
                } else if (body.includes('"approved":false')) {
                  counts.declined += 1;
                  if (body.includes('"standIn":true')) counts.standIn += 1;
                  if (samples.length < 5) samples.push(`${label}: declined ${body.slice(0, 300)}`);
                } else {
                  counts.mismatches += 1;
                }
              },
            },
          ],
        });
        const elapsedS = (performance.now() - started) / 1000;
        const bench = process.cpuUsage(cpuBefore.bench);
        const cpu = {
          server:
            ((await ask<CpuAnswer>(server, 'cpu', { type: 'cpu' })).micros - cpuBefore.server) /
            1e6 /
            elapsedS,
          postgres: postgresSince(cpuBefore.postgres, name) / elapsedS,
          bench: (bench.user + bench.system) / 1e6 / elapsedS,
          machine: (machineBusySeconds() - cpuBefore.machine) / elapsedS,
        };
        return {
          name: label,
          requests: result.requests.total,
          perSecond: result.requests.average,
          p50Ms: result.latency.p50,
          p99Ms: result.latency.p99,
          non2xx: result.non2xx,
          errors: result.errors,
          ...counts,
          elapsedS,
          cpu,
        };
      };

      const api = (path: string, authorizes: boolean) => ({ url: ready.base, path, authorizes });
      const spreadCard = () => ready.cards[random()] as string;
      const hotCard = ready.cards[0] as string;

      const results: HttpResult[] = [];
      // First, as it leaves the database pool idle.
      results.push(
        await run(
          'bare Fastify, no hooks (reference)',
          { url: ready.bareBase, path: '/noop', authorizes: false },
          SECONDS,
          spreadCard,
        ),
      );
      // Warm the pool, the policy cache, the JIT and the server's buffers before measuring.
      const warmups = [
        await run('warmup', api('/v1/authorizations', true), WARMUP_SECONDS, spreadCard),
        await run('warmup', api('/v1/bench/noop', false), 1, spreadCard),
      ];
      results.push(
        await run('baseline: no-op route, same server', api('/v1/bench/noop', false), SECONDS, () =>
          spreadCard(),
        ),
      );
      results.push(
        await run(
          'spread: authorize, 1,000 vaults',
          api('/v1/authorizations', true),
          SECONDS,
          spreadCard,
        ),
      );
      results.push(
        await run(
          'hot: authorize, one vault',
          api('/v1/authorizations', true),
          SECONDS,
          () => hotCard,
        ),
      );
      const stopped = await ask<Stopped>(server, 'stopped', { type: 'stop' });
      await new Promise((resolve) => {
        if (server.exitCode !== null) resolve(undefined);
        else server.once('exit', resolve);
      });

      const [, baseline, spread, hot] = results as [HttpResult, HttpResult, HttpResult, HttpResult];
      console.log(
        `\nnode ${process.version}, ${CONNECTIONS} connections, ${SECONDS} s per row, PostgreSQL and Redis on loopback\n`,
      );
      console.log(
        '| workload | req/s (mean) | p50 ms | p99 ms | non-2xx | errors | approved | declined | vs baseline (req/s) |',
      );
      console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|');
      for (const row of results) {
        const authorizes = row.approved + row.declined > 0;
        console.log(
          `| ${row.name} | ${row.perSecond.toFixed(0)} | ${row.p50Ms.toFixed(2)} | ${row.p99Ms.toFixed(2)} | ${row.non2xx} | ${row.errors} | ${authorizes ? row.approved : '-'} | ${authorizes ? row.declined : '-'} | ${(row.perSecond / baseline.perSecond).toFixed(2)}x |`,
        );
      }
      console.log(
        '\nCPU during each row, in cores (the machine figure includes anything else running)\n',
      );
      console.log(
        '| workload | server process | PostgreSQL (this database) | autocannon | machine | server CPU per request |',
      );
      console.log('|---|---:|---:|---:|---:|---:|');
      for (const row of results) {
        const perRequestUs = (row.cpu.server * row.elapsedS * 1e6) / Math.max(1, row.requests);
        console.log(
          `| ${row.name} | ${row.cpu.server.toFixed(2)} | ${row.cpu.postgres.toFixed(2)} | ${row.cpu.bench.toFixed(2)} | ${row.cpu.machine.toFixed(2)} | ${perRequestUs.toFixed(0)} us |`,
        );
      }
      const everything = [...warmups, ...results];
      const answered = everything.reduce(
        (sum, row) => ({
          approved: sum.approved + row.approved,
          declined: sum.declined + row.declined,
          standIn: sum.standIn + row.standIn,
          non2xx: sum.non2xx + row.non2xx,
          errors: sum.errors + row.errors,
          mismatches: sum.mismatches + row.mismatches,
        }),
        { approved: 0, declined: 0, standIn: 0, non2xx: 0, errors: 0, mismatches: 0 },
      );
      const authorizations = answered.approved + answered.declined;
      console.log(
        `\nserver: ${stopped.batches} authorization batches (${(authorizations / Math.max(1, stopped.batches)).toFixed(1)} authorizations each), ${stopped.fallbacks} fallbacks`,
      );
      for (const sample of samples) console.log(`sample answer: ${sample}`);

      // The ledger after the run, read from the database.
      const client = createPgClient({
        connectionString: databaseUrl,
        connectionsMax: 2,
      });
      let invariantsHold = false;
      let countsAgree = false;
      try {
        const violations = await checkInvariants(client);
        const { rows: balances } = await client.query<{ negative: string; least: string }>(
          'SELECT count(*) FILTER (WHERE ledger - pending < 0) AS negative, min(ledger - pending) AS least FROM vaults',
        );
        const { rows: decided } = await client.query<{ approved: string; declined: string }>(
          `SELECT count(*) FILTER (WHERE status = 'pending') AS approved,
                count(*) FILTER (WHERE status = 'declined') AS declined
         FROM transactions WHERE type = 'card_authorization'`,
        );
        const { rows: late } = await client.query<{ approved: string; declined: string }>(
          `SELECT count(*) FILTER (WHERE status = 'pending') AS approved,
                count(*) FILTER (WHERE status = 'declined') AS declined
         FROM transactions WHERE type = 'card_authorization' AND network_transaction_id = ANY($1)`,
          [[...unanswered]],
        );
        const balance = balances[0];
        const stored = decided[0];
        const unansweredDecided = late[0];
        const negative = Number(balance?.negative ?? -1);
        const dbApproved = Number(stored?.approved ?? -1);
        const dbDeclined = Number(stored?.declined ?? -1);
        const lateApproved = Number(unansweredDecided?.approved ?? -1);
        const lateDeclined = Number(unansweredDecided?.declined ?? -1);
        invariantsHold = violations.length === 0 && negative === 0;
        countsAgree =
          dbApproved === answered.approved + lateApproved &&
          dbDeclined === answered.declined + lateDeclined;
        console.log('\nledger after the run');
        console.log(
          `${violations.length === 0 ? 'hold  ' : 'BROKEN'} store invariants (src/store/invariants.ts)${violations.map((violation) => `\n  ${violation.invariant}: ${violation.detail}`).join('')}`,
        );
        console.log(
          `${negative === 0 ? 'hold  ' : 'BROKEN'} no vault below zero available: ${negative} negative, least available ${balance?.least ?? '?'}`,
        );
        console.log(
          `${countsAgree ? 'agree ' : 'DIFFER'} approved authorizations: ${dbApproved} in the database, ${answered.approved} approved answers + ${lateApproved} approved of the ${unanswered.size} in flight when a run stopped (never answered)`,
        );
        console.log(
          `${countsAgree ? 'agree ' : 'DIFFER'} declined authorizations: ${dbDeclined} in the database, ${answered.declined} declined answers (${answered.standIn} stand-in) + ${lateDeclined} in flight`,
        );
      } finally {
        await client.close();
      }

      const met = (ok: boolean) => (ok ? 'met   ' : 'MISSED');
      console.log('');
      console.log(
        `${met(spread.perSecond >= TARGET_PER_SECOND)} at least ${TARGET_PER_SECOND} authorizations/s, spread (${spread.perSecond.toFixed(0)})`,
      );
      console.log(
        `${met(spread.p99Ms <= TARGET_P99_MS)} p99 at most ${TARGET_P99_MS} ms, spread (${spread.p99Ms.toFixed(2)} ms)`,
      );
      console.log(
        `${met(hot.p99Ms <= TARGET_P99_MS)} p99 at most ${TARGET_P99_MS} ms, hot vault (${hot.p99Ms.toFixed(2)} ms)`,
      );
      const clean =
        answered.non2xx === 0 &&
        answered.errors === 0 &&
        answered.mismatches === 0 &&
        answered.declined === 0;
      console.log(
        `${met(clean)} every answer a 200 of the expected shape and every authorization approved (${answered.non2xx} non-2xx, ${answered.errors} errors, ${answered.mismatches} mismatches, ${answered.declined} declined)`,
      );
      if (!clean || !invariantsHold || !countsAgree) process.exitCode = 1;
    } finally {
      if (child !== undefined && child.exitCode === null && child.signalCode === null) child.kill();
    }
  });
}
