import type { FastifyInstance } from 'fastify';
import { Counter, Gauge } from 'prom-client';
import type { RedisTarget } from '../config/env.js';
import { redisClient, type RedisConnection } from '../redis.js';
import type { Store } from '../store/store.js';
import { withinMs } from './deadline.js';
import type { Metrics } from './metrics.js';

const CHECK_MS_MAX = 1000;

/** Whether `work` succeeds within `ms`. */
function within(work: Promise<unknown>, ms: number): Promise<boolean> {
  return withinMs(work, ms).then(
    () => true,
    () => false,
  );
}

/**
 * A Redis client that never stops the service: it connects at once, keeps no queue of
 * commands while down (a command fails at once, so a caller falls back instead of waiting),
 * and retries the connection in the background.
 */
export function createRedis(target: RedisTarget): RedisConnection {
  return redisClient(target, {
    enableOfflineQueue: false,
    // Concurrent commands (a rate-limit count per request) leave in one write, not one each.
    enableAutoPipelining: true,
    maxRetriesPerRequest: 0,
  });
}

/**
 * Health and metrics (contract section 15): /healthz (the process is up), /readyz (200 while
 * the process can decide authorizations, that is while the database answers), /metrics
 * (Prometheus text: request latency by route, decisions, the dependencies, and the process's
 * own metrics; see metrics.ts).
 *
 * Redis is a degraded part, not a reason to be unready: without it rate limits are counted per
 * process and events wait in the outbox, while every authorization is still decided. A load
 * balancer that pulled an instance for it would pull every instance at once, for nothing.
 */
export function registerHealth(
  app: FastifyInstance,
  dependencies: {
    store: Store;
    redis: RedisConnection | null;
    metrics: Metrics;
    /** Served after the server's registry, in the same text format (server.ts). */
    more?: readonly { metrics(): Promise<string> }[];
  },
): void {
  const { registry } = dependencies.metrics;
  observeRequestSeconds(app, dependencies.metrics);

  app.get('/healthz', { config: { public: true }, schema: { hide: true } }, (_request, reply) =>
    reply.send({ status: 'ok' }),
  );

  /** Each dependency's state, as /readyz and the metrics report it. */
  const dependencyStates = async (): Promise<{ database: boolean; redis: boolean }> => {
    const [database, redis] = await Promise.all([
      within(dependencies.store.ping(), CHECK_MS_MAX),
      dependencies.redis === null ? Promise.resolve(false) : redisAnswers(dependencies.redis),
    ]);
    return { database, redis };
  };
  new Gauge({
    name: 'spendgate_dependency_up',
    help: 'Whether a dependency answered when the metrics were read (1) or not (0).',
    labelNames: ['dependency'],
    registers: [registry],
    async collect() {
      const states = await dependencyStates();
      this.set({ dependency: 'database' }, states.database ? 1 : 0);
      this.set({ dependency: 'redis' }, states.redis ? 1 : 0);
    },
  });

  observeStoreWrites(registry, dependencies.store);
  observeMessageBatches(registry, dependencies.store);

  app.get(
    '/readyz',
    { config: { public: true }, schema: { hide: true } },
    async (_request, reply) => {
      const { database, redis } = await dependencyStates();
      const degraded = redis ? [] : ['redis'];
      return reply.code(database ? 200 : 503).send({
        status: !database ? 'not_ready' : degraded.length > 0 ? 'degraded' : 'ready',
        database: database ? 'up' : 'down',
        redis: redis ? 'up' : 'down',
        degraded,
      });
    },
  );

  app.get(
    '/metrics',
    { config: { public: true }, schema: { hide: true } },
    async (_request, reply) => {
      const texts = await Promise.all(
        [registry, ...(dependencies.more ?? [])].map((source) => source.metrics()),
      );
      return reply.header('Content-Type', registry.contentType).send(texts.join(''));
    },
  );
}

/** The store's write gate (DATABASE_WRITES_MAX): writes open in PostgreSQL, and waiting. */
function observeStoreWrites(registry: Metrics['registry'], store: Store): void {
  new Gauge({
    name: 'spendgate_store_writes',
    help: 'Write transactions in PostgreSQL (state open) and waiting in the process for one of DATABASE_WRITES_MAX slots (state waiting).',
    labelNames: ['state'],
    registers: [registry],
    collect() {
      const { open, waiting } = store.writeStats();
      this.set({ state: 'open' }, open);
      this.set({ state: 'waiting' }, waiting);
    },
  });
}

type MessageBatchStats = ReturnType<Store['messageStats']>;

/** The `event` label of each count of Store.messageStats. */
const MESSAGE_BATCH_EVENTS: Readonly<Record<keyof MessageBatchStats, string>> = {
  batches: 'batches',
  members: 'members',
  restarts: 'restarts',
  deferred: 'deferred',
  left: 'left',
  rolledBack: 'rolled_back',
};

/** The lifecycle messages' shared transactions (Store.message), counted since start. */
function observeMessageBatches(registry: Metrics['registry'], store: Store): void {
  let seen = store.messageStats();
  new Counter({
    name: 'spendgate_message_batches_total',
    help: 'Lifecycle messages in shared transactions: batches run, members in them, restarts (another member had held the vault), deferred (another member held the vault: sent on to the next batch), left (the vault was locked elsewhere; run alone), rolled_back (batches rolled back, their members run alone).',
    labelNames: ['event'],
    registers: [registry],
    collect() {
      const now = store.messageStats();
      for (const [count, event] of Object.entries(MESSAGE_BATCH_EVENTS)) {
        const name = count as keyof MessageBatchStats;
        this.inc({ event }, now[name] - seen[name]);
      }
      seen = now;
    },
  });
}

/** Each answer's time, by method, route pattern and status (the request latency metric). */
function observeRequestSeconds(app: FastifyInstance, metrics: Metrics): void {
  app.addHook('onResponse', async (request, reply) => {
    // The route's pattern, never the URL: ids would make the label set unbounded.
    metrics.requestSeconds.observe(
      {
        method: request.method,
        route: request.routeOptions.url ?? 'unmatched',
        status: String(reply.statusCode),
      },
      reply.elapsedTime / 1000,
    );
  });
}

async function connectAndPing(redis: RedisConnection): Promise<void> {
  if (redis.status === 'wait') await redis.connect();
  // Still connecting (just started, or reconnecting): its offline queue is off, so a ping now
  // would fail at once; wait for it to be ready (the caller bounds the wait).
  if (redis.status !== 'ready') {
    await new Promise<void>((resolve) => {
      redis.once('ready', () => {
        resolve();
      });
    });
  }
  await redis.ping();
}

/** Whether Redis answers a ping within CHECK_MS_MAX. */
export function redisAnswers(redis: RedisConnection): Promise<boolean> {
  return within(connectAndPing(redis), CHECK_MS_MAX);
}
