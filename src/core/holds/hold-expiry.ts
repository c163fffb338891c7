import { assert } from '../assert.js';

/*
 * When a card hold expires (contract v1.2, section 16, "Holds by merchant category"): merchants
 * that hold for the length of a stay or a rental (lodging, car rental, cruise lines) capture
 * long after the authorization, so their holds live `longMs` (31 days by default); every other
 * hold lives `defaultMs` (7 days). Pure: the authorize engine calls it with its decision time,
 * and the expiry job falls back to created_at + `defaultMs` for rows written without it.
 */

export interface HoldExpirySettings {
  /** The life of a hold of any other merchant (HOLD_EXPIRY_HOURS). */
  readonly defaultMs: number;
  /** The life of a lodging, car rental or cruise line hold (HOLD_EXPIRY_LONG_HOURS). */
  readonly longMs: number;
}

/** 7 days and 31 days, the contract's defaults. */
export const DEFAULT_HOLD_EXPIRY: HoldExpirySettings = {
  defaultMs: 7 * 86_400_000,
  longMs: 31 * 86_400_000,
};

/** Inclusive MCC ranges whose holds live long: lodging, car rental, cruise lines. */
const LONG_HOLD_MCC_RANGES: readonly (readonly [number, number])[] = [
  [3351, 3500], // car rental companies
  [3501, 3999], // lodging (hotels and resorts by chain)
  [4411, 4411], // cruise lines
  [7011, 7011], // lodging, not elsewhere classified
  [7512, 7512], // car rental agencies
];

const MCC_PATTERN = /^[0-9]{4}$/;

/** True for a merchant category whose holds live `longMs`. A malformed MCC is not one. */
export function isLongHoldMcc(mcc: string | null | undefined): boolean {
  if (typeof mcc !== 'string' || !MCC_PATTERN.test(mcc)) return false;
  const code = Number(mcc);
  return LONG_HOLD_MCC_RANGES.some(([first, last]) => code >= first && code <= last);
}

/** The epoch milliseconds at which a hold placed at `nowMs` by a merchant of `mcc` expires. */
export function holdExpiresAtMs(
  mcc: string | null | undefined,
  nowMs: number,
  settings: HoldExpirySettings = DEFAULT_HOLD_EXPIRY,
): number {
  assert(Number.isFinite(nowMs), 'nowMs is a finite epoch time');
  assert(
    Number.isSafeInteger(settings.defaultMs) &&
      Number.isSafeInteger(settings.longMs) &&
      settings.defaultMs > 0 &&
      settings.longMs > 0,
    'hold lives are positive whole milliseconds',
  );
  return nowMs + (isLongHoldMcc(mcc) ? settings.longMs : settings.defaultMs);
}
