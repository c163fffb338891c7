import { Connection } from '@solana/web3.js';
import { Counter, Gauge, Registry } from 'prom-client';
import type { Config, PriceSettings } from '../config/env.js';
import {
  Decimal,
  readingRefusal,
  type FeedReading,
  type Mode,
  type PriceBook,
  type PriceBounds,
  type Pricing,
} from '../core/index.js';
import {
  readPriceFeed,
  startFeedReaders,
  type FeedReaders,
  type PriceRead,
  type RawPriceReading,
} from '../solana/price-feeds.js';
import type { ReserveValuationSource } from '../workers/reserve-valuation.js';
import type { ChainTarget } from '../workers/solana-transfers.js';

/*
 * The price feeds' latest readings, in memory (contract v1.2, section 16; docs/pricing.md):
 * the readers (src/solana/price-feeds.ts) write here in the background, and every
 * authorization reads here, never the chain. One book per process; a mode's readings come
 * from that mode's cluster (live: SOLANA_RPC_URL; test: SOLANA_TEST_RPC_URL or the local
 * runtime).
 */

const MODES: readonly Mode[] = ['live', 'test'];

export class MemoryPriceBook implements PriceBook {
  readonly #readings: Record<Mode, Map<string, FeedReading>> = {
    live: new Map(),
    test: new Map(),
  };
  readonly bounds: PriceBounds;
  readonly registry = new Registry();
  readonly #failures: Counter<'mode' | 'pair' | 'reason'>;

  constructor(bounds: PriceBounds, clock: () => number = Date.now) {
    this.bounds = bounds;
    this.#failures = new Counter({
      name: 'spendgate_price_feed_read_failures_total',
      help: 'Reads of a price account that found no price: missing, wrong_owner, not_a_price_account, rpc_error, timeout.',
      labelNames: ['mode', 'pair', 'reason'],
      registers: [this.registry],
    });
    this.#gauges(clock);
  }

  reading(mode: Mode, pair: string): FeedReading | null {
    return this.#readings[mode].get(pair) ?? null;
  }

  /**
   * Keeps what a read found. An account that is not there (or not Pyth's price) removes the
   * feed's reading at once; a cluster that did not answer keeps the last good one, which the
   * age bound then refuses once it is too old.
   */
  record(mode: Mode, read: PriceRead): void {
    if (read.kind === 'reading') {
      this.#readings[mode].set(read.reading.pair, feedReadingOf(read.reading));
      return;
    }
    this.#failures.inc({ mode, pair: read.pair, reason: read.failure });
    if (read.failure !== 'rpc_error' && read.failure !== 'timeout') {
      this.#readings[mode].delete(read.pair);
    }
  }

  /** Each feed's age, price, confidence and usability, computed when /metrics is read. */
  #gauges(clock: () => number): void {
    const readings = this.#readings;
    const bounds = this.bounds;
    const each = (
      name: string,
      help: string,
      value: (reading: FeedReading, nowMs: number) => number,
    ): void => {
      new Gauge({
        name,
        help,
        labelNames: ['mode', 'pair'],
        registers: [this.registry],
        collect() {
          this.reset();
          const nowMs = clock();
          for (const mode of MODES) {
            for (const [pair, reading] of readings[mode]) {
              this.set({ mode, pair }, value(reading, nowMs));
            }
          }
        },
      });
    };
    // Floats here are for graphs only: no decision reads them.
    each('spendgate_price_feed_age_seconds', 'Age of the feed price read last.', (r, now) => {
      return (now - r.publishTimeMs) / 1000;
    });
    each('spendgate_price_feed_price', 'The feed price read last (quote per base).', (r) =>
      r.price.toNumber(),
    );
    each('spendgate_price_feed_confidence', 'The confidence interval of that price.', (r) =>
      r.confidence.toNumber(),
    );
    each('spendgate_price_feed_usable', '1 when the price is within the bounds.', (r, now) =>
      readingRefusal(r, now, bounds) === null ? 1 : 0,
    );
  }
}

/** A raw reading in the core's terms: exact decimals, epoch milliseconds. */
export function feedReadingOf(raw: RawPriceReading): FeedReading {
  return {
    pair: raw.pair,
    address: raw.address,
    price: new Decimal(`${raw.priceUnits.toString()}e${String(raw.exponent)}`),
    confidence: new Decimal(`${raw.confidenceUnits.toString()}e${String(raw.exponent)}`),
    publishTimeMs: Number(raw.publishTimeSec) * 1000,
    trading: raw.trading,
  };
}

/**
 * Where the reconciliation of reserves reads its currency's USD price: one read of the mode's
 * feed, on the chain the reconciliation reads the treasury on, at each run.
 */
export function reserveValuationOf(
  settings: PriceSettings,
  chains: Readonly<Record<Mode, ChainTarget | null>>,
): ReserveValuationSource {
  return {
    bounds: priceBoundsOf(settings),
    read: async (mode, pair) => {
      const chain = chains[mode];
      const address = settings.feeds[mode][pair];
      if (chain === null || address === undefined) return null;
      const read = await readPriceFeed(
        {
          connection: chain.connection,
          oracleProgram: settings.oracleProgram[mode],
          timeoutMs: settings.readTimeoutMs,
        },
        pair,
        address,
      );
      return read.kind === 'reading' ? feedReadingOf(read.reading) : null;
    },
  };
}

/** The bounds the settings give (PRICE_MAX_AGE_MS, PRICE_CONFIDENCE_MAX). */
export function priceBoundsOf(settings: PriceSettings): PriceBounds {
  return {
    ageMsMax: settings.ageMsMax,
    confidenceRatioMax: new Decimal(settings.confidenceRatioMax),
  };
}

export function pricingOf(settings: PriceSettings, book: PriceBook): Pricing {
  return {
    book,
    bounds: priceBoundsOf(settings),
    holdBuffer: new Decimal(settings.solHoldBuffer),
  };
}

/**
 * Starts reading each mode's feeds into `book`: live from SOLANA_RPC_URL, test from
 * `testRpcUrl` (SOLANA_TEST_RPC_URL, or the local runtime's). A mode with no cluster reads
 * nothing, and converts nothing at a price (`rate_unavailable`).
 */
export function startPriceReaders(
  config: Pick<Config, 'modes' | 'solanaRpcUrl' | 'prices'>,
  book: MemoryPriceBook,
  testRpcUrl: string | null,
): FeedReaders[] {
  const clusters: Record<Mode, string | null> = {
    live: config.modes.includes('live') ? config.solanaRpcUrl : null,
    test: config.modes.includes('test') ? testRpcUrl : null,
  };
  const readers: FeedReaders[] = [];
  for (const mode of MODES) {
    const url = clusters[mode];
    if (url === null) continue;
    readers.push(
      startFeedReaders({
        connection: new Connection(url, 'confirmed'),
        feeds: config.prices.feeds[mode],
        oracleProgram: config.prices.oracleProgram[mode],
        pollMs: config.prices.pollMs,
        timeoutMs: config.prices.readTimeoutMs,
        onRead: (read) => {
          book.record(mode, read);
        },
      }),
    );
  }
  return readers;
}
