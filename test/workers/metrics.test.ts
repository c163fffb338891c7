import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { redisServer } from '../../src/config/env.js';
import { Decimal, type Scope } from '../../src/core/index.js';
import { createWorkerMetrics, type WorkerMetrics } from '../../src/workers/metrics.js';
import { webhookJobId } from '../../src/workers/queues.js';
import { startWorkers, type Workers } from '../../src/workers/start.js';
import {
  LOCAL_REDIS_URL,
  SILENT_LOG,
  startTestService,
  testRedisPrefix,
  type TestService,
} from '../support/http.js';
import { scrape, startWorkerMetricsServer } from '../support/metrics.js';
import {
  forgetPrefixes,
  freePort,
  startRedisServer,
  stopAll,
  waitFor,
} from '../support/processes.js';
import { startReceiver, type Receiver } from '../support/receiver.js';

/**
 * The workers' metrics, moved by the real thing and read from /metrics of a worker-role
 * server over HTTP (the workers' registry joined as serve.ts joins it): the outbox's lag and
 * backlog (the real PostgreSQL, events written an hour ago by the store's clock), the queues'
 * counts (the real Redis and BullMQ, and a Redis that is down), and webhook deliveries by
 * outcome and duration (a receiver on loopback that fails, succeeds and says 410). Scrape-time
 * readings are kept 0 ms here, so that each scrape reads afresh.
 */
const DELIVERY = {
  concurrency: 8,
  endpointConcurrency: 4,
  retryDelaysMs: [100, 100, 100],
  timeoutMs: 2000,
};
const HOUR_MS = 3_600_000;

describe('the workers’ metrics', () => {
  let clockOffsetMs = 0;
  let service: TestService;
  const prefixes: string[] = [];
  const closers: (() => Promise<void>)[] = [];

  beforeAll(async () => {
    service = await startTestService({ clock: () => Date.now() + clockOffsetMs });
  });

  afterAll(async () => {
    for (const close of closers.reverse()) await close();
    await service.close();
    await forgetPrefixes(prefixes);
  });

  /** Workers on the test's database, their metrics served as a worker role serves them. */
  async function workersServed(options: {
    redisUrl?: string;
    prefixClaimed?: Promise<void>;
  }): Promise<{ workers: Workers; metrics: WorkerMetrics; base: string }> {
    const redisPrefix = testRedisPrefix();
    prefixes.push(redisPrefix);
    const metrics = createWorkerMetrics({ sampleFreshMs: 0 });
    const workers = startWorkers({
      store: service.store,
      redis: redisServer(options.redisUrl ?? LOCAL_REDIS_URL),
      redisPrefix,
      delivery: DELIVERY,
      relay: { batchMax: 100, idleMs: 20 },
      log: SILENT_LOG,
      metrics,
      ...(options.prefixClaimed === undefined ? {} : { prefixClaimed: options.prefixClaimed }),
    });
    const server = await startWorkerMetricsServer(service.store, metrics.registry);
    let stopped = false;
    const stop = async () => {
      if (stopped) return;
      stopped = true;
      await server.app.close();
      await workers.stop();
    };
    closers.push(stop);
    return { workers, metrics, base: server.base };
  }

  const vault = (scope: Scope, name: string) =>
    service.store.createVault(scope, {
      name,
      currency: 'USDC',
      metadata: {},
      initialDeposit: new Decimal(0),
    });

  const unrelayed = async () =>
    Number(
      (
        await service.store.client.query<{ count: string }>(
          'SELECT count(*) AS count FROM outbox_unrelayed',
        )
      ).rows[0]?.count,
    );

  let relaying: Awaited<ReturnType<typeof workersServed>>;

  it('reports the outbox lag and backlog while the relay waits, and 0 once it has relayed', async () => {
    // The relay never starts: this database never holds its prefix (Redis work waits for it).
    const waiting = await workersServed({ prefixClaimed: new Promise<void>(() => undefined) });
    const { scope } = await service.key();
    clockOffsetMs = -HOUR_MS;
    for (const name of ['a', 'b', 'c']) await vault(scope, name);
    clockOffsetMs = 0;
    const pending = await unrelayed();
    expect(pending).toBeGreaterThanOrEqual(3);
    const before = await scrape(waiting.base);
    // Written an hour ago by the store's clock, and still there.
    expect(before.value('spendgate_outbox_lag_seconds')).toBeGreaterThanOrEqual(3600);
    expect(before.value('spendgate_outbox_pending_events')).toBe(pending);
    // Not counted before the prefix is held: the queues may be another database's.
    expect(before.samples('spendgate_queue_jobs')).toEqual([]);

    relaying = await workersServed({});
    await waitFor(
      async () => (await unrelayed()) === 0,
      20_000,
      () => 'the events were not relayed',
    );
    const after = await scrape(relaying.base);
    expect(after.value('spendgate_outbox_lag_seconds')).toBe(0);
    expect(after.value('spendgate_outbox_pending_events')).toBe(0);
  });

  it('counts each queue’s jobs by state', async () => {
    const { workers, base } = relaying;
    const delayed = { eventId: 'evt_delayed', endpointId: 'we_delayed' };
    await workers.queue.add('vault.created', delayed, {
      jobId: webhookJobId(delayed),
      delay: HOUR_MS,
    });
    // A job naming nothing this database knows fails at once, and stays in the failed set.
    const unknown = { eventId: 'evt_unknown', endpointId: 'we_unknown' };
    const added = await workers.queue.add('vault.created', unknown, {
      jobId: webhookJobId(unknown),
    });
    await waitFor(
      async () => (await added.getState()) === 'failed',
      15_000,
      () => 'the unknown job did not fail',
    );
    const metrics = await scrape(base);
    const webhooks = Object.fromEntries(
      metrics
        .samples('spendgate_queue_jobs')
        .filter((sample) => sample.labels.queue === 'webhooks')
        .map((sample): [string, number] => [sample.labels.state ?? '', sample.value]),
    );
    expect(webhooks).toEqual({ waiting: 0, active: 0, delayed: 1, failed: 1 });
    const maintenance = metrics
      .samples('spendgate_queue_jobs')
      .filter((sample) => sample.labels.queue === 'maintenance')
      .map((sample) => sample.labels.state);
    expect(maintenance.sort()).toEqual(['active', 'delayed', 'failed', 'waiting']);
  });

  it('counts webhook deliveries by outcome, and times every attempt', async () => {
    const { base } = relaying;
    const before = await scrape(base);
    // Fails once, then takes it; says 410 (the endpoint is disabled); fails every attempt.
    const answers: ((index: number) => number)[] = [
      (index) => (index === 0 ? 500 : 200),
      () => 410,
      () => 500,
    ];
    const attempts = [2, 1, 1 + DELIVERY.retryDelaysMs.length];
    const endpoints: { receiver: Receiver; key: string; id: string }[] = [];
    for (const answer of answers) {
      const receiver = await startReceiver();
      closers.push(() => receiver.close());
      receiver.answer = (_delivery, index) => answer(index);
      const { key, scope } = await service.key();
      const { endpoint, secret } = await service.store.createWebhookEndpoint(scope, {
        url: receiver.url,
        events: ['vault.created'],
        description: null,
      });
      receiver.secret = secret;
      endpoints.push({ receiver, key, id: endpoint.id });
      await vault(scope, 'hooked');
    }
    // Each attempt is counted before it is recorded: once all are recorded, all are counted.
    for (const [index, { key, id }] of endpoints.entries()) {
      await waitFor(
        async () => {
          const listed = await service.request(key, 'GET', `/v1/webhooks/${id}/deliveries`);
          return (listed.body as { data: unknown[] }).data.length === attempts[index];
        },
        20_000,
        () => `endpoint ${String(index)} did not get its attempts`,
      );
    }
    const after = await scrape(base);
    const moved = (name: string, labels?: Record<string, string>) =>
      (after.value(name, labels) ?? 0) - (before.value(name, labels) ?? 0);
    const outcome = (value: string) =>
      moved('spendgate_webhook_deliveries_total', { outcome: value });
    expect({
      delivered: outcome('delivered'),
      failed_will_retry: outcome('failed_will_retry'),
      failed_final: outcome('failed_final'),
      endpoint_disabled: outcome('endpoint_disabled'),
    }).toEqual({ delivered: 1, failed_will_retry: 1 + 3, failed_final: 1, endpoint_disabled: 1 });
    expect(moved('spendgate_webhook_delivery_duration_seconds_count')).toBe(2 + 1 + 4);
    expect(moved('spendgate_webhook_delivery_duration_seconds_sum')).toBeGreaterThan(0);
  });
});

