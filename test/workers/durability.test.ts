import { randomBytes } from 'node:crypto';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { redisServer } from '../../src/config/env.js';
import { Decimal, type Scope } from '../../src/core/index.js';
import { createPgClient } from '../../src/store/sql/pg-client.js';
import { openStore, type OpenedStore as Store } from '../../src/store/store.js';
import { queuePrefix, WEBHOOK_QUEUE } from '../../src/workers/queues.js';
import { startWorkers, type Workers } from '../../src/workers/start.js';
import { LOCAL_REDIS_URL, SILENT_LOG } from '../support/http.js';
import {
  trackedRedisPrefixes,
  freePort,
  serverDatabase,
  sleep,
  startRedisServer,
  startWorkerProcess,
  stopAll,
  type Child,
  waitFor,
} from '../support/processes.js';
import { startReceiver, type Receiver } from '../support/receiver.js';

/**
 * At-least-once delivery (contract section 13) when things die: the worker process killed
 * (SIGKILL) in the middle of a burst of 1,000 events and started again; Redis killed and
 * started again while events are committed; the worker process stopped (SIGTERM) mid-burst.
 * Every event must reach the receiver at least once (duplicates allowed), with a signature
 * the `standardwebhooks` library verifies. The worker is the real `spendgate serve --role
 * worker` process, on a fresh PostgreSQL database and a Redis prefix of its own.
 */
const RETRY_DELAYS_MS = [200, 200, 200, 200];

