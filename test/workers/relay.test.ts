import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { redisServer } from '../../src/config/env.js';
import { Decimal, type Scope } from '../../src/core/index.js';
import type { RedisConnection } from '../../src/redis.js';
import { OutboxRelay } from '../../src/workers/outbox-relay.js';
import {
  producerConnection,
  queuePrefix,
  WEBHOOK_QUEUE,
  type WebhookJob,
} from '../../src/workers/queues.js';
import { startWorkers } from '../../src/workers/start.js';
import type { Store } from '../../src/store/store.js';
import {
  LOCAL_REDIS_URL,
  startTestService,
  testRedisPrefix,
  type TestService,
  SILENT_LOG,
} from '../support/http.js';
import { startReceiver } from '../support/receiver.js';

/**
 * The outbox relay against the real PostgreSQL and Redis: relays side by side never share an
 * event; a relay that dies between adding jobs and committing leaves no second job; every key
 * lives under the Redis Cluster hash tag; and one slow endpoint does not hold up the others.
 */

describe('the outbox relay', () => {
  let service: TestService;
  let scope: Scope;
  let prefix: string;
  let connection: RedisConnection;
  let queue: Queue<WebhookJob>;

  beforeAll(async () => {
    service = await startTestService();
    ({ scope } = await service.key());
    prefix = testRedisPrefix();
    connection = producerConnection(redisServer(LOCAL_REDIS_URL));
    // No worker takes from this queue: the jobs the relays add stay there to be counted.
    queue = new Queue<WebhookJob>(WEBHOOK_QUEUE, { connection, prefix: queuePrefix(prefix) });
  });

  afterAll(async () => {
    await queue.obliterate({ force: true });
    await queue.close();
    connection.disconnect();
    await service.close();
  });

  async function vaults(count: number): Promise<void> {
    for (let index = 0; index < count; index += 50) {
      await Promise.all(
        Array.from({ length: Math.min(50, count - index) }, (_, offset) =>
          service.store.createVault(scope, {
            name: `r${index + offset}`,
            currency: 'USDC',
            metadata: {},
            initialDeposit: new Decimal(0),
          }),
        ),
      );
    }
  }

  const unrelayed = async () =>
    Number(
      (
        await service.store.client.query<{ n: string }>(
          'SELECT count(*)::text AS n FROM outbox_unrelayed',
        )
      ).rows[0]?.n,
    );

  it('lets four relays work side by side: each event relayed once, one job each', async () => {
    await service.store.createWebhookEndpoint(scope, {
      url: 'http://127.0.0.1:9/hooks',
      events: ['vault.created'],
      description: null,
    });
    await vaults(300);
    const relays = Array.from(
      { length: 4 },
      () => new OutboxRelay(service.store, queue, SILENT_LOG, { batchMax: 25, idleMs: 10 }),
    );
    await Promise.all(
      relays.map(async (relay) => {
        while ((await relay.relayOnce()) > 0);
      }),
    );
    const relayed = relays.reduce((sum, relay) => sum + relay.stats.relayed, 0);
    // Every event once: 300 vault.created (the endpoint's creation writes no event).
    expect(relayed).toBe(300);
    expect(relays.filter((relay) => relay.stats.relayed > 0).length).toBeGreaterThan(1);
    expect(await unrelayed()).toBe(0);
    expect((await queue.getJobCounts('waiting')).waiting).toBe(300);
  });

  it('adds no second job when a relay dies after adding and before committing', async () => {
    const before = (await queue.getJobCounts('waiting')).waiting ?? 0;
    await vaults(20);
    // A relay whose transaction fails after the add: as if the process died there.
    const dying: Store = {
      ...service.store,
      transaction: (work) =>
        service.store.transaction(async (operations) => {
          await work(operations);
          throw new Error('died before the commit');
        }),
    };
    await expect(new OutboxRelay(dying, queue, SILENT_LOG).relayOnce()).rejects.toThrow(/died/);
    expect(await unrelayed()).toBe(20);
    expect((await queue.getJobCounts('waiting')).waiting).toBe(before + 20);
    // The next relay claims the same events and adds the same job ids: BullMQ keeps one each.
    expect(await new OutboxRelay(service.store, queue, SILENT_LOG).relayOnce()).toBe(20);
    expect(await unrelayed()).toBe(0);
    expect((await queue.getJobCounts('waiting')).waiting).toBe(before + 20);
  });

  it('keeps every queue key under the Redis Cluster hash tag of its prefix', async () => {
    const redis = new Redis(LOCAL_REDIS_URL);
    try {
      const keys = await redis.keys(`*${prefix}*`);
      expect(keys.length).toBeGreaterThan(3);
      expect(keys.filter((key) => !key.startsWith(`{${prefix}}:${WEBHOOK_QUEUE}:`))).toEqual([]);
    } finally {
      redis.disconnect();
    }
  });
});

describe('delivery fairness', () => {
  let service: TestService;

  beforeAll(async () => {
    service = await startTestService();
  });

  afterAll(async () => {
    await service.close();
  });

  it('serves a fast endpoint while a slow one takes its time', async () => {
    const slow = await startReceiver();
    const fast = await startReceiver();
    // The slow receiver answers after 1.5 s; with 6 slots in all and 2 for any one endpoint,
    // it can hold 2 of them and never the others.
    slow.delayMs = 1500;
    const workers = startWorkers({
      store: service.store,
      redis: redisServer(LOCAL_REDIS_URL),
      redisPrefix: testRedisPrefix(),
      delivery: { concurrency: 6, endpointConcurrency: 2, retryDelaysMs: [1000], timeoutMs: 5000 },
      relay: { batchMax: 100, idleMs: 20 },
      log: SILENT_LOG,
    });
    try {
      const slowScope = (await service.key()).scope;
      const fastScope = (await service.key()).scope;
      for (const [receiver, scope] of [
        [slow, slowScope],
        [fast, fastScope],
      ] as const) {
        const { secret } = await service.store.createWebhookEndpoint(scope, {
          url: receiver.url,
          events: ['vault.created'],
          description: null,
        });
        receiver.secret = secret;
      }
      const create = (scope: Scope, name: string) =>
        service.store.createVault(scope, {
          name,
          currency: 'USDC',
          metadata: {},
          initialDeposit: new Decimal(0),
        });
      // The slow endpoint's events first: without fairness they would fill every slot.
      for (let index = 0; index < 12; index++) await create(slowScope, `s${index}`);
      for (let index = 0; index < 30; index++) await create(fastScope, `f${index}`);
      await fast.until(30, 'vault.created');
      expect(fast.received.every((delivery) => delivery.verified)).toBe(true);
      // Twelve slow deliveries two at a time take 9 s: only a few can have landed.
      expect(slow.received.length).toBeLessThan(12);
    } finally {
      await workers.stop();
      await slow.close();
      await fast.close();
    }
  });
});