describe('the workers’ metrics while Redis is down', () => {
  afterAll(async () => {
    await stopAll();
  });

  it('answers the scrape without the queue counts, with the outbox’s, and counts again once Redis is back', async () => {
    const port = await freePort();
    let redis = await startRedisServer(port);
    const service = await startTestService({ redis: null });
    const metrics = createWorkerMetrics({ sampleFreshMs: 0 });
    const workers = startWorkers({
      store: service.store,
      redis: redisServer(`redis://127.0.0.1:${String(port)}`),
      redisPrefix: testRedisPrefix(),
      delivery: DELIVERY,
      log: SILENT_LOG,
      metrics,
    });
    const server = await startWorkerMetricsServer(service.store, metrics.registry);
    const queueSamples = async () => (await scrape(server.base)).samples('spendgate_queue_jobs');
    try {
      // Three queues (webhooks, maintenance, backtests), four states each.
      await waitFor(
        async () => (await queueSamples()).length === 12,
        20_000,
        () => 'the queues were never counted',
      );
      await redis.stop('SIGKILL');
      await waitFor(
        async () => (await queueSamples()).length === 0,
        20_000,
        () => 'the queue counts outlived Redis',
      );
      const down = await scrape(server.base);
      expect(down.types.get('spendgate_queue_jobs')).toBe('gauge');
      expect(down.value('spendgate_outbox_pending_events')).toBe(0);
      expect(down.value('spendgate_outbox_lag_seconds')).toBe(0);
      redis = await startRedisServer(port);
      await waitFor(
        async () => (await queueSamples()).length === 12,
        20_000,
        () => 'the queues were not counted again once Redis was back',
      );
    } finally {
      await server.app.close();
      // With Redis up: the workers' stop waits on Redis (their connections' last commands).
      await workers.stop();
      await service.close();
      await redis.stop('SIGKILL');
    }
  });
});
