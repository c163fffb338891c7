import { randomBytes } from 'node:crypto';
import { Queue } from 'bullmq';
import bs58 from 'bs58';
import { afterAll, beforeAll } from 'vitest';
import { Decimal, type Scope } from '../../src/core/index.js';
import { startLocalSolana, type LocalSolana } from '../../src/local-chain/index.js';
import { createPgClient } from '../../src/store/sql/pg-client.js';
import { openStore, type OpenedStore } from '../../src/store/store.js';
import { redisClient } from '../../src/redis.js';
import { queuePrefix, WEBHOOK_QUEUE } from '../../src/workers/queues.js';
import { MERCHANT } from './authorize.js';
import { testRedisPrefix } from './http.js';
import { startReceiver, type Receiver } from './receiver.js';
import { RoundRobin } from './round-robin.js';
import {
  freePort,
  serverDatabase,
  startApiProcess,
  startWorkerProcess,
  stopAll,
  waitFor,
  type Child,
} from './processes.js';
import { startRedisCluster, type RedisClusterUnderTest } from './redis-cluster.js';

/**
 * A fleet of real processes for the fleet proofs (test/fleet): `spendgate serve --role api`
 * and `--role worker` processes against one PostgreSQL database, one master key and one Redis
 * prefix, each process on a port of its own. The engines are the ones a fleet runs on: this
 * machine's PostgreSQL (a fresh database) and a Redis Cluster of the test's own (six nodes:
 * test/support/redis-cluster.ts). `fleetEnvironment` is the one place that names them to the
 * processes (and `unfinishedWebhookJobs`, beside it, the one place the test itself reads the
 * fleet's Redis).
 */

/** How long a process may take to answer /readyz 200: node, tsx and a cold import on a busy core. */
export const READY_MS_MAX = 90_000;

/** What a fleet shares: its database, master key, Redis and prefix, and a chain for the workers. */
export interface FleetEngines {
  readonly databaseUrl: string;
  readonly masterKey: Buffer;
  /** The fleet's Redis Cluster (six nodes of the test's own). */
  readonly redis: RedisClusterUnderTest;
  readonly redisPrefix: string;
  /** The local Solana runtime the workers send to (in the test process), when asked for. */
  readonly chain: LocalSolana | null;
  /** A store of the test's own on the fleet's database (migrated): setup and checks. */
  readonly store: OpenedStore;
  /** Stops what `startFleetEngines` started and drops the database. */
  close(): Promise<void>;
}

/**
 * The engines of one test file: a fresh database (migrated by the test's store before any
 * process starts), a Redis Cluster of its own and, with `chain`, a local Solana runtime.
 * Whatever started is stopped again when a later part fails to start.
 */
