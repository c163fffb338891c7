/**
 * The local chain's USDC faucet, the token twin of requestAirdrop: `requestUsdcAirdrop`
 * [owner, units] mints test USDC to the owner's associated token account (created when
 * needed) in a real transaction signed by the mint authority, the treasury paying the fee.
 * Not a Solana RPC method: only the local runtime answers it, so that a test-mode user (the
 * `spendgate chain send` command) can fund an outside wallet with no key of the service's.
 */
import {
  createAssociatedTokenAccountIdempotentInstruction,
  createMintToInstruction,
  getAssociatedTokenAddressSync,
} from '@solana/spl-token';
import { type Keypair, type PublicKey, Transaction, VersionedTransaction } from '@solana/web3.js';
import type { LocalChain } from './chain.js';
import { integerParam, pubkeyParam, RpcError } from './rpc-protocol.js';

/** A grant, at most: 1,000,000 USDC (in units of 10^-6). */
export const USDC_AIRDROP_UNITS_MAX = 1_000_000 * 1_000_000;

export interface UsdcFaucet {
  readonly mint: PublicKey;
  readonly authority: Keypair;
  /** Pays the fee and the new account's rent. */
  readonly payer: Keypair;
}

export async function requestUsdcAirdrop(
  chain: LocalChain,
  faucet: UsdcFaucet,
  params: readonly unknown[],
): Promise<string> {
  const owner = pubkeyParam(params, 0);
  const units = integerParam(params, 1, 'units', USDC_AIRDROP_UNITS_MAX);
  const account = getAssociatedTokenAddressSync(faucet.mint, owner, true);
  const latest = await chain.banks.getLatestBlockhash();
  if (latest === null) throw new RpcError(-32603, 'no blockhash');
  const transaction = new Transaction({
    feePayer: faucet.payer.publicKey,
    blockhash: latest[0],
    lastValidBlockHeight: Number(latest[1]),
  }).add(
    createAssociatedTokenAccountIdempotentInstruction(
      faucet.payer.publicKey,
      account,
      owner,
      faucet.mint,
    ),
    createMintToInstruction(faucet.mint, account, faucet.authority.publicKey, BigInt(units)),
  );
  transaction.sign(faucet.payer, faucet.authority);
  const outcome = await chain.send(VersionedTransaction.deserialize(transaction.serialize()));
  if (outcome.kind === 'dropped' || outcome.status.err !== null) {
    throw new RpcError(-32603, 'the faucet transaction failed');
  }
  return outcome.signature;
}
