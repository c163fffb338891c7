import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { createPgClient } from '../../src/store/sql/pg-client.js';
import { openStore } from '../../src/store/store.js';
import { claimKey } from '../../src/workers/prefix-claim.js';
import {
  queuePrefix,
  WEBHOOK_QUEUE,
  webhookJobId,
  type WebhookJob,
} from '../../src/workers/queues.js';
import { deliveryJobOptions } from '../../src/workers/webhook-delivery.js';
import { LOCAL_REDIS_URL } from '../support/http.js';
import {
  listeningBase,
  callWithKey,
  trackedRedisPrefixes,
  freePort,
  serverDatabase,
  startCliProcess,
  startRedisServer,
  stopAll,
  waitFor,
  type Child,
} from '../support/processes.js';
import { startReceiver, type Receiver } from '../support/receiver.js';

/**
 * Two installations on one Redis (contract section 15 v1.1), with real `spendgate
 * serve` processes: each database has its own default prefix and delivers its own webhooks; a
 * prefix set by hand belongs to the first database that claims it, and a second refuses to
 * start, naming REDIS_PREFIX, also when Redis was down at its start; and a delivery job whose
 * event this database lacks fails loudly instead of being ended as delivered.
 */
const START_MS_MAX = 150_000;
const masterKey = randomBytes(32).toString('base64');
const prefixes = trackedRedisPrefixes();
const prefix = prefixes.next;
const databases: Awaited<ReturnType<typeof serverDatabase>>[] = [];
const receivers: Receiver[] = [];
const redis = new Redis(LOCAL_REDIS_URL, { maxRetriesPerRequest: 1 });

afterAll(async () => {
  await stopAll();
  await Promise.all(receivers.map((receiver) => receiver.close()));
  await Promise.all(databases.map((database) => database.drop()));
  await prefixes.forget();
  redis.disconnect();
});

async function database(): Promise<string> {
  const made = await serverDatabase();
  databases.push(made);
  return made.url;
}

/**
 * `spendgate serve --role <role>` on a free port; the test-mode chain is an address never
 * called (no transfer is made here), so that no local Solana runtime is started.
 */
function serve(role: 'api' | 'worker' | 'all', env: Record<string, string>): Child {
  return startCliProcess(['serve', '--role', role], {
    PORT: '0',
    LOG_LEVEL: 'info',
    REDIS_URL: LOCAL_REDIS_URL,
    SOLANA_TEST_RPC_URL: 'http://127.0.0.1:9',
    WEBHOOK_RETRY_DELAYS_MS: '200,200',
    ...env,
  });
}

interface Started {
  readonly redisPrefix: string;
  readonly installation: string;
}

/** The process's 'spendgate started' log line. */
async function started(child: Child): Promise<Started> {
  let line: Started | undefined;
  await waitFor(
    () => {
      line = child
        .output()
        .split('\n')
        .filter((text) => text.startsWith('{'))
        .map((text) => JSON.parse(text) as Started & { msg: string })
        .find((entry) => entry.msg === 'spendgate started');
      return line !== undefined;
    },
    START_MS_MAX,
    () => `it did not start:\n${child.output()}`,
  );
  return line as Started;
}

async function listeningUrl(child: Child): Promise<string> {
  return listeningBase(child, START_MS_MAX);
}

const call = callWithKey;

/** A test key on a PostgreSQL database, made before its service starts. */
async function keyOn(url: string): Promise<string> {
  const store = await openStore({
    client: createPgClient({ connectionString: url }),
    masterKey: Buffer.from(masterKey, 'base64'),
  });
  try {
    const account = await store.findOrCreateAccount('acme');
    return (await store.createApiKey({ accountId: account.id, mode: 'test', scopes: [] })).key;
  } finally {
    await store.close();
  }
}

function queueOn(connection: Redis, redisPrefix: string): Queue<WebhookJob> {
  return new Queue<WebhookJob>(WEBHOOK_QUEUE, { connection, prefix: queuePrefix(redisPrefix) });
}

function unknownJob(): WebhookJob {
  return {
    eventId: `evt_${randomBytes(16).toString('hex')}`,
    endpointId: `we_${randomBytes(16).toString('hex')}`,
  };
}

