import currencyCodes from 'currency-codes';
import { currencyOf, isCurrencyCode, SpendgateError, type CurrencyInfo } from '../core/index.js';

/*
 * ISO 4217 currencies, from the maintained table of the `currency-codes` package: a card's
 * billing currency and a merchant's currency (contract v1.2, section 16), each read to its own
 * minor units (JPY 0, USD 2, BHD 3). The vault assets (USDC, SOL) stay in the core's registry.
 */

/**
 * The codes that are money a merchant can charge: ISO 4217 also lists precious metals, bond
 * units, a testing code and "no currency" (the table marks them with a pseudo-country "Zz..."),
 * which no card network bills in.
 */
const ISO_CURRENCIES: ReadonlyMap<string, CurrencyInfo> = new Map(
  currencyCodes.data
    .filter((entry) => !entry.countries.some((country) => country.startsWith('Zz')))
    .map((entry) => [
      entry.code,
      Object.freeze({ code: entry.code, name: entry.currency, network: null, scale: entry.digits }),
    ]),
);

/** An ISO 4217 currency by its alphabetic code, or `invalid_currency` naming `param`. */
export function isoCurrencyOf(code: string, param: string): CurrencyInfo {
  const found = ISO_CURRENCIES.get(code);
  if (found !== undefined) return found;
  throw new SpendgateError(
    'invalid_currency',
    `${JSON.stringify(code.slice(0, 16))} is not an ISO 4217 currency code.`,
    param,
  );
}

/**
 * The currency of a card network's request: a vault asset (USDC, SOL) or an ISO 4217 billing
 * currency (the store then converts it, or declines `currency_mismatch` when it is not the
 * card's). Unknown to both: `invalid_currency`.
 */
export function requestCurrencyOf(code: string, param: string): CurrencyInfo {
  if (isCurrencyCode(code)) return currencyOf(code, param);
  const iso = ISO_CURRENCIES.get(code);
  if (iso !== undefined) return iso;
  throw new SpendgateError(
    'invalid_currency',
    `Currency ${JSON.stringify(code.slice(0, 16))} is neither a vault asset (USDC, SOL) nor an ISO 4217 code.`,
    param,
  );
}

/** Whether `code` is an ISO 4217 currency a card can be billed in. */
export function isIsoCurrency(code: string): boolean {
  return ISO_CURRENCIES.has(code);
}
