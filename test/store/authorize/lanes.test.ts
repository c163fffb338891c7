import { beforeAll, describe, expect, it } from 'vitest';
import {
  SpendgateError,
  type AuthorizationOutcome,
  type Scope,
  type TransactionRecord,
} from '../../../src/core/index.js';
import { AuthorizeBatcher } from '../../../src/store/authorize/lanes.js';
import { RecentMap } from '../../../src/store/recent-map.js';
import { AUTHORIZE_BATCH_MAX, type AuthorizeRequest } from '../../../src/store/authorize/batch.js';
import { forEachDatabase } from '../../support/databases.js';
import {
  merchant,
  openTestStore,
  usdc,
  useTestStore,
  type TestStore,
} from '../../support/store.js';

/**
 * Batched authorization decides as if every request had run alone, one after another: the
 * same mixed requests, sequential on one store and all at once on another (one batch in flight
 * at a time, so the order is the submission order), get the same decisions.
 */
forEachDatabase('batched authorization', (database) => {
  const sequential = useTestStore(database);
  /** A second store on the same database. */
  let batched: TestStore;
  beforeAll(async () => {
    batched = await openTestStore(database, { authorizeBatchesMax: 1 });
  });

  async function setup(t: TestStore): Promise<{ scope: Scope; cards: string[] }> {
    const scope = await t.scope();
    const create = (currency: 'USDC' | 'SOL', deposit: string) =>
      t.vault(scope, deposit, { name: 'b', currency });
    const plain = await create('USDC', '100');
    const limited = await create('USDC', '500');
    await t.store.setPolicy(scope, limited.id, {
      limits: [
        { interval: 'perTransaction', amount: '30' },
        { interval: 'daily', count: 6 },
        { interval: 'daily', amount: '100', merchantCategories: ['5812'] },
      ],
      rules: [
        {
          name: 'no-casino',
          conditions: { all: [{ fact: 'merchantName', operator: 'contains', value: 'Casino' }] },
        },
      ],
    });
    const sol = await create('SOL', '10');
    const card = async (vaultId: string) =>
      (await t.card(scope, vaultId, { cardholderName: 'b' })).id;
    const cards = [
      await card(plain.id),
      await card(limited.id),
      await card(sol.id),
      await card(plain.id),
    ];
    await t.store.setCardStatus(scope, cards[3] as string, 'frozen');
    cards.push('card_00000000000000000000000000000000');
    return { scope, cards };
  }

  const requests = (scope: Scope, cards: string[]): AuthorizeRequest[] =>
    Array.from({ length: 60 }, (_, index) => ({
      scope,
      input: {
        cardId: cards[(index * 7) % cards.length] as string,
        amount: usdc(String(((index * 13) % 35) + 0.5)),
        currency: index % 11 === 0 ? 'SOL' : (index * 7) % cards.length === 2 ? 'SOL' : 'USDC',
        merchant: merchant({
          mcc: index % 3 === 0 ? '5812' : '5411',
          name: index % 9 === 0 ? 'Casino Royale' : 'Shop',
        }),
        // Every tenth request repeats the one before it.
        networkTransactionId: `ntx-${scope.accountId}-${index % 10 === 9 ? index - 1 : index}`,
      },
    }));

  const summary = (outcome: AuthorizationOutcome) => [
    outcome.decision.approved,
    outcome.decision.declineReason?.rule ?? null,
    outcome.replayed,
  ];

  it('gives every request the decision it would get alone', async () => {
    const a = await setup(sequential);
    const one: AuthorizationOutcome[] = [];
    for (const request of requests(a.scope, a.cards))
      one.push(await sequential.store.authorize(request.scope, request.input));
    const b = await setup(batched);
    const all = await Promise.all(
      requests(b.scope, b.cards).map((request) =>
        batched.store.authorize(request.scope, request.input),
      ),
    );
    expect(all.map(summary)).toEqual(one.map(summary));
    // The workload reaches every kind of outcome, or agreement would prove little.
    const rules = new Set(one.map((outcome) => outcome.decision.declineReason?.rule ?? 'approved'));
    for (const rule of [
      'approved',
      'card_not_found',
      'card_frozen',
      'currency_mismatch',
      'limits[0]',
      'limits[1]',
      'no-casino',
      'available_balance',
    ]) {
      expect(rules, rule).toContain(rule);
    }
    expect(one.some((outcome) => outcome.replayed)).toBe(true);
    await batched.expectInvariants();
  });
});

