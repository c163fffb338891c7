/**
 * The accounts a local Solana runtime starts with, so that test mode works with no network
 * (contract section 12): a USDC-like mint (6 decimals, mint authority a keypair the caller
 * keeps, so tests can mint more), the treasury's SOL and the treasury's USDC associated token
 * account with a balance.
 *
 * They are written as raw account data (the SPL layouts, rent-exempt lamports) instead of being
 * created by transactions, so that start-up is one call and needs no funded bootstrap payer.
 */
import {
  ACCOUNT_SIZE,
  AccountLayout,
  AccountState,
  MINT_SIZE,
  MintLayout,
  TOKEN_PROGRAM_ID,
  getAssociatedTokenAddressSync,
} from '@solana/spl-token';
import { type Keypair, PublicKey, SystemProgram } from '@solana/web3.js';
import type { AddedAccount } from 'solana-bankrun';

/** USDC has 6 decimals on every cluster; the local mint copies that. */
export const USDC_DECIMALS = 6;

export const LAMPORTS_PER_SOL = 1_000_000_000n;

/** Default treasury funding: 1,000 SOL and 1,000,000 USDC. */
export const DEFAULT_TREASURY_LAMPORTS = 1_000n * LAMPORTS_PER_SOL;
export const DEFAULT_USDC_TREASURY_UNITS = 1_000_000n * 10n ** BigInt(USDC_DECIMALS);

/**
 * Rent exemption for `dataBytes` of account data under the default rent (3,480 lamports per
 * byte-year, 2 years, 128 bytes of account overhead), the rent bankrun starts with. The local
 * runtime checks this against its own rent sysvar at start.
 */
export function defaultRentExemptLamports(dataBytes: number): bigint {
  if (!Number.isSafeInteger(dataBytes) || dataBytes < 0) {
    throw new RangeError(`dataBytes must be a non-negative integer, got ${dataBytes}`);
  }
  return (128n + BigInt(dataBytes)) * 3_480n * 2n;
}

/** Lamports are JSON numbers on the wire (and `number` in web3.js): keep them exact. */
function lamportsNumber(lamports: bigint): number {
  if (lamports < 0n || lamports > BigInt(Number.MAX_SAFE_INTEGER)) {
    throw new RangeError(`lamports out of the exact range of a number: ${lamports}`);
  }
  return Number(lamports);
}

export interface GenesisInput {
  treasury: Keypair;
  treasuryLamports: bigint;
  usdcMint: Keypair;
  usdcMintAuthority: Keypair;
  usdcTreasuryUnits: bigint;
}

export interface Genesis {
  accounts: AddedAccount[];
  treasuryUsdcAccount: PublicKey;
}

export function encodeMint(authority: PublicKey, supplyUnits: bigint, decimals: number): Buffer {
  const data = Buffer.alloc(MINT_SIZE);
  MintLayout.encode(
    {
      mintAuthorityOption: 1,
      mintAuthority: authority,
      supply: supplyUnits,
      decimals,
      isInitialized: true,
      freezeAuthorityOption: 0,
      freezeAuthority: PublicKey.default,
    },
    data,
  );
  return data;
}

export function encodeTokenAccount(mint: PublicKey, owner: PublicKey, amountUnits: bigint): Buffer {
  const data = Buffer.alloc(ACCOUNT_SIZE);
  AccountLayout.encode(
    {
      mint,
      owner,
      amount: amountUnits,
      delegateOption: 0,
      delegate: PublicKey.default,
      state: AccountState.Initialized,
      isNativeOption: 0,
      isNative: 0n,
      delegatedAmount: 0n,
      closeAuthorityOption: 0,
      closeAuthority: PublicKey.default,
    },
    data,
  );
  return data;
}

/** The genesis accounts: treasury SOL, the USDC mint and the treasury's USDC account. */
export function buildGenesis(input: GenesisInput): Genesis {
  const { treasury, treasuryLamports, usdcMint, usdcMintAuthority, usdcTreasuryUnits } = input;
  if (treasuryLamports < defaultRentExemptLamports(0)) {
    throw new RangeError(`treasuryLamports must cover rent exemption, got ${treasuryLamports}`);
  }
  if (usdcTreasuryUnits < 0n || usdcTreasuryUnits >= 2n ** 64n) {
    throw new RangeError(`usdcTreasuryUnits must be a u64, got ${usdcTreasuryUnits}`);
  }
  const treasuryUsdcAccount = getAssociatedTokenAddressSync(usdcMint.publicKey, treasury.publicKey);
  const accounts: AddedAccount[] = [
    {
      address: treasury.publicKey,
      info: {
        lamports: lamportsNumber(treasuryLamports),
        data: Buffer.alloc(0),
        owner: SystemProgram.programId,
        executable: false,
      },
    },
    {
      address: usdcMint.publicKey,
      info: {
        lamports: lamportsNumber(defaultRentExemptLamports(MINT_SIZE)),
        data: encodeMint(usdcMintAuthority.publicKey, usdcTreasuryUnits, USDC_DECIMALS),
        owner: TOKEN_PROGRAM_ID,
        executable: false,
      },
    },
    {
      address: treasuryUsdcAccount,
      info: {
        lamports: lamportsNumber(defaultRentExemptLamports(ACCOUNT_SIZE)),
        data: encodeTokenAccount(usdcMint.publicKey, treasury.publicKey, usdcTreasuryUnits),
        owner: TOKEN_PROGRAM_ID,
        executable: false,
      },
    },
  ];
  return { accounts, treasuryUsdcAccount };
}
