import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  assetPriceOf,
  convertAtPrice,
  DEFAULT_PRICE_BOUNDS,
  Decimal,
  isDecision,
  readingRefusal,
  toVaultAsset,
  type AssetAmount,
  type FeedReading,
  type PriceBook,
} from '../../src/core/index.js';

/*
 * Conversion at a price (contract v1.2, section 16): a USD (or EUR) request held in SOL at a
 * price from a feed, rounded up to the lamport, plus the hold buffer; which feed readings may
 * be used at all; and what a capture at another price posts and releases. Exact: decimal.js
 * throughout, every figure checked against the exact quotient.
 */

const SOL = { code: 'SOL', scale: 9 };
const LAMPORT = new Decimal('0.000000001');
const NOW = Date.UTC(2026, 10, 29, 1, 0, 0);

function reading(pair: string, price: string, overrides: Partial<FeedReading> = {}): FeedReading {
  return {
    pair,
    address: `addr-${pair}`,
    price: new Decimal(price),
    confidence: new Decimal(price).times('0.001'),
    publishTimeMs: NOW - 1_000,
    trading: true,
    ...overrides,
  };
}

function book(...readings: FeedReading[]): PriceBook {
  const byPair = new Map(readings.map((one) => [one.pair, one]));
  return { reading: (mode, pair) => (mode === 'test' ? (byPair.get(pair) ?? null) : null) };
}

function held(result: ReturnType<typeof toVaultAsset>): AssetAmount {
  if (isDecision(result)) throw new Error(`declined: ${String(result.declineReason?.rule)}`);
  return result;
}

// Prices from 0.000001 to 10,000,000 at micro precision; amounts from 0.01 to 10,000,000,000.
const priceArb = fc.bigInt({ min: 1n, max: 10n ** 13n }).map((micros) => {
  return new Decimal(micros.toString()).dividedBy(10 ** 6);
});
const amountArb = fc.bigInt({ min: 1n, max: 10n ** 12n }).map((cents) => {
  return new Decimal(cents.toString()).dividedBy(100);
});
const bufferArb = fc.integer({ min: 0, max: 2_000 }).map((bp) => new Decimal(bp).dividedBy(10_000));

