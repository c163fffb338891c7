import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Scope } from '../../../src/core/index.js';
import type { SqlClient } from '../../../src/store/sql/client.js';
import { testDatabase } from '../../support/databases.js';
import { genericPlan, recordingClient, type Statement } from '../../support/recorded-statements.js';
import {
  merchant,
  networkTransactionId,
  openTestStore,
  usdc,
  type TestStore,
} from '../../support/store.js';

/**
 * The authorize batch's reads stay reads of the batch's own rows however large the history
 * and whatever the statistics: the generic plans the hot path prepares (plan_cache_mode =
 * force_generic_plan) are planned here, as the server plans them, over a history of several
 * thousand transactions and spend counters of many vaults, once before any ANALYZE (a new
 * database, or one growing faster than autovacuum analyses it) and once after. Each request's
 * networkTransactionId is looked up by one probe of the unique key (migration 0012), and each
 * vault's counters through the primary key: never a scan of the transactions, nor of every
 * vault's counters of the window.
 */

const VAULTS = 40;
const AUTHORIZATIONS = 3000;
const SUBMIT_CHUNK = 500;

/**
 * How the plan reads `table`: the indexes it names for it (whether scanned directly or through
 * a bitmap), and whether it scans the table whole.
 */
function readsOf(plan: string, table: string): { indexes: string[]; scansWhole: boolean } {
  const indexes = [...plan.matchAll(new RegExp(`(?:using|on) (${table}_\\w+)`, 'g'))].map(
    (match) => match[1] as string,
  );
  return { indexes, scansWhole: new RegExp(`Seq Scan on ${table}\\b`).test(plan) };
}

