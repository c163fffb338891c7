import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemoryPriceBook, pricingOf, startPriceReaders } from '../../src/cli/price-book.js';
import { loadConfig } from '../../src/config/env.js';
import { Decimal, formatAmount, type FeedReading } from '../../src/core/index.js';
import {
  LOCAL_PRICE_FEEDS,
  startLocalSolana,
  type LocalSolana,
} from '../../src/local-chain/index.js';
import type { FeedReaders } from '../../src/solana/price-feeds.js';
import { fundedCard, MERCHANT, networkId, type DecisionJson } from '../support/authorize.js';
import { useTestService } from '../support/http.js';

/*
 * A SOL vault's card billed in USD (and a EUR card), priced from Pyth price accounts on the
 * local chain, through the same reader and parser as live mode (contract v1.2, section 16;
 * docs/pricing.md): the hold at the price plus the buffer, the capture at its own price, and
 * every way a price is unusable (stale, wide, missing, cluster down), each with the answer
 * and the vault's balance checked.
 */

interface TransactionJson {
  id: string;
  status: string;
  amount: string;
  capturedAmount: string;
  currency: string;
  billing: { amount: string; currency: string };
  rate: {
    value: string;
    source: string;
    at: string;
    feeds: {
      pair: string;
      address: string;
      price: string;
      confidence: string;
      publishedAt: string;
    }[];
  } | null;
}
type Balance = { available: string; pending: string; ledger: string };
type Json = DecisionJson &
  TransactionJson & { balance: Balance; id: string; error?: { code: string; param?: string } };

const settings = loadConfig({ SPENDGATE_MODES: 'test', PRICE_POLL_MS: '100' });
const book = new MemoryPriceBook({
  ageMsMax: settings.prices.ageMsMax,
  confidenceRatioMax: new Decimal(settings.prices.confidenceRatioMax),
});
let solana: LocalSolana | undefined;
let readers: FeedReaders[] = [];

beforeAll(async () => {
  solana = await startLocalSolana();
  readers = startPriceReaders(settings, book, solana.url);
}, 60_000);

afterAll(async () => {
  for (const reader of readers) reader.stop();
  await solana?.close();
});

function chain(): LocalSolana {
  if (solana === undefined) throw new Error('the local chain is not started');
  return solana;
}

