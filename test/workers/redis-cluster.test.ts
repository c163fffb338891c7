import { randomBytes } from 'node:crypto';
import { Queue } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkInvariants } from '../../src/store/invariants.js';
import { createPgClient } from '../../src/store/sql/pg-client.js';
import { openStore, type OpenedStore } from '../../src/store/store.js';
import { MAINTENANCE_QUEUE } from '../../src/workers/maintenance.js';
import { confirmReplicated, producerConnection, queuePrefix } from '../../src/workers/queues.js';
import { MERCHANT, networkId } from '../support/authorize.js';
import { testRedisPrefix } from '../support/http.js';
import {
  callWithKey,
  freePort,
  listeningBase,
  serverDatabase,
  sleep,
  startCliProcess,
  stopAll,
  waitFor,
  type Child,
} from '../support/processes.js';
import { startReceiver, type Receiver } from '../support/receiver.js';
import { startRedisCluster, type RedisClusterUnderTest } from '../support/redis-cluster.js';

/**
 * spendgate on a real Redis Cluster (REDIS_CLUSTER_NODES, contract section 15 v1.1): the real
 * `spendgate serve` process decides authorizations, counts rate limits, delivers webhooks,
 * posts settlements and keeps its job schedulers with every key on the cluster; and when the
 * master holding its queues is SIGKILLed mid-burst, the cluster fails over and every event is
 * still delivered, every settlement record posted once, and /readyz answers 200 throughout.
 */
const START_MS_MAX = 150_000;
const DELIVERED_MS_MAX = 120_000;
const FAILOVER_MS_MAX = 30_000;
const masterKey = randomBytes(32).toString('base64');

let cluster: RedisClusterUnderTest | undefined;
const databases: Awaited<ReturnType<typeof serverDatabase>>[] = [];
const receivers: Receiver[] = [];

beforeAll(async () => {
  cluster = await startRedisCluster();
}, 120_000);

afterAll(async () => {
  await stopAll();
  await cluster?.stop();
  await Promise.all(receivers.map((receiver) => receiver.close()));
  await Promise.all(databases.map((database) => database.drop()));
});

function started(): RedisClusterUnderTest {
  if (cluster === undefined) throw new Error('the Redis Cluster did not start');
  return cluster;
}

interface Deployment {
  readonly child: Child;
  readonly base: string;
  readonly redisPrefix: string;
  readonly store: OpenedStore;
  /** A test key with every scope, and the card network's key (authorizations:write alone). */
  readonly key: string;
  readonly networkKey: string;
  readonly accountId: string;
  readonly receiver: Receiver;
}

/**
 * A fresh database with an account and its two keys, `spendgate serve --role all` on the
 * cluster (REDIS_URL names a port nothing listens on: the cluster replaces it), and a receiver
 * subscribed to every event of the account.
 */
async function deploy(
  clusterNodes = started().setting,
  redisPrefix = testRedisPrefix(),
): Promise<Deployment> {
  const database = await serverDatabase();
  databases.push(database);
  const store = await openStore({
    client: createPgClient({ connectionString: database.url, connectionsMax: 4 }),
    masterKey: Buffer.from(masterKey, 'base64'),
  });
  const account = await store.findOrCreateAccount('cluster');
  const { key } = await store.createApiKey({ accountId: account.id, mode: 'test', scopes: [] });
  const { key: networkKey } = await store.createApiKey({
    accountId: account.id,
    mode: 'test',
    scopes: ['authorizations:write'],
  });
  const child = startCliProcess(['serve', '--role', 'all'], {
    PORT: '0',
    LOG_LEVEL: 'info',
    DATABASE_URL: database.url,
    SPENDGATE_MASTER_KEY: masterKey,
    SPENDGATE_MODES: 'test',
    REDIS_URL: 'redis://127.0.0.1:1',
    REDIS_CLUSTER_NODES: clusterNodes,
    REDIS_PREFIX: redisPrefix,
    RATE_LIMIT_TEST_PER_SECOND: '100000',
    // An address never called: no transfer is made here, so no local Solana runtime starts.
    SOLANA_TEST_RPC_URL: 'http://127.0.0.1:9',
    WEBHOOK_RETRY_DELAYS_MS: '200,200,200,200',
  });
  const base = await listeningBase(child, START_MS_MAX);
  const receiver = await startReceiver();
  receivers.push(receiver);
  const endpoint = await callWithKey(base, key, 'POST', '/v1/webhooks', {
    url: receiver.url,
    events: ['*'],
  });
  expect(endpoint.status).toBe(201);
  receiver.secret = String(endpoint.body.secret);
  return { child, base, redisPrefix, store, key, networkKey, accountId: account.id, receiver };
}

