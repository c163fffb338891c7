import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Decimal } from '../../src/core/index.js';
import { checkInvariants } from '../../src/store/invariants.js';
import { createPgClient } from '../../src/store/sql/pg-client.js';
import { openStore, type OpenedStore } from '../../src/store/store.js';
import { MERCHANT, networkId } from '../support/authorize.js';
import { LOCAL_REDIS_URL, testRedisPrefix } from '../support/http.js';
import { startReplicaPair, type ReplicaPair } from '../support/pg-replica.js';
import {
  callWithKey,
  listeningBase,
  startCliProcess,
  stopAll,
  waitFor,
  type Child,
} from '../support/processes.js';
import { startReceiver, type Receiver } from '../support/receiver.js';

/**
 * PostgreSQL failing under the running service (issue 37, "what survives what"): a primary of
 * the test's own crashed and restarted mid-load, then crashed for good and its replica
 * promoted. Whatever the network was answered is what the ledger records (stand-in answers
 * included, from the stand-in journal), the ledger's invariants hold, and every event the
 * database holds reaches the webhook endpoint.
 */
const START_MS_MAX = 60_000;
const SETTLED_MS_MAX = 60_000;
const CLIENTS = 6;
const masterKey = randomBytes(32).toString('base64');

interface Answer {
  readonly networkTransactionId: string;
  readonly status: number;
  readonly approved: boolean;
  readonly standIn: boolean;
}

let pair: ReplicaPair | undefined;
let receiver: Receiver | undefined;
const stores: OpenedStore[] = [];
const journalDir = mkdtempSync(join(tmpdir(), 'sg-pg-restart-journal-'));
const redisPrefix = testRedisPrefix();
const database = `sg_restart_${randomBytes(4).toString('hex')}`;

