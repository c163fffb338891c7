/**
 * The chain-side reads of the reconciliation of reserves (src/workers/reserves.ts): the
 * treasury's balance in one currency, with the slot it was read at, and which of a list of
 * sent signatures landed by then. Integers only: lamports and USDC base units as bigints.
 */
import { getAssociatedTokenAddressSync, unpackAccount } from '@solana/spl-token';
import type { Connection, PublicKey, SignatureStatus } from '@solana/web3.js';
import { USDC_DECIMALS, type ChainCurrency } from './transfers.js';

/** Signatures per getSignatureStatuses call: the RPC's limit. */
export const SIGNATURE_STATUSES_MAX = 256;

export interface TreasuryBalance {
  /** Where the balance was read: the treasury (SOL) or its associated USDC account. */
  readonly address: string;
  /** Lamports (SOL) or 10^-6 USDC: what may be paid out (see reservedUnits). */
  readonly units: bigint;
  /** Lamports kept back and not counted (SOL: the rent-exempt minimum); 0 for USDC. */
  readonly reservedUnits: bigint;
  readonly decimals: number;
  /** The slot of the read (its context): transactions in this slot or before are reflected. */
  readonly slot: number;
}

/**
 * The treasury's balance in `currency`, at `confirmed` commitment:
 * - SOL: its lamports less the rent-exempt minimum of an account without data, which a system
 *   account must keep while it exists (a transfer leaving less fails), so it can never be paid
 *   out. Fees and the rent of the token accounts it creates are not set aside: they are spent
 *   as they happen, and lower the balance the next run reads (docs/reserves.md).
 * - USDC: the amount of its associated token account of `usdcMint` (0 when it does not exist).
 * web3.js hands lamports over as a number: a balance beyond 2^53 lamports (9 million SOL) is
 * refused rather than rounded.
 */
export async function treasuryBalance(
  connection: Connection,
  treasury: PublicKey,
  currency: ChainCurrency,
  usdcMint: PublicKey,
): Promise<TreasuryBalance> {
  if (currency === 'SOL') {
    const rentExempt = await connection.getMinimumBalanceForRentExemption(0, 'confirmed');
    const { context, value } = await connection.getBalanceAndContext(treasury, 'confirmed');
    if (!Number.isSafeInteger(value) || value < 0 || !Number.isSafeInteger(rentExempt)) {
      throw new RangeError('the treasury balance is not an exact integer of lamports');
    }
    const reservedUnits = BigInt(Math.min(rentExempt, value));
    return {
      address: treasury.toBase58(),
      units: BigInt(value) - reservedUnits,
      reservedUnits,
      decimals: 9,
      slot: context.slot,
    };
  }
  const address = getAssociatedTokenAddressSync(usdcMint, treasury, true);
  const { context, value } = await connection.getAccountInfoAndContext(address, 'confirmed');
  const units = value === null ? 0n : unpackAccount(address, value).amount;
  return {
    address: address.toBase58(),
    units,
    reservedUnits: 0n,
    decimals: USDC_DECIMALS,
    slot: context.slot,
  };
}

function landedWithoutError(status: SignatureStatus | null): status is SignatureStatus {
  if (status === null || status.err !== null) return false;
  return status.confirmationStatus === 'confirmed' || status.confirmationStatus === 'finalized';
}

/**
 * Of `signatures`, those confirmed without error in a slot at or before `slotMax`, each with
 * its slot: their transfers are reflected in a balance read at `slotMax`. At most
 * SIGNATURE_STATUSES_MAX per call; the caller bounds the list.
 */
export async function signaturesLandedBy(
  connection: Connection,
  signatures: readonly string[],
  slotMax: number,
): Promise<Set<string>> {
  const landed = new Set<string>();
  for (let start = 0; start < signatures.length; start += SIGNATURE_STATUSES_MAX) {
    const chunk = signatures.slice(start, start + SIGNATURE_STATUSES_MAX);
    const { value } = await connection.getSignatureStatuses(chunk, {
      searchTransactionHistory: true,
    });
    chunk.forEach((signature, index) => {
      const status = value[index] ?? null;
      if (landedWithoutError(status) && status.slot <= slotMax) landed.add(signature);
    });
  }
  return landed;
}
