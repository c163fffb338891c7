import { Decimal, SpendgateError, isAtPar, type TransactionRecord } from '../../core/index.js';
import { isoCurrencyOf } from '../iso-currencies.js';
import type { MinorAmount } from './operation.js';

/*
 * Processors send amounts as integer minor units of an ISO 4217 currency; spendgate's
 * operations read decimal strings. The currency's minor units come from the ISO table
 * (iso-currencies.ts: JPY 0, USD 2, BHD 3). Never a float: reading is placing the decimal point
 * in the digits (exact, and on every processor message's path, where decimal.js's division
 * was 11 us a message in the Stripe door's profile); the way back is decimal.js.
 */

/** More digits than any real amount: bounds the work a hostile number can cause. */
const MINOR_DIGITS_MAX = 20;

/** `{minor: 1234, currency: 'usd'}` as `{amount: '12.34', currency: 'USD'}`. */
export function decimalOf(
  value: MinorAmount,
  param: string,
): { readonly amount: string; readonly currency: string } {
  const text = typeof value.minor === 'bigint' ? value.minor.toString() : value.minor;
  if (!/^[0-9]+$/.test(text) || text.length > MINOR_DIGITS_MAX)
    throw new SpendgateError(
      'invalid_amount',
      'An amount is whole minor units, at least 0.',
      param,
    );
  const currency = isoCurrencyOf(value.currency.toUpperCase(), `${param}.currency`);
  return { amount: placePoint(text, currency.scale), currency: currency.code };
}

/** Digits of whole minor units as the decimal they are at `scale` places: '5', 2 -> '0.05'. */
function placePoint(digits: string, scale: number): string {
  const padded = digits.padStart(scale + 1, '0');
  const whole = padded.slice(0, padded.length - scale).replace(/^0+(?=[0-9])/, '');
  return scale === 0 ? whole : `${whole}.${padded.slice(padded.length - scale)}`;
}

/** A decimal amount of an ISO currency as whole minor units (rounded down: never more). */
export function minorOf(amount: Decimal, currencyCode: string): bigint {
  const currency = isoCurrencyOf(currencyCode, 'currency');
  const minor = amount.times(new Decimal(10).pow(currency.scale));
  return BigInt(minor.toDecimalPlaces(0, Decimal.ROUND_DOWN).toFixed(0));
}

/**
 * An amount for an operation on a hold (increment, capture, reverse), read in the hold's
 * currency as the REST routes read theirs: the processor's currency must be the hold's own,
 * or its billing currency at par with it (USD for a USDC vault). A hold in SOL has a price
 * between the two, which the hold's routes do not take either: `currency_mismatch`.
 */
export function holdAmountOf(value: MinorAmount, hold: TransactionRecord, param: string): string {
  const { amount, currency } = decimalOf(value, param);
  if (currency === hold.currency || isAtPar(currency, hold.currency)) return amount;
  throw new SpendgateError(
    'currency_mismatch',
    `The authorization is in ${hold.currency}; ${currency} is not at par with it.`,
    `${param}.currency`,
  );
}
