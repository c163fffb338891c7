/**
 * Backtest bench (`npm run bench:backtest`): replayed authorizations per second of worker time
 * (issue 14's target: at least 200,000), beside baselines measured in the same run.
 *
 * In a database of the run's own (dropped afterwards): one vault with five cards and
 * BENCH_BACKTEST_ROWS (1,000,000) recorded authorizations over the last 80 days, built in SQL
 * (INSERT ... SELECT from generate_series, then VACUUM ANALYZE): amounts from 0.01 to 600, a
 * dozen MCCs, a few countries and merchants; most approved and captured (some in part), some
 * reversed, some pending, some declined by the policy, by the balance or before the policy,
 * a few in stand-in. History only: no ledger entries or counters go with the rows.
 *
 * The draft is the realistic policy of bench:core (limits per transaction, per day, per month
 * at one MCC and by count, category and country lists, three templates, custom rules). Measured,
 * each on the same rows:
 * 1. read, one result row per authorization through the driver (the ordinary read);
 * 2. read as the replay reads: bounded batches, each one JSON array the database builds
 *    (store/backtest-rows.ts), no replay;
 * 3. the replay alone, in memory, over rows already read (the core's cost);
 * 4. json-rules-engine replaying the same rows under the same policy (its own running spend
 *    sums, its facts per row), on the first BENCH_BACKTEST_JRE_ROWS (20,000): it is slow;
 * 5. the backtest as the worker role runs it (Store.runBacktest: claim, count, read, replay,
 *    progress, result), timed: wall time, this process's CPU time (the worker's), and the
 *    database's CPU time.
 * Printed: each figure in authorizations per second, and the target as met or MISSED for the
 * worker's CPU time (what "worker time" counts) and, stricter, for its wall time.
 */
import { randomBytes } from 'node:crypto';
import { loadavg } from 'node:os';
import { Engine } from 'json-rules-engine';
import {
  BacktestReplay,
  backtestWindow,
  compilePolicy,
  Decimal,
  hourUtc,
  dayOfWeekUtc,
  isoDate,
  utcDayNumber,
  type ReplayRow,
} from '../src/core/index.js';
import {
  readReplayBatch,
  REPLAY_BATCH_ROWS,
  windowIdBounds,
  type BacktestTarget,
} from '../src/store/backtest-rows.js';
import { createPgClient } from '../src/store/sql/pg-client.js';
import { openStore, type OpenedStore } from '../src/store/store.js';
import { postgresSeconds, postgresSince } from './cpu.js';
import { withBenchDatabase } from './database.js';
import { integerSetting } from './settings.js';
import { CUSTOM_RULES, REALISTIC_POLICY, realisticReferenceEngine } from './workloads.js';

const ROWS = integerSetting('BENCH_BACKTEST_ROWS', 1_000_000, 20_000, 20_000_000);
const JRE_ROWS = integerSetting('BENCH_BACKTEST_JRE_ROWS', 20_000, 1_000, 200_000);
const DAYS = 80;
/**
 * The draft: bench:core's realistic policy at the history's scale (12,500 authorizations a
 * day): its spend limits raised, and its custom rules on spend sums left out (calibrated for a
 * person's spend, they would decline nearly every row here), so that most authorizations stay
 * approved and every approval runs the spend sums: a draft that declines nearly everything
 * would replay faster than a real one. Its categories, countries, templates and other rules
 * stay, and its four limits keep three spend sums running.
 */
const DRAFT = {
  ...REALISTIC_POLICY,
  rules: CUSTOM_RULES.filter((rule) => !/spent|countDaily/.test(JSON.stringify(rule))),
  limits: [
    { interval: 'perTransaction', amount: '500' },
    { interval: 'daily', amount: '3000000' },
    { interval: 'monthly', amount: '20000000', merchantCategories: ['5812'] },
    { interval: 'daily', count: 20000 },
  ],
};
const TARGET_PER_SECOND = 200_000;
const DAY_MS = 86_400_000;

const load = () =>
  `load average ${loadavg()
    .map((value) => value.toFixed(1))
    .join(' ')}`;
const rate = (rows: number, seconds: number) =>
  `${Math.round(rows / seconds).toLocaleString('en-US')}/s`;

/** CPU seconds of this process (user and system) since `before`. */
function cpuSince(before: NodeJS.CpuUsage): number {
  const used = process.cpuUsage(before);
  return (used.user + used.system) / 1e6;
}

/**
 * The history, in one statement: row i of ROWS, spread evenly over the last 80 days (ids of
 * the form the service makes, led by their millisecond). Pseudo-random choices by
 * multiplicative hashing of i, so every run builds the same rows.
 */
