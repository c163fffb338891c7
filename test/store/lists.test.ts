import { beforeAll, expect, it } from 'vitest';
import {
  Decimal,
  type BalanceSnapshotRecord,
  type CardRecord,
  type Scope,
  type TransactionRecord,
  type TransferRecord,
  type VaultRecord,
} from '../../src/core/index.js';
import { newId } from '../../src/ids.js';
import {
  listBalanceSnapshots,
  listCards,
  listTransactions,
  listTransfers,
  listVaults,
} from '../../src/store/ops/lists.js';
import type {
  ListBalanceSnapshotsQuery,
  ListCardsQuery,
  ListTransactionsQuery,
  ListTransfersQuery,
  ListVaultsQuery,
  Page,
} from '../../src/store/port/index.js';
import { forEachDatabase } from '../support/databases.js';
import { refusal } from '../support/refusal.js';
import { merchant, networkTransactionId, usdc, useTestStore } from '../support/store.js';

/** A list with its scope and filters fixed: only the page position varies. */
type Lister<T> = (page: { limit: number; startingAfter?: string }) => Promise<Page<T>>;

/**
 * Follows nextCursor to the end, checking every page on the way: never more than `limit`
 * rows, a full page and the cursor of its last row while hasMore, and a null cursor at the end.
 */
async function walk<T>(
  list: Lister<T>,
  limit: number,
  cursorOf: (record: T) => string,
): Promise<T[]> {
  const all: T[] = [];
  let startingAfter: string | undefined;
  for (let pages = 1; pages <= 1000; pages++) {
    const page = await list(startingAfter === undefined ? { limit } : { limit, startingAfter });
    expect(page.data.length).toBeLessThanOrEqual(limit);
    all.push(...page.data);
    if (!page.hasMore) {
      expect(page.nextCursor).toBeNull();
      return all;
    }
    expect(page.data.length).toBe(limit);
    const last = page.data.at(-1);
    if (last === undefined || page.nextCursor === null) throw new Error('hasMore without a cursor');
    expect(page.nextCursor).toBe(cursorOf(last));
    startingAfter = page.nextCursor;
  }
  throw new Error('pagination does not end');
}

const idOf = (record: { readonly id: string }): string => record.id;
const dayOf = (record: BalanceSnapshotRecord): string => record.day;
const ids = (records: readonly { readonly id: string }[]): string[] => records.map(idOf);
const newestFirst = (values: readonly string[]): string[] => [...values].sort().reverse();

/** A filter value and what it means, checked alone and with every other filter's values. */
interface Atom<Q, T> {
  readonly key: string;
  readonly query: Partial<Q>;
  readonly keep: (record: T) => boolean;
}

/**
 * Each atom on its own and every pair of atoms of different filters, walked two rows a page,
 * must give exactly the universe's records that the predicates keep, in the universe's order.
 */
async function checkFilters<Q, T extends { readonly id: string }>(
  universe: readonly T[],
  atoms: readonly Atom<Q, T>[],
  list: (query: Partial<Q> & { limit: number; startingAfter?: string }) => Promise<Page<T>>,
): Promise<void> {
  const check = async (query: Partial<Q>, keep: (record: T) => boolean, label: string) => {
    const got = await walk((page) => list({ ...query, ...page }), 2, idOf);
    expect(ids(got), label).toEqual(ids(universe.filter(keep)));
  };
  for (const atom of atoms) await check(atom.query, atom.keep, JSON.stringify(atom.query));
  for (const [index, first] of atoms.entries()) {
    for (const second of atoms.slice(index + 1)) {
      if (first.key === second.key) continue;
      await check(
        { ...first.query, ...second.query },
        (record) => first.keep(record) && second.keep(record),
        `${JSON.stringify(first.query)} + ${JSON.stringify(second.query)}`,
      );
    }
  }
}

const NO_VAULT = 'vlt_00000000000000000000000000000000';

