import { assert } from '../assert.js';
import { isCurrencyCode } from '../money/currencies.js';
import { Decimal, isDecimal } from '../money/decimal.js';
import { declined, type Decision } from './result.js';

/*
 * Billing currencies (contract v1.2, section 16): a card network asks in the card's billing
 * currency (an ISO 4217 code, USD by default), having already converted the merchant's
 * currency into it. The decision, the policy and the ledger all work in the vault's asset, so
 * a request in the billing currency is converted here first, once, before `decide` sees it.
 * Pure: the caller supplies the price of the asset, read elsewhere (the price feed is off the
 * hot path; an authorization never waits on it).
 */

/** The price of one unit of an asset in a billing currency, where it was read and when. */
export interface AssetPrice {
  /** Billing currency per one unit of the asset (USD per SOL), exact. */
  readonly value: Decimal;
  /** Where the price came from: a feed's account address, or `par`. */
  readonly source: string;
  /** The price's publish time, epoch milliseconds (of the oldest feed it was chained from). */
  readonly atMs: number;
  /**
   * The feeds' own prices, when the price was chained through USD (price-feeds.ts): the
   * conversion multiplies by `usdPerBilling` and divides by `usdPerAsset`, so that no
   * quotient is rounded before the one rounding of the result. Absent: divide by `value`.
   */
  readonly usdPerAsset?: Decimal;
  readonly usdPerBilling?: Decimal;
  /** The readings the price was made of, for the transaction's record. */
  readonly feeds?: readonly FeedLeg[];
}

/** One feed reading a price was made of: what a transaction's `rate` records of it. */
export interface FeedLeg {
  readonly pair: string;
  readonly address: string;
  readonly price: Decimal;
  readonly confidence: Decimal;
  readonly publishTimeMs: number;
}

/** An amount of money with its currency, as a transaction records `billing` and `merchantAmount`. */
export interface MoneyAmount {
  readonly amount: Decimal;
  readonly currency: string;
}

/** A request converted into the vault's asset. */
export interface AssetAmount {
  /** What to hold, in the vault's asset, at the asset's scale: `worth` plus the hold buffer. */
  readonly amount: Decimal;
  /** What the request is worth in the asset at the price, rounded up; `amount` with no buffer. */
  readonly worth: Decimal;
  /** What the network asked, in the currency it asked in. */
  readonly billing: MoneyAmount;
  /** The price used; null when no conversion was made (the request was in the asset, or at par). */
  readonly rate: AssetPrice | null;
}

/**
 * Billing currencies an asset is worth one unit of, exactly: USDC is a dollar. A par pair
 * converts with no price and no feed; the conversion is then the identity on the amount (the
 * billing currency's scale, USD's 2, is coarser than the asset's, USDC's 6).
 */
const PAR: ReadonlyMap<string, ReadonlySet<string>> = new Map([['USDC', new Set(['USD'])]]);

export function isAtPar(billingCurrency: string, asset: string): boolean {
  return PAR.get(asset)?.has(billingCurrency) === true;
}

export const UNCONVERTIBLE_CURRENCY: Decision = declined(
  'card_declined',
  'currency_mismatch',
  "The transaction currency is neither the vault's nor the card's billing currency",
);

export const RATE_UNAVAILABLE: Decision = declined(
  'card_declined',
  'rate_unavailable',
  "No usable price converts the billing currency into the vault's asset",
);

export interface AssetConversionInput {
  /** The request's amount, read at its currency's scale. */
  readonly amount: Decimal;
  /** The request's currency: the vault's asset or the card's billing currency. */
  readonly currency: string;
  readonly billingCurrency: string;
  readonly asset: { readonly code: string; readonly scale: number };
  /** The asset's price in the billing currency now, or null when none is usable. */
  readonly price: AssetPrice | null;
  /**
   * What a SOL hold adds against the price moving before capture, as a fraction of what the
   * request is worth (SOL_HOLD_BUFFER, 0.05). Default 0. Only a volatile asset carries it.
   */
  readonly holdBuffer?: Decimal;
}

/** Assets whose price moves enough between authorization and capture to hold a buffer for. */
const BUFFERED_ASSETS: ReadonlySet<string> = new Set(['SOL']);

/**
 * `amount` (in billing currency) in the asset at `price`, rounded up to the asset's scale (the
 * issuer's favour: never hold or collect less than the network will). One division, one
 * rounding: a chained price multiplies by the billing feed's price first.
 */
export function convertAtPrice(amount: Decimal, price: AssetPrice, scale: number): Decimal {
  const exact =
    price.usdPerAsset === undefined || price.usdPerBilling === undefined
      ? amount.dividedBy(price.value)
      : amount.times(price.usdPerBilling).dividedBy(price.usdPerAsset);
  return exact.toDecimalPlaces(scale, Decimal.ROUND_UP);
}

/** `worth` plus `buffer` of it, rounded up to `scale`: what a hold keeps against the price. */
export function withHoldBuffer(worth: Decimal, buffer: Decimal, scale: number): Decimal {
  assert(isDecimal(buffer) && !buffer.isNegative(), 'a non-negative core Decimal buffer');
  return worth.times(buffer.plus(1)).toDecimalPlaces(scale, Decimal.ROUND_UP);
}

/**
 * The request's amount in the vault's asset, or the decline that answers it:
 * - in the asset already: as it is;
 * - in the card's billing currency at par (USD to USDC): the same amount, no rate;
 * - in the card's billing currency otherwise: divided by the price and rounded up to the
 *   asset's scale (the issuer's favour: never hold less than the network will collect), or
 *   `rate_unavailable` with no usable price;
 * - in any other currency: `currency_mismatch`.
 */
export function toVaultAsset(input: AssetConversionInput): AssetAmount | Decision {
  const { amount, currency, asset } = input;
  assert(isDecimal(amount) && !amount.isNegative(), 'a non-negative core Decimal amount');
  const billing = { amount, currency };
  if (currency === asset.code) return { amount, worth: amount, billing, rate: null };
  if (currency !== input.billingCurrency) return UNCONVERTIBLE_CURRENCY;
  if (isAtPar(currency, asset.code)) return { amount, worth: amount, billing, rate: null };
  const price = input.price;
  if (price === null) return RATE_UNAVAILABLE;
  assert(isDecimal(price.value) && price.value.gt(0), 'a price is a positive core Decimal');
  const worth = convertAtPrice(amount, price, asset.scale);
  const buffer = BUFFERED_ASSETS.has(asset.code) ? (input.holdBuffer ?? null) : null;
  const held = buffer === null ? worth : withHoldBuffer(worth, buffer, asset.scale);
  return { amount: held, worth, billing, rate: price };
}

/**
 * What a transaction counts in limits written in a billing currency (issue 35), from what it
 * recorded as `billing` and the vault's asset: the billing amount when it was asked in a
 * billing currency converted at a price; nothing otherwise (asked in the asset, or at par: a
 * limit in a currency at par with the asset, USD on a USDC vault, is an asset limit).
 */
export function countedBilling(billing: MoneyAmount, asset: string): MoneyAmount | undefined {
  if (billing.currency === asset || isCurrencyCode(billing.currency)) return undefined;
  return isAtPar(billing.currency, asset) ? undefined : billing;
}

/** Whether a conversion (`toVaultAsset`, an increment's) answered a decline rather than an amount. */
export function isDecision(value: object): value is Decision {
  return 'approved' in value;
}