describe('webhook delivery survives crashes', () => {
  const masterKey = randomBytes(32);
  const prefixes = trackedRedisPrefixes();
  const prefix = prefixes.next;
  let database: Awaited<ReturnType<typeof serverDatabase>>;
  let store: Store;
  const receivers: Receiver[] = [];

  beforeAll(async () => {
    database = await serverDatabase();
    store = await openStore({
      client: createPgClient({ connectionString: database.url, connectionsMax: 20 }),
      masterKey,
    });
  });

  afterAll(async () => {
    await stopAll();
    await Promise.all(receivers.map((receiver) => receiver.close()));
    await store.close();
    await database.drop();
    await prefixes.forget();
  });

  /** `spendgate serve --role worker` on the test database and the shared Redis. */
  function workerProcess(redisPrefix: string): Child {
    return startWorkerProcess({
      DATABASE_URL: database.url,
      SPENDGATE_MASTER_KEY: masterKey.toString('base64'),
      REDIS_URL: LOCAL_REDIS_URL,
      REDIS_PREFIX: redisPrefix,
      WEBHOOK_RETRY_DELAYS_MS: RETRY_DELAYS_MS.join(','),
      LOG_LEVEL: 'warn',
    });
  }

  /** A new account with a receiver subscribed to its `vault.created` events. */
  async function subscriber(): Promise<{ scope: Scope; receiver: Receiver }> {
    const account = await store.findOrCreateAccount(`durability-${randomBytes(4).toString('hex')}`);
    const scope: Scope = { accountId: account.id, mode: 'test' };
    const receiver = await startReceiver();
    receivers.push(receiver);
    const { secret } = await store.createWebhookEndpoint(scope, {
      url: receiver.url,
      events: ['vault.created'],
      description: null,
    });
    receiver.secret = secret;
    return { scope, receiver };
  }

  /** Creates `count` vaults, 20 at a time; returns their ids. */
  async function burst(scope: Scope, count: number): Promise<string[]> {
    const ids: string[] = [];
    for (let start = 0; start < count; start += 20) {
      const created = await Promise.all(
        Array.from({ length: Math.min(20, count - start) }, (_, index) =>
          store.createVault(scope, {
            name: `burst ${start + index}`,
            currency: 'USDC',
            metadata: {},
            initialDeposit: new Decimal(0),
          }),
        ),
      );
      ids.push(...created.map(({ vault }) => vault.id));
    }
    return ids;
  }

  /** The vaults whose `vault.created` event arrived, at least once. */
  function deliveredVaults(receiver: Receiver): Set<string> {
    return new Set(
      receiver.received
        .filter((delivery) => delivery.type === 'vault.created')
        .map((delivery) => String(delivery.body.data.object.id)),
    );
  }

  /** The account's events still waiting in the outbox. */
  async function unrelayed(scope: Scope): Promise<number> {
    const { rows } = await store.client.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM outbox_events e JOIN outbox_unrelayed u ON u.id = e.id WHERE e.account_id = $1',
      [scope.accountId],
    );
    return rows[0]?.n ?? -1;
  }

  /** Every vault's event arrived at least once, verified, as its outbox event. */
  async function expectEveryEventDelivered(scope: Scope, receiver: Receiver, vaults: string[]) {
    expect(receiver.received.every((delivery) => delivery.verified)).toBe(true);
    expect(
      receiver.received.every((delivery) => delivery.headers['webhook-id'] === delivery.id),
    ).toBe(true);
    const delivered = deliveredVaults(receiver);
    expect(vaults.filter((id) => !delivered.has(id))).toEqual([]);
    const { rows } = await store.client.query<{ id: string }>(
      `SELECT id FROM outbox_events WHERE account_id = $1 AND type = 'vault.created'`,
      [scope.accountId],
    );
    const eventIds = new Set(receiver.received.map((delivery) => delivery.id));
    expect(rows).toHaveLength(vaults.length);
    expect(rows.filter((row) => !eventIds.has(row.id))).toEqual([]);
    expect(await unrelayed(scope)).toBe(0);
  }

  /** Delivery jobs a worker holds (taken from the queue and not yet finished) in `redisPrefix`. */
  async function activeJobs(redisPrefix: string): Promise<number> {
    const connection = new Redis(LOCAL_REDIS_URL, { maxRetriesPerRequest: 1 });
    const queue = new Queue(WEBHOOK_QUEUE, { connection, prefix: queuePrefix(redisPrefix) });
    try {
      return await queue.getActiveCount();
    } finally {
      await queue.close();
      connection.disconnect();
    }
  }

  /**
   * Runs a worker process and stops it with `signal` once 100 events have arrived, while a
   * burst of `count` events is being committed; then starts another and waits (up to
   * `withinMs`) for every event to arrive.
   */
  async function interruptedBurst(
    signal: NodeJS.Signals,
    count: number,
    withinMs: number,
    afterStop: (redisPrefix: string) => Promise<void> = () => Promise.resolve(),
  ) {
    const { scope, receiver } = await subscriber();
    const redisPrefix = prefix();
    const first = workerProcess(redisPrefix);
    let deliveredAtStop: number | null = null;
    receiver.answer = () => {
      if (deliveredAtStop === null && deliveredVaults(receiver).size >= 100) {
        deliveredAtStop = deliveredVaults(receiver).size;
        void first.stop(signal);
      }
      return 200;
    };
    const vaults = await burst(scope, count);
    await waitFor(
      () => deliveredAtStop !== null,
      30_000,
      () => `${receiver.received.length} deliveries; the worker said:\n${first.output()}`,
    );
    const exit = await first.exited;
    // The stop came in the middle: some events had arrived, not all.
    expect(deliveredAtStop).toBeLessThan(count);
    await afterStop(redisPrefix);
    const second = workerProcess(redisPrefix);
    try {
      await waitFor(
        () => deliveredVaults(receiver).size === count,
        withinMs,
        () =>
          `${deliveredVaults(receiver).size} of ${count} events arrived; the worker said:\n${second.output()}`,
      );
      await expectEveryEventDelivered(scope, receiver, vaults);
    } finally {
      await second.stop('SIGTERM');
    }
    return exit;
  }

  it('delivers every event of a 1,000-event burst at least once when the worker is SIGKILLed mid-burst', async () => {
    // The jobs the killed worker held come back once BullMQ's stalled-job check finds their
    // locks expired: its lock (30 s) and check interval (30 s) make that 30 to 60 s after
    // the kill, later on a loaded machine; hence the long bound.
    const exit = await interruptedBurst('SIGKILL', 1000, 100_000, async (redisPrefix) => {
      // It died holding jobs (at least the delivery whose answer it never read): the next
      // worker must take those back, not only the jobs still waiting in the queue.
      expect(await activeJobs(redisPrefix)).toBeGreaterThan(0);
    });
    expect(exit.signal).toBe('SIGKILL');
  }, 150_000);

  it('delivers every event committed while Redis was down once it is back (the outbox holds them)', async () => {
    const port = await freePort();
    let redis = await startRedisServer(port);
    const redisUrl = `redis://127.0.0.1:${port}`;
    const { scope, receiver } = await subscriber();
    const workers: Workers = startWorkers({
      store,
      redis: redisServer(redisUrl),
      redisPrefix: prefix(),
      delivery: {
        concurrency: 16,
        endpointConcurrency: 8,
        retryDelaysMs: RETRY_DELAYS_MS,
        timeoutMs: 2000,
      },
      relay: { batchMax: 100, idleMs: 50 },
      log: SILENT_LOG,
    });
    try {
      // The path works before Redis goes away.
      const before = await burst(scope, 1);
      await waitFor(
        () => deliveredVaults(receiver).size === 1,
        15_000,
        () => 'the first event did not arrive',
      );

      await redis.stop('SIGKILL');
      // The API's writes need no Redis: these commit, and their events wait in the outbox.
      const during = await burst(scope, 50);
      // Two more relay rounds failed (Redis is down): the second began after the last commit,
      // so it claimed all 50, failed to queue them, and rolled back.
      const failedBefore = workers.relay.stats.failedRounds;
      await waitFor(
        () => workers.relay.stats.failedRounds >= failedBefore + 2,
        20_000,
        () => 'the relay did not try again',
      );
      expect(await unrelayed(scope)).toBe(50);
      expect(deliveredVaults(receiver).size).toBe(1);

      redis = await startRedisServer(port);
      await waitFor(
        () => deliveredVaults(receiver).size === 51,
        30_000,
        () => `${deliveredVaults(receiver).size - 1} of 50 events arrived after Redis came back`,
      );
      await expectEveryEventDelivered(scope, receiver, [...before, ...during]);
    } finally {
      // Bounded: stopping must not hang on a Redis that is gone.
      await Promise.race([workers.stop(), sleep(5_000)]);
      await redis.stop('SIGKILL');
    }
  });

  it('loses nothing when the worker process is stopped (SIGTERM) mid-burst', async () => {
    const exit = await interruptedBurst('SIGTERM', 300, 60_000, async (redisPrefix) => {
      // Graceful: the deliveries in flight finished (or went back to the queue), so no job
      // is left held by the stopped worker, waiting for the stalled-job check.
      expect(await activeJobs(redisPrefix)).toBe(0);
    });
    expect(exit).toEqual({ code: 0, signal: null });
  });
});
