/**
 * Webhook benchmark (`npm run bench:webhooks`), against the local PostgreSQL and Redis: webhook
 * deliveries per second to a local receiver, and the lag from an event's commit to its arrival
 * (p50/p99/max), for a burst of 10,000 events (BENCH_EVENTS sets another number).
 *
 * Three processes, so that none steals another's event loop:
 * - this one: the producer (the API's role), committing `vault.created` events through the
 *   store's own operation (`createVault`, 32 at once), and the judge;
 * - a workers process (this file again, SG_BENCH_WEBHOOKS_ROLE=workers): `startWorkers` as
 *   `serve --role worker` runs it, the relay's and the delivery worker's defaults
 *   (DEFAULT_RELAY_OPTIONS, DEFAULT_DELIVERY_SETTINGS), its own
 *   store on the same database and master key, a Redis prefix of the run's own;
 * - a receiver process (SG_BENCH_WEBHOOKS_ROLE=receiver): one loopback HTTP server per endpoint
 *   (as distinct customers' hosts would be), the tests' receiver (test/support/receiver.ts),
 *   answering 200 and verifying every delivery's Standard Webhooks signature with the
 *   `standardwebhooks` library (its cost is measured).
 *
 * Workloads, each on accounts and endpoints of its own (every endpoint subscribes to
 * `vault.created`; an event is one vault created without a deposit, so one event):
 * - one endpoint: every event to one endpoint (bounded by its 8 deliveries in flight);
 * - spread: 8 accounts with one endpoint each, the events round-robin over them;
 * - fan-out: one account with 4 endpoints, a quarter of the events, each to all 4;
 * - paced: the spread workload, events committed at 1,000 a second (open loop): the lag
 *   at the target's rate;
 * - backlog: the spread workload committed while the workers are stopped, then drained: the
 *   delivery side's rate alone (no lag: the events waited on purpose).
 * A burst's rate is deliveries / (last arrival - first event's createdAt); lag is the arrival
 * time (the receiver's clock) minus the event's `createdAt` (the store's clock when the change
 * was made, just before its commit; same machine). The baseline, in the same run: the same
 * bodies, signed beforehand, POSTed to the same receiver by this process with 64 concurrent
 * keep-alive requests: the receiver's and plain HTTP's capacity on this machine.
 *
 * Checks: every (event, endpoint) arrived, duplicates counted, every signature verified, every
 * delivery recorded as succeeded in webhook_deliveries; exit 1 on a lost event or an unverified
 * signature. BENCH_CONCURRENCY and BENCH_ENDPOINT_CONCURRENCY override the delivery defaults;
 * BENCH_CPU_PROF=<dir> writes a CPU profile of the workers process there. The
 * database is the run's own, dropped at the end; the Redis keys under the run's prefix are removed.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import { fileURLToPath } from 'node:url';
import { QueueEvents } from 'bullmq';
import { Webhook } from 'standardwebhooks';
import { CONTRACT_RETRY_DELAYS_MS, redisServer } from '../src/config/env.js';
import { assert, Decimal, type Scope } from '../src/core/index.js';
import { createPgClient } from '../src/store/sql/pg-client.js';
import { openStore, type OpenedStore as Store } from '../src/store/store.js';
import { DEFAULT_RELAY_OPTIONS } from '../src/workers/outbox-relay.js';
import { queuePrefix, WEBHOOK_QUEUE, workerConnection } from '../src/workers/queues.js';
import { startWorkers, type Workers } from '../src/workers/start.js';
import { DEFAULT_DELIVERY_SETTINGS } from '../src/workers/webhook-delivery.js';
import { startReceiver, type Receiver } from '../test/support/receiver.js';
import { machineBusySeconds, postgresSeconds } from './cpu.js';
import { withBenchDatabase } from './database.js';

const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
const EVENTS = Number(process.env.BENCH_EVENTS ?? 10_000);
const WARMUP_EVENTS = Math.min(500, EVENTS);
/** createVault calls in flight at once in the producer, and its pool. */
const PRODUCER_PARALLEL = 32;
const PRODUCER_CONNECTIONS = 8;
const PACED_PER_SECOND = 1000;
const BASELINE_CONCURRENCY = 64;
/** A workload that receives nothing new for this long has lost deliveries. */
const STALL_MS = 30_000;
/** Events whose relay time is remembered, at most: the runs' events are a few tens of thousands. */
const RELAYED_EVENTS_MAX = 1_000_000;
const TARGET_PER_SECOND = 1000;
const TARGET_LAG_P99_MS = 1000;
const ROLE = process.env.SG_BENCH_WEBHOOKS_ROLE;
/**
 * The delivery worker's settings: the defaults, unless BENCH_CONCURRENCY or
 * BENCH_ENDPOINT_CONCURRENCY says otherwise (to see what the per-endpoint bound costs).
 */
