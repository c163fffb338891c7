import { describe, expect, it } from 'vitest';
import { MemoryPriceBook, pricingOf } from '../../src/cli/price-book.js';
import { loadConfig } from '../../src/config/env.js';
import { Decimal } from '../../src/core/index.js';
import { fundedCard, MERCHANT, networkId, type DecisionJson } from '../support/authorize.js';
import { useTestService } from '../support/http.js';
import { scrape } from '../support/metrics.js';
import { lockVault } from '../support/store.js';

/**
 * The server's metrics beyond request latency, each moved by the real thing and read from
 * /metrics over HTTP: rate-limit refusals by key class (the real Redis), authorization batch
 * sizes (concurrent callbacks through the real batcher and PostgreSQL), stand-in decisions
 * (a vault row held locked past the budget), each price feed's age, price, confidence and
 * usability and the declines for want of a price (a price book as `serve` serves it).
 */
const REFUSALS = 'spendgate_rate_limit_refusals_total';
const BATCH = 'spendgate_authorize_batch_requests';
const DECISIONS = 'spendgate_authorization_decisions_total';

/** Low limits, as in rate-limits.test.ts; a burst of 20 always meets them. */
const LIMITS = { livePerSecond: 7, testPerSecond: 5, authorizationsPerSecond: 9 };
const BURST = 20;

describe('rate-limit refusals by key class', () => {
  const harness = useTestService<unknown>({ rateLimits: LIMITS });

  it('counts every 429 under its class, and nothing under the others', async () => {
    const service = harness.service;
    const before = await scrape(service.base);
    // Every class is there from the start, at 0.
    for (const keyClass of ['live', 'test', 'card_network']) {
      expect(before.value(REFUSALS, { key_class: keyClass })).toBe(0);
    }
    const { key: testKey } = await service.key();
    const { key: networkKey } = await service.key({ scopes: ['authorizations:write'] });
    const tests = await Promise.all(
      Array.from({ length: BURST }, () => service.request(testKey, 'GET', '/v1/account')),
    );
    const callbacks = await Promise.all(
      Array.from({ length: BURST }, () =>
        service.request(networkKey, 'POST', '/v1/authorizations', {
          cardId: 'card_0123456789abcdef0123456789abcdef',
          amount: '1',
          currency: 'USDC',
          merchant: MERCHANT,
          networkTransactionId: networkId(),
        }),
      ),
    );
    const refused = (answers: { status: number }[]) =>
      answers.filter((answer) => answer.status === 429).length;
    // A burst of 20 over a limit of 5 or 9 is refused at least twice, even across two windows.
    expect(refused(tests)).toBeGreaterThanOrEqual(BURST - 2 * LIMITS.testPerSecond);
    expect(refused(callbacks)).toBeGreaterThanOrEqual(BURST - 2 * LIMITS.authorizationsPerSecond);
    const after = await scrape(service.base);
    expect({
      live: after.value(REFUSALS, { key_class: 'live' }),
      test: after.value(REFUSALS, { key_class: 'test' }),
      card_network: after.value(REFUSALS, { key_class: 'card_network' }),
    }).toEqual({ live: 0, test: refused(tests), card_network: refused(callbacks) });
  });
});

describe('authorization batch sizes', () => {
  const harness = useTestService<DecisionJson & { id: string }>();

  it('observes every batch the batcher runs, with its size', async () => {
    const cards = await Promise.all(Array.from({ length: 4 }, () => fundedCard(harness, '1000')));
    const store = harness.service.store;
    const before = await scrape(harness.service.base);
    const statsBefore = store.authorizeStats();
    const count = 48;
    // Concurrent callbacks gather into batches (two lanes; the rest wait and join the next).
    const answers = await Promise.all(
      Array.from({ length: count }, (_, index) =>
        harness.call('POST', '/v1/authorizations', {
          cardId: cards[index % cards.length]?.cardId,
          amount: '1',
          currency: 'USDC',
          merchant: MERCHANT,
          networkTransactionId: networkId(),
        }),
      ),
    );
    expect(answers.map((answer) => [answer.status, answer.body.approved])).toEqual(
      Array.from({ length: count }, () => [200, true]),
    );
    const after = await scrape(harness.service.base);
    const statsAfter = store.authorizeStats();
    const moved = (name: string) => (after.value(name) ?? 0) - (before.value(name) ?? 0);
    // One observation per batch, and the sizes add up to every authorization decided.
    expect(moved(`${BATCH}_count`)).toBe(statsAfter.batches - statsBefore.batches);
    expect(moved(`${BATCH}_sum`)).toBe(count);
    expect(statsAfter.fallbacks).toBe(0);
    // Buckets are cumulative: every batch is within the bound.
    expect(after.value(`${BATCH}_bucket`, { le: '64' })).toBe(after.value(`${BATCH}_count`));
  });
});