async function buildHistory(
  store: OpenedStore,
  owner: { accountId: string; mode: 'test' },
  vaultId: string,
  cardIds: readonly string[],
  endMs: number,
): Promise<void> {
  const spacingMs = Math.floor((DAYS * DAY_MS) / ROWS);
  await store.client.query(
    `INSERT INTO transactions (id, account_id, mode, vault_id, type, status, currency, amount, captured_amount,
                               hold_remaining, card_id, merchant, mcc, decline_code, decline_reason, failure_reason,
                               stand_in, spend_day, created_at, updated_at, completed_at)
     SELECT 'txn_' || lpad(to_hex(ms), 12, '0') || '7' || lpad(to_hex(i), 19, '0'), $1, 'test', $2,
            'card_authorization', status, 'USDC', amount,
            CASE status WHEN 'completed' THEN CASE WHEN h % 10 = 0 THEN round(amount / 2, 2) ELSE amount END ELSE 0 END,
            CASE status WHEN 'pending' THEN amount ELSE 0 END,
            ($3::text[])[1 + h % 5],
            jsonb_build_object('name', 'Merchant ' || (h % 50), 'mcc', mcc, 'country', country, 'city', 'Austin'),
            mcc,
            CASE WHEN status = 'declined' THEN code END,
            CASE WHEN status = 'declined' THEN jsonb_build_object('rule', rule, 'message', rule) END,
            CASE WHEN status = 'failed' THEN 'reversed' END,
            h % 1000 = 7,
            CASE WHEN status <> 'declined' THEN (to_timestamp(ms / 1000.0) AT TIME ZONE 'UTC')::date END,
            to_timestamp(ms / 1000.0), to_timestamp((ms + 3600000) / 1000.0),
            CASE WHEN status = 'completed' THEN to_timestamp((ms + 86400000) / 1000.0) END
     FROM (
       SELECT i, h, ms, round((1 + h % 60000) / 100.0, 2)::numeric AS amount,
              (ARRAY['5411','5812','5814','4511','5999','7011','5541','5912','4121','7995','5732','5311'])[1 + (h / 7) % 12] AS mcc,
              (ARRAY['US','US','US','US','CA','GB','DE','FR','IR'])[1 + (h / 11) % 9] AS country,
              CASE WHEN h % 100 < 70 THEN 'completed' WHEN h % 100 < 80 THEN 'failed'
                   WHEN h % 100 < 85 THEN 'pending' ELSE 'declined' END AS status,
              CASE WHEN h % 100 = 99 THEN 'card_declined' WHEN h % 100 >= 97 THEN 'insufficient_balance'
                   ELSE 'authorization_failed' END AS code,
              CASE WHEN h % 100 = 99 THEN 'card_frozen' WHEN h % 100 >= 97 THEN 'available_balance'
                   ELSE 'limits[1]' END AS rule
       FROM (SELECT i, (i * 2654435761) % 4294967291 AS h, $4::bigint + i * $5::bigint AS ms
             FROM generate_series(0, $6::bigint - 1) AS i) AS numbered
     ) AS generated`,
    [owner.accountId, vaultId, cardIds, endMs - ROWS * spacingMs, spacingMs, ROWS],
  );
  await store.client.query('VACUUM ANALYZE transactions');
}

/** 1. Every row read through the driver, one result row each, in id order (pages of a batch). */
async function readByRows(
  store: OpenedStore,
  vaultId: string,
  bounds: { after: string; before: string },
) {
  let after = bounds.after;
  let rows = 0;
  for (let page = 0; page < ROWS; page++) {
    const { rows: read } = await store.client.query<{ id: string }>(
      `SELECT id, created_at, status, amount::text AS amount, card_id, currency, merchant, mcc, decline_code,
              decline_reason, stand_in, captured_amount::text AS captured, hold_remaining::text AS held, updated_at,
              completed_at
       FROM transactions
       WHERE vault_id = $1 AND type IN ('card_authorization', 'external_transfer')
         AND id COLLATE "C" > $2 AND id COLLATE "C" < $3
       ORDER BY id COLLATE "C" LIMIT $4`,
      [vaultId, after, bounds.before, REPLAY_BATCH_ROWS],
    );
    rows += read.length;
    const last = read.at(-1);
    if (read.length < REPLAY_BATCH_ROWS || last === undefined) break;
    after = last.id;
  }
  return rows;
}

/** 2. Every row read as the replay reads them; kept in memory for 3 and 4. */
async function readAsReplay(
  store: OpenedStore,
  target: BacktestTarget,
  bounds: { after: string; before: string },
  keep: ReplayRow[],
): Promise<number> {
  let after = bounds.after;
  let rows = 0;
  for (let batch = 0; batch < ROWS; batch++) {
    const read = await readReplayBatch(store.client, target, after, bounds.before);
    rows += read.rows.length;
    for (const row of read.rows) keep.push(row);
    if (read.rows.length < REPLAY_BATCH_ROWS || read.lastId === null) break;
    after = read.lastId;
  }
  return rows;
}

