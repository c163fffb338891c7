import { assert } from '../assert.js';
import { Decimal, isDecimal } from '../money/decimal.js';
import type { Mode } from '../objects/records.js';
import type { AssetPrice } from './billing.js';

/*
 * Prices from on-chain feeds (contract v1.2, section 16), as the core takes them: readings
 * already made, handed in from memory. Whether a reading may be used (its age, its confidence)
 * and how two feeds chain (billing currency -> USD -> asset) are decided here, purely; reading
 * the chain is the caller's (src/solana/price-feeds.ts), off the hot path.
 */

/** One feed's latest reading: a Pyth price account's aggregate, exactly. */
export interface FeedReading {
  /** `SOL/USD`, `USDC/USD`, `EUR/USD`: base per quote, quote always USD. */
  readonly pair: string;
  /** The price account's address (base58). */
  readonly address: string;
  /** Quote currency per one unit of the base, exact (the account's integer times 10^exponent). */
  readonly price: Decimal;
  /** The aggregate's confidence interval (plus or minus), in the quote currency. */
  readonly confidence: Decimal;
  /** The aggregate's publish time, epoch milliseconds. */
  readonly publishTimeMs: number;
  /** The aggregate's status is Trading: any other status has no price to use. */
  readonly trading: boolean;
}

/** When a reading may be used: PRICE_MAX_AGE_MS and PRICE_CONFIDENCE_MAX. */
export interface PriceBounds {
  readonly ageMsMax: number;
  /** The widest confidence interval accepted, as a fraction of the price (0.01: 1%). */
  readonly confidenceRatioMax: Decimal;
}

export const DEFAULT_PRICE_BOUNDS: PriceBounds = {
  ageMsMax: 10_000,
  confidenceRatioMax: new Decimal('0.01'),
};

/** Why a reading is not used; null when it is. Named for the metrics and the logs. */
export type ReadingRefusal = 'missing' | 'not_trading' | 'stale' | 'wide_confidence';

export function readingRefusal(
  reading: FeedReading | null,
  nowMs: number,
  bounds: PriceBounds,
): ReadingRefusal | null {
  if (reading === null) return 'missing';
  if (!reading.trading || !reading.price.gt(0)) return 'not_trading';
  // A publish time ahead of our clock by more than the bound is as untrustworthy as an old one.
  if (Math.abs(nowMs - reading.publishTimeMs) > bounds.ageMsMax) return 'stale';
  if (reading.confidence.gt(reading.price.times(bounds.confidenceRatioMax))) {
    return 'wide_confidence';
  }
  return null;
}

/** Where the latest reading of each feed is kept, per mode (each mode has its own cluster). */
export interface PriceBook {
  /** The latest reading of `pair` on the mode's cluster, usable or not; null if none was made. */
  reading(mode: Mode, pair: string): FeedReading | null;
}

/** A book with no feeds: every conversion at a price is `rate_unavailable`. */
export const NO_PRICES: PriceBook = { reading: () => null };

/** Assets the price book prices, by their USD feed; an asset at par with USD needs none. */
const ASSET_FEEDS: ReadonlyMap<string, string> = new Map([['SOL', 'SOL/USD']]);

/** Assets worth one USD exactly for conversion (USDC: contract section 16, at par). */
const USD_PAR_ASSETS: ReadonlySet<string> = new Set(['USDC']);

/** The pair that prices a billing currency in USD: `EUR/USD`; null for USD itself. */
export function billingPair(billingCurrency: string): string | null {
  return billingCurrency === 'USD' ? null : `${billingCurrency}/USD`;
}

/** The pair that prices an asset in USD; null for an asset at par with USD. */
export function assetPair(asset: string): string | null {
  return ASSET_FEEDS.get(asset) ?? null;
}