/** A vault funded with `amount` and an active card on it. */
async function fundedCard(deployment: Deployment, amount: string): Promise<string> {
  const { base, key } = deployment;
  const vault = await callWithKey(base, key, 'POST', '/v1/vaults', {
    name: 'cluster',
    currency: 'USDC',
    network: 'solana',
    initialDeposit: amount,
  });
  expect(vault.status).toBe(201);
  const card = await callWithKey(base, key, 'POST', '/v1/cards', {
    vaultId: vault.body.id,
    cardholderName: 'Ada',
  });
  expect(card.status).toBe(201);
  return String(card.body.id);
}

/** One authorization of 1 USDC by the card network's key; its status and body. */
function authorize(deployment: Deployment, cardId: string) {
  return callWithKey(deployment.base, deployment.networkKey, 'POST', '/v1/authorizations', {
    cardId,
    amount: '1',
    currency: 'USDC',
    merchant: MERCHANT,
    networkTransactionId: networkId(),
  });
}

/** Posts a clearing batch capturing each of `authorizationIds`; returns its id. */
async function settle(
  deployment: Deployment,
  authorizationIds: readonly string[],
): Promise<string> {
  const batch = await callWithKey(deployment.base, deployment.key, 'POST', '/v1/settlements', {
    records: authorizationIds.map((authorizationId) => ({ authorizationId })),
  });
  expect(batch.status).toBe(202);
  return String(batch.body.id);
}

async function settled(deployment: Deployment, settlementIds: readonly string[]): Promise<void> {
  await waitFor(
    async () => {
      for (const id of settlementIds) {
        const report = await callWithKey(
          deployment.base,
          deployment.key,
          'GET',
          `/v1/settlements/${id}`,
        );
        if (report.body.status !== 'completed') return false;
      }
      return true;
    },
    DELIVERED_MS_MAX,
    () => `settlements ${settlementIds.join(', ')} completed`,
  );
}

/** The account's events, by id, as the outbox holds them. */
async function outboxEvents(deployment: Deployment): Promise<string[]> {
  const { rows } = await deployment.store.client.query<{ id: string }>(
    'SELECT id FROM outbox_events WHERE account_id = $1',
    [deployment.accountId],
  );
  return rows.map((row) => row.id);
}

/** Waits until every event of the account reached the receiver; returns the events' count. */
async function everyEventDelivered(deployment: Deployment): Promise<number> {
  let missing: string[] = [];
  await waitFor(
    async () => {
      const arrived = new Set(deployment.receiver.received.map((delivery) => delivery.id));
      missing = (await outboxEvents(deployment)).filter((id) => !arrived.has(id));
      return missing.length === 0;
    },
    DELIVERED_MS_MAX,
    () =>
      `${missing.length} events undelivered (${missing.slice(0, 3).join(', ')}); the service said:\n${deployment.child.output().slice(-4000)}`,
  );
  // At least once, and a duplicate is the same delivery: the same webhook-id, the event's id.
  const { received } = deployment.receiver;
  expect(received.every((delivery) => delivery.verified)).toBe(true);
  expect(received.filter((delivery) => delivery.headers['webhook-id'] !== delivery.id)).toEqual([]);
  return (await outboxEvents(deployment)).length;
}

/**
 * Each authorization captured exactly once in the ledger (one posting to card settlement per
 * authorization), every settlement record captured, and the ledger's invariants hold.
 */