describe('a SOL hold at a price', () => {
  it('holds at least amount / price, at most the buffer above it, in whole lamports', () => {
    fc.assert(
      fc.property(amountArb, priceArb, bufferArb, (amount, price, buffer) => {
        const pricing = book(reading('SOL/USD', price.toFixed()));
        const rate = assetPriceOf(pricing, 'test', 'SOL', 'USD', NOW, DEFAULT_PRICE_BOUNDS);
        expect(rate?.value.eq(price)).toBe(true);
        const result = held(
          toVaultAsset({
            amount,
            currency: 'USD',
            billingCurrency: 'USD',
            asset: SOL,
            price: rate,
            holdBuffer: buffer,
          }),
        );
        const exact = amount.dividedBy(price);
        expect(result.amount.decimalPlaces()).toBeLessThanOrEqual(9);
        expect(result.worth.decimalPlaces()).toBeLessThanOrEqual(9);
        // Worth: the exact quotient rounded up, less than a lamport above it.
        expect(result.worth.gte(exact)).toBe(true);
        expect(result.worth.minus(exact).lt(LAMPORT)).toBe(true);
        // Held: the buffer above what it is worth, never more than the two roundings up (the
        // first, under a lamport, grown by the buffer; the second under a lamport).
        const bufferedExact = exact.times(buffer.plus(1));
        expect(result.amount.gte(bufferedExact)).toBe(true);
        expect(result.amount.minus(bufferedExact).lt(LAMPORT.times(buffer.plus(2)))).toBe(true);
        expect(result.amount.gte(result.worth)).toBe(true);
      }),
    );
  });

  it('releases at capture exactly what the capture does not post: capture + release = hold', () => {
    fc.assert(
      fc.property(
        amountArb,
        priceArb,
        fc.integer({ min: -3_000, max: 3_000 }),
        (amount, price, moveBp) => {
          const buffer = new Decimal('0.05');
          const at = { value: price, source: 'feed', atMs: NOW };
          const hold = held(
            toVaultAsset({
              amount,
              currency: 'USD',
              billingCurrency: 'USD',
              asset: SOL,
              price: at,
              holdBuffer: buffer,
            }),
          ).amount;
          const later = price.times(new Decimal(moveBp).dividedBy(10_000).plus(1));
          const captured = convertAtPrice(amount, { ...at, value: later }, 9);
          const released = Decimal.max(hold.minus(captured), 0);
          const shortfall = Decimal.max(captured.minus(hold), 0);
          // What the vault gives up: the capture; what was held: capture + release - shortfall.
          expect(captured.plus(released).minus(shortfall).eq(hold)).toBe(true);
          // A fall of the price by less than the buffer never leaves a shortfall.
          if (later.gte(price.dividedBy(buffer.plus(1)))) expect(shortfall.isZero()).toBe(true);
          expect(captured.gte(amount.dividedBy(later))).toBe(true);
        },
      ),
    );
  });

  it('chains EUR -> USD -> SOL with one rounding: amount * EURUSD / SOLUSD, rounded up', () => {
    fc.assert(
      fc.property(amountArb, priceArb, priceArb, (amount, solUsd, eurUsd) => {
        const pricing = book(
          reading('SOL/USD', solUsd.toFixed()),
          reading('EUR/USD', eurUsd.toFixed()),
        );
        const rate = assetPriceOf(pricing, 'test', 'SOL', 'EUR', NOW, DEFAULT_PRICE_BOUNDS);
        expect(rate?.feeds?.map((leg) => leg.pair)).toEqual(['EUR/USD', 'SOL/USD']);
        const result = held(
          toVaultAsset({
            amount,
            currency: 'EUR',
            billingCurrency: 'EUR',
            asset: SOL,
            price: rate,
          }),
        );
        const exact = amount.times(eurUsd).dividedBy(solUsd);
        expect(result.amount.eq(exact.toDecimalPlaces(9, Decimal.ROUND_UP))).toBe(true);
      }),
    );
  });

  it('prices EUR into USDC through the EUR/USD feed alone, USDC at par', () => {
    const rate = assetPriceOf(
      book(reading('EUR/USD', '1.08')),
      'test',
      'USDC',
      'EUR',
      NOW,
      DEFAULT_PRICE_BOUNDS,
    );
    const result = held(
      toVaultAsset({
        amount: new Decimal('100'),
        currency: 'EUR',
        billingCurrency: 'EUR',
        asset: { code: 'USDC', scale: 6 },
        price: rate,
        holdBuffer: new Decimal('0.05'),
      }),
    );
    // No buffer on USDC: only SOL's price moves enough to hold one.
    expect([result.amount.toFixed(), result.rate?.source]).toEqual(['108', 'pyth:addr-EUR/USD']);
  });
});

describe('which readings are used', () => {
  const bounds = DEFAULT_PRICE_BOUNDS;

  it('uses a fresh, trading, narrow reading, and refuses each fault by name', () => {
    expect(readingRefusal(reading('SOL/USD', '142.17'), NOW, bounds)).toBeNull();
    expect(readingRefusal(null, NOW, bounds)).toBe('missing');
    const cases: [Partial<FeedReading>, string][] = [
      [{ trading: false }, 'not_trading'],
      [{ price: new Decimal(0) }, 'not_trading'],
      [{ publishTimeMs: NOW - 10_001 }, 'stale'],
      [{ publishTimeMs: NOW + 10_001 }, 'stale'],
      [{ confidence: new Decimal('1.4218') }, 'wide_confidence'],
    ];
    for (const [fault, refusal] of cases) {
      expect(readingRefusal(reading('SOL/USD', '142.17', fault), NOW, bounds)).toBe(refusal);
    }
    // At the bounds exactly: still used.
    const edge = { publishTimeMs: NOW - 10_000, confidence: new Decimal('1.4217') };
    expect(readingRefusal(reading('SOL/USD', '142.17', edge), NOW, bounds)).toBeNull();
  });

  it('has no price when any leg is unusable, and none for another mode or an unpriced asset', () => {
    const fresh = book(
      reading('SOL/USD', '142.17'),
      reading('EUR/USD', '1.08', { trading: false }),
    );
    expect(assetPriceOf(fresh, 'test', 'SOL', 'USD', NOW, bounds)).not.toBeNull();
    expect(assetPriceOf(fresh, 'test', 'SOL', 'EUR', NOW, bounds)).toBeNull();
    expect(assetPriceOf(fresh, 'live', 'SOL', 'USD', NOW, bounds)).toBeNull();
    expect(assetPriceOf(fresh, 'test', 'SOL', 'GBP', NOW, bounds)).toBeNull();
    expect(assetPriceOf(fresh, 'test', 'BTC', 'USD', NOW, bounds)).toBeNull();
  });
});
