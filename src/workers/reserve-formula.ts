import { assert, Decimal } from '../core/index.js';

/*
 * The arithmetic of the reconciliation of reserves, pure and exact (the reasoning behind each
 * term: src/workers/reserves.ts and docs/reserves.md):
 *
 *   reserves    = treasury + unswept deposits
 *   liabilities = owed (Σ available + held of the vaults) − in flight that landed
 *   shortfall   = max(liabilities − reserves, 0)          short ⇔ shortfall > 0
 *   ratio       = reserves / liabilities, rounded down to 9 places (so a ratio just under 1
 *                 never shows as 1), at most RATIO_MAX; 1 when nothing is owed.
 *
 * Amounts are decimals of at most 9 fraction digits (NUMERIC(38, 9)); the ratio is computed
 * on integers (amounts × 10^9) so that no rounding can make `ratio < 1` disagree with `short`.
 */

/** The ratio stored and exported at most: "a billion times covered" says all there is. */
export const RATIO_MAX = new Decimal('1000000000');

const SCALE = 9;
const SCALE_FACTOR = 10n ** BigInt(SCALE);

export interface ReserveTerms {
  /** The treasury's balance, in integer base units (lamports, 10^-6 USDC). */
  readonly treasuryUnits: bigint;
  /** The currency's decimals on chain (SOL 9, USDC 6). */
  readonly decimals: number;
  readonly unsweptDeposits: string;
  readonly owed: string;
  readonly inFlight: string;
  readonly inFlightLanded: string;
}

export interface ReserveFigures {
  readonly treasuryBalance: string;
  readonly reserves: string;
  readonly liabilities: string;
  readonly shortfall: string;
  readonly ratio: string;
  readonly short: boolean;
}

/** Integer base units → an exact decimal string of the currency: 1500000n, 6 → "1.5". */
export function unitsToAmount(units: bigint, decimals: number): string {
  assert(units >= 0n, 'a balance is not negative');
  assert(Number.isInteger(decimals) && decimals >= 0 && decimals <= SCALE, 'a stored scale');
  return new Decimal(units.toString()).div(new Decimal(10).pow(decimals)).toFixed();
}

/** An amount of at most 9 fraction digits, as an integer of 10^-9. */
function nanoUnits(amount: Decimal): bigint {
  const scaled = amount.times(SCALE_FACTOR.toString());
  assert(scaled.isInteger(), 'an amount has at most 9 fraction digits');
  return BigInt(scaled.toFixed(0));
}

function decimalOf(text: string, name: string): Decimal {
  const value = new Decimal(text);
  assert(value.isFinite() && value.gte(0), `${name} is a non-negative amount`);
  return value;
}

/** The figures of one reconciliation from its terms; every term checked, nothing rounded. */
export function reserveFigures(terms: ReserveTerms): ReserveFigures {
  const treasury = new Decimal(unitsToAmount(terms.treasuryUnits, terms.decimals));
  const unswept = decimalOf(terms.unsweptDeposits, 'unswept deposits');
  const owed = decimalOf(terms.owed, 'owed');
  const inFlight = decimalOf(terms.inFlight, 'in flight');
  const landed = decimalOf(terms.inFlightLanded, 'in flight landed');
  // What landed is part of what is in flight, whose holds are part of what is owed.
  assert(landed.lte(inFlight) && inFlight.lte(owed), 'landed ≤ in flight ≤ owed');
  const reserves = treasury.plus(unswept);
  const liabilities = owed.minus(landed);
  const shortfall = Decimal.max(liabilities.minus(reserves), 0);
  const reservesNano = nanoUnits(reserves);
  const liabilitiesNano = nanoUnits(liabilities);
  let ratio: Decimal;
  if (liabilitiesNano === 0n) {
    ratio = new Decimal(1);
  } else {
    // Floor division of integers: exact, and below 1 exactly when reserves < liabilities.
    const ratioNano = (reservesNano * SCALE_FACTOR) / liabilitiesNano;
    ratio = Decimal.min(new Decimal(ratioNano.toString()).div(SCALE_FACTOR.toString()), RATIO_MAX);
  }
  const short = shortfall.gt(0);
  assert(short === reservesNano < liabilitiesNano, 'short exactly when reserves fall below');
  assert(short === ratio.lt(1), 'the ratio is under 1 exactly when short');
  return {
    treasuryBalance: treasury.toFixed(),
    reserves: reserves.toFixed(),
    liabilities: liabilities.toFixed(),
    shortfall: shortfall.toFixed(),
    ratio: ratio.toFixed(),
    short,
  };
}