describe('stand-in decisions', () => {
  const harness = useTestService<DecisionJson & { id: string }>({
    server: { authorize: { budgetMs: 300, standIn: 'decline' } },
  });

  it('counts a stand-in decline under stand_in="true", apart from decided ones', async () => {
    const { vaultId, cardId } = await fundedCard(harness, '100');
    const body = { cardId, amount: '10', currency: 'USDC', merchant: MERCHANT };
    const decided = await harness.call('POST', '/v1/authorizations', {
      ...body,
      networkTransactionId: networkId(),
    });
    expect([decided.body.approved, decided.body.standIn]).toEqual([true, false]);
    // The vault's row is locked past the budget: the stand-in decline answers.
    const lock = lockVault(harness.service.store, vaultId);
    await lock.isLocked;
    const late = await harness.call('POST', '/v1/authorizations', {
      ...body,
      networkTransactionId: networkId(),
    });
    lock.release();
    await lock.done;
    expect([late.body.approved, late.body.standIn]).toEqual([false, true]);
    const metrics = await scrape(harness.service.base);
    expect(
      metrics.value(DECISIONS, {
        outcome: 'declined',
        decline_code: 'card_declined',
        stand_in: 'true',
      }),
    ).toBe(1);
    expect(
      metrics.value(DECISIONS, { outcome: 'approved', decline_code: '', stand_in: 'false' }),
    ).toBe(1);
  });
});

describe('price feeds and rate_unavailable declines', () => {
  const RATE_UNAVAILABLE = 'spendgate_rate_unavailable_declines_total';
  // One clock for the store and the book: the feeds' ages are exact, and a price the gauges
  // call usable is one the store converts with.
  const NOW_MS = Date.UTC(2026, 10, 20, 14, 30, 0);
  const settings = loadConfig({ SPENDGATE_MODES: 'test' });
  const book = new MemoryPriceBook(
    { ageMsMax: settings.prices.ageMsMax, confidenceRatioMax: new Decimal('0.01') },
    () => NOW_MS,
  );
  const harness = useTestService<DecisionJson & { id: string }>({
    clock: () => NOW_MS,
    pricing: pricingOf(settings.prices, book),
    metricsRegistries: [book.registry],
  });
  /** A read of `pair` as the feed readers record it: the price's units at 10^-8, `ageSec` old. */
  const reading = (
    pair: string,
    priceUnits: bigint,
    confidenceUnits: bigint,
    ageSec: number,
  ): void => {
    book.record('test', {
      kind: 'reading',
      reading: {
        pair,
        address: `${pair.replace('/', '')}1111111111111111111111111111111`,
        priceUnits,
        confidenceUnits,
        exponent: -8,
        publishTimeSec: BigInt(NOW_MS / 1000 - ageSec),
        trading: true,
      },
    });
  };

  it("serves each feed's age, price, confidence and usability, and counts rate_unavailable declines", async () => {
    // SOL/USD at 142.17 +- 0.14217, 3 s old: usable. USDC/USD at 1 +- 0.02 (2%), 7 s old: not.
    reading('SOL/USD', 14_217_000_000n, 14_217_000n, 3);
    reading('USDC/USD', 100_000_000n, 2_000_000n, 7);
    const before = await scrape(harness.service.base);
    const feed = (name: string, pair: string) =>
      before.value(`spendgate_price_feed_${name}`, { mode: 'test', pair });
    expect(
      ['age_seconds', 'price', 'confidence', 'usable'].map((name) => [
        feed(name, 'SOL/USD'),
        feed(name, 'USDC/USD'),
      ]),
    ).toEqual([
      [3, 7],
      [142.17, 1],
      [0.14217, 0.02],
      [1, 0],
    ]);
    expect(before.types.get('spendgate_price_feed_age_seconds')).toBe('gauge');
    expect(before.value(RATE_UNAVAILABLE)).toBe(0);

    // A SOL vault's USD card converts at the usable SOL/USD price: no decline to count.
    const sol = await fundedCard(harness, '10', { currency: 'SOL' });
    const ask = (cardId: string, currency: string) =>
      harness.call('POST', '/v1/authorizations', {
        cardId,
        amount: '25.00',
        currency,
        merchant: MERCHANT,
        networkTransactionId: networkId(),
      });
    expect((await ask(sol.cardId, 'USD')).body.approved).toBe(true);
    // A EUR card: EUR/USD has no reading, so twice rate_unavailable.
    const vault = await harness.call('POST', '/v1/vaults', {
      name: 'EUR',
      currency: 'USDC',
      network: 'solana',
      initialDeposit: '100',
    });
    const eur = await harness.call('POST', '/v1/cards', {
      vaultId: vault.body.id,
      cardholderName: 'Ada',
      billingCurrency: 'EUR',
    });
    for (let attempt = 0; attempt < 2; attempt++) {
      const declined = await ask(eur.body.id, 'EUR');
      expect([declined.body.approved, declined.body.declineReason?.rule]).toEqual([
        false,
        'rate_unavailable',
      ]);
    }
    // Declined otherwise (over the balance): not this counter's.
    const poor = await fundedCard(harness, '1');
    expect((await ask(poor.cardId, 'USDC')).body.declineCode).toBe('insufficient_balance');
    const after = await scrape(harness.service.base);
    expect(after.value(RATE_UNAVAILABLE)).toBe(2);
    expect(after.types.get(RATE_UNAVAILABLE)).toBe('counter');
  });
});