describe('AuthorizeBatcher', () => {
  const request = (index: number): AuthorizeRequest => ({
    scope: { accountId: 'acct', mode: 'test' },
    input: {
      cardId: `card-${index}`,
      amount: usdc('1'),
      currency: 'USDC',
      merchant: merchant(),
      networkTransactionId: `n${index}`,
    },
  });
  const outcomeFor = (item: AuthorizeRequest): AuthorizationOutcome => ({
    decision: {
      approved: true,
      declineCode: null,
      declineReason: { rule: item.input.cardId, message: '' },
      shadowMatches: [],
    },
    standIn: false,
    transaction: null,
    replayed: false,
  });

  it('starts batches at once up to its bound, then gathers the waiting requests into the next', async () => {
    const sizes: number[] = [];
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const batcher = new AuthorizeBatcher(
      async (items) => {
        sizes.push(items.length);
        await gate;
        return items.map(outcomeFor);
      },
      () => Promise.reject(new Error('not used')),
      { batchesMax: 2, queueMax: 100, vaultOfCard: new RecentMap(1_000) },
    );
    const pending = Array.from({ length: 10 }, (_, index) => batcher.submit(request(index)));
    release();
    const outcomes = await Promise.all(pending);
    expect(sizes).toEqual([1, 1, 8]);
    expect(outcomes.map((outcome) => outcome.decision.declineReason?.rule)).toEqual(
      pending.map((_, index) => `card-${index}`),
    );
  });

  it('runs each request of a failed batch alone, so only its own failure reaches it', async () => {
    const batcher = new AuthorizeBatcher(
      (items) =>
        items.length > 1
          ? Promise.reject(new Error('batch failed'))
          : Promise.resolve(items.map(outcomeFor)),
      (item) =>
        item.input.cardId === 'card-3'
          ? Promise.reject(new Error('card-3 fails'))
          : Promise.resolve(outcomeFor(item)),
      { batchesMax: 1, queueMax: 100, vaultOfCard: new RecentMap(1_000) },
    );
    const results = await Promise.allSettled(
      Array.from({ length: 6 }, (_, index) => batcher.submit(request(index))),
    );
    expect(results.map((result) => result.status)).toEqual([
      'fulfilled',
      'fulfilled',
      'fulfilled',
      'rejected',
      'fulfilled',
      'fulfilled',
    ]);
  });

  it('never runs two batches on one vault at once, and fills the free lane with other vaults', async () => {
    // Cards 0-9 belong to vault A, 10-19 to vault B; the batcher learns it from the outcomes.
    const vaultOf = (item: AuthorizeRequest) =>
      Number(item.input.cardId.slice(5)) % 20 < 10 ? 'vlt_A' : 'vlt_B';
    const running: Set<string>[] = [];
    const overlaps: string[] = [];
    let concurrentMax = 0;
    const batcher = new AuthorizeBatcher(
      async (items) => {
        const vaults = new Set(items.map(vaultOf));
        for (const other of running) {
          for (const vault of vaults) if (other.has(vault)) overlaps.push(vault);
        }
        running.push(vaults);
        concurrentMax = Math.max(concurrentMax, running.length);
        await new Promise((resolve) => setTimeout(resolve, 5));
        running.splice(running.indexOf(vaults), 1);
        return items.map((item) => ({
          ...outcomeFor(item),
          // Only the vault matters to the batcher; the rest of the record is not read.
          transaction: { vaultId: vaultOf(item) } as unknown as TransactionRecord,
        }));
      },
      () => Promise.reject(new Error('not used')),
      { batchesMax: 2, queueMax: 1000, vaultOfCard: new RecentMap(1_000) },
    );
    // Teach it every card's vault, one at a time.
    for (let index = 0; index < 20; index += 1) await batcher.submit(request(index));
    expect(overlaps).toEqual([]);
    // Then a burst that alternates vaults: both lanes run, never on one vault together.
    const burst = Array.from({ length: 400 }, (_, index) =>
      batcher.submit(request(index % 2 === 0 ? index % 10 : 10 + (index % 10))),
    );
    const outcomes = await Promise.all(burst);
    expect(outcomes).toHaveLength(400);
    expect(overlaps).toEqual([]);
    expect(concurrentMax).toBe(2);
  });

  it("runs one lane while each batch ends within the spare lane's wait", async () => {
    let running = 0;
    let concurrentMax = 0;
    const sizes: number[] = [];
    const batcher = new AuthorizeBatcher(
      async (items) => {
        running += 1;
        concurrentMax = Math.max(concurrentMax, running);
        sizes.push(items.length);
        await new Promise((resolve) => setTimeout(resolve, 5));
        running -= 1;
        return items.map(outcomeFor);
      },
      () => Promise.reject(new Error('not used')),
      { batchesMax: 2, queueMax: 1000, spareLaneAfterMs: 2_000, vaultOfCard: new RecentMap(1_000) },
    );
    const outcomes = await Promise.all(
      Array.from({ length: 300 }, (_, index) => batcher.submit(request(index))),
    );
    expect(outcomes).toHaveLength(300);
    expect(concurrentMax).toBe(1);
    // One lane gathers everything waiting: the first request alone, then full batches.
    const full = Math.floor(299 / AUTHORIZE_BATCH_MAX);
    expect(sizes).toEqual([
      1,
      ...Array.from({ length: full }, () => AUTHORIZE_BATCH_MAX),
      299 - full * AUTHORIZE_BATCH_MAX,
    ]);
  });

  it('opens the spare lane beside a batch held up past its wait, for the requests waiting', async () => {
    const spareLaneAfterMs = 60;
    const starts: { size: number; atMs: number }[] = [];
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    const batcher = new AuthorizeBatcher(
      async (items) => {
        starts.push({ size: items.length, atMs: performance.now() });
        if (starts.length === 1) await held;
        return items.map(outcomeFor);
      },
      () => Promise.reject(new Error('not used')),
      { batchesMax: 2, queueMax: 100, spareLaneAfterMs, vaultOfCard: new RecentMap(1_000) },
    );
    const pending = Array.from({ length: 5 }, (_, index) => batcher.submit(request(index)));
    // The held batch's four followers go through the spare lane while it is still held (were
    // it never to open, this would wait until the test's timeout).
    await Promise.all(pending.slice(1));
    expect(starts.map((start) => start.size)).toEqual([1, 4]);
    expect((starts[1]?.atMs ?? 0) - (starts[0]?.atMs ?? 0)).toBeGreaterThanOrEqual(
      spareLaneAfterMs - 1,
    );
    release();
    expect(await Promise.all(pending)).toHaveLength(5);
  });

  it('refuses with service_unavailable when its queue is full', async () => {
    const batcher = new AuthorizeBatcher(
      () => new Promise<AuthorizationOutcome[]>(() => undefined),
      () => Promise.reject(new Error('not used')),
      { batchesMax: 1, queueMax: 3, vaultOfCard: new RecentMap(1_000) },
    );
    const submitted = Array.from({ length: 5 }, (_, index) =>
      batcher.submit(request(index)).catch((error: unknown) => error),
    );
    const refused = await submitted[4];
    expect(refused).toBeInstanceOf(SpendgateError);
    expect((refused as SpendgateError).code).toBe('service_unavailable');
  });
});
