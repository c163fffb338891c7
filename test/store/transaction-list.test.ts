import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  Decimal,
  type Scope,
  type TransactionRecord,
  type TransactionStatus,
  type TransactionType,
} from '../../src/core/index.js';
import { TRANSACTION_STATUSES, TRANSACTION_TYPES } from '../../src/store/rows.js';
import type { SqlQueryable } from '../../src/store/sql/client.js';
import {
  AMOUNT_PLAN,
  listTransactions,
  type AmountPlan,
} from '../../src/store/ops/transaction-list.js';
import type { ListTransactionsQuery } from '../../src/store/port/index.js';
import { forEachDatabase } from '../support/databases.js';
import { indexPlanNodes } from '../support/index-plans.js';
import { openTestStore, type TestStore } from '../support/store.js';

/**
 * List Transactions as planned for millions of rows (ops/transaction-list.ts), held to a plain
 * filter of every row: every filter and pair of filters, with walks short enough that a small
 * table reaches each step of an amount range, date ranges over rows whose ids were not made
 * for their created_at, and vaults and cards of other scopes.
 */

const DAY_MS = 86_400_000;
const START_MS = Date.UTC(2026, 9, 1);
const TYPES: readonly TransactionType[] = ['card_authorization', 'deposit', 'transfer_in'];
const STATUSES: readonly TransactionStatus[] = ['pending', 'completed', 'failed', 'declined'];

/** A row of the universe, as the filters see it. */
interface Row {
  readonly id: string;
  readonly vaultId: string;
  readonly cardId: string | null;
  readonly type: TransactionType;
  readonly status: TransactionStatus;
  readonly amount: Decimal;
  readonly createdAtMs: number;
}

/** A transaction id made for the millisecond `epochMs`, as ids.ts makes them. */
function idAt(epochMs: number): string {
  return `txn_${epochMs.toString(16).padStart(12, '0')}${randomBytes(10).toString('hex')}`;
}

const idMsOf = (id: string): number => Number.parseInt(id.slice(4, 16), 16);

