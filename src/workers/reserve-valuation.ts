import {
  Decimal,
  readingRefusal,
  type FeedReading,
  type Mode,
  type PriceBounds,
} from '../core/index.js';
import type { StoredReserveRun } from '../store/store.js';

/*
 * The reserves in USD beside their own figures (contract v1.2, section 16; docs/pricing.md):
 * a SOL treasury backs USD card spend only at the price of the day, so each run values its
 * reserves, liabilities and shortfall at the feed's price (SOL/USD; USDC/USD, to watch the peg)
 * read once at the run. A price the bounds refuse values nothing: no figure rather than a
 * made-up one. The exact figures stay the run's own, in its currency.
 */

/** How a run finds the price of its currency in USD: one read of that mode's feed. */
export interface ReserveValuationSource {
  /** The reading of `pair` on the mode's cluster now, or null (no feed configured, or none read). */
  read(mode: Mode, pair: string): Promise<FeedReading | null>;
  readonly bounds: PriceBounds;
}

export interface ReserveValuation {
  readonly pair: string;
  readonly source: string;
  readonly price: string;
  readonly publishedAtMs: number;
  /** The run's reserves, liabilities and shortfall times the price, to the cent (down: never overstated). */
  readonly reservesUsd: string;
  readonly liabilitiesUsd: string;
  readonly shortfallUsd: string;
}

function usd(amount: string, price: Decimal): string {
  return new Decimal(amount).times(price).toDecimalPlaces(2, Decimal.ROUND_DOWN).toFixed(2);
}

/** The run valued at `reading`, or null when the reading may not be used. */
export function valueReserveRun(
  run: Pick<StoredReserveRun, 'reserves' | 'liabilities' | 'shortfall'>,
  reading: FeedReading | null,
  nowMs: number,
  bounds: PriceBounds,
): ReserveValuation | null {
  if (reading === null || readingRefusal(reading, nowMs, bounds) !== null) return null;
  return {
    pair: reading.pair,
    source: `pyth:${reading.address}`,
    price: reading.price.toFixed(),
    publishedAtMs: reading.publishTimeMs,
    reservesUsd: usd(run.reserves, reading.price),
    liabilitiesUsd: usd(run.liabilities, reading.price),
    shortfallUsd: usd(run.shortfall, reading.price),
  };
}
