/**
 * Store benchmark (`npm run bench:store`), against the local PostgreSQL: authorizations per
 * second and p50/p99 through the store alone, 64 concurrent, spread over 1,000 vaults and on
 * one hot vault; beside them, in the same run and on the same server, the baseline: a bare
 * transaction of the same shape in plain SQL (select for update, update, insert).
 *
 * Each run uses a database of its own, dropped at the end.
 */
import { randomBytes } from 'node:crypto';
import { Decimal, type Scope } from '../src/core/index.js';
import { createPgClient } from '../src/store/sql/pg-client.js';
import { openStore } from '../src/store/store.js';
import { withBenchDatabase } from './database.js';
import { REALISTIC_POLICY } from './workloads.js';
import { printTable, runLoad, type LoadResult } from './concurrency-harness.js';

const CONCURRENCY = 64;
const VAULTS = 1000;
const DURATION_MS = Number(process.env.BENCH_TIME_MS ?? 5000);

await withBenchDatabase(async (databaseUrl) => {
  const client = createPgClient({
    connectionString: databaseUrl,
    connectionsMax: CONCURRENCY,
  });
  try {
    // The realistic policy declines outside business hours (06:00-22:59 UTC): the store's clock
    // starts at 14:00 UTC today and runs at real speed, so every run measures approvals.
    const startedMs = Date.now();
    const businessHourMs = new Date(startedMs).setUTCHours(14, 0, 0, 0);
    const store = await openStore({
      client,
      masterKey: randomBytes(32),
      clock: () => businessHourMs + (Date.now() - startedMs),
      ...(process.env.BENCH_BATCHES === undefined
        ? {}
        : { authorizeBatchesMax: Number(process.env.BENCH_BATCHES) }),
    });
    const account = await store.findOrCreateAccount('bench');
    const scope: Scope = { accountId: account.id, mode: 'test' };
    console.log(`setting up ${VAULTS} vaults with cards and the realistic policy ...`);
    const cards: string[] = [];
    for (let index = 0; index < VAULTS; index++) {
      const { vault } = await store.createVault(scope, {
        name: `v${index}`,
        currency: 'USDC',
        metadata: {},
        initialDeposit: new Decimal('1000000000'),
      });
      await store.setPolicy(scope, vault.id, {
        ...REALISTIC_POLICY,
        limits: [
          { interval: 'daily', amount: '1000000000' },
          { interval: 'daily', count: 100000000 },
        ],
      });
      cards.push(
        (
          await store.createCard(scope, {
            vaultId: vault.id,
            cardholderName: 'Bench',
            metadata: {},
          })
        ).id,
      );
    }
    const hotCard = cards[0] as string;

    // The baseline's own tables: an account row to lock and a hold row to insert.
    await client.exec(`
    CREATE TABLE bench_accounts (id integer PRIMARY KEY, available numeric(38, 9) NOT NULL CHECK (available >= 0));
    CREATE TABLE bench_holds (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, account_id integer NOT NULL, amount numeric(38, 9) NOT NULL, created_at timestamptz NOT NULL DEFAULT now());
    INSERT INTO bench_accounts SELECT g, 1000000000 FROM generate_series(0, ${VAULTS - 1}) g;
  `);
    const baseline = (accountId: number) =>
      client.transaction(async (tx) => {
        await tx.query('SELECT available FROM bench_accounts WHERE id = $1 FOR UPDATE', [
          accountId,
        ]);
        await tx.query('UPDATE bench_accounts SET available = available - $2 WHERE id = $1', [
          accountId,
          '1.25',
        ]);
        await tx.query('INSERT INTO bench_holds (account_id, amount) VALUES ($1, $2)', [
          accountId,
          '1.25',
        ]);
      });
    let sequence = 0;
    const authorize = (cardId: string) =>
      store.authorize(scope, {
        cardId,
        amount: new Decimal('1.25'),
        currency: 'USDC',
        merchant: { name: 'Whole Foods', mcc: '5411', country: 'US', city: 'Austin', id: 'm_wf_1' },
        networkTransactionId: `bench_${(sequence += 1)}`,
      });
    const random = () => Math.floor(Math.random() * VAULTS);

    // Warm the pool, the policy cache and the server's buffers before measuring.
    await runLoad('warmup', CONCURRENCY, 1500, () => authorize(cards[random()] as string));
    await runLoad('warmup', CONCURRENCY, 500, () => baseline(random()));

    const cpu = async (label: string, work: () => Promise<LoadResult>) => {
      const before = process.cpuUsage();
      const result = await work();
      const used = process.cpuUsage(before);
      if (process.env.BENCH_CPU === '1') {
        console.log(
          `${label}: node CPU ${((used.user + used.system) / 1000 / DURATION_MS).toFixed(2)} cores, ${((used.user + used.system) / result.operations).toFixed(0)} us/op`,
        );
      }
      return result;
    };
    const results: LoadResult[] = [];
    results.push(
      await cpu('baseline', () =>
        runLoad('baseline: bare SQL transaction, 1,000 rows', CONCURRENCY, DURATION_MS, () =>
          baseline(random()),
        ),
      ),
    );
    results.push(
      await cpu('store', () =>
        runLoad('store authorize, 1,000 vaults', CONCURRENCY, DURATION_MS, () =>
          authorize(cards[random()] as string),
        ),
      ),
    );
    results.push(
      await runLoad('baseline: bare SQL transaction, one hot row', CONCURRENCY, DURATION_MS, () =>
        baseline(0),
      ),
    );
    results.push(
      await runLoad('store authorize, one hot vault', CONCURRENCY, DURATION_MS, () =>
        authorize(hotCard),
      ),
    );
    const [spreadBaseline, spread, hotBaseline, hot] = results as [
      LoadResult,
      LoadResult,
      LoadResult,
      LoadResult,
    ];
    printTable(
      `node ${process.version}, PostgreSQL on loopback, ${CONCURRENCY} concurrent, ${DURATION_MS} ms per row`,
      [spreadBaseline, spread],
      spreadBaseline,
    );
    printTable('one hot row / vault', [hotBaseline, hot], hotBaseline);
    // The figures are for approvals: a decline writes less, and would flatter the store.
    const { rows: outcomes } = await client.query<{ status: string; count: string }>(
      `SELECT status, count(*)::text AS count FROM transactions WHERE type = 'card_authorization' GROUP BY status`,
    );
    console.log(
      `\nauthorizations by status: ${outcomes.map((row) => `${row.status} ${row.count}`).join(', ')}`,
    );
    if (outcomes.some((row) => row.status !== 'pending')) {
      console.error('some authorizations were not approved: the figures are not comparable');
      process.exitCode = 1;
    }
    const met = (row: LoadResult, base: LoadResult) =>
      row.perSecond >= base.perSecond ? 'met   ' : 'MISSED';
    console.log(
      `\n${met(spread, spreadBaseline)} store authorize at least as fast as the baseline, spread`,
    );
    console.log(
      `${met(hot, hotBaseline)} store authorize at least as fast as the baseline, hot vault`,
    );
  } finally {
    await client.close();
  }
});
