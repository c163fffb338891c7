/**
 * Pyth price accounts in the classic on-chain layout (the oracle program's `pc_price_t`, the
 * format `@pythnetwork/client`'s `parsePriceData` reads), written byte for byte so that test
 * mode reads its prices through the same parser as live mode. Only the fields the parser reads
 * are set; the 32 publisher component slots stay zero (numComponentPrices 0), as on a feed
 * whose publishers are not listed.
 */

/** The oracle's magic number, version 2, and account type 3 (price). */
const MAGIC = 0xa1b2c3d4;
const VERSION = 2;
const ACCOUNT_TYPE_PRICE = 3;
/** `pc_price_t`: 240 bytes of header and aggregate, then 32 components of 96 bytes. */
export const PRICE_ACCOUNT_SIZE = 240 + 32 * 96;
/** Prices are kept as integers times 10^-8, as Pyth's USD feeds are. */
export const PRICE_EXPONENT = -8;

/** The aggregate's status: Trading has a price; the others do not. */
export const PRICE_STATUS = { unknown: 0, trading: 1, halted: 2 } as const;
export type PriceStatusName = keyof typeof PRICE_STATUS;

export interface PriceAccountFields {
  /** The price as an integer times 10^exponent. */
  readonly priceUnits: bigint;
  readonly confidenceUnits: bigint;
  readonly exponent: number;
  /** The aggregate's publish time, unix seconds (the account's `timestamp`). */
  readonly publishTimeSec: bigint;
  /** The slot the aggregate was published in. */
  readonly slot: bigint;
  readonly status: PriceStatusName;
}

export function encodePriceAccount(fields: PriceAccountFields): Buffer {
  const data = Buffer.alloc(PRICE_ACCOUNT_SIZE);
  data.writeUInt32LE(MAGIC, 0);
  data.writeUInt32LE(VERSION, 4);
  data.writeUInt32LE(ACCOUNT_TYPE_PRICE, 8);
  data.writeUInt32LE(PRICE_ACCOUNT_SIZE, 12);
  data.writeUInt32LE(1, 16); // price type: price
  data.writeInt32LE(fields.exponent, 20);
  data.writeUInt32LE(0, 24); // component prices
  data.writeUInt32LE(0, 28); // quoters
  data.writeBigUInt64LE(fields.slot, 32); // last slot
  data.writeBigUInt64LE(fields.slot, 40); // valid slot
  // The moving averages: value, numerator, denominator (1), for price and confidence.
  data.writeBigInt64LE(fields.priceUnits, 48);
  data.writeBigInt64LE(fields.priceUnits, 56);
  data.writeBigInt64LE(1n, 64);
  data.writeBigInt64LE(fields.confidenceUnits, 72);
  data.writeBigInt64LE(fields.confidenceUnits, 80);
  data.writeBigInt64LE(1n, 88);
  data.writeBigInt64LE(fields.publishTimeSec, 96);
  data.writeUInt8(1, 104); // min publishers
  // The previous aggregate: the same, so that a reader of either sees one price.
  data.writeBigUInt64LE(fields.slot, 176);
  data.writeBigInt64LE(fields.priceUnits, 184);
  data.writeBigUInt64LE(fields.confidenceUnits, 192);
  data.writeBigInt64LE(fields.publishTimeSec, 200);
  // The aggregate: price, confidence, status, corporate action, publish slot.
  data.writeBigInt64LE(fields.priceUnits, 208);
  data.writeBigUInt64LE(fields.confidenceUnits, 216);
  data.writeUInt32LE(PRICE_STATUS[fields.status], 224);
  data.writeUInt32LE(0, 228);
  data.writeBigUInt64LE(fields.slot, 232);
  return data;
}

const DECIMAL = /^([0-9]{1,12})(?:\.([0-9]{1,8}))?$/;

/** `142.17` as units of 10^-8 (14217000000n), exactly; null for anything else. */
export function priceUnitsOf(text: string): bigint | null {
  const match = DECIMAL.exec(text);
  if (match?.[1] === undefined) return null;
  const fraction = (match[2] ?? '').padEnd(-PRICE_EXPONENT, '0');
  return BigInt(match[1]) * 10n ** BigInt(-PRICE_EXPONENT) + BigInt(fraction);
}