/**
 * 4. json-rules-engine over the same rows and policy (bench:core's translation of it): the
 * facts of each row, with the spend sums it needs kept by this loop as the replay keeps its
 * own (approvals add, a new day or month starts from zero).
 */
async function replayWithJsonRulesEngine(rows: readonly ReplayRow[]): Promise<number> {
  const engine: Engine = realisticReferenceEngine();
  let day = -1;
  let month = '';
  let spentDaily = new Decimal(0);
  let spentMonthly = new Decimal(0);
  let spentMonthlyAt5812 = new Decimal(0);
  let countDaily = 0;
  let replayed = 0;
  for (const row of rows) {
    if (row.kind !== 'authorization') continue;
    const { request } = row;
    const rowDay = utcDayNumber(row.atMs);
    if (rowDay !== day) {
      day = rowDay;
      spentDaily = new Decimal(0);
      countDaily = 0;
      const rowMonth = isoDate(rowDay).slice(0, 7);
      if (rowMonth !== month) {
        month = rowMonth;
        spentMonthly = new Decimal(0);
        spentMonthlyAt5812 = new Decimal(0);
      }
    }
    const { events } = await engine.run({
      amount: request.amount.toFixed(),
      currency: request.currency,
      mcc: request.merchant.mcc,
      merchantCountry: request.merchant.country,
      merchantName: request.merchant.name,
      merchantId: request.merchant.id,
      cardId: request.cardId,
      hourUtc: hourUtc(row.atMs),
      dayOfWeekUtc: dayOfWeekUtc(row.atMs),
      spentDaily: spentDaily.toFixed(),
      spentWeekly: spentMonthly.toFixed(),
      spentMonthly: spentMonthly.toFixed(),
      spentMonthlyAt5812: spentMonthlyAt5812.toFixed(),
      countDaily,
      merchant: request.merchant,
    });
    if (events.length === 0) {
      spentDaily = spentDaily.plus(request.amount);
      spentMonthly = spentMonthly.plus(request.amount);
      if (request.merchant.mcc === '5812')
        spentMonthlyAt5812 = spentMonthlyAt5812.plus(request.amount);
      countDaily += 1;
    }
    replayed += 1;
  }
  return replayed;
}