forEachDatabase('list queries', (database) => {
  const t = useTestStore(database);
  /** The account under test (test mode), another account, and the same account in live mode. */
  let a: Scope;
  let b: Scope;
  let live: Scope;
  let stranger: Scope;

  const vaults: Record<'usd1' | 'usd2' | 'sol' | 'closed' | 'b' | 'live' | 'live2', VaultRecord> =
    {} as never;
  const cards: Record<'c1' | 'c2' | 'c3' | 'c4' | 'b' | 'live', CardRecord> = {} as never;
  const txns: Record<
    't10' | 't10b' | 't25' | 'declined' | 'partial' | 'sol' | 'edgeX' | 'edgeY' | 'b' | 'live',
    TransactionRecord
  > = {} as never;
  const transfers: Record<'tr1' | 'tr2' | 'tr3' | 'tr4' | 'live', TransferRecord> = {} as never;
  /** Inserted by SQL, so that no held transaction joins the hand-checked fixture. */
  let pendingExternalId: string;
  /** Every id account a owns in test mode, by list, as the operations returned them. */
  const owned = { vaults: [] as string[], cards: [] as string[], transactions: [] as string[] };
  const SNAPSHOT_DAYS = [
    '2026-10-28',
    '2026-10-30',
    '2026-10-31',
    '2026-11-01',
    '2026-11-02',
    '2026-11-03',
    '2026-11-17',
  ];

  const tick = () => {
    t.clock.advance(1000);
  };
  const createVault = async (owner: Scope, currency: 'USDC' | 'SOL', initialDeposit: string) => {
    tick();
    const created = await t.store.createVault(owner, {
      name: `${currency} ${initialDeposit}`,
      currency,
      metadata: {},
      initialDeposit: new Decimal(initialDeposit),
    });
    if (owner === a) {
      owned.vaults.push(created.vault.id);
      if (created.deposit !== null) owned.transactions.push(created.deposit.id);
    }
    return created.vault;
  };
  const createCard = async (owner: Scope, vaultId: string) => {
    tick();
    const card = await t.store.createCard(owner, { vaultId, cardholderName: 'Ada', metadata: {} });
    if (owner === a) owned.cards.push(card.id);
    return card;
  };
  const authorize = async (
    owner: Scope,
    cardId: string,
    amount: string,
    currency: 'USDC' | 'SOL' = 'USDC',
    advanceMs = 1000,
  ) => {
    t.clock.advance(advanceMs);
    const { transaction } = await t.store.authorize(owner, {
      cardId,
      amount: new Decimal(amount),
      currency,
      merchant: merchant(),
      networkTransactionId: networkTransactionId(),
    });
    if (transaction === null) throw new Error('no transaction recorded');
    if (owner === a) owned.transactions.push(transaction.id);
    return transaction;
  };
  const transfer = async (owner: Scope, from: VaultRecord, to: VaultRecord, amount: string) => {
    tick();
    return t.store.createInternalTransfer(owner, {
      fromVaultId: from.id,
      toVaultId: to.id,
      amount: usdc(amount),
      description: null,
    });
  };

  beforeAll(async () => {
    a = t.owner;
    b = await t.scope();
    stranger = await t.scope();
    live = { accountId: a.accountId, mode: 'live' };

    vaults.usd1 = await createVault(a, 'USDC', '1000');
    vaults.usd2 = await createVault(a, 'USDC', '500');
    // Between two of a's vaults, so that its id is a position inside a's list.
    vaults.b = await createVault(b, 'USDC', '300');
    vaults.sol = await createVault(a, 'SOL', '50');
    vaults.closed = await createVault(a, 'USDC', '0');
    vaults.live = await createVault(live, 'USDC', '100');
    vaults.live2 = await createVault(live, 'USDC', '0');

    cards.c1 = await createCard(a, vaults.usd1.id);
    cards.c2 = await createCard(a, vaults.usd1.id);
    cards.c3 = await createCard(a, vaults.sol.id);
    cards.c4 = await createCard(a, vaults.usd2.id);
    cards.b = await createCard(b, vaults.b.id);
    cards.live = await createCard(live, vaults.live.id);

    txns.t10 = await authorize(a, cards.c1.id, '10');
    txns.t10b = await authorize(a, cards.c1.id, '10.000001');
    txns.t10b = await t.store.capture(a, txns.t10b.id, null);
    txns.t25 = await authorize(a, cards.c1.id, '25.5');
    txns.t25 = await t.store.reverse(a, txns.t25.id, null);
    txns.declined = await authorize(a, cards.c1.id, '2000');
    txns.partial = await authorize(a, cards.c4.id, '7');
    txns.partial = await t.store.capture(a, txns.partial.id, usdc('5'));
    txns.sol = await authorize(a, cards.c3.id, '1.500000001', 'SOL');
    txns.edgeX = await authorize(a, cards.c1.id, '3');
    // One millisecond apart: the date bounds are judged to the millisecond.
    txns.edgeY = await authorize(a, cards.c1.id, '4', 'USDC', 1);
    txns.b = await authorize(b, cards.b.id, '10');
    txns.live = await authorize(live, cards.live.id, '10');

    transfers.tr1 = await transfer(a, vaults.usd1, vaults.usd2, '100');
    transfers.tr2 = await transfer(a, vaults.usd1, vaults.b, '20');
    transfers.tr3 = await transfer(b, vaults.b, vaults.usd1, '30');
    transfers.tr4 = await transfer(a, vaults.usd2, vaults.usd1, '5');
    transfers.live = await transfer(live, vaults.live, vaults.live2, '1');
    tick();
    owned.transactions.push(
      (await t.store.deposit(a, vaults.usd1.id, usdc('0.000001'))).deposit.id,
    );

    // The transfers' debit and credit transactions belong to each side's account.
    const legs = await t.store.client.query<{ id: string }>(
      `SELECT id FROM transactions WHERE transfer_id = ANY($1) AND account_id = $2 AND mode = 'test'`,
      [[transfers.tr1.id, transfers.tr2.id, transfers.tr3.id, transfers.tr4.id], a.accountId],
    );
    expect(legs.rows).toHaveLength(6);
    owned.transactions.push(...legs.rows.map(idOf));

    tick();
    cards.c2 = await t.store.setCardStatus(a, cards.c2.id, 'frozen');
    cards.c3 = await t.store.setCardStatus(a, cards.c3.id, 'cancelled');
    vaults.usd2 = await t.store.freezeVault(a, vaults.usd2.id, 'incident');
    vaults.closed = await t.store.closeVault(a, vaults.closed.id, null);
    await t.expectInvariants();

    tick();
    // A pending transfer row only: the store's createExternalTransfer would add a held
    // transaction to the fixture, whose lists below are checked by hand.
    pendingExternalId = newId('transfer', t.clock.nowMs);
    await t.store.client.query(
      `INSERT INTO transfers (id, account_id, mode, kind, from_vault_id, address, amount, currency, status, created_at, updated_at)
       VALUES ($1, $2, 'test', 'external', $3, 'So1ana1111111111111111111111111111111111111', '2', 'SOL', 'pending', $4, $4)`,
      [pendingExternalId, a.accountId, vaults.sol.id, new Date(t.clock.nowMs)],
    );
    const snapshot = (vaultId: string, day: string, ledger: string, pending: string) =>
      t.store.client.query(
        `INSERT INTO balance_snapshots (vault_id, day, currency, ledger, pending, available, created_at)
         VALUES ($1, $2, 'USDC', $3, $4, $5, now())`,
        [vaultId, day, ledger, pending, new Decimal(ledger).minus(pending).toFixed()],
      );
    for (const [index, day] of SNAPSHOT_DAYS.entries())
      await snapshot(vaults.usd1.id, day, `${index + 1}000.123456789`, '0.000000001');
    await snapshot(vaults.usd2.id, '2026-11-01', '600', '0');
    await snapshot(vaults.b.id, '2026-11-02', '300', '0');
  });

  const vaultsOf =
    (scope: Scope, filters: Omit<ListVaultsQuery, 'limit'> = {}): Lister<VaultRecord> =>
    (page) =>
      listVaults(t.store.client, scope, { ...filters, ...page });
  const cardsOf =
    (scope: Scope, filters: Omit<ListCardsQuery, 'limit'> = {}): Lister<CardRecord> =>
    (page) =>
      listCards(t.store.client, scope, { ...filters, ...page });
  const transactionsOf =
    (scope: Scope, filters: Omit<ListTransactionsQuery, 'limit'> = {}): Lister<TransactionRecord> =>
    (page) =>
      listTransactions(t.store.client, scope, { ...filters, ...page });
  const transfersOf =
    (scope: Scope, filters: Omit<ListTransfersQuery, 'limit'> = {}): Lister<TransferRecord> =>
    (page) =>
      listTransfers(t.store.client, scope, { ...filters, ...page });
  const snapshotsOf =
    (
      scope: Scope,
      vaultId: string,
      filters: Omit<ListBalanceSnapshotsQuery, 'limit'> = {},
    ): Lister<BalanceSnapshotRecord> =>
    (page) =>
      listBalanceSnapshots(t.store.client, scope, vaultId, { ...filters, ...page });

  const ownedTransfers = () =>
    newestFirst([transfers.tr1.id, transfers.tr2.id, transfers.tr4.id, pendingExternalId]);

  it('walks every list exactly once, newest first, with a limit of 1, 2 and 100', async () => {
    expect(owned.transactions).toHaveLength(18);
    const expected = {
      vaults: newestFirst(owned.vaults),
      cards: newestFirst(owned.cards),
      transactions: newestFirst(owned.transactions),
      transfers: ownedTransfers(),
      snapshots: [...SNAPSHOT_DAYS].reverse(),
    };
    for (const limit of [1, 2, 100]) {
      const got = {
        vaults: ids(await walk(vaultsOf(a), limit, idOf)),
        cards: ids(await walk(cardsOf(a), limit, idOf)),
        transactions: ids(await walk(transactionsOf(a), limit, idOf)),
        transfers: ids(await walk(transfersOf(a), limit, idOf)),
        snapshots: (await walk(snapshotsOf(a, vaults.usd1.id), limit, dayOf)).map(dayOf),
      };
      expect(got, `limit ${limit}`).toEqual(expected);
      for (const list of Object.values(got)) expect(new Set(list).size).toBe(list.length);
    }
    // Newest first is creation order backwards: the last vault created comes first.
    expect(ids((await listVaults(t.store.client, a, { limit: 1 })).data)).toEqual([
      vaults.closed.id,
    ]);
    const times = (await walk(transactionsOf(a), 100, idOf)).map((txn) => txn.createdAtMs);
    expect(times).toEqual([...times].sort((x, y) => y - x));
  });

  it('returns whole records, amounts as exact Decimals', async () => {
    const all = await walk(transactionsOf(a), 100, idOf);
    const sol = all.find((txn) => txn.id === txns.sol.id);
    expect(sol?.amount).toBeInstanceOf(Decimal);
    expect([sol?.amount.toFixed(), sol?.currency, sol?.cardId, sol?.status]).toEqual([
      '1.500000001',
      'SOL',
      cards.c3.id,
      'pending',
    ]);
    const [vault] = (await listVaults(t.store.client, a, { limit: 1, status: 'frozen' })).data;
    expect(vault).toEqual(vaults.usd2);
    const [snapshot] = (await listBalanceSnapshots(t.store.client, a, vaults.usd1.id, { limit: 1 }))
      .data;
    expect(snapshot).toBeDefined();
    expect([
      snapshot?.vaultId,
      snapshot?.day,
      snapshot?.currency,
      snapshot?.ledger.toFixed(),
      snapshot?.pending.toFixed(),
      snapshot?.available.toFixed(),
    ]).toEqual([
      vaults.usd1.id,
      '2026-11-17',
      'USDC',
      '7000.123456789',
      '0.000000001',
      '7000.123456788',
    ]);
  });

  it('ends with hasMore false and a null cursor, also when the last page is exactly full', async () => {
    const four = newestFirst(owned.vaults);
    expect(four).toHaveLength(4);
    expect(await listVaults(t.store.client, a, { limit: 4 })).toEqual({
      data: expect.any(Array) as unknown,
      hasMore: false,
      nextCursor: null,
    });
    const first = await listVaults(t.store.client, a, { limit: 3 });
    expect([ids(first.data), first.hasMore, first.nextCursor]).toEqual([
      four.slice(0, 3),
      true,
      four[2],
    ]);
    const last = await listVaults(t.store.client, a, {
      limit: 3,
      startingAfter: first.nextCursor ?? '',
    });
    expect([ids(last.data), last.hasMore, last.nextCursor]).toEqual([four.slice(3), false, null]);
    const afterLast = await listVaults(t.store.client, a, {
      limit: 3,
      startingAfter: four[3] ?? '',
    });
    expect(afterLast).toEqual({ data: [], hasMore: false, nextCursor: null });

    const days = await listBalanceSnapshots(t.store.client, a, vaults.usd1.id, {
      limit: 6,
      startingAfter: '2026-11-17',
    });
    expect([days.data.length, days.hasMore, days.nextCursor]).toEqual([6, false, null]);
    const fewer = await listBalanceSnapshots(t.store.client, a, vaults.usd1.id, { limit: 6 });
    expect([fewer.hasMore, fewer.nextCursor]).toEqual([true, '2026-10-30']);

    const empty = { data: [], hasMore: false, nextCursor: null };
    expect(await listVaults(t.store.client, stranger, { limit: 10 })).toEqual(empty);
    expect(await listCards(t.store.client, stranger, { limit: 10 })).toEqual(empty);
    expect(await listTransactions(t.store.client, stranger, { limit: 10 })).toEqual(empty);
    expect(await listTransfers(t.store.client, stranger, { limit: 10 })).toEqual(empty);
    expect(await listBalanceSnapshots(t.store.client, a, vaults.sol.id, { limit: 10 })).toEqual(
      empty,
    );
  });

  const listsOf = (scope: Scope) =>
    [
      [
        'vault',
        (q: { limit: number; startingAfter?: string }) => listVaults(t.store.client, scope, q),
      ],
      [
        'card',
        (q: { limit: number; startingAfter?: string }) => listCards(t.store.client, scope, q),
      ],
      [
        'transaction',
        (q: { limit: number; startingAfter?: string }) =>
          listTransactions(t.store.client, scope, q),
      ],
      [
        'transfer',
        (q: { limit: number; startingAfter?: string }) => listTransfers(t.store.client, scope, q),
      ],
    ] as const;

  it('refuses a limit of 0, 101, 1.5 (or not a number) with parameter_invalid on limit', async () => {
    const lists = [
      ...listsOf(a).map(([, list]) => list),
      (q: { limit: number }) => listBalanceSnapshots(t.store.client, a, vaults.usd1.id, q),
    ];
    for (const list of lists) {
      for (const limit of [0, 101, 1.5, -1, Number.NaN, Number.POSITIVE_INFINITY]) {
        const error = await refusal(list({ limit }));
        expect([error.code, error.param], `limit ${limit}`).toEqual(['parameter_invalid', 'limit']);
      }
      expect((await list({ limit: 1 })).data.length).toBe(1);
      expect((await list({ limit: 100 })).data.length).toBeGreaterThan(1);
    }
    // The limit is checked before the vault is looked up.
    const error = await refusal(listBalanceSnapshots(t.store.client, a, NO_VAULT, { limit: 0 }));
    expect(error.param).toBe('limit');
  });

  it('refuses a cursor of another kind, or malformed, with parameter_invalid on startingAfter', async () => {
    const body = '0193f1c2a4b57c3d8e9f0a1b2c3d4e5f';
    const ofKind = {
      vault: `vlt_${body}`,
      card: `card_${body}`,
      transaction: `txn_${body}`,
      transfer: `tr_${body}`,
    };
    for (const [kind, list] of listsOf(a)) {
      const wrong = Object.entries(ofKind)
        .filter(([other]) => other !== kind)
        .map(([, id]) => id);
      const right = ofKind[kind];
      const malformed = [
        '',
        right.slice(0, -1),
        `${right}0`,
        right.toUpperCase(),
        `${right.slice(0, -1)}g`,
        `${right}\n`,
        ` ${right}`,
        `${right}' OR '1'='1`,
        `evt_${body}`,
      ];
      for (const startingAfter of [...wrong, ...malformed]) {
        const error = await refusal(list({ limit: 10, startingAfter }));
        expect([error.code, error.param], `${kind}: ${JSON.stringify(startingAfter)}`).toEqual([
          'parameter_invalid',
          'startingAfter',
        ]);
      }
      await expect(list({ limit: 10, startingAfter: right })).resolves.toBeDefined();
    }
    for (const startingAfter of [
      vaults.usd1.id,
      '2026-13-01',
      '2026-02-30',
      '2026-2-01',
      '20261101',
      '0000-12-31',
      '2026-11-01T00:00:00Z',
    ]) {
      const error = await refusal(
        listBalanceSnapshots(t.store.client, a, vaults.usd1.id, { limit: 10, startingAfter }),
      );
      expect([error.code, error.param], startingAfter).toEqual([
        'parameter_invalid',
        'startingAfter',
      ]);
    }
  });

  it('refuses date bounds that are not a time or a day, naming the bound', async () => {
    for (const [bound, value] of [
      ['startDate', Number.NaN],
      ['startDate', 1.5],
      ['endDate', Number.POSITIVE_INFINITY],
      ['endDate', 8.64e15],
    ] as const) {
      const error = await refusal(
        listTransactions(t.store.client, a, { limit: 10, [bound]: value }),
      );
      expect([error.code, error.param]).toEqual(['parameter_invalid', bound]);
    }
    for (const [bound, value] of [
      ['startDate', '2026-02-29'],
      ['endDate', '2026-11'],
      ['endDate', 'yesterday'],
    ] as const) {
      const error = await refusal(
        listBalanceSnapshots(t.store.client, a, vaults.usd1.id, { limit: 10, [bound]: value }),
      );
      expect([error.code, error.param]).toEqual(['parameter_invalid', bound]);
    }
  });

  it('takes any id of the kind as a position, even one not in the list', async () => {
    const all = newestFirst(owned.vaults);
    // vaults.b (account b) was created between a's usd2 and sol: after it come usd2 and usd1.
    const before = all.filter((id) => id < vaults.b.id);
    expect(before).toEqual([vaults.usd2.id, vaults.usd1.id]);
    const page = await listVaults(t.store.client, a, { limit: 100, startingAfter: vaults.b.id });
    expect(ids(page.data)).toEqual(before);
    const top = await listVaults(t.store.client, a, {
      limit: 100,
      startingAfter: 'vlt_ffffffffffffffffffffffffffffffff',
    });
    expect(ids(top.data)).toEqual(all);
    expect(
      (await listVaults(t.store.client, a, { limit: 100, startingAfter: NO_VAULT })).data,
    ).toEqual([]);
  });

  it('filters vaults by currency and status, alone and combined', async () => {
    const universe = await walk(vaultsOf(a), 100, idOf);
    const atoms: Atom<ListVaultsQuery, VaultRecord>[] = [
      ...(['USDC', 'SOL'] as const).map((currency) => ({
        key: 'currency',
        query: { currency },
        keep: (vault: VaultRecord) => vault.currency === currency,
      })),
      ...(['active', 'frozen', 'closed'] as const).map((status) => ({
        key: 'status',
        query: { status },
        keep: (vault: VaultRecord) => vault.status === status,
      })),
    ];
    await checkFilters(universe, atoms, (query) => listVaults(t.store.client, a, query));
    const only = async (query: Omit<ListVaultsQuery, 'limit'>) =>
      ids(await walk(vaultsOf(a, query), 1, idOf));
    expect(await only({ currency: 'SOL' })).toEqual([vaults.sol.id]);
    expect(await only({ status: 'closed' })).toEqual([vaults.closed.id]);
    expect(await only({ currency: 'USDC', status: 'active' })).toEqual([vaults.usd1.id]);
    expect(await only({ currency: 'SOL', status: 'frozen' })).toEqual([]);
    expect(await only({ currency: undefined, status: undefined })).toEqual(
      newestFirst(owned.vaults),
    );
  });

  it('filters cards by vaultId and status, alone and combined', async () => {
    const universe = await walk(cardsOf(a), 100, idOf);
    const atoms: Atom<ListCardsQuery, CardRecord>[] = [
      ...[vaults.usd1.id, vaults.sol.id, vaults.b.id, NO_VAULT].map((vaultId) => ({
        key: 'vaultId',
        query: { vaultId },
        keep: (card: CardRecord) => card.vaultId === vaultId,
      })),
      ...(['active', 'frozen', 'cancelled'] as const).map((status) => ({
        key: 'status',
        query: { status },
        keep: (card: CardRecord) => card.status === status,
      })),
    ];
    await checkFilters(universe, atoms, (query) => listCards(t.store.client, a, query));
    const only = async (query: Omit<ListCardsQuery, 'limit'>) =>
      ids(await walk(cardsOf(a, query), 1, idOf));
    expect(await only({ vaultId: vaults.usd1.id })).toEqual(
      newestFirst([cards.c1.id, cards.c2.id]),
    );
    expect(await only({ status: 'active' })).toEqual(newestFirst([cards.c1.id, cards.c4.id]));
    expect(await only({ vaultId: vaults.usd1.id, status: 'frozen' })).toEqual([cards.c2.id]);
    expect(await only({ vaultId: vaults.sol.id, status: 'cancelled' })).toEqual([cards.c3.id]);
    // Another account's vault narrows to nothing rather than showing its cards.
    expect(await only({ vaultId: vaults.b.id })).toEqual([]);
  });

  it('filters transactions by every filter, alone and combined', async () => {
    const universe = await walk(transactionsOf(a), 100, idOf);
    const at = (txn: TransactionRecord) => txn.createdAtMs;
    const atoms: Atom<ListTransactionsQuery, TransactionRecord>[] = [
      ...[vaults.usd1.id, vaults.usd2.id, vaults.sol.id, vaults.b.id].map((vaultId) => ({
        key: 'vaultId',
        query: { vaultId },
        keep: (txn: TransactionRecord) => txn.vaultId === vaultId,
      })),
      ...[cards.c1.id, cards.c4.id, cards.b.id].map((cardId) => ({
        key: 'cardId',
        query: { cardId },
        keep: (txn: TransactionRecord) => txn.cardId === cardId,
      })),
      ...(['pending', 'completed', 'failed', 'declined'] as const).map((status) => ({
        key: 'status',
        query: { status },
        keep: (txn: TransactionRecord) => txn.status === status,
      })),
      ...(['card_authorization', 'transfer_in', 'transfer_out', 'deposit'] as const).map(
        (type) => ({
          key: 'type',
          query: { type },
          keep: (txn: TransactionRecord) => txn.type === type,
        }),
      ),
      ...['10', '10.000001', '1.500000001'].map((bound) => ({
        key: 'minAmount',
        query: { minAmount: new Decimal(bound) },
        keep: (txn: TransactionRecord) => txn.amount.gte(bound),
      })),
      ...['10', '30', '0.000001'].map((bound) => ({
        key: 'maxAmount',
        query: { maxAmount: new Decimal(bound) },
        keep: (txn: TransactionRecord) => txn.amount.lte(bound),
      })),
      ...[at(txns.edgeY), at(txns.t25)].map((startDate) => ({
        key: 'startDate',
        query: { startDate },
        keep: (txn: TransactionRecord) => at(txn) >= startDate,
      })),
      ...[at(txns.edgeY), transfers.tr2.createdAtMs].map((endDate) => ({
        key: 'endDate',
        query: { endDate },
        keep: (txn: TransactionRecord) => at(txn) < endDate,
      })),
    ];
    await checkFilters(universe, atoms, (query) => listTransactions(t.store.client, a, query));

    const only = async (query: Omit<ListTransactionsQuery, 'limit'>) =>
      ids(await walk(transactionsOf(a, query), 2, idOf));
    expect(await only({ cardId: cards.c4.id })).toEqual([txns.partial.id]);
    expect(await only({ status: 'declined' })).toEqual([txns.declined.id]);
    expect(await only({ status: 'failed', vaultId: vaults.usd1.id })).toEqual([txns.t25.id]);
    expect(await only({ status: 'pending', vaultId: vaults.sol.id })).toEqual([txns.sol.id]);
    expect(await only({ vaultId: vaults.b.id })).toEqual([]);
    expect(await only({ cardId: cards.b.id })).toEqual([]);
    for (const type of ['card_authorization', 'transfer_in', 'transfer_out', 'deposit'] as const) {
      expect(await only({ type }), type).not.toEqual([]);
    }
    // Everything at once.
    expect(
      await only({
        vaultId: vaults.usd1.id,
        cardId: cards.c1.id,
        status: 'pending',
        minAmount: usdc('3'),
        maxAmount: usdc('10'),
        startDate: at(txns.t10),
        endDate: at(txns.edgeY),
      }),
    ).toEqual(newestFirst([txns.t10.id, txns.edgeX.id]));
    // The credit of a transfer another account made into this account's vault is this account's.
    const credit = universe.find(
      (txn) => txn.transferId === transfers.tr3.id && txn.type === 'transfer_in',
    );
    expect(credit?.vaultId).toBe(vaults.usd1.id);
  });

  it('compares amount bounds exactly, inclusive at both ends', async () => {
    const only = async (query: Omit<ListTransactionsQuery, 'limit'>) =>
      ids(await walk(transactionsOf(a, { cardId: cards.c1.id, ...query }), 100, idOf));
    const above10 = await only({ minAmount: usdc('10.000001') });
    expect(above10).not.toContain(txns.t10.id);
    expect(above10).toContain(txns.t10b.id);
    expect(await only({ minAmount: usdc('10'), maxAmount: usdc('10') })).toEqual([txns.t10.id]);
    expect(await only({ minAmount: usdc('10.000001'), maxAmount: usdc('10.000001') })).toEqual([
      txns.t10b.id,
    ]);
    expect(await only({ minAmount: usdc('10.0000001'), maxAmount: usdc('10.0000009') })).toEqual(
      [],
    );
    expect(await only({ maxAmount: usdc('10') })).toEqual(
      newestFirst([txns.t10.id, txns.edgeX.id, txns.edgeY.id]),
    );
    expect(await only({ minAmount: usdc('11'), maxAmount: usdc('10') })).toEqual([]);
    // Beyond the column's nine decimals, still exact: no rounding to numeric(38, 9).
    const sol = async (minAmount: string) =>
      ids(
        await walk(
          transactionsOf(a, { vaultId: vaults.sol.id, minAmount: new Decimal(minAmount) }),
          100,
          idOf,
        ),
      );
    expect(await sol('1.500000001')).toContain(txns.sol.id);
    expect(await sol('1.5000000010000000001')).not.toContain(txns.sol.id);
    expect(await sol('1.5000000009999999999')).toContain(txns.sol.id);
  });

  it('bounds dates on createdAt to the millisecond: startDate inclusive, endDate exclusive', async () => {
    const x = txns.edgeX.createdAtMs;
    const y = txns.edgeY.createdAtMs;
    expect(y - x).toBe(1);
    const on = async (query: Omit<ListTransactionsQuery, 'limit'>) =>
      ids(await walk(transactionsOf(a, { cardId: cards.c1.id, ...query }), 2, idOf));
    expect(await on({ startDate: y, endDate: y + 1 })).toEqual([txns.edgeY.id]);
    expect(await on({ startDate: x, endDate: y })).toEqual([txns.edgeX.id]);
    expect(await on({ startDate: x, endDate: y + 1 })).toEqual([txns.edgeY.id, txns.edgeX.id]);
    expect(await on({ startDate: y, endDate: y })).toEqual([]);
    expect(await on({ startDate: y + 1, endDate: x })).toEqual([]);
    const fromY = await on({ startDate: y });
    expect(fromY).toContain(txns.edgeY.id);
    expect(fromY).not.toContain(txns.edgeX.id);
    const beforeY = await on({ endDate: y });
    expect(beforeY).toContain(txns.edgeX.id);
    expect(beforeY).not.toContain(txns.edgeY.id);
    expect(beforeY).toContain(txns.t10.id);
    // The bounds select by time, the cursor by id: both apply.
    const firstOfC1 = await listTransactions(t.store.client, a, {
      limit: 1,
      cardId: cards.c1.id,
      endDate: y + 1,
    });
    expect(ids(firstOfC1.data)).toEqual([txns.edgeY.id]);
    const next = await listTransactions(t.store.client, a, {
      limit: 1,
      cardId: cards.c1.id,
      startDate: x,
      endDate: y + 1,
      startingAfter: firstOfC1.nextCursor ?? '',
    });
    expect([ids(next.data), next.hasMore, next.nextCursor]).toEqual([[txns.edgeX.id], false, null]);
  });

  it('filters transfers by vaultId (from or to) and status, only the ones the account made', async () => {
    const universe = await walk(transfersOf(a), 100, idOf);
    expect(ids(universe)).toEqual(ownedTransfers());
    const atoms: Atom<ListTransfersQuery, TransferRecord>[] = [
      ...[vaults.usd1.id, vaults.usd2.id, vaults.sol.id, vaults.b.id, NO_VAULT].map((vaultId) => ({
        key: 'vaultId',
        query: { vaultId },
        keep: (transfer: TransferRecord) =>
          transfer.fromVaultId === vaultId || transfer.toVaultId === vaultId,
      })),
      ...(['pending', 'completed', 'failed'] as const).map((status) => ({
        key: 'status',
        query: { status },
        keep: (transfer: TransferRecord) => transfer.status === status,
      })),
    ];
    await checkFilters(universe, atoms, (query) => listTransfers(t.store.client, a, query));
    const only = async (scope: Scope, query: Omit<ListTransfersQuery, 'limit'>) =>
      ids(await walk(transfersOf(scope, query), 1, idOf));
    // tr3 went b -> usd1 but b made it: it is b's, not a's.
    expect(await only(a, { vaultId: vaults.usd1.id })).toEqual(
      newestFirst([transfers.tr1.id, transfers.tr2.id, transfers.tr4.id]),
    );
    expect(await only(a, { vaultId: vaults.usd2.id })).toEqual(
      newestFirst([transfers.tr1.id, transfers.tr4.id]),
    );
    expect(await only(a, { vaultId: vaults.b.id })).toEqual([transfers.tr2.id]);
    expect(await only(a, { status: 'pending' })).toEqual([pendingExternalId]);
    expect(await only(a, { vaultId: vaults.sol.id, status: 'completed' })).toEqual([]);
    expect(await only(a, { vaultId: vaults.usd1.id, status: 'completed' })).toEqual(
      newestFirst([transfers.tr1.id, transfers.tr2.id, transfers.tr4.id]),
    );
    expect(await only(b, {})).toEqual([transfers.tr3.id]);
    expect(await only(b, { vaultId: vaults.b.id })).toEqual([transfers.tr3.id]);
    expect(await only(b, { vaultId: vaults.usd1.id })).toEqual([transfers.tr3.id]);
  });

  it('pages balance history by day, newest first, with inclusive day bounds', async () => {
    const days = async (query: Omit<ListBalanceSnapshotsQuery, 'limit'>, limit = 2) =>
      (await walk(snapshotsOf(a, vaults.usd1.id, query), limit, dayOf)).map(dayOf);
    const all = [...SNAPSHOT_DAYS].reverse();
    expect(await days({})).toEqual(all);
    expect(await days({ startDate: '2026-10-31' })).toEqual(
      all.filter((day) => day >= '2026-10-31'),
    );
    expect(await days({ endDate: '2026-10-31' })).toEqual([
      '2026-10-31',
      '2026-10-30',
      '2026-10-28',
    ]);
    expect(await days({ startDate: '2026-10-31', endDate: '2026-10-31' })).toEqual(['2026-10-31']);
    expect(await days({ startDate: '2026-10-29', endDate: '2026-10-29' })).toEqual([]);
    expect(await days({ startDate: '2026-10-29', endDate: '2026-11-01' })).toEqual([
      '2026-11-01',
      '2026-10-31',
      '2026-10-30',
    ]);
    expect(await days({ startDate: '2026-11-02', endDate: '2026-11-01' })).toEqual([]);
    for (const startDate of SNAPSHOT_DAYS) {
      for (const endDate of SNAPSHOT_DAYS) {
        expect(await days({ startDate, endDate }, 1)).toEqual(
          all.filter((day) => day >= startDate && day <= endDate),
        );
      }
    }
    const after = await listBalanceSnapshots(t.store.client, a, vaults.usd1.id, {
      limit: 2,
      startingAfter: '2026-11-01',
      startDate: '2026-10-29',
    });
    expect([after.data.map(dayOf), after.hasMore, after.nextCursor]).toEqual([
      ['2026-10-31', '2026-10-30'],
      false,
      null,
    ]);
    // A day with no snapshot is a position too.
    const gap = await listBalanceSnapshots(t.store.client, a, vaults.usd1.id, {
      limit: 10,
      startingAfter: '2026-10-29',
    });
    expect(gap.data.map(dayOf)).toEqual(['2026-10-28']);
    // Only this vault's days.
    expect((await days({}, 10)).length).toBe(SNAPSHOT_DAYS.length);
    expect(
      (await listBalanceSnapshots(t.store.client, a, vaults.usd2.id, { limit: 10 })).data.map(
        dayOf,
      ),
    ).toEqual(['2026-11-01']);
  });

  it('answers vault_not_found (param id) for balance history of a vault outside the scope', async () => {
    for (const [scope, vaultId] of [
      [a, vaults.b.id],
      [b, vaults.usd1.id],
      [live, vaults.usd1.id],
      [a, vaults.live.id],
      [a, NO_VAULT],
      [a, 'not an id'],
    ] as const) {
      const error = await refusal(
        listBalanceSnapshots(t.store.client, scope, vaultId, { limit: 10 }),
      );
      expect([error.code, error.param]).toEqual(['vault_not_found', 'id']);
    }
    expect(
      (await listBalanceSnapshots(t.store.client, b, vaults.b.id, { limit: 10 })).data.map(dayOf),
    ).toEqual(['2026-11-02']);
  });

  it("never shows another account's rows or the other mode's", async () => {
    const all = async (scope: Scope) => ({
      vaults: ids(await walk(vaultsOf(scope), 100, idOf)),
      cards: ids(await walk(cardsOf(scope), 100, idOf)),
      transactions: ids(await walk(transactionsOf(scope), 100, idOf)),
      transfers: ids(await walk(transfersOf(scope), 100, idOf)),
    });
    const ofB = await all(b);
    expect(ofB.vaults).toEqual([vaults.b.id]);
    expect(ofB.cards).toEqual([cards.b.id]);
    expect(ofB.transfers).toEqual([transfers.tr3.id]);
    // b's deposit, its authorization, the debit of tr3 and the credit of tr2.
    expect(ofB.transactions).toHaveLength(4);
    expect(ofB.transactions).toContain(txns.b.id);

    const ofLive = await all(live);
    expect(ofLive.vaults).toEqual(newestFirst([vaults.live.id, vaults.live2.id]));
    expect(ofLive.cards).toEqual([cards.live.id]);
    expect(ofLive.transfers).toEqual([transfers.live.id]);
    expect(ofLive.transactions).toContain(txns.live.id);

    const ofA = await all(a);
    expect(ofA.vaults).toEqual(newestFirst(owned.vaults));
    expect(ofA.transactions).toEqual(newestFirst(owned.transactions));
    for (const [key, list] of Object.entries(ofA) as [keyof typeof ofA, string[]][]) {
      for (const id of [...ofB[key], ...ofLive[key]]) {
        expect(list, key).not.toContain(id);
      }
    }
    for (const txn of await walk(transactionsOf(a), 100, idOf)) {
      expect([txn.accountId, txn.mode]).toEqual([a.accountId, 'test']);
    }
    for (const transfer of await walk(transfersOf(a), 100, idOf)) {
      expect([transfer.accountId, transfer.mode]).toEqual([a.accountId, 'test']);
    }
    // Filters name another scope's objects: nothing comes back.
    expect(
      (await listCards(t.store.client, a, { limit: 10, vaultId: vaults.live.id })).data,
    ).toEqual([]);
    expect(
      (await listTransactions(t.store.client, a, { limit: 10, cardId: cards.live.id })).data,
    ).toEqual([]);
    expect(
      (await listTransactions(t.store.client, live, { limit: 10, vaultId: vaults.usd1.id })).data,
    ).toEqual([]);
    expect(
      (await listTransfers(t.store.client, live, { limit: 10, vaultId: vaults.usd1.id })).data,
    ).toEqual([]);
    // A cursor from another scope is only a position.
    const page = await listVaults(t.store.client, b, {
      limit: 10,
      startingAfter: vaults.closed.id,
    });
    expect(ids(page.data)).toEqual([vaults.b.id]);
    const none = await listVaults(t.store.client, b, { limit: 10, startingAfter: vaults.usd1.id });
    expect(none.data).toEqual([]);
  });
});
