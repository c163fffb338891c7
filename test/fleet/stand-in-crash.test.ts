import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Decimal } from '../../src/core/index.js';
import { checkInvariants } from '../../src/store/invariants.js';
import { createPgClient } from '../../src/store/sql/pg-client.js';
import { openStore, type OpenedStore } from '../../src/store/store.js';
import { MERCHANT, networkId } from '../support/authorize.js';
import { LOCAL_REDIS_URL, testRedisPrefix } from '../support/http.js';
import {
  callWithKey,
  listeningBase,
  serverDatabase,
  startCliProcess,
  stopAll,
  waitFor,
  type Child,
} from '../support/processes.js';
import { lockVault } from '../support/store.js';

/**
 * The network is told what is recorded, whatever crashes (issue 37, item 3): a real
 * `spendgate serve` answers in stand-in while the vault's row is locked, and is SIGKILLed
 * before its late decision can commit. The answer was written to the stand-in journal before
 * it was given, so the next process to start on that journal records it: the ledger ends
 * saying what the network was told, and a repeat of the callback gets that answer.
 */
const START_MS_MAX = 60_000;
const RECORDED_MS_MAX = 20_000;
const masterKey = randomBytes(32).toString('base64');
const folders: string[] = [];
const databases: Awaited<ReturnType<typeof serverDatabase>>[] = [];
const stores: OpenedStore[] = [];

afterAll(async () => {
  await stopAll();
  await Promise.all(stores.map((store) => store.close()));
  await Promise.all(databases.map((database) => database.drop()));
  for (const folder of folders) rmSync(folder, { recursive: true, force: true });
});

interface Setup {
  readonly store: OpenedStore;
  readonly databaseUrl: string;
  readonly key: string;
  readonly vaultId: string;
  readonly cardId: string;
  readonly journalDir: string;
}

async function setup(funded: string): Promise<Setup> {
  const database = await serverDatabase();
  databases.push(database);
  const store = await openStore({
    client: createPgClient({ connectionString: database.url, connectionsMax: 4 }),
    masterKey: Buffer.from(masterKey, 'base64'),
  });
  stores.push(store);
  const account = await store.findOrCreateAccount('stand-in-crash');
  const scope = { accountId: account.id, mode: 'test' as const };
  const { key } = await store.createApiKey({ ...scope, scopes: [] });
  const { vault } = await store.createVault(scope, {
    name: 'crash',
    currency: 'USDC',
    metadata: {},
    initialDeposit: new Decimal(funded),
  });
  const card = await store.createCard(scope, {
    vaultId: vault.id,
    cardholderName: 'Ada',
    metadata: {},
  });
  const journalDir = mkdtempSync(join(tmpdir(), 'sg-stand-in-'));
  folders.push(journalDir);
  return { store, databaseUrl: database.url, key, vaultId: vault.id, cardId: card.id, journalDir };
}

async function serve(setup: Setup, standIn: 'approve' | 'decline'): Promise<[Child, string]> {
  const child = startCliProcess(['serve', '--role', 'api'], {
    PORT: '0',
    LOG_LEVEL: 'info',
    DATABASE_URL: setup.databaseUrl,
    SPENDGATE_MASTER_KEY: masterKey,
    SPENDGATE_MODES: 'test',
    REDIS_URL: LOCAL_REDIS_URL,
    REDIS_PREFIX: testRedisPrefix(),
    AUTHORIZE_BUDGET_MS: '200',
    STAND_IN: standIn,
    STAND_IN_JOURNAL_DIR: setup.journalDir,
  });
  return [child, await listeningBase(child, START_MS_MAX)];
}

async function recorded(setup: Setup, networkTransactionId: string) {
  const { rows } = await setup.store.client.query<{
    status: string;
    hold_remaining: string;
    advice: boolean;
  }>(
    `SELECT status, hold_remaining::text, advice FROM transactions
     WHERE vault_id = $1 AND network_transaction_id = $2`,
    [setup.vaultId, networkTransactionId],
  );
  return rows;
}

describe('a stand-in answer survives the process that gave it', () => {
  it.each([
    // Approved in stand-in on a vault that cannot cover it: the hold is placed all the same.
    ['approve', '10', { approved: true, status: 'pending', hold: '25.000000000' }],
    // Declined in stand-in on a vault that would approve: the repeat must not approve.
    ['decline', '1000', { approved: false, status: 'declined', hold: '0.000000000' }],
  ] as const)('STAND_IN=%s: recorded by the next process', async (standIn, funded, expected) => {
    const ready = await setup(funded);
    const [first, base] = await serve(ready, standIn);
    const lock = lockVault(ready.store, ready.vaultId);
    await lock.isLocked;
    const networkTransactionId = networkId();
    const body = {
      cardId: ready.cardId,
      amount: '25',
      currency: 'USDC',
      merchant: MERCHANT,
      networkTransactionId,
    };
    const answer = await callWithKey(base, ready.key, 'POST', '/v1/authorizations', body);
    expect([answer.status, answer.body['approved'], answer.body['standIn']]).toEqual([
      200,
      expected.approved,
      true,
    ]);
    // The crash: the late decision dies with the process, before the row is free.
    await first.stop('SIGKILL');
    lock.release();
    await lock.done;
    expect(await recorded(ready, networkTransactionId)).toEqual([]);
    expect(readdirSync(ready.journalDir)).toHaveLength(1);

    const [, next] = await serve(ready, standIn);
    await waitFor(
      async () => (await recorded(ready, networkTransactionId)).length === 1,
      RECORDED_MS_MAX,
      () => 'the stand-in answer recorded by the next process',
    );
    expect(await recorded(ready, networkTransactionId)).toEqual([
      { status: expected.status, hold_remaining: expected.hold, advice: true },
    ]);
    const repeat = await callWithKey(next, ready.key, 'POST', '/v1/authorizations', body);
    expect([repeat.status, repeat.body['approved']]).toEqual([200, expected.approved]);
    expect(await checkInvariants(ready.store.client)).toEqual([]);
  });
});
