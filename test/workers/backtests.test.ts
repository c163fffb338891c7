import { Queue } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { redisServer } from '../../src/config/env.js';
import { isoDate, utcDayNumber, type BacktestRecord, type Scope } from '../../src/core/index.js';
import type { RedisConnection } from '../../src/redis.js';
import { BACKTEST_ATTEMPTS_MAX } from '../../src/store/store.js';
import {
  BacktestRelay,
  DEFAULT_BACKTEST_SETTINGS,
  startBacktestWorker,
  type BacktestWorker,
} from '../../src/workers/backtests.js';
import {
  BACKTEST_QUEUE,
  backtestJobId,
  producerConnection,
  queuePrefix,
  workerConnection,
  type BacktestJob,
} from '../../src/workers/queues.js';
import { testDatabase } from '../support/databases.js';
import { insertAuthorizations } from '../support/history-rows.js';
import { SILENT_LOG, testRedisPrefix } from '../support/http.js';
import { freePort, startRedisServer, stopAll, type Child } from '../support/processes.js';
import { openTestStore, type TestStore } from '../support/store.js';

/**
 * Backtests as BullMQ jobs of the worker role (issue 14), on the real PostgreSQL and Redis: the
 * relay gives every unfinished backtest one live job; a job lost with Redis, or a run that died
 * holding its lease, is run again from the database's record; a run never writes past its
 * lease; a backtest out of attempts fails for good; a stopping worker gives its run back.
 */
const SETTINGS = { ...DEFAULT_BACKTEST_SETTINGS, idleMs: 50, recheckAfterMs: 0, leaseMs: 5_000 };
const ROWS = 10_050;