describe('the authorize batch reads only its own rows [pg]', () => {
  const database = testDatabase('pg');
  const seen: Statement[] = [];
  const recording = { on: false };
  let t: TestStore;
  let client: SqlClient;
  let scope: Scope;
  let cards: string[];

  beforeAll(async () => {
    client = await database.client();
    t = await openTestStore(database, {
      wrapClient: (inner) => recordingClient(inner, seen, recording),
    });
    // No ANALYZE may run behind the test's back: the first plans are those of no statistics.
    await client.exec(
      `ALTER TABLE transactions SET (autovacuum_enabled = false);
       ALTER TABLE spend_counters SET (autovacuum_enabled = false)`,
    );
    scope = await t.scope();
    cards = [];
    for (let index = 0; index < VAULTS; index += 1) {
      const vault = await t.vault(scope, '1000000');
      await t.store.setPolicy(scope, vault.id, {
        limits: [
          { interval: 'daily', amount: '900000' },
          { interval: 'monthly', count: 100000 },
          { interval: 'daily', amount: '900000', merchantCategories: ['5812'] },
        ],
      });
      cards.push((await t.card(scope, vault.id)).id);
    }
    // A history: spend on every vault, on two days, so the window holds every vault's rows.
    for (const day of [0, 1]) {
      for (let start = 0; start < AUTHORIZATIONS / 2; start += SUBMIT_CHUNK) {
        const chunk = Array.from({ length: SUBMIT_CHUNK }, (_, index) =>
          t.store.authorize(scope, {
            cardId: cards[(start + index) % VAULTS] as string,
            amount: usdc('1.25'),
            currency: 'USDC',
            merchant: merchant({ mcc: index % 2 === 0 ? '5812' : '5411' }),
            networkTransactionId: networkTransactionId(),
          }),
        );
        const outcomes = await Promise.all(chunk);
        expect(outcomes.every((outcome) => outcome.decision.approved)).toBe(true);
      }
      if (day === 0) t.clock.advance(24 * 3600 * 1000);
    }
  }, 120_000);

  afterAll(async () => {
    await database.close();
  });

  /** The statement of one more authorization whose text has `marker`, as sent. */
  async function statementOfOneAuthorization(marker: string): Promise<Statement> {
    seen.length = 0;
    recording.on = true;
    const outcome = await t.store.authorize(scope, {
      cardId: cards[0] as string,
      amount: usdc('2'),
      currency: 'USDC',
      merchant: merchant(),
      networkTransactionId: networkTransactionId(),
    });
    recording.on = false;
    expect(outcome.decision.approved).toBe(true);
    const statement = seen.find(({ text }) => text.includes(marker));
    expect(statement, `a statement with ${marker} was sent`).toBeDefined();
    return statement as Statement;
  }

  /**
   * The read after the lock: what the store knew of the card is older than it may use (a
   * minute, known-state.ts), so the batch reads first.
   */
  async function statementsOfOneAuthorization(): Promise<Statement> {
    t.clock.advance(61_000);
    return statementOfOneAuthorization("SELECT 'previous'");
  }

  function expectOwnRowsOnly(plan: string): void {
    const transactions = readsOf(plan, 'transactions');
    expect(transactions.scansWhole, plan).toBe(false);
    expect(transactions.indexes.length, plan).toBeGreaterThan(0);
    for (const index of transactions.indexes) expect(index, plan).toBe('transactions_network_key');
    const counters = readsOf(plan, 'spend_counters');
    expect(counters.scansWhole, plan).toBe(false);
    expect(counters.indexes.length, plan).toBeGreaterThan(0);
    for (const index of counters.indexes) expect(index, plan).toBe('spend_counters_pkey');
  }

  it('before any statistics: one probe of the unique key, and the counters by primary key', async () => {
    // Migration 0008 analysed the table while it was empty: the statistics know of no row.
    const { rows } = await client.query<{ reltuples: number }>(
      `SELECT reltuples FROM pg_class WHERE relname = 'transactions'`,
    );
    expect(rows[0]?.reltuples).toBeLessThanOrEqual(0);
    expectOwnRowsOnly(await genericPlan(client, await statementsOfOneAuthorization()));
  });

  it('after ANALYZE: the same', async () => {
    await client.exec('ANALYZE transactions; ANALYZE spend_counters');
    expectOwnRowsOnly(await genericPlan(client, await statementsOfOneAuthorization()));
  });

  it("on known state, the write's check probes the unique key, never the history", async () => {
    await statementsOfOneAuthorization();
    // Just seen: the next batch decides on what is known, and its write checks it.
    const plan = await genericPlan(client, await statementOfOneAuthorization('fresh AS'));
    const transactions = readsOf(plan, 'transactions');
    expect(transactions.indexes.length, plan).toBeGreaterThan(0);
    for (const index of transactions.indexes) expect(index, plan).toBe('transactions_network_key');
    expect(transactions.scansWhole, plan).toBe(false);
    // The check reaches the batch's vaults, cards and policies one row each, by index: a
    // whole scan of a small fleet's table looked cheaper to the planner, and cost every batch,
    // however small, a read of every row (one-trip.ts, freshSql). Card policies
    // are a plain = ANY, left to the transaction's settings (GENERIC_PLAN_SETTINGS).
    const check = plan.slice(plan.indexOf('CTE fresh'), plan.indexOf('CTE inserted'));
    expect(check.length, plan).toBeGreaterThan(0);
    for (const table of ['vaults', 'cards', 'policies']) {
      const reads = readsOf(check, table);
      expect(reads.scansWhole, `${table}: ${check}`).toBe(false);
      expect(reads.indexes.length, `${table}: ${check}`).toBeGreaterThan(0);
    }
  });

  it('the write finds the vaults whose totals it updates by primary key, on both paths', async () => {
    // A batch that reads first, then one on known state (just seen).
    t.clock.advance(61_000);
    for (const statement of [
      await statementOfOneAuthorization('UPDATE vaults SET pending'),
      await statementOfOneAuthorization('fresh AS'),
    ]) {
      const plan = await genericPlan(client, statement);
      // The totals' CTE, up to the next one: the UPDATE and what feeds it.
      const totals = plan.slice(plan.indexOf('CTE totals'), plan.indexOf('CTE journal'));
      expect(totals.length, plan).toBeGreaterThan(0);
      const vaults = readsOf(totals, 'vaults');
      expect(vaults.scansWhole, totals).toBe(false);
      expect(vaults.indexes, totals).toContain('vaults_pkey');
    }
  });
});