/** A usable reading of `pair`, or null; `pair` null stands for USD, which needs no feed. */
function usable(
  book: PriceBook,
  mode: Mode,
  pair: string,
  nowMs: number,
  bounds: PriceBounds,
): FeedReading | null {
  const reading = book.reading(mode, pair);
  return readingRefusal(reading, nowMs, bounds) === null ? reading : null;
}

/**
 * The price of one unit of `asset` in `billingCurrency`, chained through USD, from usable
 * readings only; null when a feed it needs has no usable reading (`rate_unavailable`), or when
 * no feed could ever price the pair. Exact: the conversion multiplies and divides by the feeds'
 * own prices (`usdPerAsset`, `usdPerBilling`); `value` is their quotient, for the record.
 */
export function assetPriceOf(
  book: PriceBook,
  mode: Mode,
  asset: string,
  billingCurrency: string,
  nowMs: number,
  bounds: PriceBounds,
): AssetPrice | null {
  const assetFeed = assetPair(asset);
  if (assetFeed === null && !USD_PAR_ASSETS.has(asset)) return null;
  const billingFeed = billingPair(billingCurrency);
  const legs: FeedReading[] = [];
  for (const pair of [billingFeed, assetFeed]) {
    if (pair === null) continue;
    const reading = usable(book, mode, pair, nowMs, bounds);
    if (reading === null) return null;
    legs.push(reading);
  }
  if (legs.length === 0) return null;
  const usdPerAsset = assetFeed === null ? new Decimal(1) : (legs.at(-1)?.price ?? null);
  const usdPerBilling = billingFeed === null ? new Decimal(1) : (legs[0]?.price ?? null);
  assert(isDecimal(usdPerAsset) && isDecimal(usdPerBilling), 'each leg has its reading');
  return {
    value: usdPerAsset.dividedBy(usdPerBilling),
    usdPerAsset,
    usdPerBilling,
    source: legs.map((leg) => `pyth:${leg.address}`).join(' '),
    // The oldest leg's publish time: the conversion is no fresher than it.
    atMs: Math.min(...legs.map((leg) => leg.publishTimeMs)),
    feeds: legs.map((leg) => ({
      pair: leg.pair,
      address: leg.address,
      price: leg.price,
      confidence: leg.confidence,
      publishTimeMs: leg.publishTimeMs,
    })),
  };
}

/** What converting at a price needs: the readings, their bounds, and the hold buffer. */
export interface Pricing {
  readonly book: PriceBook;
  readonly bounds: PriceBounds;
  /** SOL_HOLD_BUFFER: a SOL hold adds this fraction of what the request is worth. */
  readonly holdBuffer: Decimal;
}

export const DEFAULT_SOL_HOLD_BUFFER = new Decimal('0.05');

/** No feeds: what a store given no price book converts with (every price `rate_unavailable`). */
export const NO_PRICING: Pricing = {
  book: NO_PRICES,
  bounds: DEFAULT_PRICE_BOUNDS,
  holdBuffer: DEFAULT_SOL_HOLD_BUFFER,
};

/** A transaction's `rate` as recorded: the price, its feeds and their publish times. */
export interface RateRecord {
  readonly value: string;
  readonly source: string;
  readonly atMs: number;
  readonly feeds?: readonly {
    readonly pair: string;
    readonly address: string;
    readonly price: string;
    readonly confidence: string;
    readonly publishTimeMs: number;
  }[];
}

/** Significant digits a chained rate's quotient is recorded with (the conversion is exact). */
const RATE_DIGITS_MAX = 20;

export function rateRecordOf(price: AssetPrice): RateRecord {
  return {
    value: price.value.toSignificantDigits(RATE_DIGITS_MAX).toFixed(),
    source: price.source,
    atMs: price.atMs,
    ...(price.feeds === undefined
      ? {}
      : {
          feeds: price.feeds.map((leg) => ({
            pair: leg.pair,
            address: leg.address,
            price: leg.price.toFixed(),
            confidence: leg.confidence.toFixed(),
            publishTimeMs: leg.publishTimeMs,
          })),
        }),
  };
}
