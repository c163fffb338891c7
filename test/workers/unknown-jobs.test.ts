import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { redisServer } from '../../src/config/env.js';
import type { Scope } from '../../src/core/index.js';
import { webhookJobId, type WebhookJob } from '../../src/workers/queues.js';
import { startWorkers, type Workers } from '../../src/workers/start.js';
import { deliveryJobOptions } from '../../src/workers/webhook-delivery.js';
import { testDatabase } from '../support/databases.js';
import { LOCAL_REDIS_URL, SILENT_LOG, testRedisPrefix } from '../support/http.js';
import { forgetPrefixes, sleep, waitFor } from '../support/processes.js';
import { startReceiver, type Receiver } from '../support/receiver.js';
import { useTestStore } from '../support/store.js';

/**
 * A delivery job this database does not know: no such event, or no such endpoint of
 * the event's account. It was made by another installation on the same Redis prefix, or its
 * rows were lost; either way it fails at once, with an error line and a metric, and is never
 * ended as if delivered. A job for an endpoint its owner deleted ends quietly, as before. And no
 * job is added or taken before the database holds its prefix. Beside them, the one other job
 * that fails before its last attempt: one BullMQ gave up on for stalling too often.
 */
const DELIVERY = {
  concurrency: 8,
  endpointConcurrency: 4,
  retryDelaysMs: [100, 100, 100],
  timeoutMs: 2000,
};