/** Waits until the book's reading of `pair` satisfies `ready` (the readers poll every 100 ms). */
async function readingWhere(
  pair: string,
  ready: (reading: FeedReading | null) => boolean,
): Promise<FeedReading | null> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const reading = book.reading('test', pair);
    if (ready(reading)) return reading;
    if (Date.now() > deadline) throw new Error(`${pair} never became ready`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Sets a price on chain and waits until the service has read it back. */
async function setPrice(pair: string, price: string, confidence?: string): Promise<void> {
  await chain().setPrice(pair, { price, ...(confidence === undefined ? {} : { confidence }) });
  await readingWhere(
    pair,
    (reading) =>
      reading?.price.eq(price) === true &&
      (confidence === undefined || reading.confidence.eq(confidence)) &&
      Date.now() - reading.publishTimeMs < 5_000,
  );
}

const harness = useTestService<Json>({ pricing: pricingOf(settings.prices, book) });

const authorize = (cardId: string, amount: string, currency = 'USD') =>
  harness.call('POST', '/v1/authorizations', {
    cardId,
    amount,
    currency,
    merchant: MERCHANT,
    networkTransactionId: networkId(),
  });

const balanceOf = async (vaultId: string): Promise<Balance> =>
  (await harness.call('GET', `/v1/vaults/${vaultId}`)).body.balance;

/** USD in SOL at `price`, rounded up to the lamport, then plus 5%, rounded up again. */
function expectedHold(usd: string, price: string): string {
  const worth = new Decimal(usd).dividedBy(price).toDecimalPlaces(9, Decimal.ROUND_UP);
  return sol(worth.times('1.05').toDecimalPlaces(9, Decimal.ROUND_UP));
}

/** A SOL amount as the API writes it (at least 2 decimals, at most 9). */
function sol(amount: Decimal | string): string {
  return formatAmount(new Decimal(amount), 'SOL');
}

describe('a SOL vault priced from the local chain', () => {
  it('holds the USD amount at the feed price plus the buffer, and records the rate', async () => {
    await setPrice('SOL/USD', '142.17');
    const { vaultId, cardId } = await fundedCard(harness, '10', { currency: 'SOL' });
    const answer = await authorize(cardId, '25.00');
    expect([answer.status, answer.body.approved, answer.body.currency]).toEqual([200, true, 'SOL']);
    const hold = expectedHold('25.00', '142.17');
    expect(answer.body.amount).toBe(hold);
    expect(await balanceOf(vaultId)).toEqual({
      ledger: sol('10'),
      pending: hold,
      available: sol(new Decimal(10).minus(hold)),
    });
    const recorded = (await harness.call('GET', `/v1/transactions/${answer.body.id}`)).body;
    expect(recorded.billing).toEqual({ amount: '25.00', currency: 'USD' });
    expect(recorded.rate?.value).toBe('142.17');
    expect(recorded.rate?.source).toBe(`pyth:${LOCAL_PRICE_FEEDS['SOL/USD'] ?? ''}`);
    expect(recorded.rate?.feeds).toEqual([
      {
        pair: 'SOL/USD',
        address: LOCAL_PRICE_FEEDS['SOL/USD'],
        price: '142.17',
        confidence: '0.014217',
        publishedAt: recorded.rate?.at,
      },
    ]);
    expect(Math.abs(Date.parse(recorded.rate?.at ?? '') - Date.now())).toBeLessThan(10_000);
  });

  it('captures at the price of the capture: the buffer released, or a shortfall posted', async () => {
    await setPrice('SOL/USD', '100');
    const { vaultId, cardId } = await fundedCard(harness, '1', { currency: 'SOL' });
    const first = await authorize(cardId, '20.00');
    const second = await authorize(cardId, '20.00');
    const hold = expectedHold('20.00', '100');
    expect([first.body.amount, second.body.amount]).toEqual([hold, hold]);
    // The price rises: 20 USD is less SOL now; the capture posts that, and releases the rest.
    await setPrice('SOL/USD', '125');
    const up = await harness.call('POST', `/v1/authorizations/${first.body.id}/capture`);
    expect([up.status, up.body.status, up.body.capturedAmount]).toEqual([
      200,
      'completed',
      sol('0.16'),
    ]);
    // The price falls past the buffer: 20 USD is more SOL than held; all of it posts.
    await setPrice('SOL/USD', '80');
    const down = await harness.call('POST', `/v1/authorizations/${second.body.id}/capture`, {
      amount: '20.00',
    });
    expect([down.status, down.body.status, down.body.capturedAmount]).toEqual([
      200,
      'completed',
      sol('0.25'),
    ]);
    expect(new Decimal('0.25').gt(hold)).toBe(true);
    // Nothing held any more; the ledger gave up exactly the two captures.
    expect(await balanceOf(vaultId)).toEqual({
      ledger: sol('0.59'),
      pending: sol('0'),
      available: sol('0.59'),
    });
  });

  it("records each capture's own rate on its timeline message, the authorization's kept", async () => {
    await setPrice('SOL/USD', '100');
    const { cardId } = await fundedCard(harness, '1', { currency: 'SOL' });
    const asked = await authorize(cardId, '30.00');
    const id = asked.body.id;
    // Split shipment: 10 USD at 125, then 20 USD at 80 (the rest of the hold, and beyond).
    await setPrice('SOL/USD', '125');
    const first = await harness.call('POST', `/v1/authorizations/${id}/capture`, {
      amount: '10.00',
      final: false,
    });
    expect([first.status, first.body.capturedAmount]).toEqual([200, sol('0.08')]);
    await setPrice('SOL/USD', '80');
    const second = await harness.call('POST', `/v1/authorizations/${id}/capture`, {
      amount: '20.00',
    });
    expect([second.status, second.body.status, second.body.capturedAmount]).toEqual([
      200,
      'completed',
      sol('0.33'),
    ]);
    // The transaction's rate stays the authorization's.
    expect(second.body.rate?.value).toBe('100');
    const timeline = await harness.call('GET', `/v1/transactions/${id}/timeline`);
    const messages = (
      timeline.body as unknown as {
        messages: {
          kind: string;
          amount: string;
          billing: { amount: string; currency: string } | null;
          rate: TransactionJson['rate'];
        }[];
      }
    ).messages;
    expect(messages.map((message) => message.kind)).toEqual([
      'authorization',
      'capture',
      'capture',
    ]);
    expect(
      messages.map((message) => [message.amount, message.billing, message.rate?.value]),
    ).toEqual([
      [expectedHold('30.00', '100'), null, undefined],
      [sol('0.08'), { amount: '10.00', currency: 'USD' }, '125'],
      [sol('0.25'), { amount: '20.00', currency: 'USD' }, '80'],
    ]);
    const capturedAt = messages[2]?.rate;
    expect(capturedAt?.source).toBe(`pyth:${LOCAL_PRICE_FEEDS['SOL/USD'] ?? ''}`);
    expect(capturedAt?.feeds).toEqual([
      {
        pair: 'SOL/USD',
        address: LOCAL_PRICE_FEEDS['SOL/USD'],
        price: '80',
        confidence: '0.008',
        publishedAt: capturedAt?.at,
      },
    ]);
    // Each capture's event (contract section 13): the transaction as the API answered that
    // capture and nothing beside it, its `rate` the authorization's; the capture's own rate
    // is the timeline's to show (docs/pricing.md).
    const { rows } = await harness.service.store.client.query<{ payload: { data: unknown } }>(
      `SELECT payload FROM outbox_events
       WHERE type = 'transaction.captured' AND payload->'data'->'object'->>'id' = $1 ORDER BY id`,
      [id],
    );
    expect(rows.map((row) => row.payload.data)).toEqual([
      { object: first.body },
      { object: second.body },
    ]);
  });

  it('checks a limit written in USD against billing amounts, whatever the price', async () => {
    await setPrice('SOL/USD', '100');
    const { vaultId, cardId } = await fundedCard(harness, '10', { currency: 'SOL' });
    const policy = await harness.call('PUT', `/v1/vaults/${vaultId}/policy`, {
      limits: [
        { interval: 'perTransaction', amount: '40', currency: 'USD' },
        { interval: 'daily', amount: '50', currency: 'USD' },
      ],
    });
    expect(policy.status).toBe(200);
    const first = await authorize(cardId, '30.00');
    expect(first.body.approved).toBe(true);
    // SOL at 400: 30 USD is 0.075 SOL, less than the first hold; in USD it is over the limit.
    await setPrice('SOL/USD', '400');
    const second = await authorize(cardId, '30.00');
    expect([second.body.approved, second.body.declineReason?.rule]).toEqual([false, 'limits[1]']);
    expect(second.body.declineReason?.message).toBe(
      'Daily spend limit of 50.00 USD would be exceeded',
    );
    const big = await authorize(cardId, '40.01');
    expect([big.body.approved, big.body.declineReason?.rule]).toEqual([false, 'limits[0]']);
    const fits = await authorize(cardId, '20.00');
    expect(fits.body.approved).toBe(true);
    const limits = (await harness.call('GET', `/v1/vaults/${vaultId}/policy/limits`))
      .body as unknown as {
      limits: { currency: string; amount: string; used: string | null; remaining: string }[];
    };
    expect(
      limits.limits.map((limit) => [limit.currency, limit.amount, limit.used, limit.remaining]),
    ).toEqual([
      ['USD', '40.00', null, '40.00'],
      ['USD', '50.00', '50.00', '0.00'],
    ]);
    // A reversed authorization gives its billing amount back; a partial reversal does not.
    await harness.call('POST', `/v1/authorizations/${fits.body.id}/reverse`, { amount: '0.01' });
    expect((await authorize(cardId, '1.00')).body.approved).toBe(false);
    await harness.call('POST', `/v1/authorizations/${first.body.id}/reverse`);
    const again = await authorize(cardId, '30.00');
    expect(again.body.approved).toBe(true);
    const after = (await harness.call('GET', `/v1/vaults/${vaultId}/policy/limits`))
      .body as unknown as { limits: { used: string | null }[] };
    expect(after.limits[1]?.used).toBe('50.00');
    // A request asked in SOL itself has no billing amount: a USD limit cannot count it.
    const inSol = await authorize(cardId, '0.01', 'SOL');
    expect([inSol.body.approved, inSol.body.declineReason?.rule]).toEqual([false, 'limits[0]']);
  });

  it('refuses a limit in another asset, and takes USD on a USDC vault as its asset', async () => {
    const sol = await fundedCard(harness, '1', { currency: 'SOL' });
    const wrong = await harness.call('PUT', `/v1/vaults/${sol.vaultId}/policy`, {
      limits: [{ interval: 'daily', amount: '5', currency: 'USDC' }],
    });
    expect([wrong.status, wrong.body.error?.code, wrong.body.error?.param]).toEqual([
      400,
      'policy_invalid',
      'limits[0].currency',
    ]);
    const count = await harness.call('PUT', `/v1/vaults/${sol.vaultId}/policy`, {
      limits: [{ interval: 'daily', count: 5, currency: 'USD' }],
    });
    expect([count.status, count.body.error?.code]).toEqual([400, 'policy_invalid']);
    const usdc = await fundedCard(harness, '100');
    await harness.call('PUT', `/v1/vaults/${usdc.vaultId}/policy`, {
      limits: [{ interval: 'daily', amount: '10', currency: 'USD' }],
    });
    expect((await authorize(usdc.cardId, '6.00', 'USDC')).body.approved).toBe(true);
    const over = await authorize(usdc.cardId, '6.00');
    expect([over.body.approved, over.body.declineReason?.rule]).toEqual([false, 'limits[0]']);
  });

  it('converts EUR through EUR/USD and SOL/USD, both recorded', async () => {
    await setPrice('SOL/USD', '150');
    await setPrice('EUR/USD', '1.08');
    const vault = await harness.call('POST', '/v1/vaults', {
      name: 'E',
      currency: 'SOL',
      network: 'solana',
      initialDeposit: '5',
    });
    const card = await harness.call('POST', '/v1/cards', {
      vaultId: vault.body.id,
      cardholderName: 'Ada',
      billingCurrency: 'EUR',
    });
    const answer = await authorize(card.body.id, '50.00', 'EUR');
    // 50 EUR = 54 USD = 0.36 SOL; plus 5%: 0.378.
    expect([answer.body.approved, answer.body.amount]).toEqual([true, sol('0.378')]);
    const recorded = (await harness.call('GET', `/v1/transactions/${answer.body.id}`)).body;
    expect(recorded.rate?.feeds.map((feed) => feed.pair)).toEqual(['EUR/USD', 'SOL/USD']);
    expect(recorded.rate?.value).toBe('138.88888888888888889');
  });
});

describe('no usable price: rate_unavailable at once, nothing held', () => {
  async function declinedWithNothingHeld(): Promise<void> {
    const { vaultId, cardId } = await fundedCard(harness, '10', { currency: 'SOL' });
    const started = Date.now();
    const answer = await authorize(cardId, '25.00');
    expect(Date.now() - started).toBeLessThan(1_000);
    expect([answer.status, answer.body.approved, answer.body.declineCode]).toEqual([
      200,
      false,
      'card_declined',
    ]);
    expect(answer.body.declineReason?.rule).toBe('rate_unavailable');
    expect(await balanceOf(vaultId)).toEqual({
      ledger: sol('10'),
      pending: sol('0'),
      available: sol('10'),
    });
    const recorded = (await harness.call('GET', `/v1/transactions/${answer.body.id}`)).body;
    expect([recorded.status, recorded.rate]).toEqual(['declined', null]);
  }

  it('declines on a stale price (published a minute ago)', async () => {
    const publishTimeSec = Math.floor(Date.now() / 1000) - 60;
    await chain().setPrice('SOL/USD', { price: '142.17', publishTimeSec });
    await readingWhere('SOL/USD', (reading) => reading?.publishTimeMs === publishTimeSec * 1000);
    await declinedWithNothingHeld();
  });

  it('declines on a confidence interval wider than 1% of the price', async () => {
    await setPrice('SOL/USD', '142.17', '1.5');
    await declinedWithNothingHeld();
  });

  it('declines when the feed account is missing from the cluster', async () => {
    await chain().removePrice('SOL/USD');
    await readingWhere('SOL/USD', (reading) => reading === null);
    await declinedWithNothingHeld();
    await setPrice('SOL/USD', '142.17');
  });

  it('keeps the last good price while the cluster is down, until it is too old', async () => {
    await setPrice('SOL/USD', '142.17');
    // A book read from a cluster that is not there: nothing to use, ever.
    const down = new MemoryPriceBook(book.bounds);
    const dead = startPriceReaders(
      { ...settings, prices: { ...settings.prices, readTimeoutMs: 200 } },
      down,
      'http://127.0.0.1:9',
    );
    await dead[0]?.readAll();
    dead.forEach((reader) => {
      reader.stop();
    });
    expect(down.reading('test', 'SOL/USD')).toBeNull();
    expect(await down.registry.metrics()).toMatch(
      /spendgate_price_feed_read_failures_total\{mode="test",pair="SOL\/USD",reason="(rpc_error|timeout)"\} [1-9]/,
    );
    // The good reading survives a failed read; the age bound then refuses it.
    const good = book.reading('test', 'SOL/USD');
    expect(good).not.toBeNull();
    book.record('test', { kind: 'failure', pair: 'SOL/USD', failure: 'rpc_error' });
    expect(book.reading('test', 'SOL/USD')).toBe(good);
  });
});

describe('the foreign-currency template', () => {
  it('declines a merchant charging in another currency than the billing one', async () => {
    const { vaultId, cardId } = await fundedCard(harness, '100');
    const set = await harness.call('PUT', `/v1/vaults/${vaultId}/policy`, {
      templates: [{ name: 'foreign-currency', params: { amountMax: '20' } }],
    });
    expect(set.status).toBe(200);
    const abroad = (amount: string, merchantCurrency: string | null) =>
      harness.call('POST', '/v1/authorizations', {
        cardId,
        amount,
        currency: 'USD',
        merchant: MERCHANT,
        networkTransactionId: networkId(),
        ...(merchantCurrency === null ? {} : { merchantAmount: '1.00', merchantCurrency }),
      });
    const euro = await abroad('25.00', 'EUR');
    expect([euro.body.approved, euro.body.declineCode, euro.body.declineReason?.rule]).toEqual([
      false,
      'authorization_failed',
      'foreign-currency',
    ]);
    // Under the template's amountMax, in the billing currency, or with no merchant currency.
    expect((await abroad('15.00', 'EUR')).body.approved).toBe(true);
    expect((await abroad('25.00', 'USD')).body.approved).toBe(true);
    expect((await abroad('25.00', null)).body.approved).toBe(true);
    expect(await balanceOf(vaultId)).toEqual({
      ledger: '100.00',
      pending: '65.00',
      available: '35.00',
    });
  });
});

describe('an increment on a SOL hold', () => {
  it('raises the hold by the increment at the price now, or declines rate_unavailable', async () => {
    await setPrice('SOL/USD', '200');
    const { vaultId, cardId } = await fundedCard(harness, '10', { currency: 'SOL' });
    const first = await authorize(cardId, '30.00');
    const held = expectedHold('30.00', '200');
    const increment = () =>
      harness.call('POST', `/v1/authorizations/${first.body.id}/increment`, {
        amount: '10.00',
        networkTransactionId: networkId(),
      });
    await setPrice('SOL/USD', '250');
    const raised = await increment();
    expect([raised.status, raised.body.approved]).toEqual([200, true]);
    const total = new Decimal(held).plus(expectedHold('10.00', '250'));
    expect((await balanceOf(vaultId)).pending).toBe(sol(total));
    const recorded = (await harness.call('GET', `/v1/transactions/${first.body.id}`)).body;
    expect([recorded.amount, recorded.billing]).toEqual([
      sol(total),
      { amount: '40.00', currency: 'USD' },
    ]);
    // No usable price: the increment declines at once and the hold stays as it was.
    await setPrice('SOL/USD', '250', '5');
    const refused = await increment();
    expect([refused.body.approved, refused.body.declineReason?.rule]).toEqual([
      false,
      'rate_unavailable',
    ]);
    expect((await balanceOf(vaultId)).pending).toBe(sol(total));
    await setPrice('SOL/USD', '150');
  });
});

describe('clearing messages in the billing currency', () => {
  const clearing = (path: string, cardId: string, amount: string) =>
    harness.call('POST', path, {
      cardId,
      amount,
      currency: 'USD',
      merchant: MERCHANT,
      networkTransactionId: networkId(),
    });

  it('posts a force capture rounded up and a refund rounded down, at the price now', async () => {
    await setPrice('SOL/USD', '3');
    const { vaultId, cardId } = await fundedCard(harness, '10', { currency: 'SOL' });
    // 10 USD at 3 = 3.333333333... SOL: collected up, credited down.
    const forced = await clearing('/v1/captures', cardId, '10.00');
    expect([forced.status, forced.body.amount, forced.body.billing]).toEqual([
      201,
      sol('3.333333334'),
      { amount: '10.00', currency: 'USD' },
    ]);
    expect(forced.body.rate?.value).toBe('3');
    const refunded = await clearing('/v1/refunds', cardId, '10.00');
    expect([refunded.status, refunded.body.amount]).toEqual([201, sol('3.333333333')]);
    expect(await balanceOf(vaultId)).toEqual({
      ledger: sol('9.999999999'),
      pending: sol('0'),
      available: sol('9.999999999'),
    });
    // No usable price: 503, nothing posted; the network sends it again.
    await setPrice('SOL/USD', '3', '1');
    const later = await clearing('/v1/captures', cardId, '10.00');
    expect(later.status).toBe(503);
    expect((await balanceOf(vaultId)).ledger).toBe(sol('9.999999999'));
    await setPrice('SOL/USD', '150');
  });
});

describe('an advice in the billing currency', () => {
  it('places the hold the network approved at the price now, with the buffer, and records the rate', async () => {
    await setPrice('SOL/USD', '160');
    const { vaultId, cardId } = await fundedCard(harness, '10', { currency: 'SOL' });
    const advised = await harness.call('POST', '/v1/authorizations/advice', {
      cardId,
      amount: '40.00',
      currency: 'USD',
      merchant: MERCHANT,
      networkTransactionId: networkId(),
      approved: true,
      reason: 'stand_in',
    });
    expect([advised.status, advised.body.approved]).toEqual([200, true]);
    const hold = expectedHold('40.00', '160');
    expect((await balanceOf(vaultId)).pending).toBe(hold);
    const recorded = (await harness.call('GET', `/v1/transactions/${advised.body.id}`)).body;
    expect([recorded.amount, recorded.rate?.value]).toEqual([hold, '160']);
    await setPrice('SOL/USD', '150');
  });
});
