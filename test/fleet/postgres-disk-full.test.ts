import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkInvariants } from '../../src/store/invariants.js';
import { startPostgresOnSmallDisk, type SmallDiskPostgres } from '../support/pg-small-disk.js';
import { ServiceUnderLoad } from '../support/service-under-load.js';

/**
 * PostgreSQL's disk full under the running service (issue 37, "what survives what"): the
 * database's own small disk is filled to the last byte mid-load, for long enough that writes
 * (tables and WAL) are refused, then freed. Every answer the network got is recorded as given
 * once the database can write again (stand-in answers from the journal), nothing committed
 * before is lost, the invariants hold, and every event is delivered.
 */
const DISK_MB = 96;
const service = new ServiceUnderLoad();
let postgres: SmallDiskPostgres | undefined;

beforeAll(async () => {
  postgres = await startPostgresOnSmallDisk(DISK_MB);
  const admin = new pg.Client({ connectionString: postgres.url('postgres') });
  await admin.connect();
  await admin.query('CREATE DATABASE spendgate');
  await admin.end();
}, 120_000);

afterAll(async () => {
  await service.close();
  await postgres?.stop();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("PostgreSQL's disk full under the running service", () => {
  it('refuses writes while full, and records every answer as given once freed', async () => {
    if (postgres === undefined) throw new Error('the server did not start');
    const disk = postgres;
    const url = disk.url('spendgate');
    const store = await service.storeOn(url);
    const account = await service.account(store, 'disk-full');
    const [, base] = await service.serve(url);
    await service.subscribe(store, base, account);
    const { rows: committedBefore } = await store.client.query<{ count: number }>(
      'SELECT count(*)::int AS count FROM transactions',
    );
    let fullFreeBytes = Number.NaN;
    const full = (async () => {
      await sleep(1_000);
      await disk.fill();
      fullFreeBytes = disk.freeBytes();
      await sleep(3_000);
      await disk.free();
      await disk.ensureRunning();
      await sleep(2_000);
    })();
    const answers = await service.load(base, account.key, account.cardId, full);
    expect(fullFreeBytes).toBe(0);
    expect(
      answers.filter((answer) => answer.status !== 200),
      'answers not 200',
    ).toEqual([]);
    // The full disk was felt: answers in stand-in while the database could not write.
    expect(answers.filter((answer) => answer.standIn).length).toBeGreaterThan(0);
    const check = await service.storeOn(url);
    expect(
      await service.unlikeTheirRecords(check, account.vaultId, answers),
      'answers unlike their records',
    ).toEqual([]);
    const { rows: committedAfter } = await check.client.query<{ count: number }>(
      'SELECT count(*)::int AS count FROM transactions',
    );
    expect(committedAfter[0]?.count).toBeGreaterThanOrEqual(
      (committedBefore[0]?.count ?? 0) + answers.length,
    );
    expect(await checkInvariants(check.client)).toEqual([]);
    await service.everyEventDelivered(check, account.accountId);
  });
});
