import { describe, expect, it } from 'vitest';
import { fundedCard, MERCHANT, networkId, type DecisionJson } from '../support/authorize.js';
import { useTestService } from '../support/http.js';
import { scrape } from '../support/metrics.js';
import { lockVault } from '../support/store.js';

/**
 * The server's metrics beyond request latency, each moved by the real thing and read from
 * /metrics over HTTP: rate-limit refusals by key class (the real Redis), authorization batch
 * sizes (concurrent callbacks through the real batcher and PostgreSQL), stand-in decisions
 * (a vault row held locked past the budget).
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
