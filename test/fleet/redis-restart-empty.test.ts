import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Scope } from '../../src/core/index.js';
import { createPgClient } from '../../src/store/sql/pg-client.js';
import { openStore, type OpenedStore } from '../../src/store/store.js';
import { networkId } from '../support/authorize.js';
import {
  authorizationBody,
  fleetAccount,
  fundedVaultCard,
  waitReady,
  type FleetProcess,
  type Role,
} from '../support/fleet.js';
import { testRedisPrefix } from '../support/http.js';
import {
  callWithKey,
  freePort,
  serverDatabase,
  startApiProcess,
  startRedisServer,
  startWorkerProcess,
  stopAll,
  waitFor,
  type Child,
} from '../support/processes.js';
import { startReceiver, type Receiver } from '../support/receiver.js';

/**
 * Contract section 18 (v1.2, issue 37 item 1): Redis carries work, it is never the only record
 * of it. Real processes: an API process and a worker process on a fresh database and on a
 * redis-server of the test's own, run as Debian runs it for a cache (no RDB, no AOF).
 * Authorizations arrive under load while the receiver is down (503), so that their deliveries
 * wait in Redis as jobs being retried; the worker is SIGKILLed in the middle of the load; Redis
 * is then killed and started again, empty; the receiver comes back and a new worker starts.
 * Every approval's event must arrive within the contract's bound, with its own `webhook-id`
 * (the event id) and a signature that verifies: what was owed is known from PostgreSQL.
 * Before the owed deliveries (migration 0018), every job Redis held was lost with it.
 */
const AUTHORIZATIONS = 240;
const CLIENTS = 12;
/** The worker is killed once this many authorizations have been answered. */
const ANSWERED_AT_KILL = 120;
/** Long enough that no delivery runs out of attempts while the receiver is down. */
const RETRY_DELAYS_MS = Array.from({ length: 8 }, () => 2_000);
/** Contract section 18: queued again within 60 s; the start of a cold worker on top. */
const DELIVERED_WITHIN_MS = 75_000;

describe('Redis restarted empty under load, the worker SIGKILLed', () => {
  const masterKey = randomBytes(32);
  const redisPrefix = testRedisPrefix();
  let database: Awaited<ReturnType<typeof serverDatabase>>;
  let store: OpenedStore;
  let receiver: Receiver;

  beforeAll(async () => {
    database = await serverDatabase();
    store = await openStore({
      client: createPgClient({ connectionString: database.url, connectionsMax: 10 }),
      masterKey,
    });
    receiver = await startReceiver();
  });

  afterAll(async () => {
    await stopAll();
    await receiver.close();
    await store.close();
    await database.drop();
  });

  function environment(redisPort: number): Record<string, string> {
    return {
      DATABASE_URL: database.url,
      SPENDGATE_MASTER_KEY: masterKey.toString('base64'),
      REDIS_URL: `redis://127.0.0.1:${redisPort}`,
      REDIS_PREFIX: redisPrefix,
      SPENDGATE_MODES: 'test',
      AUTHORIZE_BUDGET_MS: '10000',
      RATE_LIMIT_TEST_PER_SECOND: '1000000',
      WEBHOOK_RETRY_DELAYS_MS: RETRY_DELAYS_MS.join(','),
      LOG_LEVEL: 'warn',
    };
  }

  async function launch(role: Role, env: Record<string, string>): Promise<FleetProcess> {
    const port = await freePort();
    const child =
      role === 'api'
        ? startApiProcess({ ...env, PORT: String(port) })
        : startWorkerProcess({ ...env, WORKER_PORT: String(port) });
    const started: FleetProcess = { role, port, base: `http://127.0.0.1:${port}`, child };
    await waitReady(started);
    return started;
  }

  /** The account's approvals, as the events the outbox holds for them. */
  async function approvalEvents(scope: Scope): Promise<string[]> {
    const { rows } = await store.client.query<{ id: string }>(
      `SELECT id FROM outbox_events WHERE account_id = $1 AND type = 'authorization.approved'`,
      [scope.accountId],
    );
    return rows.map((row) => row.id);
  }

  async function unrelayed(scope: Scope): Promise<number> {
    const { rows } = await store.client.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM outbox_events e JOIN outbox_unrelayed u ON u.id = e.id
       WHERE e.account_id = $1`,
      [scope.accountId],
    );
    return rows[0]?.n ?? -1;
  }

  /**
   * The distinct approval events the receiver accepted (answered 200), each verified and with
   * its own webhook-id; while `up` is false it answers 503 and accepts nothing.
   */
  const accepted = new Set<string>();
  let up = false;
  function answerWhileUp(): void {
    receiver.answer = (each) => {
      if (!up) return 503;
      const genuine = each.verified && each.headers['webhook-id'] === each.id;
      if (genuine && each.type === 'authorization.approved') accepted.add(each.id);
      return 200;
    };
  }
  function deliveredApprovals(): ReadonlySet<string> {
    return accepted;
  }

  it('delivers every approval made under load, with its webhook-id, after the restarts', async () => {
    const redisPort = await freePort();
    const redis = await startRedisServer(redisPort);
    const env = environment(redisPort);
    const account = await fleetAccount(store);
    const { cardId } = await fundedVaultCard(store, account.scope, '100000');
    const { secret } = await store.createWebhookEndpoint(account.scope, {
      url: receiver.url,
      events: ['authorization.approved'],
      description: null,
    });
    receiver.secret = secret;
    answerWhileUp();
    const [api, worker] = await Promise.all([launch('api', env), launch('worker', env)]);

    // The load: each client sends its next authorization once the last is answered; the
    // worker dies in the middle of it.
    let answered = 0;
    let nextIndex = 0;
    const kill: { exit: ReturnType<Child['stop']> | null } = { exit: null };
    const client = async (): Promise<void> => {
      while (nextIndex < AUTHORIZATIONS) {
        nextIndex += 1;
        const { status, body } = await callWithKey(
          api.base,
          account.networkKey,
          'POST',
          '/v1/authorizations',
          authorizationBody(cardId, networkId()),
        );
        expect({ status, approved: body.approved }).toEqual({ status: 200, approved: true });
        if (++answered === ANSWERED_AT_KILL) kill.exit = worker.child.stop('SIGKILL');
      }
    };
    await Promise.all(Array.from({ length: CLIENTS }, () => client()));
    expect(await kill.exit).toMatchObject({ signal: 'SIGKILL' });
    const approvals = await approvalEvents(account.scope);
    expect(approvals).toHaveLength(AUTHORIZATIONS);
    // The killed worker had relayed some approvals: jobs in Redis, retried against a 503.
    const relayedAtKill = AUTHORIZATIONS - (await unrelayed(account.scope));
    expect(relayedAtKill).toBeGreaterThan(0);
    expect(receiver.received.length).toBeGreaterThan(0);
    expect(deliveredApprovals().size).toBe(0);

    // Redis restarted without persistence: every job it held is gone.
    // (stopAll ends the new one.)
    await redis.stop('SIGKILL');
    await startRedisServer(redisPort);
    up = true;
    const restarted = await launch('worker', env);
    await waitFor(
      () => deliveredApprovals().size === AUTHORIZATIONS,
      DELIVERED_WITHIN_MS,
      () =>
        `${deliveredApprovals().size} of ${AUTHORIZATIONS} approvals delivered (${relayedAtKill} ` +
        `had been relayed before the kill); the worker said:\n${restarted.child.output()}`,
    );
    expect([...deliveredApprovals()].sort()).toEqual([...approvals].sort());
    expect(await unrelayed(account.scope)).toBe(0);
  }, 240_000);
});