const DELIVERY = {
  ...DEFAULT_DELIVERY_SETTINGS,
  concurrency: Number(process.env.BENCH_CONCURRENCY ?? DEFAULT_DELIVERY_SETTINGS.concurrency),
  endpointConcurrency: Number(
    process.env.BENCH_ENDPOINT_CONCURRENCY ?? DEFAULT_DELIVERY_SETTINGS.endpointConcurrency,
  ),
};

// ---------------------------------------------------------------------------------------------
// Messages between the processes: a request carries `seq`, its answer the same `seq`.

type Request = { readonly seq: number } & (
  | { readonly type: 'listen'; readonly keys: readonly string[] }
  | { readonly type: 'secrets'; readonly secrets: Readonly<Record<string, string>> }
  | { readonly type: 'count'; readonly keys: readonly string[] }
  | { readonly type: 'collect'; readonly keys: readonly string[] }
  | { readonly type: 'cpu' }
  | { readonly type: 'start' }
  | { readonly type: 'stop' }
  | { readonly type: 'close' }
);

/** One delivery as the receiver saw it. */
interface Arrival {
  readonly key: string;
  readonly id: string;
  readonly createdAtMs: number;
  readonly receivedAtMs: number;
  readonly verified: boolean;
}

interface Collected {
  readonly arrivals: readonly Arrival[];
  /** Time spent in `standardwebhooks` verify for these arrivals, in ms. */
  readonly verifyMs: number;
}

function serveRequests(handle: (request: Request) => Promise<object>): void {
  process.on('message', (request: Request) => {
    void handle(request).then(
      (answer) => process.send?.({ seq: request.seq, ...answer }),
      (error: unknown) => process.send?.({ seq: request.seq, error: String(error) }),
    );
  });
  process.send?.({ seq: 0, ready: true });
}

const cpuMicros = () => {
  const used = process.cpuUsage();
  return { micros: used.user + used.system };
};

// ---------------------------------------------------------------------------------------------
// The receiver process.

function receiverProcess(): void {
  const receivers = new Map<string, Receiver>();
  const receiverOf = (key: string): Receiver => {
    const receiver = receivers.get(key);
    if (receiver === undefined) throw new Error(`no receiver listens for ${key}`);
    return receiver;
  };

  serveRequests(async (request) => {
    switch (request.type) {
      case 'listen': {
        const urls: Record<string, string> = {};
        for (const key of request.keys) {
          // Node's own keep-alive timeout, as a customer's server would have: connections reused.
          const receiver = await startReceiver({
            path: `/hooks/${key}`,
            keepAliveTimeoutMs: 5000,
          });
          receivers.set(key, receiver);
          urls[key] = receiver.url;
        }
        return { urls };
      }
      case 'secrets':
        for (const [key, secret] of Object.entries(request.secrets))
          receiverOf(key).secret = secret;
        return {};
      case 'count':
        return {
          count: request.keys.reduce((sum, key) => sum + receiverOf(key).received.length, 0),
        };
      case 'collect': {
        let verifyMs = 0;
        const arrivals = request.keys.flatMap((key) =>
          receiverOf(key)
            .received.splice(0)
            .map((delivery): Arrival => {
              verifyMs += delivery.verifyMs;
              return {
                key,
                id: delivery.id,
                createdAtMs: Date.parse(delivery.body.createdAt),
                receivedAtMs: delivery.receivedAtMs,
                verified: delivery.verified,
              };
            }),
        );
        const collected: Collected = { arrivals, verifyMs };
        return collected;
      }
      case 'cpu':
        return cpuMicros();
      case 'close':
        await Promise.all([...receivers.values()].map((receiver) => receiver.close()));
        setImmediate(() => {
          process.disconnect();
        });
        return {};
      default:
        throw new Error(`receiver: unexpected ${request.type}`);
    }
  });
}

// ---------------------------------------------------------------------------------------------
// The workers process.