export async function startFleetEngines(options: {
  readonly chain: boolean;
}): Promise<FleetEngines> {
  const closers: (() => Promise<void>)[] = [];
  const close = async () => {
    for (const closer of closers.splice(0).reverse()) await closer();
  };
  try {
    const database = await serverDatabase();
    closers.push(() => database.drop());
    const redis = await startRedisCluster();
    closers.push(() => redis.stop());
    const masterKey = randomBytes(32);
    const store = await openStore({
      client: createPgClient({ connectionString: database.url, connectionsMax: 10 }),
      masterKey,
    });
    closers.push(() => store.close());
    const chain = options.chain ? await startLocalSolana({ slotIntervalMs: 0 }) : null;
    if (chain !== null) closers.push(() => chain.close());
    return {
      databaseUrl: database.url,
      masterKey,
      redis,
      redisPrefix: testRedisPrefix(),
      chain,
      store,
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}

/**
 * The environment of every process of the fleet: the same database, master key, Redis and
 * prefix for all. The settings that differ from a production fleet, and why:
 * - AUTHORIZE_BUDGET_MS at its maximum: the proofs are about what concurrency and crashes do
 *   to the ledger, not about speed on a shared 2-core machine, where a burst of 1,500 may pass
 *   the 1.5 s budget and turn approvals into stand-in declines.
 * - RATE_LIMIT_TEST_PER_SECOND far above the load: the steady load of the rolling restart is
 *   made with one test key (25/s by default).
 * - WEBHOOK_RETRY_DELAYS_MS short: a delivery retried meets the test's deadline.
 */
export function fleetEnvironment(engines: FleetEngines): Record<string, string> {
  const { chain } = engines;
  return {
    DATABASE_URL: engines.databaseUrl,
    SPENDGATE_MASTER_KEY: engines.masterKey.toString('base64'),
    REDIS_CLUSTER_NODES: engines.redis.setting,
    REDIS_PREFIX: engines.redisPrefix,
    SPENDGATE_MODES: 'test',
    AUTHORIZE_BUDGET_MS: '10000',
    RATE_LIMIT_TEST_PER_SECOND: '1000000',
    WEBHOOK_RETRY_DELAYS_MS: '200,200,200,200',
    LOG_LEVEL: 'warn',
    ...(chain === null
      ? {}
      : {
          SOLANA_TEST_RPC_URL: chain.url,
          SOLANA_TREASURY_KEY: bs58.encode(chain.treasury.secretKey),
          SOLANA_TEST_USDC_MINT: chain.usdcMint.toBase58(),
        }),
  };
}

export type Role = 'api' | 'worker';

/** One process of the fleet: its role, its port (kept across restarts) and the process now. */
export interface FleetProcess {
  readonly role: Role;
  readonly port: number;
  /** Where it answers: the REST interface (api) or /healthz, /readyz and /metrics (worker). */
  readonly base: string;
  child: Child;
}

/** A fleet's processes, at most (each is a node process on a machine of 2 cores). */
const PROCESSES_MAX = 8;

export class Fleet {
  readonly apis: FleetProcess[] = [];
  readonly workers: FleetProcess[] = [];

  private constructor(private readonly env: Record<string, string>) {}

  /** `apis` API and `workers` worker processes, started together; resolves once all are ready. */
  static async start(
    engines: FleetEngines,
    counts: { readonly apis: number; readonly workers: number },
  ): Promise<Fleet> {
    if (counts.apis + counts.workers > PROCESSES_MAX || counts.apis + counts.workers < 1)
      throw new Error(`a fleet of 1 to ${PROCESSES_MAX} processes, not ${JSON.stringify(counts)}`);
    const fleet = new Fleet(fleetEnvironment(engines));
    const roles: Role[] = [
      ...Array.from({ length: counts.apis }, () => 'api' as const),
      ...Array.from({ length: counts.workers }, () => 'worker' as const),
    ];
    const started = await Promise.all(roles.map((role) => fleet.#launch(role)));
    for (const each of started) (each.role === 'api' ? fleet.apis : fleet.workers).push(each);
    return fleet;
  }

  /** The API processes' base URLs, in order (a round robin's members). */
  apiBases(): string[] {
    return this.apis.map((each) => each.base);
  }

  /** Starts the process of `role` on `port` (a free one unless given) and waits until it is ready. */
  async #launch(role: Role, port?: number): Promise<FleetProcess> {
    const chosen = port ?? (await freePort());
    const child =
      role === 'api'
        ? startApiProcess({ ...this.env, PORT: String(chosen) })
        : startWorkerProcess({ ...this.env, WORKER_PORT: String(chosen) });
    const started: FleetProcess = {
      role,
      port: chosen,
      base: `http://127.0.0.1:${chosen}`,
      child,
    };
    await waitReady(started);
    return started;
  }

  /** A new process in place of `each`, which has exited, on the same port, once it is ready. */
  async restart(each: FleetProcess): Promise<void> {
    // An exited process's promise is settled: it wins the race against the next turn.
    const exited = await Promise.race([
      each.child.exited.then(() => true),
      new Promise<false>((resolve) =>
        setImmediate(() => {
          resolve(false);
        }),
      ),
    ]);
    if (!exited)
      throw new Error(`restart of the ${each.role} process on port ${each.port}: it still runs`);
    const replacement = await this.#launch(each.role, each.port);
    each.child = replacement.child;
  }
}

/** An endpoint of the account for every event, delivered to `receiver` (which checks signatures). */
export async function subscribe(
  store: OpenedStore,
  scope: Scope,
  receiver: Receiver,
): Promise<void> {
  const { secret } = await store.createWebhookEndpoint(scope, {
    url: receiver.url,
    events: ['*'],
    description: null,
  });
  receiver.secret = secret;
}

/** What a fleet test file works with, once `useFleet` has started it. */
export interface FleetUnderTest {
  readonly engines: FleetEngines;
  readonly fleet: Fleet;
  /** The "load balancer" over the API processes. */
  readonly robin: RoundRobin;
  /** A webhook receiver on loopback (the tests that make endpoints point them here). */
  readonly receiver: Receiver;
}

/**
 * A fleet for one test file: engines, `apis` API and `workers` worker processes, a round robin
 * over the API processes and a webhook receiver, started before its tests and stopped after
 * them however they end (every process by `stopAll`). Returns the accessor the tests call.
 */
export function useFleet(options: {
  readonly apis: number;
  readonly workers: number;
  readonly chain: boolean;
}): () => FleetUnderTest {
  let engines: FleetEngines | undefined;
  let receiver: Receiver | undefined;
  let running: FleetUnderTest | undefined;
  beforeAll(async () => {
    engines = await startFleetEngines({ chain: options.chain });
    receiver = await startReceiver();
    const fleet = await Fleet.start(engines, options);
    running = { engines, fleet, robin: new RoundRobin(fleet.apiBases()), receiver };
  }, READY_MS_MAX + 30_000);
  afterAll(async () => {
    await stopAll();
    await receiver?.close();
    await engines?.close();
  });
  return () => {
    if (running === undefined) throw new Error('the fleet is used before it started');
    return running;
  };
}

/** Resolves once `each` answers /readyz with 200; throws with its output if it exits or the deadline passes. */
export async function waitReady(each: FleetProcess): Promise<void> {
  let exited = false;
  void each.child.exited.then(() => {
    exited = true;
  });
  await waitFor(
    async () => {
      if (exited) throw new Error(`the ${each.role} process exited:\n${each.child.output()}`);
      return (await readyStatus(each.base)) === 200;
    },
    READY_MS_MAX,
    () => `the ${each.role} process on port ${each.port} was not ready:\n${each.child.output()}`,
  );
}

async function readyStatus(base: string): Promise<number | null> {
  try {
    const response = await fetch(`${base}/readyz`, { signal: AbortSignal.timeout(2_000) });
    await response.arrayBuffer();
    return response.status;
  } catch {
    // Not listening yet.
    return null;
  }
}

/** An account of the fleet's, with an all-scopes key and the card network's key. */
export interface FleetAccount {
  readonly scope: Scope;
  /** Every scope: setup, transfers, settlements. */
  readonly key: string;
  /** `authorizations:write` alone, as the card network holds: authorizations, settlements. */
  readonly networkKey: string;
}

export async function fleetAccount(store: OpenedStore): Promise<FleetAccount> {
  const account = await store.findOrCreateAccount(`fleet-${randomBytes(4).toString('hex')}`);
  const scope: Scope = { accountId: account.id, mode: 'test' };
  const { key } = await store.createApiKey({ ...scope, scopes: [] });
  const { key: networkKey } = await store.createApiKey({
    ...scope,
    scopes: ['authorizations:write'],
  });
  return { scope, key, networkKey };
}

/** A vault of `currency` funded with `initialDeposit`, and an active card on it. */
export async function fundedVaultCard(
  store: OpenedStore,
  scope: Scope,
  initialDeposit: string,
  currency: 'USDC' | 'SOL' = 'USDC',
): Promise<{ vaultId: string; cardId: string }> {
  const { vault } = await store.createVault(scope, {
    name: 'fleet',
    currency,
    metadata: {},
    initialDeposit: new Decimal(initialDeposit),
  });
  const card = await store.createCard(scope, {
    vaultId: vault.id,
    cardholderName: 'Ada',
    metadata: {},
  });
  return { vaultId: vault.id, cardId: card.id };
}

/** The body of an authorization callback of `amount` USDC on `cardId`. */
export function authorizationBody(
  cardId: string,
  networkTransactionId: string,
  amount = '1',
): Record<string, unknown> {
  return { cardId, amount, currency: 'USDC', merchant: MERCHANT, networkTransactionId };
}

/** The vault's card authorizations as rows: one per networkTransactionId, if all is well. */
export async function authorizationRows(
  store: OpenedStore,
  vaultId: string,
): Promise<{ id: string; network_transaction_id: string; status: string }[]> {
  const { rows } = await store.client.query<{
    id: string;
    network_transaction_id: string;
    status: string;
  }>(
    `SELECT id, network_transaction_id, status FROM transactions
     WHERE vault_id = $1 AND type = 'card_authorization' ORDER BY id`,
    [vaultId],
  );
  return rows;
}

/**
 * The webhook queue's unfinished jobs on the fleet's Redis: waiting, active, delayed and
 * failed (all 0 once every job is done). The connection is made beside `fleetEnvironment`,
 * from the same engines, so a move to a Redis Cluster changes both together.
 */
export async function unfinishedWebhookJobs(
  engines: FleetEngines,
): Promise<Record<string, number>> {
  const connection = redisClient(engines.redis.target, { maxRetriesPerRequest: 1 });
  const queue = new Queue(WEBHOOK_QUEUE, { connection, prefix: queuePrefix(engines.redisPrefix) });
  try {
    const counts = await queue.getJobCounts('waiting', 'active', 'delayed', 'failed');
    return Object.fromEntries(Object.entries(counts).filter(([, count]) => count > 0));
  } finally {
    await queue.close();
    connection.disconnect();
  }
}

/**
 * The account's work not finished yet: clearing batches not completed, external transfers
 * still pending, events not relayed to the queue or not among `receivedEventIds`. Empty once
 * every job is done (whatever its outcome: the tests check outcomes apart).
 */
export async function unfinishedWork(
  store: OpenedStore,
  accountId: string,
  receivedEventIds: ReadonlySet<string>,
): Promise<string[]> {
  const { rows } = await store.client.query<{ what: string }>(
    `SELECT 'settlement ' || id AS what FROM settlements WHERE account_id = $1 AND status <> 'completed'
     UNION ALL
     SELECT 'transfer ' || id FROM transfers WHERE account_id = $1 AND status = 'pending'
     UNION ALL
     SELECT 'unrelayed ' || e.id FROM outbox_events e JOIN outbox_unrelayed u ON u.id = e.id WHERE e.account_id = $1`,
    [accountId],
  );
  const { rows: events } = await store.client.query<{ id: string }>(
    'SELECT id FROM outbox_events WHERE account_id = $1',
    [accountId],
  );
  return [
    ...rows.map((row) => row.what),
    ...events
      .filter((event) => !receivedEventIds.has(event.id))
      .map((event) => `undelivered ${event.id}`),
  ];
}

/**
 * Resolves once the account's work is all done (`unfinishedWork` empty, no webhook job left
 * in the queue); throws after `timeoutMs`, naming what was left and what the workers said.
 */
export async function allWorkDone(
  engines: FleetEngines,
  fleet: Fleet,
  accountId: string,
  receivedEventIds: () => ReadonlySet<string>,
  timeoutMs: number,
): Promise<void> {
  let left: string[] = [];
  await waitFor(
    async () => {
      left = await unfinishedWork(engines.store, accountId, receivedEventIds());
      if (left.length === 0) left = Object.keys(await unfinishedWebhookJobs(engines));
      return left.length === 0;
    },
    timeoutMs,
    () =>
      `work left undone: ${left.slice(0, 10).join(', ')}\n${fleet.workers.map((worker) => worker.child.output()).join('\n')}`,
  );
}

/** The ids of the events a receiver got. */
export function receivedIds(receiver: Receiver): Set<string> {
  return new Set(receiver.received.map((delivery) => delivery.id));
}