describe('backtest jobs [pg]', () => {
  const database = testDatabase('pg');
  let t: TestStore;
  let scope: Scope;
  let vaultId: string;
  let prefix: string;
  let producer: RedisConnection;
  let consumer: RedisConnection;
  let queue: Queue<BacktestJob>;
  let relay: BacktestRelay;
  let worker: BacktestWorker;
  let redisPort: number;
  /** A redis-server of this suite's own, without persistence: a restart loses every job. */
  let redis: Child;

  beforeAll(async () => {
    redisPort = await freePort();
    redis = await startRedisServer(redisPort);
    // Real time: BullMQ's locks and the leases run on it.
    t = await openTestStore(database, { systemClock: true });
    scope = await t.scope();
    const vault = await t.vault(scope, '10');
    vaultId = vault.id;
    const card = await t.card(scope, vaultId);
    await insertAuthorizations(
      t.store.client,
      { ...scope, vaultId, cardId: card.id },
      ROWS,
      Date.now() - 1_000,
    );
    prefix = testRedisPrefix();
    producer = producerConnection(redisServer(`redis://127.0.0.1:${redisPort}`));
    consumer = workerConnection(redisServer(`redis://127.0.0.1:${redisPort}`));
    queue = new Queue<BacktestJob>(BACKTEST_QUEUE, {
      connection: producer,
      prefix: queuePrefix(prefix),
    });
    relay = new BacktestRelay(t.store, queue, SILENT_LOG, SETTINGS);
    worker = startBacktestWorker({
      store: t.store,
      connection: consumer,
      redisPrefix: prefix,
      settings: SETTINGS,
      log: SILENT_LOG,
      autorun: false,
    });
  });

  afterAll(async () => {
    await relay.stop();
    await worker.close();
    await queue.obliterate({ force: true });
    await queue.close();
    producer.disconnect();
    consumer.disconnect();
    await stopAll();
    await database.close();
  });

  const queued = async (): Promise<BacktestRecord> => {
    const { backtest, queued: isQueued } = await t.store.createBacktest(
      scope,
      { kind: 'vault', vaultId },
      {
        draft: { limits: [{ interval: 'perTransaction', amount: '150' }] },
        startDate: isoDate(utcDayNumber(Date.now()) - 1),
        endDate: isoDate(utcDayNumber(Date.now())),
      },
    );
    expect([isQueued, backtest.status]).toEqual([true, 'queued']);
    return backtest;
  };
  const read = (id: string) => t.store.getBacktest(scope, { kind: 'vault', vaultId }, id);
  const row = async (id: string) =>
    (
      await t.store.client.query<{ job_generation: number; attempts: number; status: string }>(
        'SELECT job_generation, attempts, status FROM backtests WHERE id = $1',
        [id],
      )
    ).rows[0];
  const until = async (id: string, status: string): Promise<BacktestRecord> => {
    for (let round = 0; round < 600; round++) {
      const backtest = await read(id);
      if (backtest.status === status) return backtest;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error(`backtest ${id} never became ${status}`);
  };

  it('runs a backtest as one job, whose loss with Redis loses nothing: the record adds it again', async () => {
    const backtest = await queued();
    await relay.relayOnce();
    expect((await row(backtest.id))?.job_generation).toBe(1);
    // A second round finds the job alive and adds none.
    const added = relay.added;
    await relay.relayOnce();
    expect([relay.added, (await row(backtest.id))?.job_generation]).toEqual([added, 1]);
    expect((await queue.getJob(backtestJobId(backtest.id, 1)))?.data).toEqual({
      backtestId: backtest.id,
    });

    // Redis goes down: a round fails and rolls back; the backtest waits in the database.
    await redis.stop('SIGKILL');
    await expect(relay.relayOnce()).rejects.toThrow();
    expect(await row(backtest.id)).toMatchObject({ job_generation: 1, status: 'queued' });
    // It comes back empty (no persistence): the job is gone, the relay adds the next one.
    redis = await startRedisServer(redisPort);
    for (let round = 0; (await row(backtest.id))?.job_generation !== 2; round++) {
      if (round >= 100) throw new Error('the relay never added the job again');
      await relay.relayOnce().catch(() => undefined);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(await queue.getJob(backtestJobId(backtest.id, 2))).toBeDefined();

    void worker.worker.run();
    const done = await until(backtest.id, 'completed');
    expect([done.replayed, done.total, done.result?.authorizations]).toEqual([ROWS, ROWS, ROWS]);
    expect(done.result?.examples.length).toBe(100);
    expect((await row(backtest.id))?.attempts).toBe(1);
  });

  it('runs again, from the record, a backtest whose job Redis lost and whose run died', async () => {
    const backtest = await queued();
    // As a run that died holding its lease leaves it, with its job gone from Redis.
    await t.store.client.query(
      `UPDATE backtests SET status = 'running', attempts = 1, lease_token = 'dead', job_generation = 4,
                            lease_expires_at = now() - interval '1 second', updated_at = now() - interval '1 hour'
       WHERE id = $1`,
      [backtest.id],
    );
    relay.start();
    const done = await until(backtest.id, 'completed');
    expect(done.result?.authorizations).toBe(ROWS);
    expect(await row(backtest.id)).toMatchObject({ job_generation: 5, attempts: 2 });
    await relay.stop();
  });

  it('never runs a backtest another run holds, and fails one out of attempts for good', async () => {
    const held = await queued();
    await t.store.client.query(
      `UPDATE backtests SET status = 'running', attempts = 1, lease_token = 'alive',
                            lease_expires_at = now() + interval '1 minute' WHERE id = $1`,
      [held.id],
    );
    expect(await t.store.runBacktest(held.id, { leaseMs: 5_000 })).toBe('skipped');
    expect((await read(held.id)).status).toBe('running');

    const spent = await queued();
    await t.store.client.query(
      `UPDATE backtests SET status = 'running', attempts = $2, lease_token = 'dead',
                            lease_expires_at = now() - interval '1 second' WHERE id = $1`,
      [spent.id, BACKTEST_ATTEMPTS_MAX],
    );
    expect(await t.store.runBacktest(spent.id, { leaseMs: 5_000 })).toBe('failed');
    const failed = await read(spent.id);
    expect([failed.status, failed.result, failed.completedAtMs === null]).toEqual([
      'failed',
      null,
      false,
    ]);
    expect(failed.failureMessage).toMatch(/could not be completed/);
    // Finished: nothing runs it again.
    expect(await t.store.runBacktest(spent.id, { leaseMs: 5_000 })).toBe('skipped');
  });

  it('gives a stopped run back to the queue, its attempt not counted', async () => {
    const backtest = await queued();
    const stopping = new AbortController();
    stopping.abort();
    expect(
      await t.store.runBacktest(backtest.id, { leaseMs: 5_000, signal: stopping.signal }),
    ).toBe('skipped');
    expect(await row(backtest.id)).toMatchObject({ status: 'queued', attempts: 0 });
    expect(await t.store.runBacktest(backtest.id, { leaseMs: 5_000 })).toBe('completed');
  });
});