async function workersProcess(databaseUrl: string): Promise<void> {
  const masterKey = Buffer.from(process.env.SG_BENCH_WEBHOOKS_KEY ?? '', 'hex');
  const redisPrefix = process.env.SG_BENCH_WEBHOOKS_PREFIX ?? '';
  // The pool `serve` would open (createPgClient's default).
  const store = await openStore({
    client: createPgClient({ connectionString: databaseUrl }),
    masterKey,
  });
  let warnings = 0;
  const log = {
    warn(object: object, message: string) {
      warnings += 1;
      if (warnings <= 3) console.error(`workers: ${message}`, object);
    },
    error(object: object, message: string) {
      console.error(`workers: ${message}`, object);
    },
    info: () => undefined,
  };
  let workers: Workers | null = null;
  serveRequests(async (request) => {
    switch (request.type) {
      case 'start':
        workers = startWorkers({
          store,
          redis: redisServer(REDIS_URL),
          redisPrefix,
          delivery: { ...DELIVERY, retryDelaysMs: CONTRACT_RETRY_DELAYS_MS },
          relay: DEFAULT_RELAY_OPTIONS,
          log,
        });
        return {};
      case 'stop': {
        const stats = workers === null ? null : { ...workers.relay.stats };
        await workers?.stop();
        workers = null;
        return { stats, warnings };
      }
      case 'cpu':
        return cpuMicros();
      case 'close':
        await workers?.stop();
        await store.close();
        // Exit (not only disconnect), so that --cpu-prof writes its profile.
        setTimeout(() => process.exit(0), 50);
        return {};
      default:
        throw new Error(`workers: unexpected ${request.type}`);
    }
  });
}

// ---------------------------------------------------------------------------------------------
// The bench process.

class Child {
  #seq = 0;
  readonly #pending = new Map<number, (answer: Record<string, unknown>) => void>();
  readonly ready: Promise<void>;

  constructor(
    readonly name: string,
    readonly process: ChildProcess,
  ) {
    let ready: () => void = () => undefined;
    this.ready = new Promise((resolve) => (ready = resolve));
    process.on('message', (answer: Record<string, unknown> & { seq: number }) => {
      if (answer.seq === 0) {
        ready();
        return;
      }
      const resolve = this.#pending.get(answer.seq);
      this.#pending.delete(answer.seq);
      resolve?.(answer);
    });
    process.once('exit', (code) => {
      for (const resolve of this.#pending.values())
        resolve({ error: `${name} exited (${code ?? 'signal'})` });
      this.#pending.clear();
    });
  }

  async ask<T>(request: { type: Request['type'] } & Record<string, unknown>): Promise<T> {
    this.#seq += 1;
    const seq = this.#seq;
    const answer = await new Promise<Record<string, unknown>>((resolve) => {
      this.#pending.set(seq, resolve);
      this.process.send({ ...request, seq });
    });
    if (typeof answer.error === 'string') throw new Error(`${this.name}: ${answer.error}`);
    return answer as T;
  }

  async cpuSeconds(): Promise<number> {
    return (await this.ask<{ micros: number }>({ type: 'cpu' })).micros / 1e6;
  }
}

function spawn(name: string, role: string, env: Record<string, string>, profileDir?: string) {
  const child = fork(fileURLToPath(import.meta.url), [], {
    env: { ...process.env, ...env, SG_BENCH_WEBHOOKS_ROLE: role },
    execArgv: [
      ...process.execArgv,
      ...(profileDir === undefined ? [] : ['--cpu-prof', `--cpu-prof-dir=${profileDir}`]),
    ],
  });
  return new Child(name, child);
}

function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] as number;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Cpu {
  readonly workers: number;
  readonly receiver: number;
  readonly producer: number;
  readonly postgres: number;
  readonly machine: number;
}

interface Result {
  readonly name: string;
  readonly expected: number;
  readonly received: number;
  readonly unique: number;
  readonly duplicates: number;
  readonly lost: number;
  readonly unexpected: number;
  readonly unverified: number;
  readonly recorded: number;
  readonly perSecond: number;
  /** Events committed per second by the producer (null for the baseline). */
  readonly committedPerSecond: number | null;
  readonly lag: { p50: number; p99: number; max: number } | null;
  readonly relayLag: { p50: number; p99: number } | null;
  readonly verifyUs: number;
  /** Jobs moved back to delayed for fairness during the workload. */
  readonly delayed: number;
  readonly elapsedS: number;
  readonly cpu: Cpu;
}

