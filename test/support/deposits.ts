import {
  createAssociatedTokenAccountIdempotentInstruction,
  createInitializeMint2Instruction,
  createMintToInstruction,
  getAssociatedTokenAddressSync,
  MINT_SIZE,
  TOKEN_PROGRAM_ID,
} from '@solana/spl-token';
import {
  Keypair,
  type PublicKey,
  SystemProgram,
  Transaction,
  type TransactionInstruction,
} from '@solana/web3.js';
import type { LocalSolana } from '../../src/local-chain/index.js';
import { sendFromOutside } from '../../src/solana/deposits.js';
import { toUnits } from '../../src/solana/transfers.js';

/**
 * Deposits sent from outside on the local chain, as a user's wallet sends them: a wallet of
 * its own (not the treasury), funded with SOL by the faucet and with USDC minted by the local
 * mint's authority, or holding a mint of its own (a foreign token).
 */

async function sendSigned(
  chain: LocalSolana,
  payer: Keypair,
  signers: readonly Keypair[],
  instructions: readonly TransactionInstruction[],
): Promise<void> {
  const connection = chain.connection();
  const latest = await connection.getLatestBlockhash('confirmed');
  const transaction = new Transaction({ feePayer: payer.publicKey, ...latest });
  transaction.add(...instructions);
  transaction.sign(payer, ...signers);
  const signature = await connection.sendRawTransaction(transaction.serialize());
  const confirmed = await connection.confirmTransaction({ signature, ...latest }, 'confirmed');
  if (confirmed.value.err !== null) throw new Error(JSON.stringify(confirmed.value.err));
}

/** A new outside wallet with `sol` SOL and `usdc` USDC (decimal strings). */
export async function outsideWallet(
  chain: LocalSolana,
  funds: { readonly sol: string; readonly usdc: string },
): Promise<Keypair> {
  const wallet = Keypair.generate();
  const connection = chain.connection();
  const latest = await connection.getLatestBlockhash('confirmed');
  const airdrop = await connection.requestAirdrop(wallet.publicKey, Number(toUnits(funds.sol, 9)));
  await connection.confirmTransaction({ signature: airdrop, ...latest }, 'confirmed');
  const units = toUnits(funds.usdc, 6);
  if (units > 0n) await mintTo(chain, wallet, chain.usdcMint, chain.usdcMintAuthority, units);
  return wallet;
}

async function mintTo(
  chain: LocalSolana,
  wallet: Keypair,
  mint: PublicKey,
  authority: Keypair,
  units: bigint,
): Promise<void> {
  const account = getAssociatedTokenAddressSync(mint, wallet.publicKey);
  await sendSigned(
    chain,
    wallet,
    [authority],
    [
      createAssociatedTokenAccountIdempotentInstruction(
        wallet.publicKey,
        account,
        wallet.publicKey,
        mint,
      ),
      createMintToInstruction(mint, account, authority.publicKey, units),
    ],
  );
}

/** A token of the wallet's own (6 decimals, like USDC), of which it holds `units`. */
export async function foreignMint(
  chain: LocalSolana,
  wallet: Keypair,
  units: bigint,
): Promise<PublicKey> {
  const mint = Keypair.generate();
  const connection = chain.connection();
  const rent = await connection.getMinimumBalanceForRentExemption(MINT_SIZE);
  await sendSigned(
    chain,
    wallet,
    [mint],
    [
      SystemProgram.createAccount({
        fromPubkey: wallet.publicKey,
        newAccountPubkey: mint.publicKey,
        space: MINT_SIZE,
        lamports: rent,
        programId: TOKEN_PROGRAM_ID,
      }),
      createInitializeMint2Instruction(mint.publicKey, 6, wallet.publicKey, null),
    ],
  );
  await mintTo(chain, wallet, mint.publicKey, wallet, units);
  return mint.publicKey;
}

/** Sends `amount` of USDC, SOL, or another mint (6 decimals) from `wallet` to `to`. */
export function sendDeposit(
  chain: LocalSolana,
  wallet: Keypair,
  to: PublicKey,
  amount: string,
  currency: 'USDC' | 'SOL' | { readonly mint: PublicKey },
): Promise<string> {
  const mint = currency === 'SOL' ? null : currency === 'USDC' ? chain.usdcMint : currency.mint;
  const decimals = currency === 'SOL' ? 9 : 6;
  return sendFromOutside({
    connection: chain.connection(),
    from: wallet,
    to,
    mint,
    decimals,
    amountUnits: toUnits(amount, decimals),
  });
}