/** A small deterministic generator (mulberry32), so that a failure reproduces. */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let value = Math.imul(state ^ (state >>> 15), 1 | state);
    value = (value + Math.imul(value ^ (value >>> 7), 61 | value)) ^ value;
    return ((value ^ (value >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/** Every statement a list sends, by kind: the steps an amount range took. */
class Recorder {
  statements: string[] = [];
  sent: { text: string; params: readonly unknown[] }[] = [];
  wrap(db: SqlQueryable): SqlQueryable {
    return {
      query: (text, params = []) => {
        this.sent.push({ text, params });
        this.statements.push(
          text.startsWith('WITH walk')
            ? 'walk'
            : text.startsWith('WITH matched')
              ? 'matched'
              : text.startsWith('WITH counted')
                ? 'count'
                : 'page',
        );
        return db.query(text, params);
      },
      exec: (text) => db.exec(text),
    };
  }
}

function keeps(query: ListTransactionsQuery, row: Row): boolean {
  return (
    (query.vaultId === undefined || row.vaultId === query.vaultId) &&
    (query.cardId === undefined || row.cardId === query.cardId) &&
    (query.type === undefined || row.type === query.type) &&
    (query.status === undefined || row.status === query.status) &&
    (query.minAmount === undefined || row.amount.gte(query.minAmount)) &&
    (query.maxAmount === undefined || row.amount.lte(query.maxAmount)) &&
    (query.startDate === undefined || row.createdAtMs >= query.startDate) &&
    (query.endDate === undefined || row.createdAtMs < query.endDate)
  );
}

forEachDatabase('list transactions at scale', (database) => {
  let t: TestStore;
  let a: Scope;
  let b: Scope;
  const universe: Row[] = [];
  const vaults: string[] = [];
  const cards: string[] = [];
  let otherVault: string;
  let otherCard: string;
  const recorder = new Recorder();

  const list = (query: ListTransactionsQuery, plan: AmountPlan = AMOUNT_PLAN, scope = a) =>
    listTransactions(recorder.wrap(t.store.client), scope, query, plan);

  /** Every page, `limit` rows each, until hasMore is false; checks each page's shape. */
  async function walkAll(
    query: Omit<ListTransactionsQuery, 'limit'>,
    limit: number,
    plan: AmountPlan,
  ): Promise<string[]> {
    const all: string[] = [];
    let startingAfter: string | undefined;
    for (let pages = 0; pages < 500; pages++) {
      const page = await list({ ...query, limit, startingAfter }, plan);
      all.push(...page.data.map((txn: TransactionRecord) => txn.id));
      if (!page.hasMore) {
        expect(page.nextCursor).toBeNull();
        return all;
      }
      // Exact pages: full while there is more, the cursor the last row.
      expect(page.data).toHaveLength(limit);
      expect(page.nextCursor).toBe(page.data.at(-1)?.id);
      startingAfter = page.nextCursor ?? undefined;
    }
    throw new Error('pagination does not end');
  }

  const expected = (query: Omit<ListTransactionsQuery, 'limit'>): string[] =>
    universe
      .filter((row) => keeps({ ...query, limit: 1 }, row))
      .map((row) => row.id)
      .sort()
      .reverse();

  beforeAll(async () => {
    t = await openTestStore(database);
    a = await t.scope();
    b = await t.scope();
    for (let index = 0; index < 2; index++) {
      const { vault } = await t.store.createVault(a, {
        name: `vault ${index}`,
        currency: 'USDC',
        metadata: {},
        initialDeposit: new Decimal(0),
      });
      vaults.push(vault.id);
      const card = await t.store.createCard(a, {
        vaultId: vault.id,
        cardholderName: 'Ada',
        metadata: {},
      });
      cards.push(card.id);
    }
    const { vault } = await t.store.createVault(b, {
      name: 'other',
      currency: 'USDC',
      metadata: {},
      initialDeposit: new Decimal(0),
    });
    otherVault = vault.id;
    otherCard = (
      await t.store.createCard(b, { vaultId: otherVault, cardholderName: 'Bo', metadata: {} })
    ).id;

    // 160 rows over 16 days, the newest mostly under 10 and the older mostly over, so that an
    // amount range matches at different densities in new and old rows.
    const next = random(19);
    for (let index = 0; index < 160; index++) {
      const createdAtMs = START_MS + index * (DAY_MS / 10) + Math.floor(next() * 1000);
      const vaultIndex = next() < 0.75 ? 0 : 1;
      const type = TYPES[Math.floor(next() * TYPES.length)] as TransactionType;
      const recent = index >= 100;
      const cents = recent
        ? Math.floor(next() * 1000) + (next() < 0.1 ? 5000 : 0)
        : Math.floor(next() * 9000) + 1000;
      // Some ids not made for their created_at: ahead of it (a clock stepped back), behind it,
      // or made for another day altogether; and two rows exactly on a day's first millisecond.
      const skew =
        index % 23 === 5 ? 3_000 : index % 29 === 7 ? -2_500 : index % 31 === 9 ? DAY_MS * 2 : 0;
      const onDayStart = index === 40 || index === 41;
      const at = onDayStart ? START_MS + 4 * DAY_MS : createdAtMs;
      const row: Row = {
        id: idAt(at + skew),
        vaultId: vaults[vaultIndex] as string,
        cardId: type === 'card_authorization' ? (cards[vaultIndex] as string) : null,
        type,
        status: STATUSES[Math.floor(next() * STATUSES.length)] as TransactionStatus,
        amount: new Decimal(cents).dividedBy(100),
        createdAtMs: at,
      };
      universe.push(row);
    }
    // The other scope's rows, in the same time span: never listed for a.
    const others = Array.from({ length: 20 }, (_, index) => ({
      id: idAt(START_MS + index * DAY_MS),
      createdAtMs: START_MS + index * DAY_MS,
    }));
    await t.store.client.query(
      `INSERT INTO transactions (id, account_id, mode, vault_id, type, status, currency, amount, card_id,
                                 created_at, updated_at)
       SELECT id, $2, 'test', vault_id, type, status, 'USDC', amount::numeric, card_id, at, at
       FROM unnest($1::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::timestamptz[])
         AS r(id, vault_id, type, status, amount, card_id, at)`,
      [
        universe.map((row) => row.id),
        a.accountId,
        universe.map((row) => row.vaultId),
        universe.map((row) => row.type),
        universe.map((row) => row.status),
        universe.map((row) => row.amount.toFixed()),
        universe.map((row) => row.cardId),
        universe.map((row) => new Date(row.createdAtMs)),
      ],
    );
    await t.store.client.query(
      `INSERT INTO transactions (id, account_id, mode, vault_id, type, status, currency, amount, card_id,
                                 created_at, updated_at)
       SELECT id, $2, 'test', $3, 'card_authorization', 'declined', 'USDC', 5, $4, at, at
       FROM unnest($1::text[], $5::timestamptz[]) AS r(id, at)`,
      [
        others.map((row) => row.id),
        b.accountId,
        otherVault,
        otherCard,
        others.map((row) => new Date(row.createdAtMs)),
      ],
    );
    // The store made a deposit row for neither vault (initial deposit 0): the universe is all.
    const { rows } = await t.store.client.query<{ count: string }>(
      'SELECT count(*) AS count FROM transactions WHERE account_id = $1',
      [a.accountId],
    );
    expect(Number(rows[0]?.count)).toBe(universe.length);
    // Some rows must be unaligned for the date tests to mean anything.
    const { rows: unaligned } = await t.store.client.query<{ count: string }>(
      `SELECT count(*) AS count FROM transactions
       WHERE (left(id, 16) <> 'txn_' || lpad(to_hex(floor(extract(epoch FROM created_at - timestamptz 'epoch') * 1000)::bigint), 12, '0')) IS TRUE`,
    );
    expect(Number(unaligned[0]?.count)).toBeGreaterThanOrEqual(10);
  });

  afterAll(async () => {
    await database.close();
  });

  const day = (n: number) => START_MS + n * DAY_MS;
  const amount = (value: string) => new Decimal(value);

  /** Filter values, checked alone and in pairs of different filters. */
  const atoms = (): { key: string; query: Omit<ListTransactionsQuery, 'limit'> }[] => [
    { key: 'vault', query: { vaultId: vaults[0] } },
    { key: 'vault', query: { vaultId: vaults[1] } },
    { key: 'card', query: { cardId: cards[0] } },
    { key: 'type', query: { type: 'deposit' } },
    { key: 'type', query: { type: 'withdrawal' } },
    { key: 'status', query: { status: 'failed' } },
    { key: 'status', query: { status: 'declined' } },
    { key: 'amount', query: { minAmount: amount('0'), maxAmount: amount('8') } },
    { key: 'amount', query: { minAmount: amount('50') } },
    { key: 'amount', query: { minAmount: amount('12.34'), maxAmount: amount('40') } },
    { key: 'amount', query: { minAmount: amount('1000') } },
    { key: 'date', query: { startDate: day(4), endDate: day(6) } },
    { key: 'date', query: { startDate: day(12) } },
    { key: 'date', query: { endDate: day(4) } },
    { key: 'date', query: { startDate: day(20) } },
  ];

  const plans: readonly AmountPlan[] = [
    AMOUNT_PLAN,
    { walkRows: 4, walkRowsMax: 4, matchesMax: 1 },
    { walkRows: 4, walkRowsMax: 60, matchesMax: 1_000 },
    { walkRows: 4, walkRowsMax: 60, matchesMax: 3 },
  ];

  it('lists exactly what a filter of every row keeps: each filter alone and in pairs', async () => {
    const all = atoms();
    const queries = [
      ...all.map((atom) => atom.query),
      ...all.flatMap((first, index) =>
        all
          .slice(index + 1)
          .filter((second) => second.key !== first.key)
          .map((second) => ({ ...first.query, ...second.query })),
      ),
    ];
    for (const query of queries) {
      const want = expected(query);
      for (const plan of plans) {
        expect(
          await walkAll(query, 3, plan),
          `${JSON.stringify(query)} ${JSON.stringify(plan)}`,
        ).toEqual(want);
      }
    }
  });

  it('reaches every step of an amount range: a count, a walk, a longer walk, the amount index', async () => {
    const steps = new Set<string>();
    // The count stops at 1,000 (more than any range here has: read whole) or at 3 (walk on,
    // 4 rows of each (type, status) range, then 100: past the newest into the older ones).
    const countPlans = [
      { walkRows: 4, walkRowsMax: 60, matchesMax: 1_000 },
      { walkRows: 4, walkRowsMax: 100, matchesMax: 3 },
    ];
    const queries: Omit<ListTransactionsQuery, 'limit'>[] = [
      // Dense among the newest rows: the first walk fills a page of 1, a longer walk others.
      { minAmount: amount('0'), maxAmount: amount('10') },
      { minAmount: amount('0'), maxAmount: amount('3') },
      // None among the newest, many among the oldest: a count, then the amount index or a
      // longer walk.
      { minAmount: amount('60') },
      // None at all.
      { minAmount: amount('5000') },
      // One in ten among the newest: a longer walk that falls short, then the amount index.
      { minAmount: amount('50'), maxAmount: amount('60') },
    ];
    for (const plan of countPlans) {
      for (const query of queries) {
        for (const limit of [1, 3, 10]) {
          recorder.statements = [];
          const page = await list({ ...query, limit }, plan);
          steps.add(recorder.statements.join(','));
          expect(page.data.map((txn) => txn.id)).toEqual(expected(query).slice(0, limit));
          expect(page.hasMore).toBe(expected(query).length > limit);
        }
      }
    }
    expect([...steps].sort()).toEqual(
      expect.arrayContaining(['count', 'count,walk', 'count,walk,matched', 'count,walk,walk']),
    );
  });

  it('keeps a date range exact for rows whose ids were not made for their created_at', async () => {
    const unaligned = universe.filter((row) => idMsOf(row.id) !== row.createdAtMs);
    expect(unaligned.length).toBeGreaterThanOrEqual(10);
    // A range around each unaligned row's created_at, and one around its id's time.
    for (const row of unaligned.slice(0, 8)) {
      const idMs = idMsOf(row.id);
      for (const [startDate, endDate] of [
        [row.createdAtMs, row.createdAtMs + 1],
        [row.createdAtMs - 5_000, row.createdAtMs + 5_000],
        [idMs, idMs + 1],
        [idMs - 3_000, idMs + 3_000],
      ] as const) {
        for (const query of [
          { startDate, endDate },
          { startDate, endDate, vaultId: row.vaultId },
        ]) {
          expect(await walkAll(query, 2, AMOUNT_PLAN), JSON.stringify(query)).toEqual(
            expected(query),
          );
        }
      }
    }
    // The first millisecond of a day, inclusive for a start and exclusive for an end.
    expect(await walkAll({ startDate: day(4), endDate: day(4) + 1 }, 5, AMOUNT_PLAN)).toEqual(
      expected({ startDate: day(4), endDate: day(4) + 1 }),
    );
    expect(expected({ startDate: day(4), endDate: day(4) + 1 }).length).toBeGreaterThanOrEqual(2);
    // Bounds before 1970 and at the end of 9999.
    for (const query of [
      { startDate: -DAY_MS, endDate: day(3) },
      { endDate: -1 },
      { startDate: 253_402_300_799_999 },
    ]) {
      expect(await walkAll(query, 10, AMOUNT_PLAN)).toEqual(expected(query));
    }
  });

  it('answers an empty page for a vault or card of another scope, or a card of another vault', async () => {
    const empty = { data: [], hasMore: false, nextCursor: null };
    for (const query of [
      { vaultId: otherVault },
      { cardId: otherCard },
      { cardId: cards[0], vaultId: vaults[1] },
      { vaultId: otherVault, status: 'declined' as const },
      { cardId: otherCard, minAmount: amount('1') },
    ]) {
      expect(await list({ ...query, limit: 10 }), JSON.stringify(query)).toEqual(empty);
    }
    const bPage = await list({ limit: 100, vaultId: otherVault }, AMOUNT_PLAN, b);
    expect(bPage.data).toHaveLength(20);
  });

  it('walks no further than a page once the page is full (PostgreSQL plans)', async () => {
    if (database.kind !== 'pg') return;
    // Dense among the newest rows: past the count, a walk of up to 100 rows of each (type,
    // status) range finds a page of 2 in a few.
    recorder.sent = [];
    recorder.statements = [];
    const query = { minAmount: amount('0'), maxAmount: amount('10'), limit: 2 };
    const page = await list(query, { walkRows: 100, walkRowsMax: 100, matchesMax: 1 });
    expect(page.data.map((txn) => txn.id)).toEqual(expected(query).slice(0, 2));
    expect(recorder.statements).toEqual(['count', 'walk']);
    const walk = recorder.sent[1];
    if (walk === undefined) throw new Error('no statement');
    // The rows whose amounts were read (from the heap, by each (type, status) pair's hits):
    // as far as each pair's page (3 rows) went, fewer than the bound of one pair alone (100
    // rows; the live pairs' bounds several hundred). The floor reads the indexes alone.
    // (PostgreSQL gives a node's rows per run, rounded: up to half a row a run more.)
    const read = (await indexPlanNodes(t.store.client, walk))
      .filter((node) => node['Node Type'] === 'Index Scan' && node['Index Name']?.endsWith('_kind'))
      .reduce(
        (sum, node) =>
          sum +
          (node['Actual Rows'] + (node['Rows Removed by Filter'] ?? 0)) *
            (node['Actual Loops'] ?? 1),
        0,
      );
    expect(read).toBeGreaterThanOrEqual(2);
    expect(read).toBeLessThan(100);
  });

  it('reads an unfiltered page from the (type, status) ranges in id order, a row past the page at most from each (PostgreSQL plans)', async () => {
    if (database.kind !== 'pg') return;
    const limit = 5;
    for (const owner of [{}, { vaultId: vaults[0] }, { cardId: cards[0] }]) {
      recorder.sent = [];
      const page = await list({ limit, ...owner });
      expect(page.data.map((txn) => txn.id)).toEqual(expected(owner).slice(0, limit));
      const [statement] = recorder.sent;
      if (statement === undefined) throw new Error('no statement');
      const nodes = await indexPlanNodes(t.store.client, statement);
      const kinds = nodes.map((node) => node['Node Type']);
      const scans = nodes.flatMap((node) =>
        node['Index Name'] === undefined
          ? []
          : [{ index: node['Index Name'], rows: node['Actual Rows'] }],
      );
      const label = JSON.stringify(owner);
      // The id order comes from the indexes, merged: nothing sorts the owner's history.
      expect(kinds, label).not.toContain('Sort');
      expect(kinds, label).toContain('Merge Append');
      // One range per (type, status), each of an index on (owner, type, status, id) (the
      // gate's probe of the vault or card, on its own table, aside).
      const ranges = scans.filter((scan) => scan.index.startsWith('transactions_'));
      // 8 types (force_capture and refund since contract v1.2) by 4 statuses.
      expect(ranges, label).toHaveLength(TRANSACTION_TYPES.length * TRANSACTION_STATUSES.length);
      expect(ranges.length, label).toBe(32);
      expect(new Set(ranges.map((scan) => scan.index)).size, label).toBe(1);
      expect(ranges[0]?.index, label).toMatch(/^transactions_by_(owner|vault|card)_kind$/);
      // The page and the row after it, and at most one row more from each range.
      const read = ranges.reduce((sum, scan) => sum + scan.rows, 0);
      expect(read, label).toBeLessThanOrEqual(limit + 1 + 24);
    }
  });

  it('pages from a cursor with every kind of filter', async () => {
    const query = { vaultId: vaults[0], status: 'completed' as const, minAmount: amount('5') };
    const all = expected(query);
    expect(all.length).toBeGreaterThan(4);
    const cursor = all[1] as string;
    for (const plan of plans) {
      const page = await list({ ...query, limit: 2, startingAfter: cursor }, plan);
      expect(page.data.map((txn) => txn.id)).toEqual(all.slice(2, 4));
    }
  });
});