async function capturedOnce(deployment: Deployment, authorizationIds: readonly string[]) {
  const { rows } = await deployment.store.client.query<{
    transaction_id: string;
    postings: number;
  }>(
    `SELECT e.transaction_id, count(DISTINCT e.posting_id)::int AS postings
       FROM ledger_entries e JOIN ledger_accounts a ON a.id = e.ledger_account_id
      WHERE a.kind = 'card_settlement' AND e.transaction_id = ANY($1)
      GROUP BY e.transaction_id`,
    [authorizationIds],
  );
  expect(rows).toHaveLength(authorizationIds.length);
  expect(rows.filter((row) => row.postings !== 1)).toEqual([]);
  const records = await deployment.store.client.query<{ status: string; n: number }>(
    `SELECT r.status, count(*)::int AS n FROM settlement_records r
       JOIN settlements s ON s.id = r.settlement_id
      WHERE s.account_id = $1 GROUP BY r.status`,
    [deployment.accountId],
  );
  expect(records.rows).toEqual([{ status: 'captured', n: authorizationIds.length }]);
  expect(await checkInvariants(deployment.store.client)).toEqual([]);
}

async function stop(deployment: Deployment): Promise<void> {
  const stoppingAtMs = Date.now();
  const exit = await deployment.child.stop('SIGTERM');
  const stopMs = Date.now() - stoppingAtMs;
  await deployment.store.close();
  expect(exit.code, `stopped in ${stopMs} ms:\n${deployment.child.output().slice(-4000)}`).toBe(0);
}

