import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkInvariants } from '../../src/store/invariants.js';
import type { OpenedStore } from '../../src/store/store.js';
import { startReplicaPair, type ReplicaPair } from '../support/pg-replica.js';
import { stopAll } from '../support/processes.js';
import { ServiceUnderLoad, type LoadedAccount } from '../support/service-under-load.js';

/**
 * PostgreSQL failing under the running service (issue 37, "what survives what"): a primary of
 * the test's own crashed and restarted mid-load, then crashed for good and its replica
 * promoted. Whatever the network was answered is what the ledger records (stand-in answers
 * included, from the stand-in journal), the ledger's invariants hold, and every event the
 * database holds reaches the webhook endpoint.
 */
const service = new ServiceUnderLoad();
const database = `sg_restart_${randomBytes(4).toString('hex')}`;
let pair: ReplicaPair | undefined;

beforeAll(async () => {
  pair = await startReplicaPair();
  const admin = new pg.Client({ connectionString: pair.primaryUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${database}`);
  await admin.end();
}, 120_000);

afterAll(async () => {
  await service.close();
  await pair?.stop();
});

function started(): ReplicaPair {
  if (pair === undefined) throw new Error('the PostgreSQL pair did not start');
  return pair;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('PostgreSQL failing under the running service', () => {
  let primary: OpenedStore | undefined;
  let account: LoadedAccount | undefined;

  it('crashed and restarted mid-load: every answer recorded as given, every event delivered', async () => {
    const urls = started().urlsOf(database);
    primary = await service.storeOn(urls.primary);
    account = await service.account(primary, 'pg-restart');
    const [, base] = await service.serve(urls.primary);
    await service.subscribe(primary, base, account);
    const crash = (async () => {
      await sleep(1_500);
      await started().restartPrimary(1_500);
      await sleep(2_000);
    })();
    const answers = await service.load(base, account.key, account.cardId, crash);
    expect(
      answers.filter((answer) => answer.status !== 200),
      'answers not 200',
    ).toEqual([]);
    // The outage was felt: some answers were the stand-in decline, past the budget.
    expect(answers.filter((answer) => answer.standIn).length).toBeGreaterThan(0);
    expect(answers.filter((answer) => !answer.standIn).length).toBeGreaterThan(0);
    expect(
      await service.unlikeTheirRecords(primary, account.vaultId, answers),
      'answers unlike their records',
    ).toEqual([]);
    expect(await checkInvariants(primary.client)).toEqual([]);
    await service.everyEventDelivered(primary, account.accountId);
  });

  it('failed over to its replica: the promoted database is whole and serves on', async () => {
    if (primary === undefined || account === undefined) throw new Error('set up by the test above');
    const urls = started().urlsOf(database);
    // What the replica has replayed by now survives the failover; what comes after it may not
    // (asynchronous replication), so only what was caught up is held to.
    await started().waitCaughtUp();
    const authorizations = (store: OpenedStore) =>
      store.client.query<{ id: string }>(
        "SELECT id FROM transactions WHERE vault_id = $1 AND type = 'card_authorization'",
        [account?.vaultId],
      );
    const before = (await authorizations(primary)).rows;
    await started().promoteReplica();
    const store = await service.storeOn(urls.replica);
    const kept = new Set((await authorizations(store)).rows.map((row) => row.id));
    expect(before.filter((row) => !kept.has(row.id))).toEqual([]);
    expect(await checkInvariants(store.client)).toEqual([]);
    // The service is pointed at the promoted database (a new process, as a changed
    // DATABASE_URL would start): it decides, and relays what the database holds.
    await stopAll();
    const [, base] = await service.serve(urls.replica);
    const answers = await service.load(base, account.key, account.cardId, sleep(1_000));
    expect(answers.length).toBeGreaterThan(0);
    expect(answers.filter((answer) => answer.status !== 200 || !answer.approved)).toEqual([]);
    expect(
      await service.unlikeTheirRecords(store, account.vaultId, answers),
      'answers unlike their records',
    ).toEqual([]);
    expect(await checkInvariants(store.client)).toEqual([]);
    await service.everyEventDelivered(store, account.accountId);
  });
});