async function main(): Promise<void> {
  console.log(
    `backtest bench: ${ROWS.toLocaleString('en-US')} authorizations over ${DAYS} days (${load()})`,
  );
  await withBenchDatabase(async (databaseUrl) => {
    const database = new URL(databaseUrl).pathname.slice(1);
    const store = await openStore({
      client: createPgClient({ connectionString: databaseUrl, connectionsMax: 4 }),
      masterKey: randomBytes(32),
    });
    try {
      const account = await store.findOrCreateAccount('backtest-bench');
      const owner = { accountId: account.id, mode: 'test' as const };
      const { vault } = await store.createVault(owner, {
        name: 'bench',
        currency: 'USDC',
        metadata: {},
        initialDeposit: new Decimal(0),
      });
      const cardIds: string[] = [];
      for (let card = 0; card < 5; card++) {
        cardIds.push(
          (
            await store.createCard(owner, {
              vaultId: vault.id,
              cardholderName: 'Bench',
              metadata: {},
            })
          ).id,
        );
      }
      const endMs = Date.now() - 60_000;
      let started = performance.now();
      await buildHistory(store, owner, vault.id, cardIds, endMs);
      console.log(`history built in ${((performance.now() - started) / 1000).toFixed(1)} s`);

      const nowMs = Date.now();
      const today = utcDayNumber(nowMs);
      const startDate = isoDate(today - (DAYS + 1));
      const endDate = isoDate(today);
      const window = backtestWindow(startDate, endDate, nowMs);
      const bounds = windowIdBounds(window);
      const target: BacktestTarget = { kind: 'vault', vaultId: vault.id };
      const draft = compilePolicy(DRAFT, {
        currency: 'USDC',
        templates: store.ruleTemplates(),
      });

      // Warm the table's pages and the statements' plans once, unmeasured.
      await readByRows(store, vault.id, bounds);

      started = performance.now();
      let cpu = process.cpuUsage();
      const byRows = await readByRows(store, vault.id, bounds);
      const byRowsWall = (performance.now() - started) / 1000;
      const byRowsCpu = cpuSince(cpu);

      const kept: ReplayRow[] = [];
      started = performance.now();
      cpu = process.cpuUsage();
      const asReplay = await readAsReplay(store, target, bounds, kept);
      const asReplayWall = (performance.now() - started) / 1000;
      const asReplayCpu = cpuSince(cpu);

      started = performance.now();
      cpu = process.cpuUsage();
      const inMemory = new BacktestReplay(
        draft,
        window,
        Object.fromEntries(
          draft.aggregates.map((spec) => [
            spec.key,
            spec.measure === 'amount' ? new Decimal(0) : 0,
          ]),
        ),
      );
      for (const row of kept) inMemory.replay(row);
      const inMemoryResult = inMemory.result();
      const inMemorySeconds = (performance.now() - started) / 1000;
      const inMemoryCpu = cpuSince(cpu);

      const jreRows = kept.slice(0, JRE_ROWS);
      started = performance.now();
      cpu = process.cpuUsage();
      const jreReplayed = await replayWithJsonRulesEngine(jreRows);
      const jreSeconds = (performance.now() - started) / 1000;
      const jreCpu = cpuSince(cpu);
      kept.length = 0;

      const { backtest, queued } = await store.createBacktest(
        owner,
        { kind: 'vault', vaultId: vault.id },
        { draft: DRAFT, startDate, endDate },
      );
      if (!queued) throw new Error('a window of this size is queued');
      const postgresBefore = postgresSeconds(database);
      started = performance.now();
      cpu = process.cpuUsage();
      const outcome = await store.runBacktest(backtest.id, { leaseMs: 60_000 });
      const jobWall = (performance.now() - started) / 1000;
      const jobCpu = cpuSince(cpu);
      const jobPostgres = postgresSince(postgresBefore, database);
      const done = await store.getBacktest(
        owner,
        { kind: 'vault', vaultId: vault.id },
        backtest.id,
      );
      const result = done.result;
      if (outcome !== 'completed' || result === null) throw new Error(`the run ended ${outcome}`);
      const replayed = result.authorizations;

      console.log(
        `rows: ${asReplay.toLocaleString('en-US')} read, ${replayed.toLocaleString('en-US')} card authorizations; ` +
          `replayed by the draft ${result.replayed.toLocaleString('en-US')}, not replayed ${JSON.stringify(result.notReplayed)}; ` +
          `unchanged ${result.unchanged}, approved->declined ${result.approvedToDeclined}, declined->approved ${result.declinedToApproved}`,
      );
      // The in-memory replay starts from no spend before the window, the job from the
      // recorded spend (none here: the history has no counters): the same answer.
      if (inMemoryResult.approvedToDeclined !== result.approvedToDeclined)
        throw new Error('the in-memory replay and the job disagree');
      console.log(
        `declined under the draft, by rule: ${result.byRule
          .slice(0, 6)
          .map((counts) => `${counts.rule} ${counts.approvedToDeclined + counts.unchanged}`)
          .join(', ')}`,
      );
      console.log('');
      console.log(
        '                                                   authorizations/s  (wall)     (worker CPU)',
      );
      console.log(
        `1. read, one result row each (driver)           ${rate(byRows, byRowsWall).padStart(18)}  ${rate(byRows, byRowsCpu).padStart(12)}`,
      );
      console.log(
        `2. read as the replay reads (JSON batches)      ${rate(asReplay, asReplayWall).padStart(18)}  ${rate(asReplay, asReplayCpu).padStart(12)}`,
      );
      console.log(
        `3. replay alone, in memory (core)               ${rate(asReplay, inMemorySeconds).padStart(18)}  ${rate(asReplay, inMemoryCpu).padStart(12)}`,
      );
      console.log(
        `4. json-rules-engine, same rows and policy      ${rate(jreReplayed, jreSeconds).padStart(18)}  ${rate(jreReplayed, jreCpu).padStart(12)}  (${jreReplayed.toLocaleString('en-US')} rows)`,
      );
      console.log(
        `5. the backtest job (Store.runBacktest)         ${rate(replayed, jobWall).padStart(18)}  ${rate(replayed, jobCpu).padStart(12)}`,
      );
      console.log(
        `   job: ${jobWall.toFixed(2)} s wall, ${jobCpu.toFixed(2)} s worker CPU, ${jobPostgres.toFixed(2)} s PostgreSQL CPU`,
      );
      console.log(
        `   vs json-rules-engine: ${(replayed / jobCpu / (jreReplayed / jreCpu)).toFixed(0)}x per CPU second; ` +
          `vs the plain driver read: ${(replayed / jobWall / (byRows / byRowsWall)).toFixed(2)}x per wall second`,
      );
      console.log('');
      const perCpu = replayed / jobCpu;
      const perWall = replayed / jobWall;
      console.log(
        `target >= ${TARGET_PER_SECOND.toLocaleString('en-US')} replayed authorizations per second of worker time: ` +
          `${perCpu >= TARGET_PER_SECOND ? 'met' : 'MISSED'} (${rate(replayed, jobCpu)} per worker CPU second); ` +
          `per wall second ${perWall >= TARGET_PER_SECOND ? 'met' : 'MISSED'} (${rate(replayed, jobWall)})`,
      );
    } finally {
      await store.close();
    }
  });
}

await main();
