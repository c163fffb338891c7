import { afterAll, expect, it } from 'vitest';
import { Decimal, isoDate, MS_PER_DAY, utcDayNumber, type Scope } from '../../src/core/index.js';
import {
  countAuthorizations,
  readReplayBatch,
  windowIdBounds,
  type BacktestTarget,
} from '../../src/store/backtest-rows.js';
import type { SqlQueryable } from '../../src/store/sql/client.js';
import { forEachDatabase } from '../support/databases.js';
import { indexPlanNodes } from '../support/index-plans.js';
import { merchant, networkTransactionId, TestClock, useTestStore } from '../support/store.js';
import { solUsdPricing } from '../support/pricing.js';

/**
 * Backtests in the store, on PostgreSQL and on PGlite (the statements run on both): the spend
 * a draft's limits start from (a vault's from its counters, a card's from its own
 * authorizations, all-time included), and the documented approximation of a hold released in
 * parts.
 */
const HOUR = 3_600_000;
/**
 * Days each set-up moves on from the clock's start: ids never go back in time (ids.ts), and the
 * suites of both databases run in one process, each with a clock of its own from the same
 * start, so each set-up starts later than any before it, or its ids would run ahead of its
 * clock (and out of the window their times name).
 */
let daysOn = 0;

forEachDatabase('backtests', (database) => {
  const t = useTestStore(database, {
    pricing: solUsdPricing(
      () => t.clock.nowMs,
      () => new Decimal('100'),
      () => new Decimal('0.05'),
    ),
  });
  afterAll(async () => {
    await t.expectInvariants();
  });

  /** A funded vault and a card, the clock on a Monday at noon, later than any set-up before. */
  const setUp = async () => {
    daysOn += 100;
    const day = utcDayNumber(new TestClock().nowMs) + daysOn;
    // Day 0 of 1970 was a Thursday: day numbers with (day + 3) % 7 === 0 are Mondays.
    const monday = day + ((7 - ((day + 3) % 7)) % 7);
    t.clock.nowMs = monday * MS_PER_DAY + 12 * HOUR;
    const scope: Scope = await t.scope();
    const vault = await t.vault(scope, '100000');
    const card = await t.card(scope, vault.id);
    return { scope, vaultId: vault.id, cardId: card.id, monday };
  };
  const buy = async (scope: Scope, cardId: string, amount: string, mcc = '5812') =>
    t.store.authorize(scope, {
      cardId,
      amount: new Decimal(amount),
      currency: 'USDC',
      merchant: merchant({ mcc }),
      networkTransactionId: networkTransactionId(),
    });

  it('starts the limits from the spend before the window: a week begun, all time', async () => {
    const { scope, vaultId, cardId, monday } = await setUp();
    // Monday and Tuesday: 70 spent (60 + 10), four purchases in all time with the one before.
    await buy(scope, cardId, '60');
    t.clock.advance(24 * HOUR);
    await buy(scope, cardId, '10', '5411');
    t.clock.nowMs = (monday - 10) * MS_PER_DAY;
    await buy(scope, cardId, '5');
    // The window opens on Wednesday: 40 more this week would make 110.
    t.clock.nowMs = (monday + 2) * MS_PER_DAY + HOUR;
    const forty = await buy(scope, cardId, '40');
    t.clock.advance(HOUR);
    await buy(scope, cardId, '20');
    expect(forty.decision.approved).toBe(true);
    const window = { startDate: isoDate(monday + 2), endDate: isoDate(monday + 2) };
    const draft = {
      limits: [
        { interval: 'weekly', amount: '100' },
        { interval: 'allTime', count: 4 },
        { interval: 'weekly', amount: '65', merchantCategories: ['5812'] },
      ],
    };
    for (const subject of [
      { kind: 'vault' as const, vaultId },
      { kind: 'card' as const, cardId },
    ]) {
      const { backtest } = await t.store.createBacktest(scope, subject, { draft, ...window });
      const result = backtest.result;
      // 40: 70 + 40 > 100 this week (limits[0]). 20: 70 + 20 fits the week; but three
      // purchases before the window and none since under the draft: the fourth is allowed,
      // and 60 + 20 at 5812 is over 65 (limits[2]).
      expect(
        result?.examples.map((example) => [example.amount, example.backtest.declineReason?.rule]),
      ).toEqual([
        ['40.00', 'limits[0]'],
        ['20.00', 'limits[2]'],
      ]);
      expect(result?.approvedToDeclined).toBe(2);
    }
    // All time: five purchases before a window that starts after them all.
    t.clock.advance(2 * 24 * HOUR);
    const later = isoDate(utcDayNumber(t.clock.nowMs));
    const { backtest } = await t.store.createBacktest(
      scope,
      { kind: 'card', cardId },
      { draft: { limits: [{ interval: 'allTime', count: 5 }] }, startDate: later, endDate: later },
    );
    expect(backtest.result?.authorizations).toBe(0);
    await buy(scope, cardId, '1');
    const { backtest: after } = await t.store.createBacktest(
      scope,
      { kind: 'vault', vaultId },
      { draft: { limits: [{ interval: 'allTime', count: 5 }] }, startDate: later, endDate: later },
    );
    expect(after.result).toMatchObject({ authorizations: 1, approvedToDeclined: 1 });
  });

  it("starts a card's billing-currency limit from the billing spend before the window (a SOL vault's USD card)", async () => {
    const { scope, monday } = await setUp();
    const vault = await t.vault(scope, '1000', { currency: 'SOL' });
    const card = await t.store.createCard(scope, {
      vaultId: vault.id,
      cardholderName: 'Ada',
      metadata: {},
      billingCurrency: 'USD',
    });
    const buyUsd = async (amount: string, mcc = '5812') => {
      const outcome = await t.store.authorize(scope, {
        cardId: card.id,
        amount: new Decimal(amount),
        currency: 'USD',
        merchant: merchant({ mcc }),
        networkTransactionId: networkTransactionId(),
      });
      expect(outcome.decision.approved).toBe(true);
      return outcome.transaction?.id ?? '';
    };
    // Monday: 60 USD at 5812 (0.63 SOL held with the buffer) and 25 USD at 5411, both counted;
    // 30 USD reversed whole, which the billing rows take back; 15 USD of which 5 USD is
    // captured (the billing rows keep a partly released approval's whole billing amount).
    await buyUsd('60');
    t.clock.advance(HOUR);
    await buyUsd('25', '5411');
    t.clock.advance(HOUR);
    await t.store.reverse(scope, await buyUsd('30'), null);
    t.clock.advance(HOUR);
    await t.store.capture(scope, await buyUsd('15'), new Decimal('5'));
    // Wednesday, in the window: 10 USD and 5 USD at 5812.
    t.clock.nowMs = (monday + 2) * MS_PER_DAY + HOUR;
    const ten = await buyUsd('10');
    t.clock.advance(HOUR);
    await buyUsd('5');
    const window = { startDate: isoDate(monday + 2), endDate: isoDate(monday + 2) };
    const draft = {
      limits: [
        // 100 counted this week before the window (60 + 25 + 15, not the 30 reversed): the 10
        // goes over, the 5 makes 105 and fits.
        { interval: 'weekly', amount: '105', currency: 'USD' },
        // 75 at 5812 before it: 80 with the 5.
        { interval: 'weekly', amount: '85', currency: 'USD', merchantCategories: ['5812'] },
        // In the asset (SOL): 0.63 + 0.2625 + 0.05 before, far under.
        { interval: 'weekly', amount: '2' },
      ],
    };
    for (const subject of [
      { kind: 'vault' as const, vaultId: vault.id },
      { kind: 'card' as const, cardId: card.id },
    ]) {
      const { backtest } = await t.store.createBacktest(scope, subject, { draft, ...window });
      expect(
        backtest.result?.examples.map((example) => [
          example.transactionId,
          example.backtest.declineReason?.rule,
        ]),
        subject.kind,
      ).toEqual([[ten, 'limits[0]']]);
      expect(backtest.result, subject.kind).toMatchObject({ approvedToDeclined: 1, unchanged: 1 });
    }
    // The limit at 5812 first: the 10 fits (75 + 10 = 85), the 5 does not.
    const { backtest } = await t.store.createBacktest(
      scope,
      { kind: 'card', cardId: card.id },
      { draft: { limits: draft.limits.slice(1) }, ...window },
    );
    expect(
      backtest.result?.examples.map((example) => example.backtest.declineReason?.rule),
    ).toEqual(['limits[0]']);
    expect(backtest.result).toMatchObject({ approvedToDeclined: 1, unchanged: 1 });
  });

  it('takes a hold released in parts back whole at its last part (the documented approximation)', async () => {
    const { scope, vaultId, cardId } = await setUp();
    const policy = { limits: [{ interval: 'daily', amount: '100' }] };
    await t.store.setPolicy(scope, vaultId, policy);
    const startDate = isoDate(utcDayNumber(t.clock.nowMs));
    const held = await buy(scope, cardId, '80');
    const id = held.transaction?.id ?? '';
    t.clock.advance(HOUR);
    await t.store.reverse(scope, id, new Decimal('50'));
    t.clock.advance(HOUR);
    // Live: 30 spent, so 60 fits. Replayed: the 50 comes back only at the capture, later.
    const between = await buy(scope, cardId, '60');
    t.clock.advance(HOUR);
    await t.store.capture(scope, id, new Decimal('10'));
    t.clock.advance(HOUR);
    expect(between.decision.approved).toBe(true);
    const { backtest } = await t.store.createBacktest(
      scope,
      { kind: 'vault', vaultId },
      { draft: policy, startDate, endDate: startDate },
    );
    expect(backtest.result).toMatchObject({ approvedToDeclined: 1, unchanged: 1 });
    expect(backtest.result?.examples[0]?.transactionId).toBe(between.transaction?.id);
  });

  it('reads a batch and a count from the (type, status) ranges merged in id order, never the whole history (PostgreSQL plans)', async () => {
    if (database.kind !== 'pg') return;
    const { scope, vaultId, cardId } = await setUp();
    const startMs = t.clock.nowMs;
    // Approvals and declines (over the balance), so that more than one range holds rows.
    for (const amount of ['10', '20', '200000', '30', '300000', '40']) {
      await buy(scope, cardId, amount);
      t.clock.advance(1000);
    }
    const bounds = windowIdBounds({ startMs, endMs: t.clock.nowMs + 1 });
    const sent: { text: string; params: readonly unknown[] }[] = [];
    const recording: SqlQueryable = {
      query: (text, params = []) => (
        sent.push({ text, params }),
        t.store.client.query(text, params)
      ),
      exec: (text) => t.store.client.exec(text),
    };
    const limit = 3;
    const targets: { target: BacktestTarget; ranges: number }[] = [
      { target: { kind: 'vault', vaultId }, ranges: 12 },
      { target: { kind: 'card', vaultId, cardId }, ranges: 8 },
    ];
    for (const { target, ranges } of targets) {
      sent.length = 0;
      const batch = await readReplayBatch(recording, target, bounds.after, bounds.before, limit);
      expect(batch.rows).toHaveLength(limit);
      expect(await countAuthorizations(recording, target, bounds, 100)).toBe(6);
      for (const statement of sent) {
        const nodes = await indexPlanNodes(t.store.client, statement);
        const label = `${target.kind}: ${statement.text.slice(0, 60)}`;
        expect(
          nodes.map((node) => node['Node Type']),
          label,
        ).not.toContain('Sort');
        const scans = nodes.filter((node) => node['Index Name'] !== undefined);
        // One range per (type, status) of the target's types (the count's: authorizations
        // only), each of the (owner, type, status, id) index, reading at most the statement's
        // bound and a row more from each range.
        const counting = statement.text.includes('AS counted');
        const expectedRanges = counting ? 4 : ranges;
        expect(scans, label).toHaveLength(expectedRanges);
        expect(new Set(scans.map((scan) => scan['Index Name'])), label).toEqual(
          new Set([
            target.kind === 'vault' ? 'transactions_by_vault_kind' : 'transactions_by_card_kind',
          ]),
        );
        const read = scans.reduce((sum, scan) => sum + scan['Actual Rows'], 0);
        expect(read, label).toBeLessThanOrEqual((counting ? 100 : limit) + expectedRanges);
      }
    }
  });
});
