import { givenWords } from '../errors/given.js';
import { SpendgateError } from '../errors/spendgate-error.js';

export interface CurrencyInfo {
  readonly code: string;
  readonly name: string;
  /** Where the asset lives; null for a fiat billing currency (ISO 4217), which no vault holds. */
  readonly network: 'solana' | null;
  readonly scale: number;
}

/**
 * The currency registry (contract section 1): adding a currency is one entry here. `scale` is
 * the number of fraction digits the currency has on chain (USDC's mint has 6 decimals, SOL has
 * 9: one lamport), so no amount finer than the chain can move is ever accepted.
 */
export const CURRENCIES = {
  USDC: { code: 'USDC', name: 'USD Coin', network: 'solana', scale: 6 },
  SOL: { code: 'SOL', name: 'Solana', network: 'solana', scale: 9 },
} as const satisfies Record<string, CurrencyInfo>;

export type CurrencyCode = keyof typeof CURRENCIES;

export const CURRENCY_CODES: readonly CurrencyCode[] = Object.freeze(
  Object.keys(CURRENCIES) as CurrencyCode[],
);

/** The finest scale of any registered currency; policy constants may not be finer. */
export const SCALE_MAX: number = Math.max(...CURRENCY_CODES.map((code) => CURRENCIES[code].scale));

export function isCurrencyCode(value: unknown): value is CurrencyCode {
  // hasOwn, not `in`: "constructor" or "__proto__" must not pass as a currency.
  return typeof value === 'string' && Object.hasOwn(CURRENCIES, value);
}

// A Map, not the registry object: a lookup by a caller's string never reaches a prototype.
const BY_CODE: ReadonlyMap<string, CurrencyInfo> = new Map(Object.entries(CURRENCIES));

/** Looks a currency up, refusing an unknown code with `invalid_currency` naming `param`. */
export function currencyOf(code: unknown, param = 'currency'): CurrencyInfo {
  const known = typeof code === 'string' ? BY_CODE.get(code) : undefined;
  if (known !== undefined) return known;
  if (!isCurrencyCode(code)) {
    const shown = typeof code === 'string' ? JSON.stringify(code.slice(0, 16)) : givenWords(code);
    throw new SpendgateError(
      'invalid_currency',
      `Currency ${shown} is not supported; use one of ${CURRENCY_CODES.join(', ')}.`,
      param,
    );
  }
  return CURRENCIES[code];
}

const REGISTERED: ReadonlySet<unknown> = new Set(Object.values(CURRENCIES));

/**
 * A currency as the library takes it: a code, or a CurrencyInfo (a registry entry, as
 * `currencyOf` returns, or one of the caller's own, such as the HTTP layer's "any currency" at
 * the finest scale, for checking an amount's form before its currency is known). Anything
 * else is refused as `currencyOf` refuses an unknown code.
 */
export function currencyInfoOf(currency: unknown, param = 'currency'): CurrencyInfo {
  if (REGISTERED.has(currency)) return currency as CurrencyInfo;
  if (isCurrencyInfo(currency)) return currency;
  return currencyOf(currency, param);
}

function isCurrencyInfo(value: unknown): value is CurrencyInfo {
  if (typeof value !== 'object' || value === null) return false;
  const { code, scale } = value as { readonly code?: unknown; readonly scale?: unknown };
  return (
    typeof code === 'string' &&
    typeof scale === 'number' &&
    Number.isInteger(scale) &&
    scale >= 0 &&
    scale <= SCALE_MAX
  );
}