describe('spendgate on a Redis Cluster', () => {
  it('decides, counts rate limits, delivers webhooks, posts settlements and schedules jobs, every key on the cluster', async () => {
    const deployment = await deploy();
    const { redisPrefix } = deployment;
    const cardId = await fundedCard(deployment, '1000');
    const ids: string[] = [];
    for (let index = 0; index < 20; index++) {
      const answer = await authorize(deployment, cardId);
      expect([answer.status, answer.body.approved]).toEqual([200, true]);
      ids.push(String(answer.body.id));
    }
    // Both rate-limit classes counted on the cluster. A count lives 1-2 s, so each is read
    // right after a request of its class, and on a machine slow enough to let it lapse first,
    // after another (a few tries: a limiter that counts nowhere fails every one).
    const countedAfter = async (send: () => Promise<void>, keyStart: string) => {
      for (let tries = 0; tries < 5; tries++) {
        await send();
        const rateKeys = await started().keys(`${redisPrefix}:rate:*`);
        if (rateKeys.some((key) => key.startsWith(keyStart))) return true;
      }
      return false;
    };
    const listVaults = async () => {
      const answer = await callWithKey(deployment.base, deployment.key, 'GET', '/v1/vaults');
      expect(answer.status).toBe(200);
    };
    const authorizeOnce = async () => {
      ids.push(String((await authorize(deployment, cardId)).body.id));
    };
    expect(await countedAfter(listVaults, `${redisPrefix}:rate:testPerSecond:`)).toBe(true);
    expect(
      await countedAfter(authorizeOnce, `${redisPrefix}:rate:chunked:authorizationsPerSecond:`),
    ).toBe(true);

    await settled(deployment, [await settle(deployment, ids)]);
    expect(await everyEventDelivered(deployment)).toBeGreaterThan(ids.length);
    await capturedOnce(deployment, ids);

    // The job schedulers, read back from the cluster through BullMQ itself.
    const connection = producerConnection(started().target);
    const maintenance = new Queue(MAINTENANCE_QUEUE, {
      connection,
      prefix: queuePrefix(redisPrefix),
    });
    try {
      const schedulers = await maintenance.getJobSchedulers();
      expect(schedulers.map((scheduler) => scheduler.key).sort()).toEqual([
        'apply-retention',
        'expire-holds',
        'take-snapshots',
      ]);
    } finally {
      await maintenance.close();
      connection.disconnect();
    }

    // Every key under the hash tag `{prefix}`: the claim, the webhook and maintenance queues;
    // all in the one slot of the tag, so on one master, and BullMQ's scripts never cross slots.
    const tagged = await started().keys(`{${redisPrefix}}:*`);
    expect(tagged).toContain(`{${redisPrefix}}:installation`);
    expect(tagged.some((key) => key.startsWith(`{${redisPrefix}}:webhooks:`))).toBe(true);
    expect(tagged.some((key) => key.startsWith(`{${redisPrefix}}:maintenance:`))).toBe(true);
    const slots = new Set(await Promise.all(tagged.map((key) => started().slotOf(key))));
    expect([...slots]).toEqual([await started().slotOf(`{${redisPrefix}}`)]);
    // No key of the deployment outside those two families.
    const all = await started().keys(`*${redisPrefix}*`);
    expect(
      all.filter(
        (key) => !key.startsWith(`{${redisPrefix}}:`) && !key.startsWith(`${redisPrefix}:rate:`),
      ),
    ).toEqual([]);
    await stop(deployment);
  });

  it('starts and decides with no node of the cluster answering, Redis reported as degraded', async () => {
    const deployment = await deploy(`127.0.0.1:${String(await freePort())}`);
    const cardId = await fundedCard(deployment, '10');
    const answer = await authorize(deployment, cardId);
    expect([answer.status, answer.body.approved]).toEqual([200, true]);
    const ready = await fetch(`${deployment.base}/readyz`);
    expect([ready.status, await ready.json()]).toEqual([
      200,
      { status: 'degraded', database: 'up', redis: 'down', degraded: ['redis'] },
    ]);
    expect(deployment.child.output()).toContain('"redis":"cluster"');
    expect(deployment.child.output()).toContain('Redis is unreachable');
    await stop(deployment);
  });

  it("holds the relay's round until a replica of the queues' master has its jobs", async () => {
    const redisPrefix = testRedisPrefix();
    const master = await started().masterOf(`{${redisPrefix}}`);
    const replica = (await started().view()).find((node) => node.masterId === master.id);
    expect(replica, 'the master has a replica').toBeDefined();
    const connection = producerConnection(started().target);
    try {
      // No offline queue on a producer's connection: it is used once it is ready.
      await waitFor(
        () => connection.status === 'ready',
        10_000,
        () => 'the cluster client ready',
      );
      const probe = `{${redisPrefix}}:probe`;
      await connection.set(probe, 'replicated', 'PX', 60_000);
      await confirmReplicated(connection, redisPrefix);
      // A replica that does not answer acknowledges nothing: the round must not commit.
      const asleep = started().call(replica?.port ?? 0, 'DEBUG', 'SLEEP', '3');
      await sleep(100);
      await connection.set(probe, 'not yet replicated', 'PX', 60_000);
      await expect(confirmReplicated(connection, redisPrefix)).rejects.toThrow(
        /no replica of the queues' master acknowledged/,
      );
      await asleep;
      // Awake, it catches up, and the next round's wait is answered.
      await confirmReplicated(connection, redisPrefix);
    } finally {
      connection.disconnect();
    }
  });

  it('fails over a SIGKILLed master mid-burst: every event delivered, every settlement record posted once, /readyz 200 throughout', async () => {
    const deployment = await deploy();
    const cardId = await fundedCard(deployment, '100000');
    const queuesMaster = await started().masterOf(`{${deployment.redisPrefix}}`);

    // /readyz, polled every 50 ms for the whole test.
    const readiness: number[] = [];
    let polling = true;
    const poller = (async () => {
      while (polling) {
        const answer = await fetch(`${deployment.base}/readyz`);
        readiness.push(answer.status);
        await sleep(50);
      }
    })();

    const ids: string[] = [];
    const settlements: string[] = [];
    let killedAtCount: number | null = null;
    let failedOver: Promise<unknown> | null = null;
    for (let round = 0; round < 40; round++) {
      // Authorizations 8 at a time, and a clearing batch of each round's.
      const answers = await Promise.all(
        Array.from({ length: 8 }, () => authorize(deployment, cardId)),
      );
      const roundIds = answers.map((answer) => {
        expect([answer.status, answer.body.approved]).toEqual([200, true]);
        return String(answer.body.id);
      });
      ids.push(...roundIds);
      settlements.push(await settle(deployment, roundIds));
      // Mid-burst, once deliveries flow: the master holding the queues' slot dies.
      if (killedAtCount === null && deployment.receiver.received.length >= 60) {
        killedAtCount = readiness.length;
        await started().kill(queuesMaster.port);
        failedOver = started().waitForFailover(queuesMaster.port, FAILOVER_MS_MAX);
      }
    }
    expect(killedAtCount, 'the master was killed mid-burst').not.toBeNull();
    await failedOver;
    await settled(deployment, settlements);
    const events = await everyEventDelivered(deployment);
    expect(events).toBeGreaterThan(ids.length);
    await capturedOnce(deployment, ids);
    polling = false;
    await poller;
    // Polled before, during and after the failover, and ready every time.
    expect(readiness.length).toBeGreaterThan((killedAtCount ?? 0) + 10);
    expect(readiness.filter((status) => status !== 200)).toEqual([]);
    await stop(deployment);
  });
  it('loses the writes a lagging replica never had, and still delivers every event (contract v1.2, section 18)', async () => {
    // A prefix on a master that still has a replica (the test above failed one over: its
    // promoted replica has none).
    let redisPrefix = testRedisPrefix();
    let master = await started().masterOf(`{${redisPrefix}}`);
    const hasReplica = async (id: string) =>
      (await started().view()).some((node) => node.masterId === id && !node.flags.has('fail'));
    for (let tries = 0; tries < 50 && !(await hasReplica(master.id)); tries++) {
      redisPrefix = testRedisPrefix();
      master = await started().masterOf(`{${redisPrefix}}`);
    }
    const replica = (await started().view()).find(
      (node) => node.masterId === master.id && !node.flags.has('fail'),
    );
    expect(replica, 'the master has a replica').toBeDefined();
    const replicaPort = replica?.port ?? 0;
    const deployment = await deploy(started().setting, redisPrefix);
    const cardId = await fundedCard(deployment, '100000');
    const ids: string[] = [];
    const burst = async () => {
      const answers = await Promise.all(
        Array.from({ length: 8 }, () => authorize(deployment, cardId)),
      );
      for (const answer of answers) {
        expect([answer.status, answer.body.approved]).toEqual([200, true]);
        ids.push(String(answer.body.id));
      }
    };
    while (deployment.receiver.received.length < 40) await burst();
    // The replica stops reading its master for 4 s: what the master takes meanwhile (the
    // workers' job states, the deliveries' progress) is on the master alone when it dies.
    const asleep = started().call(replicaPort, 'DEBUG', 'SLEEP', '4');
    const sleptAtMs = Date.now();
    // Writes of our own beside the workers', in the deployment's slot: 32 MiB that no
    // loopback socket buffers (what the kernel holds for the sleeping replica, it would read on
    // waking), then a key behind them. Whatever the workers happened to write meanwhile (a
    // quiet relay writes little), the master holds writes its replica never gets.
    const lostKey = `{${redisPrefix}}:written-while-the-replica-slept`;
    const ballast = 'x'.repeat(32 * 1024 * 1024);
    expect(await started().call(master.port, 'SET', `{${redisPrefix}}:ballast`, ballast)).toBe(
      'OK',
    );
    expect(await started().call(master.port, 'SET', lostKey, '1')).toBe('OK');
    while (Date.now() - sleptAtMs < 1_500) await burst();
    await started().kill(master.port);
    await asleep;
    const promoted = await started().waitForFailover(master.port, FAILOVER_MS_MAX);
    expect(promoted.port).toBe(replicaPort);
    // The writes lost with the master: the promoted replica never had them.
    expect(await started().call(replicaPort, 'EXISTS', lostKey)).toBe(0);
    for (let round = 0; round < 5; round++) await burst();
    // Every event reaches the endpoint all the same: what is owed is known from PostgreSQL,
    // and a delivery whose job was lost is queued again, with its webhook-id.
    const events = await everyEventDelivered(deployment);
    expect(events).toBeGreaterThan(ids.length);
    expect(await checkInvariants(deployment.store.client)).toEqual([]);
    await stop(deployment);
  });
});
