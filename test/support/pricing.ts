import { Decimal, DEFAULT_PRICE_BOUNDS, type Pricing } from '../../src/core/index.js';

/** Pyth's SOL/USD price account on mainnet: the address a live book reads it from. */
export const SOL_USD_FEED = 'H6ARHf6YXhGYeQfUzQNGk6rDNnLBQKrenN712K4AQJEG';

/**
 * A store's prices with one feed, SOL/USD, always fresh: published at the store's own clock,
 * at whatever `price()` answers when read (a test moves it between messages), with a
 * confidence of a thousandth of it unless given, and the default 5% hold buffer.
 */
export function solUsdPricing(
  clock: () => number,
  price: () => Decimal,
  confidence: (price: Decimal) => Decimal = (at) => at.dividedBy(1_000),
): Pricing {
  return {
    book: {
      reading: (_mode, pair) => {
        if (pair !== 'SOL/USD') return null;
        const at = price();
        return {
          pair,
          address: SOL_USD_FEED,
          price: at,
          confidence: confidence(at),
          publishTimeMs: clock(),
          trading: true,
        };
      },
    },
    bounds: DEFAULT_PRICE_BOUNDS,
    holdBuffer: new Decimal('0.05'),
  };
}