describe('two installations on one Redis', () => {
  it('refuses to start a second database on a REDIS_PREFIX set by hand, naming the setting', async () => {
    const redisPrefix = prefix();
    const env = (url: string) => ({
      DATABASE_URL: url,
      SPENDGATE_MASTER_KEY: masterKey,
      REDIS_PREFIX: redisPrefix,
    });
    const first = serve('api', env(await database()));
    const firstStarted = await started(first);
    expect(firstStarted.redisPrefix).toBe(redisPrefix);
    const base = await listeningUrl(first);

    const second = serve('api', env(await database()));
    const exit = await second.exited;
    expect(exit.code).toBe(1);
    const lines = second
      .output()
      .split('\n')
      .filter((line) => line.trim() !== '');
    // One line, the message alone: no stack, no key, no log of a start.
    expect(lines).toEqual([
      expect.stringContaining(
        `REDIS_PREFIX ${redisPrefix} is claimed on this Redis by another spendgate database ` +
          `(installation ${firstStarted.installation};`,
      ),
    ]);
    expect(lines[0]).toContain('give this one a REDIS_PREFIX of its own');

    // The first one serves on, and stops cleanly.
    expect((await fetch(`${base}/healthz`)).status).toBe(200);
    expect(await first.stop('SIGTERM')).toEqual({ code: 0, signal: null });
    expect(await redis.get(claimKey(redisPrefix))).toBe(firstStarted.installation);
  }, 400_000);

  it('gives two databases left on the default prefix a prefix each, and each delivers its own webhooks', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'spendgate-data-'));
    const serverUrl = await database();
    const serverKey = await keyOn(serverUrl);
    const unset = { REDIS_PREFIX: '' };
    const embedded = serve('all', {
      ...unset,
      DATABASE_URL: '',
      SPENDGATE_MASTER_KEY: '',
      SPENDGATE_DATA_DIR: dataDir,
    });
    const server = serve('all', {
      ...unset,
      DATABASE_URL: serverUrl,
      SPENDGATE_MASTER_KEY: masterKey,
    });
    const [embeddedStarted, serverStarted] = await Promise.all([
      started(embedded),
      started(server),
    ]);
    prefixes.add(embeddedStarted.redisPrefix, serverStarted.redisPrefix);
    expect(embeddedStarted.redisPrefix).toBe(`spendgate-${embeddedStarted.installation}`);
    expect(serverStarted.redisPrefix).toBe(`spendgate-${serverStarted.installation}`);
    expect(embeddedStarted.installation).not.toBe(serverStarted.installation);
    const embeddedKey = /\n {2}(sk_test_[A-Za-z0-9_-]+)\n/.exec(embedded.output())?.[1] ?? '';

    const vaultsPerInstallation = 10;
    const runs = await Promise.all(
      [
        { child: embedded, key: embeddedKey },
        { child: server, key: serverKey },
      ].map(async ({ child, key }) => {
        const base = await listeningUrl(child);
        const receiver = await startReceiver();
        receivers.push(receiver);
        const created = await call(base, key, 'POST', '/v1/webhooks', {
          url: receiver.url,
          events: ['vault.created'],
        });
        expect(created.status).toBe(201);
        receiver.secret = String(created.body.secret);
        const vaults: string[] = [];
        for (let index = 0; index < vaultsPerInstallation; index++) {
          const vault = await call(base, key, 'POST', '/v1/vaults', {
            name: `V${index}`,
            currency: 'USDC',
            network: 'solana',
          });
          expect(vault.status).toBe(201);
          vaults.push(String(vault.body.id));
        }
        return { receiver, vaults, child };
      }),
    );
    for (const { receiver, vaults, child } of runs) {
      await waitFor(
        () => new Set(receiver.received.map((delivery) => delivery.id)).size >= vaults.length,
        60_000,
        () =>
          `${receiver.received.length} of ${vaults.length} arrived; the service said:\n${child.output()}`,
      );
      // Its own vaults' events, each verified with its own endpoint's secret.
      expect(receiver.received.every((delivery) => delivery.verified)).toBe(true);
      expect(
        new Set(receiver.received.map((delivery) => String(delivery.body.data.object.id))),
      ).toEqual(new Set(vaults));
      expect(child.output()).not.toContain('webhook delivery job failed');
    }
    expect(await embedded.stop('SIGTERM')).toEqual({ code: 0, signal: null });
    expect(await server.stop('SIGTERM')).toEqual({ code: 0, signal: null });
  }, 400_000);

  it('fails a delivery job whose event its database lacks, logging it, rather than end it as delivered', async () => {
    const redisPrefix = prefix();
    const worker = serve('worker', {
      DATABASE_URL: await database(),
      SPENDGATE_MASTER_KEY: masterKey,
      REDIS_PREFIX: redisPrefix,
    });
    await started(worker);
    const connection = new Redis(LOCAL_REDIS_URL, { maxRetriesPerRequest: 1 });
    const queue = queueOn(connection, redisPrefix);
    try {
      const job = unknownJob();
      const added = await queue.add('deliver', job, {
        ...deliveryJobOptions([200, 200]),
        jobId: webhookJobId(job),
      });
      await waitFor(
        async () => (await added.getState()) === 'failed',
        30_000,
        () => `the job is ${added.id ?? ''}; the worker said:\n${worker.output()}`,
      );
      const failed = await queue.getJob(added.id ?? '');
      // At once: no retry would find the event.
      expect([failed?.attemptsMade, failed?.failedReason]).toEqual([
        1,
        'no such event in this database',
      ]);
      // Log lines leave in blocks, within a quarter of a second (http/log-destination.ts).
      await waitFor(
        () => worker.output().includes(job.eventId),
        10_000,
        () => `no log line names the event; the worker said:\n${worker.output()}`,
      );
      const logged = worker
        .output()
        .split('\n')
        .filter((line) => line.includes(job.eventId))
        .map((line) => JSON.parse(line) as { level: number; missing: string; msg: string });
      expect(logged).toEqual([
        expect.objectContaining({
          level: 50,
          missing: 'event',
          msg: expect.stringContaining(
            'another installation may share this REDIS_PREFIX',
          ) as unknown,
        }),
      ]);
    } finally {
      await queue.close();
      connection.disconnect();
      await worker.stop('SIGTERM');
    }
  }, 400_000);

  it('starts while Redis is down, then stops at once, untouched, when Redis answers with its prefix claimed by another database', async () => {
    const port = await freePort();
    const redisUrl = `redis://127.0.0.1:${port}`;
    const dir = mkdtempSync(join(tmpdir(), 'spendgate-redis-'));
    const redisPrefix = prefix();
    const job = unknownJob();
    // Another database's claim and one of its jobs, saved to be there when Redis comes back.
    let redisServer = await startRedisServer(port, { dir });
    const before = new Redis(redisUrl, { maxRetriesPerRequest: 1 });
    try {
      await before.set(claimKey(redisPrefix), 'a0a0a0a0a0a0a0a0');
      const queue = queueOn(before, redisPrefix);
      await queue.add('deliver', job, { jobId: webhookJobId(job) });
      await queue.close();
      await before.save();
    } finally {
      before.disconnect();
    }
    await redisServer.stop('SIGKILL');

    const service = serve('all', {
      DATABASE_URL: await database(),
      SPENDGATE_MASTER_KEY: masterKey,
      REDIS_URL: redisUrl,
      REDIS_PREFIX: redisPrefix,
    });
    const base = await listeningUrl(service);
    await started(service);
    expect((await fetch(`${base}/healthz`)).status).toBe(200);
    expect(service.output()).toContain('Redis is unreachable');

    redisServer = await startRedisServer(port, { dir });
    const after = new Redis(redisUrl, { maxRetriesPerRequest: 1 });
    try {
      const exit = await service.exited;
      expect(exit.code).toBe(1);
      const refusal = service
        .output()
        .split('\n')
        .find((line) => line.includes(`REDIS_PREFIX ${redisPrefix} is claimed`));
      expect(JSON.parse(refusal ?? '{}')).toMatchObject({ level: 50, setting: 'REDIS_PREFIX' });
      // Its workers never ran: the other database's job waits, and its claim stands.
      const queue = queueOn(after, redisPrefix);
      expect(await (await queue.getJob(webhookJobId(job)))?.getState()).toBe('waiting');
      await queue.close();
      expect(await after.get(claimKey(redisPrefix))).toBe('a0a0a0a0a0a0a0a0');
    } finally {
      after.disconnect();
      await redisServer.stop('SIGKILL');
    }
  }, 400_000);
});