beforeAll(async () => {
  pair = await startReplicaPair();
  receiver = await startReceiver();
  const admin = new pg.Client({ connectionString: pair.primaryUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${database}`);
  await admin.end();
}, 120_000);

afterAll(async () => {
  await stopAll();
  await Promise.all(stores.map((store) => store.close().catch(() => undefined)));
  await receiver?.close();
  await pair?.stop();
  rmSync(journalDir, { recursive: true, force: true });
});

function started(): ReplicaPair {
  if (pair === undefined) throw new Error('the PostgreSQL pair did not start');
  return pair;
}

async function storeOn(url: string): Promise<OpenedStore> {
  const store = await openStore({
    client: createPgClient({ connectionString: url, connectionsMax: 4 }),
    masterKey: Buffer.from(masterKey, 'base64'),
  });
  stores.push(store);
  return store;
}

async function serve(url: string): Promise<[Child, string]> {
  const child = startCliProcess(['serve', '--role', 'all'], {
    PORT: '0',
    LOG_LEVEL: 'info',
    DATABASE_URL: url,
    SPENDGATE_MASTER_KEY: masterKey,
    SPENDGATE_MODES: 'test',
    REDIS_URL: LOCAL_REDIS_URL,
    REDIS_PREFIX: redisPrefix,
    RATE_LIMIT_TEST_PER_SECOND: '100000',
    AUTHORIZE_BUDGET_MS: '300',
    STAND_IN_JOURNAL_DIR: journalDir,
    // An address never called: no transfer is made here, so no local Solana runtime starts.
    SOLANA_TEST_RPC_URL: 'http://127.0.0.1:9',
    WEBHOOK_RETRY_DELAYS_MS: '200,500,1000,1000,1000,1000',
  });
  return [child, await listeningBase(child, START_MS_MAX)];
}

/** Authorizations of 1.00 from CLIENTS clients, one at a time each, until `until` settles. */
async function load(base: string, key: string, cardId: string, until: Promise<unknown>) {
  let going = true;
  void until.finally(() => {
    going = false;
  });
  const answers: Answer[] = [];
  await Promise.all(
    Array.from({ length: CLIENTS }, async () => {
      while (going) {
        const networkTransactionId = networkId();
        const answer = await callWithKey(base, key, 'POST', '/v1/authorizations', {
          cardId,
          amount: '1',
          currency: 'USDC',
          merchant: MERCHANT,
          networkTransactionId,
        });
        answers.push({
          networkTransactionId,
          status: answer.status,
          approved: answer.body['approved'] === true,
          standIn: answer.body['standIn'] === true,
        });
      }
    }),
  );
  return answers;
}

/** The answers whose record differs from them, once every answer has a record (or the bound). */
async function unlikeTheirRecords(store: OpenedStore, vaultId: string, answers: Answer[]) {
  const recordsOf = async () => {
    const { rows } = await store.client.query<{ network_transaction_id: string; status: string }>(
      `SELECT network_transaction_id, status FROM transactions
       WHERE vault_id = $1 AND type = 'card_authorization'`,
      [vaultId],
    );
    return new Map(rows.map((row) => [row.network_transaction_id, row.status]));
  };
  await waitFor(
    async () => {
      const records = await recordsOf();
      return answers.every((answer) => records.has(answer.networkTransactionId));
    },
    SETTLED_MS_MAX,
    () => 'every answer recorded',
  );
  const records = await recordsOf();
  return answers.filter(
    (answer) => (records.get(answer.networkTransactionId) === 'pending') !== answer.approved,
  );
}

/** Events of the account before its endpoint was made: never owed to it. */
const beforeEndpoint = new Set<string>();

async function everyEventDelivered(store: OpenedStore, accountId: string): Promise<void> {
  let missing: string[] = [];
  try {
    await waitFor(
      async () => {
        const { rows } = await store.client.query<{ id: string }>(
          'SELECT id FROM outbox_events WHERE account_id = $1',
          [accountId],
        );
        const arrived = new Set(receiver?.received.map((delivery) => delivery.id));
        missing = rows
          .map((row) => row.id)
          .filter((id) => !arrived.has(id) && !beforeEndpoint.has(id));
        return missing.length === 0;
      },
      SETTLED_MS_MAX,
      () => `${missing.length} events undelivered`,
    );
  } catch (error) {
    throw new Error(
      `${String(error)}: ${JSON.stringify(await whereAre(store, missing.slice(0, 3)))}`,
      { cause: error },
    );
  }
}

/** Where undelivered events stand, for the failure's message. */
async function whereAre(store: OpenedStore, ids: string[]) {
  const read = async (text: string) => (await store.client.query(text, [ids])).rows;
  return {
    events: await read('SELECT id, type, created_at FROM outbox_events WHERE id = ANY($1)'),
    unrelayed: await read('SELECT * FROM outbox_unrelayed WHERE id = ANY($1)'),
    owed: await read('SELECT * FROM webhook_deliveries_owed WHERE event_id = ANY($1)'),
    deliveries: await read('SELECT * FROM webhook_deliveries WHERE event_id = ANY($1)'),
  };
}

describe('PostgreSQL failing under the running service', () => {
  let setup: { key: string; accountId: string; vaultId: string; cardId: string } | undefined;

  it('crashed and restarted mid-load: every answer recorded as given, every event delivered', async () => {
    const urls = started().urlsOf(database);
    const store = await storeOn(urls.primary);
    const account = await store.findOrCreateAccount('pg-restart');
    const scope = { accountId: account.id, mode: 'test' as const };
    const { key } = await store.createApiKey({ ...scope, scopes: [] });
    const { vault } = await store.createVault(scope, {
      name: 'restart',
      currency: 'USDC',
      metadata: {},
      initialDeposit: new Decimal('100000'),
    });
    const card = await store.createCard(scope, {
      vaultId: vault.id,
      cardholderName: 'Ada',
      metadata: {},
    });
    setup = { key, accountId: account.id, vaultId: vault.id, cardId: card.id };
    const [, base] = await serve(urls.primary);
    const { rows: earlier } = await store.client.query<{ id: string }>(
      'SELECT id FROM outbox_events WHERE account_id = $1',
      [account.id],
    );
    for (const row of earlier) beforeEndpoint.add(row.id);
    const endpoint = await callWithKey(base, key, 'POST', '/v1/webhooks', {
      url: receiver?.url,
      events: ['*'],
    });
    expect(endpoint.status).toBe(201);
    if (receiver !== undefined) receiver.secret = String(endpoint.body['secret']);

    const crash = (async () => {
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      await started().restartPrimary(1_500);
      await new Promise((resolve) => setTimeout(resolve, 2_000));
    })();
    const answers = await load(base, key, card.id, crash);
    expect(answers.filter((answer) => answer.status !== 200)).toEqual([]);
    // The outage was felt: some answers were the stand-in decline, past the budget.
    expect(answers.filter((answer) => answer.standIn).length).toBeGreaterThan(0);
    expect(answers.filter((answer) => !answer.standIn).length).toBeGreaterThan(0);
    expect(await unlikeTheirRecords(store, vault.id, answers)).toEqual([]);
    expect(await checkInvariants(store.client)).toEqual([]);
    await everyEventDelivered(store, account.id);
  });

  it('failed over to its replica: the promoted database is whole and serves on', async () => {
    if (setup === undefined) throw new Error('the restart test sets up the account');
    const { key, accountId, vaultId, cardId } = setup;
    const urls = started().urlsOf(database);
    const primary = stores[0];
    expect(primary).toBeDefined();
    // What the replica has replayed by now survives the failover; what comes after it may not
    // (asynchronous replication), so only what was caught up is held to.
    await started().waitCaughtUp();
    const { rows: before } = await (primary as OpenedStore).client.query<{ id: string }>(
      "SELECT id FROM transactions WHERE vault_id = $1 AND type = 'card_authorization'",
      [vaultId],
    );
    await started().promoteReplica();
    const store = await storeOn(urls.replica);
    const { rows: after } = await store.client.query<{ id: string }>(
      "SELECT id FROM transactions WHERE vault_id = $1 AND type = 'card_authorization'",
      [vaultId],
    );
    const kept = new Set(after.map((row) => row.id));
    expect(before.filter((row) => !kept.has(row.id))).toEqual([]);
    expect(await checkInvariants(store.client)).toEqual([]);
    // The service is pointed at the promoted database (a new process, as a changed
    // DATABASE_URL would start): it decides, and relays what the database holds.
    await stopAll();
    const [, base] = await serve(urls.replica);
    const answers = await load(
      base,
      key,
      cardId,
      new Promise((resolve) => setTimeout(resolve, 1_000)),
    );
    expect(answers.length).toBeGreaterThan(0);
    expect(answers.filter((answer) => answer.status !== 200 || !answer.approved)).toEqual([]);
    expect(await unlikeTheirRecords(store, vaultId, answers)).toEqual([]);
    expect(await checkInvariants(store.client)).toEqual([]);
    await everyEventDelivered(store, accountId);
  });
});