describe('delivery jobs this database does not know', () => {
  const t = useTestStore(testDatabase('pg'), { systemClock: true });
  const prefixes = [testRedisPrefix()];
  const errors: { object: Record<string, unknown>; message: string }[] = [];
  const warnings: { object: Record<string, unknown>; message: string }[] = [];
  const receivers: Receiver[] = [];
  let workers: Workers;

  beforeAll(() => {
    workers = startWorkers({
      store: t.store,
      redis: redisServer(LOCAL_REDIS_URL),
      redisPrefix: prefixes[0] ?? '',
      delivery: DELIVERY,
      relay: { batchMax: 100, idleMs: 20 },
      log: {
        ...SILENT_LOG,
        error: (object: object, message: string) => {
          errors.push({ object: object as Record<string, unknown>, message });
        },
        warn: (object: object, message: string) => {
          warnings.push({ object: object as Record<string, unknown>, message });
        },
      },
    });
  });

  afterAll(async () => {
    await workers.stop();
    await Promise.all(receivers.map((receiver) => receiver.close()));
    await forgetPrefixes(prefixes);
  });

  async function endpoint(owner: Scope): Promise<{ id: string; receiver: Receiver }> {
    const receiver = await startReceiver();
    receivers.push(receiver);
    const { endpoint: created, secret } = await t.store.createWebhookEndpoint(owner, {
      url: receiver.url,
      events: ['*'],
      description: null,
    });
    receiver.secret = secret;
    return { id: created.id, receiver };
  }

  /** A committed and relayed event of `owner` (who has no endpoint: it made no job). */
  async function event(owner: Scope): Promise<string> {
    await t.vault(owner, '0', { name: 'E' });
    const relayed = async () =>
      (
        await t.store.client.query<{ id: string }>(
          'SELECT id FROM outbox_events WHERE account_id = $1 AND NOT EXISTS (SELECT 1 FROM outbox_unrelayed u WHERE u.id = outbox_events.id)',
          [owner.accountId],
        )
      ).rows[0]?.id;
    await waitFor(
      async () => (await relayed()) !== undefined,
      10_000,
      () => 'not relayed',
    );
    return (await relayed()) ?? '';
  }

  /** Adds `job` as the relay would, and waits for it to end. */
  async function outcome(job: WebhookJob) {
    const added = await workers.queue.add('deliver', job, { jobId: webhookJobId(job) });
    let state = '';
    await waitFor(
      async () => {
        state = await added.getState();
        return state === 'completed' || state === 'failed';
      },
      15_000,
      () => `the job is still ${state}`,
    );
    const ended = await workers.queue.getJob(added.id ?? '');
    return {
      state,
      attemptsMade: ended?.attemptsMade,
      failedReason: ended?.failedReason,
      returnvalue: ended?.returnvalue as unknown,
    };
  }

  async function unknownJobs(missing: 'event' | 'endpoint'): Promise<number> {
    const metric = await workers.metrics.unknownDeliveryJobs.get();
    return metric.values.find((value) => value.labels.missing === missing)?.value ?? 0;
  }

  it('fails a job whose event this database does not have, at once and loudly', async () => {
    const { id, receiver } = await endpoint(await t.scope());
    const eventId = `evt_${randomBytes(16).toString('hex')}`;
    const before = await unknownJobs('event');
    expect(await outcome({ eventId, endpointId: id })).toMatchObject({
      state: 'failed',
      attemptsMade: 1,
      failedReason: 'no such event in this database',
    });
    expect(await unknownJobs('event')).toBe(before + 1);
    const logged = errors.find((error) => error.object.eventId === eventId);
    expect(logged?.object).toMatchObject({ endpointId: id, missing: 'event' });
    expect(logged?.message).toMatch(/no such event; another installation may share/);
    // Nothing sent, nothing recorded as an attempt.
    expect(receiver.received).toEqual([]);
    const { rows } = await t.store.client.query(
      'SELECT 1 FROM webhook_deliveries WHERE event_id = $1',
      [eventId],
    );
    expect(rows).toEqual([]);
  });

  it("fails a job whose endpoint is missing, or is another account's", async () => {
    const owner = await t.scope();
    const eventId = await event(owner);
    const before = await unknownJobs('endpoint');
    const missingEndpoint = `we_${randomBytes(16).toString('hex')}`;
    expect(await outcome({ eventId, endpointId: missingEndpoint })).toMatchObject({
      state: 'failed',
      failedReason: 'no such endpoint in this database',
    });
    const other = await endpoint(await t.scope());
    expect(await outcome({ eventId, endpointId: other.id })).toMatchObject({
      state: 'failed',
      failedReason: 'no such endpoint in this database',
    });
    expect(other.receiver.received).toEqual([]);
    expect(await unknownJobs('endpoint')).toBe(before + 2);
  });

  it('ends the jobs of an endpoint its owner deleted quietly, as its owner asked', async () => {
    const owner = await t.scope();
    const eventId = await event(owner);
    const { id, receiver } = await endpoint(owner);
    await t.store.deleteWebhookEndpoint(owner, id);
    const errorsBefore = errors.length;
    expect(await outcome({ eventId, endpointId: id })).toMatchObject({
      state: 'completed',
      returnvalue: 'endpoint no longer receives',
    });
    expect(errors.length).toBe(errorsBefore);
    expect(receiver.received).toEqual([]);
  });

  it('warns that delivery gave up on a job that stalled too often, and not again for an unknown job', async () => {
    const options = deliveryJobOptions(DELIVERY.retryDelaysMs);
    const ended = async (job: WebhookJob) => {
      let state: string = '';
      await waitFor(
        async () => {
          state = await workers.queue.getJobState(webhookJobId(job));
          return state === 'failed';
        },
        15_000,
        () => `the job is still ${state}`,
      );
      return workers.queue.getJob(webhookJobId(job));
    };
    // BullMQ's stalled-job check marks a job that stalled more than `maxStalledCount` times with
    // a deferred failure (the `defa` field of its hash), and the worker that takes it next fails
    // it at once. Marked here by hand, the queue paused meanwhile: a thousand stalls take hours.
    const stalled = { eventId: `evt_${randomBytes(16).toString('hex')}`, endpointId: 'we_stalled' };
    await workers.queue.pause();
    try {
      await workers.queue.add('deliver', stalled, { ...options, jobId: webhookJobId(stalled) });
      const redis = await workers.queue.client;
      await redis.hset(workers.queue.toKey(webhookJobId(stalled)), {
        defa: 'job stalled more than allowable limit',
      });
    } finally {
      await workers.queue.resume();
    }
    const failed = await ended(stalled);
    expect(failed?.failedReason).toBe('job stalled more than allowable limit');
    expect(failed?.attemptsMade ?? 0).toBeLessThan(options.attempts);
    const gaveUp = warnings.filter((warning) => warning.object.eventId === stalled.eventId);
    expect(gaveUp.map((warning) => warning.message)).toEqual([
      'webhook delivery gave up after its last attempt',
    ]);

    // An unknown job fails before its last attempt too, but its error line says it all.
    const { id } = await endpoint(await t.scope());
    const unknown = { eventId: `evt_${randomBytes(16).toString('hex')}`, endpointId: id };
    await workers.queue.add('deliver', unknown, { ...options, jobId: webhookJobId(unknown) });
    expect((await ended(unknown))?.failedReason).toBe('no such event in this database');
    expect(errors.some((error) => error.object.eventId === unknown.eventId)).toBe(true);
    expect(warnings.some((warning) => warning.object.eventId === unknown.eventId)).toBe(false);
  });

  it('adds and takes no job before the database holds its Redis prefix', async () => {
    const redisPrefix = testRedisPrefix();
    prefixes.push(redisPrefix);
    let claimed: () => void = () => undefined;
    const waiting = startWorkers({
      store: t.store,
      redis: redisServer(LOCAL_REDIS_URL),
      redisPrefix,
      delivery: DELIVERY,
      relay: { batchMax: 100, idleMs: 20 },
      log: SILENT_LOG,
      prefixClaimed: new Promise<void>((resolve) => {
        claimed = resolve;
      }),
    });
    // The shared workers above must not relay this account's events: stop their relay.
    await workers.relay.stop();
    try {
      const owner = await t.scope();
      const { receiver } = await endpoint(owner);
      await t.vault(owner, '0', { name: 'W' });
      await sleep(1_000);
      const { rows } = await t.store.client.query(
        'SELECT 1 FROM outbox_events e JOIN outbox_unrelayed u ON u.id = e.id WHERE e.account_id = $1',
        [owner.accountId],
      );
      expect(rows).toHaveLength(1);
      expect(await waiting.queue.count()).toBe(0);
      claimed();
      await receiver.until(1, 'vault.created', 15_000);
    } finally {
      await waiting.stop();
    }
  });
});
