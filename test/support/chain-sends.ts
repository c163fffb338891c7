import type { PublicKey } from '@solana/web3.js';
import type { LocalSolana } from '../../src/local-chain/index.js';
import { buildSignedTransfer } from '../../src/solana/transfers.js';
import type { Store } from '../../src/store/store.js';
import type { ChainTarget } from '../../src/workers/solana-transfers.js';

/**
 * A worker that recorded its signed transfer of 1 SOL and died before sending it: the signed
 * bytes are in the store, never broadcast. With `expire`, the chain then moves past the
 * transaction's last valid block height, so only a new signature can land it.
 */
export async function recordUnsentSolTransfer(input: {
  readonly store: Store;
  readonly target: ChainTarget;
  readonly chain: LocalSolana;
  readonly transferId: string;
  readonly recipient: PublicKey;
  readonly expire: boolean;
}): Promise<{ signature: string; recorded: boolean }> {
  const { target, chain } = input;
  const built = await buildSignedTransfer({
    connection: target.connection,
    signer: target.signer,
    currency: 'SOL',
    usdcMint: chain.usdcMint,
    recipient: input.recipient,
    amountUnits: 1_000_000_000n,
  });
  const recorded = await input.store.recordChainSend(
    input.transferId,
    {
      signedTransaction: built.transaction.toString('base64'),
      signature: built.signature,
      lastValidBlockHeight: built.lastValidBlockHeight,
    },
    null,
  );
  if (input.expire) {
    const height = await target.connection.getBlockHeight('confirmed');
    await chain.advanceSlots(built.lastValidBlockHeight - height + 2);
  }
  return { signature: built.signature, recorded };
}