if (ROLE === 'receiver') receiverProcess();
else if (ROLE === 'workers') await workersProcess(process.env.SG_BENCH_WEBHOOKS_DATABASE ?? '');
else await main();

async function main(): Promise<void> {
  const redisPrefix = `sgbench-webhooks-${process.pid}-${randomBytes(4).toString('hex')}`;
  await withBenchDatabase(async (databaseUrl) => {
    const database = new URL(databaseUrl).pathname.slice(1);
    const masterKey = randomBytes(32);
    const client = createPgClient({
      connectionString: databaseUrl,
      connectionsMax: PRODUCER_CONNECTIONS,
    });
    const store: Store = await openStore({ client, masterKey });
    const receiverChild = spawn('receiver', 'receiver', {});
    let queueEvents: QueueEvents | undefined;
    const eventsConnection = workerConnection(redisServer(REDIS_URL));
    const workersChild = spawn(
      'workers',
      'workers',
      {
        SG_BENCH_WEBHOOKS_DATABASE: databaseUrl,
        SG_BENCH_WEBHOOKS_KEY: masterKey.toString('hex'),
        SG_BENCH_WEBHOOKS_PREFIX: redisPrefix,
      },
      process.env.BENCH_CPU_PROF,
    );
    try {
      await Promise.all([receiverChild.ready, workersChild.ready]);
      // Jobs the delivery worker put back, delayed, because their endpoint had all its slots
      // taken (webhook-delivery.ts, FAIRNESS_DELAY_MS): the only delays in a run whose
      // receiver always answers 200.
      queueEvents = new QueueEvents(WEBHOOK_QUEUE, {
        connection: eventsConnection,
        prefix: queuePrefix(redisPrefix),
      });
      let delayedJobs = 0;
      const relayedAtMs = new Map<string, number>();
      queueEvents.on('delayed', () => {
        delayedJobs += 1;
      });
      // When the relay handed each event on: the time of the first job added for it, read
      // from the event stream's entry id (Redis's clock in ms, this machine's). The database
      // keeps no relay time (an event is relayed when its id leaves outbox_unrelayed).
      queueEvents.on('added', ({ jobId }, streamId) => {
        const eventId = jobId.slice(0, jobId.indexOf('.'));
        if (relayedAtMs.has(eventId)) return;
        assert(relayedAtMs.size < RELAYED_EVENTS_MAX, 'a bounded record of relay times');
        relayedAtMs.set(eventId, Number(streamId.slice(0, streamId.indexOf('-'))));
      });
      await queueEvents.waitUntilReady();
      await workersChild.ask({ type: 'start' });
      let vaultSequence = 0;

      /** Accounts, each with `endpointsPerAccount` endpoints on the receiver. */
      const setup = async (label: string, accounts: number, endpointsPerAccount: number) => {
        const keys = Array.from(
          { length: accounts * endpointsPerAccount },
          (_, index) => `${label}-${index}`,
        );
        const { urls } = await receiverChild.ask<{ urls: Record<string, string> }>({
          type: 'listen',
          keys,
        });
        const scopes: Scope[] = [];
        const endpointIds: string[] = [];
        const secrets: Record<string, string> = {};
        for (let account = 0; account < accounts; account++) {
          const { id } = await store.findOrCreateAccount(`bench-webhooks-${label}-${account}`);
          const scope: Scope = { accountId: id, mode: 'test' };
          scopes.push(scope);
          for (let endpoint = 0; endpoint < endpointsPerAccount; endpoint++) {
            const key = keys[account * endpointsPerAccount + endpoint] as string;
            const created = await store.createWebhookEndpoint(scope, {
              url: urls[key] as string,
              events: ['vault.created'],
              description: `bench ${key}`,
            });
            endpointIds.push(created.endpoint.id);
            secrets[key] = created.secret;
          }
        }
        await receiverChild.ask({ type: 'secrets', secrets });
        return { keys, scopes, endpointIds, endpointsPerAccount };
      };

      const createEvent = async (scope: Scope) => {
        vaultSequence += 1;
        await store.createVault(scope, {
          name: `w${vaultSequence}`,
          currency: 'USDC',
          metadata: {},
          initialDeposit: new Decimal(0),
        });
      };

      /** Commits `count` events round-robin over `scopes`, as fast as possible or at `rate`/s. */
      const produce = async (scopes: readonly Scope[], count: number, rate: number | null) => {
        const started = Date.now();
        let issued = 0;
        const scopeOf = () => scopes[issued % scopes.length] as Scope;
        if (rate === null) {
          await Promise.all(
            Array.from({ length: PRODUCER_PARALLEL }, async () => {
              while (issued < count) {
                const scope = scopeOf();
                issued += 1;
                await createEvent(scope);
              }
            }),
          );
        } else {
          const inFlight = new Set<Promise<void>>();
          while (issued < count) {
            const due = Math.min(count, Math.floor(((Date.now() - started) * rate) / 1000));
            while (issued < due && inFlight.size < 256) {
              const scope = scopeOf();
              issued += 1;
              const created = createEvent(scope).finally(() => inFlight.delete(created));
              inFlight.add(created);
            }
            await sleep(5);
          }
          await Promise.all(inFlight);
        }
        return { started, finished: Date.now() };
      };

      const cpuNow = async () => ({
        workers: await workersChild.cpuSeconds(),
        receiver: await receiverChild.cpuSeconds(),
        producer: process.cpuUsage(),
        postgres: postgresSeconds(database),
        machine: machineBusySeconds(),
      });
      const cpuSince = async (
        before: Awaited<ReturnType<typeof cpuNow>>,
        elapsedS: number,
      ): Promise<Cpu> => {
        const now = await cpuNow();
        const producer = process.cpuUsage(before.producer);
        let postgres = 0;
        for (const [pid, seconds] of now.postgres)
          postgres += seconds - (before.postgres.get(pid) ?? 0);
        return {
          workers: (now.workers - before.workers) / elapsedS,
          receiver: (now.receiver - before.receiver) / elapsedS,
          producer: (producer.user + producer.system) / 1e6 / elapsedS,
          postgres: postgres / elapsedS,
          machine: (now.machine - before.machine) / elapsedS,
        };
      };

      /** Waits until `expected` deliveries arrived on `keys`, or nothing new came for STALL_MS. */
      const awaitArrivals = async (keys: readonly string[], expected: number) => {
        let last = -1;
        let lastChange = Date.now();
        for (;;) {
          const { count } = await receiverChild.ask<{ count: number }>({ type: 'count', keys });
          if (count >= expected) {
            // A moment more, to catch duplicates arriving just behind.
            await sleep(300);
            return;
          }
          if (count !== last) {
            last = count;
            lastChange = Date.now();
          } else if (Date.now() - lastChange > STALL_MS) {
            console.log(`  ${count} of ${expected} arrived; nothing new for ${STALL_MS / 1000} s`);
            return;
          }
          await sleep(50);
        }
      };

      /** What arrived and what the database holds, against what was committed. */
      const judge = async (
        name: string,
        workload: Awaited<ReturnType<typeof setup>>,
        startedAtMs: number | null,
        committed: { started: number; finished: number } | null,
        expectedEvents: Map<string, ReadonlySet<string>>,
        cpu: Cpu,
        elapsedS: number,
        delayed = 0,
      ): Promise<Result> => {
        const collected = await receiverChild.ask<Collected>({
          type: 'collect',
          keys: workload.keys,
        });
        const seen = new Set<string>();
        let duplicates = 0;
        let unverified = 0;
        let unexpected = 0;
        const lags: number[] = [];
        let lastArrival = 0;
        let firstCreated = Number.POSITIVE_INFINITY;
        for (const arrival of collected.arrivals) {
          const pair = `${arrival.key} ${arrival.id}`;
          if (seen.has(pair)) duplicates += 1;
          seen.add(pair);
          if (!arrival.verified) unverified += 1;
          if (expectedEvents.get(arrival.key)?.has(arrival.id) !== true) unexpected += 1;
          lags.push(arrival.receivedAtMs - arrival.createdAtMs);
          lastArrival = Math.max(lastArrival, arrival.receivedAtMs);
          firstCreated = Math.min(firstCreated, arrival.createdAtMs);
        }
        let expected = 0;
        let lost = 0;
        for (const [key, ids] of expectedEvents) {
          expected += ids.size;
          for (const id of ids) if (!seen.has(`${key} ${id}`)) lost += 1;
        }
        lags.sort((a, b) => a - b);
        const from = startedAtMs ?? firstCreated;
        const unique = seen.size;
        let recorded = 0;
        let relayLag: Result['relayLag'] = null;
        if (workload.endpointIds.length > 0) {
          const { rows } = await client.query<{ n: number }>(
            `SELECT count(DISTINCT (endpoint_id, event_id))::int AS n FROM webhook_deliveries
             WHERE endpoint_id = ANY($1) AND succeeded`,
            [workload.endpointIds],
          );
          recorded = rows[0]?.n ?? 0;
          const { rows: created } = await client.query<{ id: string; ms: number }>(
            `SELECT id, (extract(epoch FROM created_at) * 1000)::float8 AS ms
             FROM outbox_events WHERE account_id = ANY($1)`,
            [workload.scopes.map((scope) => scope.accountId)],
          );
          const ms = created
            .flatMap((row) => {
              const relayedMs = relayedAtMs.get(row.id);
              return relayedMs === undefined ? [] : [relayedMs - row.ms];
            })
            .sort((a, b) => a - b);
          relayLag = { p50: percentile(ms, 50), p99: percentile(ms, 99) };
        }
        return {
          name,
          expected,
          received: collected.arrivals.length,
          unique,
          duplicates,
          lost,
          unexpected,
          unverified,
          recorded,
          perSecond: unique / (Math.max(1, lastArrival - from) / 1000),
          committedPerSecond:
            committed === null
              ? null
              : (expected /
                  workload.endpointsPerAccount /
                  Math.max(1, committed.finished - committed.started)) *
                1000,
          lag:
            startedAtMs === null
              ? {
                  p50: percentile(lags, 50),
                  p99: percentile(lags, 99),
                  max: lags.at(-1) ?? Number.NaN,
                }
              : null,
          relayLag: startedAtMs === null ? relayLag : null,
          verifyUs: (collected.verifyMs * 1000) / Math.max(1, collected.arrivals.length),
          delayed,
          elapsedS,
          cpu,
        };
      };

      /** The event ids each endpoint key must receive: every event of its account. */
      const expectedOf = async (workload: Awaited<ReturnType<typeof setup>>) => {
        const expected = new Map<string, ReadonlySet<string>>();
        for (const [index, scope] of workload.scopes.entries()) {
          const { rows } = await client.query<{ id: string }>(
            'SELECT id FROM outbox_events WHERE account_id = $1 AND mode = $2',
            [scope.accountId, scope.mode],
          );
          const ids = new Set(rows.map((row) => row.id));
          for (let endpoint = 0; endpoint < workload.endpointsPerAccount; endpoint++) {
            expected.set(
              workload.keys[index * workload.endpointsPerAccount + endpoint] as string,
              ids,
            );
          }
        }
        return expected;
      };

      const burst = async (
        name: string,
        label: string,
        accounts: number,
        endpointsPerAccount: number,
        events: number,
        options: { rate?: number; backlog?: boolean } = {},
      ): Promise<Result> => {
        const workload = await setup(label, accounts, endpointsPerAccount);
        const cpuBefore = await cpuNow();
        const delayedBefore = delayedJobs;
        const started = performance.now();
        if (options.backlog === true) await workersChild.ask({ type: 'stop' });
        const committed = await produce(workload.scopes, events, options.rate ?? null);
        let drainFrom: number | null = null;
        if (options.backlog === true) {
          drainFrom = Date.now();
          await workersChild.ask({ type: 'start' });
        }
        await awaitArrivals(workload.keys, events * endpointsPerAccount);
        const elapsedS = (performance.now() - started) / 1000;
        const cpu = await cpuSince(cpuBefore, elapsedS);
        return judge(
          name,
          workload,
          drainFrom,
          committed,
          await expectedOf(workload),
          cpu,
          elapsedS,
          delayedJobs - delayedBefore,
        );
      };

      /** The receiver's capacity: the bodies of `label`'s events, signed, 64 POSTs at once. */
      const baseline = async (count: number): Promise<Result> => {
        const key = 'baseline-0';
        const { urls } = await receiverChild.ask<{ urls: Record<string, string> }>({
          type: 'listen',
          keys: [key],
        });
        const secret = `whsec_${randomBytes(32).toString('base64')}`;
        await receiverChild.ask({ type: 'secrets', secrets: { [key]: secret } });
        const { rows } = await client.query<{ id: string; payload: unknown }>(
          'SELECT id, payload FROM outbox_events ORDER BY id LIMIT $1',
          [count],
        );
        const signer = new Webhook(secret);
        const now = new Date();
        const requests = rows.map((row) => {
          const body = JSON.stringify(row.payload);
          return {
            body,
            headers: {
              'content-type': 'application/json',
              'content-length': Buffer.byteLength(body),
              'webhook-id': row.id,
              'webhook-timestamp': String(Math.floor(now.getTime() / 1000)),
              'webhook-signature': signer.sign(row.id, now, body),
              'user-agent': 'spendgate-webhooks/1',
            },
          };
        });
        const url = new URL(urls[key] as string);
        const agent = new http.Agent({ keepAlive: true, maxSockets: BASELINE_CONCURRENCY });
        const post = (request: (typeof requests)[number]) =>
          new Promise<void>((resolve, reject) => {
            const outgoing = http.request(
              {
                host: url.hostname,
                port: url.port,
                path: url.pathname,
                method: 'POST',
                agent,
                headers: request.headers,
              },
              (response) => {
                response.resume();
                response.on('end', resolve);
              },
            );
            outgoing.on('error', reject);
            outgoing.end(request.body);
          });
        const cpuBefore = await cpuNow();
        const started = performance.now();
        let next = 0;
        await Promise.all(
          Array.from({ length: BASELINE_CONCURRENCY }, async () => {
            while (next < requests.length) {
              const request = requests[next] as (typeof requests)[number];
              next += 1;
              await post(request);
            }
          }),
        );
        const elapsedS = (performance.now() - started) / 1000;
        agent.destroy();
        const cpu = await cpuSince(cpuBefore, elapsedS);
        const result = await judge(
          `baseline: the same bodies, plain HTTP, ${BASELINE_CONCURRENCY} keep-alive POSTs at once`,
          { keys: [key], scopes: [], endpointIds: [], endpointsPerAccount: 1 },
          null,
          null,
          new Map([[key, new Set(rows.map((row) => row.id))]]),
          cpu,
          elapsedS,
        );
        return { ...result, perSecond: result.unique / elapsedS, lag: null };
      };

      console.log(
        `${EVENTS} events per workload; producer: createVault, ${PRODUCER_PARALLEL} at once; workers: relay ${JSON.stringify(DEFAULT_RELAY_OPTIONS)}, delivery ${JSON.stringify(DELIVERY)}`,
      );
      console.log(`warmup (${WARMUP_EVENTS} events, spread over 4 endpoints) ...`);
      await burst('warmup', 'warmup', 4, 1, WARMUP_EVENTS);

      const results: Result[] = [];
      const run = async (work: () => Promise<Result>) => {
        const result = await work();
        console.log(
          `  ${result.name}: ${result.unique}/${result.expected} in ${result.elapsedS.toFixed(1)} s, ${result.perSecond.toFixed(0)}/s`,
        );
        results.push(result);
        return result;
      };
      console.log('workloads ...');
      const one = await run(() => burst('one endpoint', 'one', 1, 1, EVENTS));
      const base = await run(() => baseline(EVENTS));
      const spread = await run(() =>
        burst('spread: 8 accounts x 1 endpoint', 'spread', 8, 1, EVENTS),
      );
      const fanOut = await run(() =>
        burst(
          'fan-out: 1 account x 4 endpoints (events / 4, each to all 4)',
          'fanout',
          1,
          4,
          Math.ceil(EVENTS / 4),
        ),
      );
      const paced = await run(() =>
        burst(`paced: spread, events committed at ${PACED_PER_SECOND}/s`, 'paced', 8, 1, EVENTS, {
          rate: PACED_PER_SECOND,
        }),
      );
      const backlog = await run(() =>
        burst(
          'backlog: spread, committed with the workers stopped, then drained',
          'backlog',
          8,
          1,
          EVENTS,
          {
            backlog: true,
          },
        ),
      );
      const stopped = await workersChild.ask<{
        stats: { relayed: number; failedRounds: number };
        warnings: number;
      }>({
        type: 'stop',
      });

      const fixed = (value: number | undefined, digits = 0) =>
        value === undefined || Number.isNaN(value) ? '-' : value.toFixed(digits);
      console.log(
        `\nnode ${process.version}, ${EVENTS} events per burst, PostgreSQL and Redis on loopback; lag = arrival - event createdAt\n`,
      );
      console.log(
        '| workload | deliveries | deliveries/s | events committed/s | lag p50 ms | lag p99 ms | lag max ms | relay lag p99 ms | duplicates | unverified | vs baseline |',
      );
      console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
      for (const row of results) {
        console.log(
          `| ${row.name} | ${row.unique} | ${fixed(row.perSecond)} | ${fixed(row.committedPerSecond ?? undefined)} | ${fixed(row.lag?.p50)} | ${fixed(row.lag?.p99)} | ${fixed(row.lag?.max)} | ${fixed(row.relayLag?.p99)} | ${row.duplicates} | ${row.unverified} | ${(row.perSecond / base.perSecond).toFixed(2)}x |`,
        );
      }
      console.log(
        '\nCPU during each workload, in cores (the machine figure includes anything else running)\n',
      );
      console.log(
        '| workload | workers process | receiver | producer (this process) | PostgreSQL (this database) | machine | workers CPU per delivery | verify per delivery | jobs re-delayed (fairness) |',
      );
      console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|');
      for (const row of results) {
        const perDeliveryUs = (row.cpu.workers * row.elapsedS * 1e6) / Math.max(1, row.unique);
        console.log(
          `| ${row.name} | ${row.cpu.workers.toFixed(2)} | ${row.cpu.receiver.toFixed(2)} | ${row.cpu.producer.toFixed(2)} | ${row.cpu.postgres.toFixed(2)} | ${row.cpu.machine.toFixed(2)} | ${row.name.startsWith('baseline') ? '-' : `${perDeliveryUs.toFixed(0)} us`} | ${row.verifyUs.toFixed(0)} us | ${row.delayed} |`,
        );
      }
      console.log(
        `\nrelay: ${stopped.stats.relayed} events relayed by the last start, ${stopped.stats.failedRounds} failed rounds; ${stopped.warnings} worker warnings`,
      );

      const met = (ok: boolean) => (ok ? 'met   ' : 'MISSED');
      console.log('');
      for (const row of [one, spread, fanOut, backlog]) {
        console.log(
          `${met(row.perSecond >= TARGET_PER_SECOND)} at least ${TARGET_PER_SECOND} deliveries/s, ${row.name} (${row.perSecond.toFixed(0)})`,
        );
      }
      const pacedOk = (paced.committedPerSecond ?? 0) >= TARGET_PER_SECOND * 0.95;
      console.log(
        `${met((paced.lag?.p99 ?? Infinity) < TARGET_LAG_P99_MS && pacedOk)} lag p99 under ${TARGET_LAG_P99_MS} ms at ${PACED_PER_SECOND} events/s (${fixed(paced.lag?.p99)} ms; events committed at ${fixed(paced.committedPerSecond ?? undefined)}/s)`,
      );
      const lost = results.reduce((sum, row) => sum + row.lost, 0);
      const unverified = results.reduce((sum, row) => sum + row.unverified, 0);
      const duplicates = results.reduce((sum, row) => sum + row.duplicates, 0);
      const unexpected = results.reduce((sum, row) => sum + row.unexpected, 0);
      const unrecorded = results
        .filter((row) => !row.name.startsWith('baseline'))
        .reduce((sum, row) => sum + (row.expected - row.recorded), 0);
      console.log(
        `${met(lost === 0 && unexpected === 0)} every (event, endpoint) delivered at least once (${lost} lost, ${unexpected} unexpected)`,
      );
      console.log(`${met(duplicates === 0)} exactly once (${duplicates} duplicates)`);
      console.log(`${met(unverified === 0)} every signature verified (${unverified} unverified)`);
      console.log(
        `${met(unrecorded === 0)} every delivery recorded as succeeded in webhook_deliveries (${unrecorded} missing)`,
      );
      if (lost > 0 || unverified > 0 || unexpected > 0) process.exitCode = 1;
    } finally {
      await workersChild.ask({ type: 'close' }).catch(() => undefined);
      await receiverChild.ask({ type: 'close' }).catch(() => undefined);
      await store.close();
      await queueEvents?.close();
      eventsConnection.disconnect();
      // Every key under the run's own prefix (the webhook queue keeps completed jobs a day;
      // the workers' other queues live there too).
      const connection = workerConnection(redisServer(REDIS_URL));
      try {
        let cursor = '0';
        do {
          const [next, keys] = await connection.scan(
            cursor,
            'MATCH',
            `${queuePrefix(redisPrefix)}:*`,
            'COUNT',
            1000,
          );
          cursor = next;
          if (keys.length > 0) await connection.del(...keys);
        } while (cursor !== '0');
      } catch (error) {
        console.error(`could not remove the Redis keys under ${redisPrefix}: ${String(error)}`);
      }
      connection.disconnect();
    }
  });
}
