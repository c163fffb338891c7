import { randomBytes } from 'node:crypto';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { redisServer } from '../../src/config/env.js';
import { Decimal, type Scope } from '../../src/core/index.js';
import { createPgClient } from '../../src/store/sql/pg-client.js';
import { openStore, type OpenedStore } from '../../src/store/store.js';
import { keepSchedulers, queuePrefix } from '../../src/workers/queues.js';
import { startWorkers } from '../../src/workers/start.js';
import { SILENT_LOG, testRedisPrefix } from '../support/http.js';
import {
  freePort,
  serverDatabase,
  sleep,
  startRedisServer,
  stopAll,
  waitFor,
} from '../support/processes.js';
import { startReceiver, type Receiver } from '../support/receiver.js';

/**
 * What Redis's loss of its data must not lose (contract section 18, v1.2), on a redis-server of
 * the test's own (FLUSHALL is the empty restart, without the wait for a process), in one
 * process: a delivery being retried when its job is lost is queued again, goes on with its
 * attempt numbers and the same webhook-id, and is forgotten once delivered; the maintenance
 * schedulers come back by themselves; and the workers stop at once when Redis never answered.
 * The same with real processes and a killed worker: test/fleet/redis-restart-empty.test.ts.
 */
/**
 * Long enough that the delivery is surely waiting out its delay, not in flight, when Redis
 * loses it (a job taken already would be delivered by its worker, and queued again by none).
 */
const RETRY_DELAYS_MS = [2_000, 2_000, 2_000, 2_000, 2_000];

describe('work that Redis loses', () => {
  let database: Awaited<ReturnType<typeof serverDatabase>>;
  let store: OpenedStore;
  let redisUrl: string;
  let redis: Redis;
  const receivers: Receiver[] = [];

  beforeAll(async () => {
    database = await serverDatabase();
    store = await openStore({
      client: createPgClient({ connectionString: database.url, connectionsMax: 10 }),
      masterKey: randomBytes(32),
    });
    const port = await freePort();
    await startRedisServer(port);
    redisUrl = `redis://127.0.0.1:${port}`;
    redis = new Redis(redisUrl, { maxRetriesPerRequest: 1 });
  });

  afterAll(async () => {
    redis.disconnect();
    await Promise.all(receivers.map((receiver) => receiver.close()));
    await stopAll();
    await store.close();
    await database.drop();
  });

  async function owedRows(eventId: string): Promise<{ attempts_made: number }[]> {
    const { rows } = await store.client.query<{ attempts_made: number }>(
      'SELECT attempts_made FROM webhook_deliveries_owed WHERE event_id = $1',
      [eventId],
    );
    return rows;
  }

  async function subscribedAccount(receiver: Receiver): Promise<Scope> {
    const account = await store.findOrCreateAccount(`loss-${randomBytes(4).toString('hex')}`);
    const scope: Scope = { accountId: account.id, mode: 'test' };
    const { secret } = await store.createWebhookEndpoint(scope, {
      url: receiver.url,
      events: ['vault.created'],
      description: null,
    });
    receiver.secret = secret;
    return scope;
  }

  it('queues a retried delivery again when Redis loses its job: same webhook-id, attempts go on', async () => {
    const receiver = await startReceiver();
    receivers.push(receiver);
    const scope = await subscribedAccount(receiver);
    // Two attempts fail; then Redis loses everything; the receiver is up again.
    let up = false;
    receiver.answer = () => (up ? 200 : 503);
    const workers = startWorkers({
      store,
      redis: redisServer(redisUrl),
      redisPrefix: testRedisPrefix(),
      delivery: {
        concurrency: 4,
        endpointConcurrency: 4,
        retryDelaysMs: RETRY_DELAYS_MS,
        timeoutMs: 2000,
      },
      relay: { batchMax: 100, idleMs: 20 },
      requeue: { intervalMs: 100, graceMs: 200, recheckMs: 200, batchMax: 100 },
      log: SILENT_LOG,
    });
    try {
      await store.createVault(scope, {
        name: 'lost',
        currency: 'USDC',
        metadata: {},
        initialDeposit: new Decimal(0),
      });
      await receiver.until(2, 'vault.created', 15_000);
      const eventId = receiver.received[0]?.id ?? '';
      // The row of what is owed follows the attempts: two made, the job waiting for its third.
      await waitFor(
        async () => (await owedRows(eventId))[0]?.attempts_made === 2,
        10_000,
        () => 'the owed row did not record the second attempt',
      );
      await redis.flushall();
      up = true;
      await receiver.until(3, 'vault.created', 20_000);
      // Counted once the loop's round commits, which may be after the worker took the job.
      await waitFor(
        () => workers.requeue.requeued === 1,
        5_000,
        () => `${workers.requeue.requeued} jobs queued again`,
      );
      expect(receiver.received.map((each) => each.headers['webhook-id'])).toEqual([
        eventId,
        eventId,
        eventId,
      ]);
      expect(receiver.received.every((each) => each.verified)).toBe(true);
      const attempts = async () =>
        (
          await store.client.query<{ attempt: number; succeeded: boolean }>(
            'SELECT attempt, succeeded FROM webhook_deliveries WHERE event_id = $1 ORDER BY attempt',
            [eventId],
          )
        ).rows;
      // The attempt is recorded once the receiver has answered.
      await waitFor(
        async () => (await attempts()).length === 3,
        5_000,
        () => 'the third attempt was not recorded',
      );
      expect(await attempts()).toEqual([
        { attempt: 1, succeeded: false },
        { attempt: 2, succeeded: false },
        { attempt: 3, succeeded: true },
      ]);
      // Delivered: nothing is owed any more, and nothing more is sent.
      expect(await owedRows(eventId)).toEqual([]);
      await sleep(600);
      expect(receiver.received).toHaveLength(3);
    } finally {
      await workers.stop();
    }
  });

  it('puts the maintenance schedulers back by themselves after Redis lost them', async () => {
    const connection = new Redis(redisUrl, { maxRetriesPerRequest: 1 });
    const queue = new Queue('maintenance', { connection, prefix: queuePrefix(testRedisPrefix()) });
    const stop = keepSchedulers(queue, { 'expire-holds': 60_000, 'take-snapshots': 60_000 }, 200);
    try {
      const names = async () =>
        (await queue.getJobSchedulers()).map((scheduler) => scheduler.key).sort();
      await waitFor(
        async () => (await names()).length === 2,
        10_000,
        () => 'the schedulers were never put',
      );
      await redis.flushall();
      expect(await names()).toEqual([]);
      await waitFor(
        async () => (await names()).length === 2,
        5_000,
        () => 'the schedulers did not come back after Redis lost them',
      );
      expect(await names()).toEqual(['expire-holds', 'take-snapshots']);
    } finally {
      await stop();
      await queue.close();
      connection.disconnect();
    }
  });

  it('stops at once when Redis has been down since the workers started', async () => {
    const workers = startWorkers({
      store,
      // Nothing listens there: the port is free, and nobody is told of it.
      redis: redisServer(`redis://127.0.0.1:${await freePort()}`),
      redisPrefix: testRedisPrefix(),
      delivery: { concurrency: 2, endpointConcurrency: 1, retryDelaysMs: [100], timeoutMs: 1000 },
      log: SILENT_LOG,
    });
    await sleep(1_000);
    const startedMs = Date.now();
    const stopped = await Promise.race([
      workers.stop().then(() => true),
      sleep(5_000).then(() => false),
    ]);
    expect(stopped).toBe(true);
    expect(Date.now() - startedMs).toBeLessThan(2_000);
  });
});
