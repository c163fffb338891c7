import { type Connection, PublicKey, type ConfirmedSignatureInfo } from '@solana/web3.js';
import { assert, type Mode } from '../core/index.js';
import { depositTokenAccount, depositTransfersIn } from '../solana/deposits.js';
import type { FoundTransfer, Store, WatchedAddress, WatchProgress } from '../store/store.js';
import type { LoopLog } from './polling-loop.js';

/** What the watcher reads for one mode: its cluster and the USDC mint there. */
export interface DepositChain {
  readonly connection: Connection;
  readonly usdcMint: PublicKey;
}

export interface DepositWatchOptions {
  /** Addresses read per pass, at most (1..1,000). */
  readonly addressesMax: number;
  /** Signatures read per address per pass, at most (1..1,000: one getSignaturesForAddress). */
  readonly signaturesMax: number;
  /** Old vaults given their deposit address per pass, at most (1..1,000). */
  readonly backfillMax: number;
}

/**
 * 20 addresses a pass, a pass every 2 s (deposit-jobs.ts): at most 10 addresses a second, least
 * recently read first. Why so few: each is a getSignaturesForAddress and a cursor write, and at
 * 200 a pass the watcher alone kept 0.35-0.4 of a core busy in a service at rest with 201 vaults
 * (bench:http's "at rest" line; its RPC endpoint would see 100 calls a second). A vault's
 * deposit is seen within (addresses / 10) seconds of finality: 40 s for 200 USDC vaults (two
 * addresses each). Following many more addresses is the subscription's or the indexer's work
 * (docs/deposits.md), not a faster poll.
 */
export const DEFAULT_DEPOSIT_WATCH_OPTIONS: DepositWatchOptions = {
  addressesMax: 20,
  signaturesMax: 100,
  backfillMax: 100,
};

/**
 * Test mode only: called between finding a transfer and crediting it, so a test can kill the
 * process there (SIGKILL) and prove that the credit happens once, later.
 */
export type BeforeCredit = (found: FoundTransfer) => Promise<void>;

export interface ScanOutcome {
  readonly addresses: number;
  /** Transfers this pass recorded (credited or ignored); 0 when all were known. */
  readonly recorded: number;
}

/**
 * The deposit watcher (issue 15). A pass reads a bounded batch of watched addresses (each
 * vault's deposit address and, for a USDC vault, its associated token account), least recently
 * scanned first; for each it asks the chain for the signatures since its cursor
 * (getSignaturesForAddress, finalized), reads each transaction (getTransaction, finalized) and
 * records every transfer into the address (store.recordChainDeposit: credited or ignored, in
 * one transaction, once). The cursor moves only after everything before it is recorded, and
 * conditionally, so a crash anywhere or two watchers at once re-read some signatures and
 * record nothing twice: the transfer's unique key (signature, instruction, inner instruction)
 * decides, under the vault's lock.
 */
export class DepositWatcher {
  readonly stats = { passes: 0, recorded: 0 };

  constructor(
    private readonly store: Store,
    private readonly chains: Readonly<Record<Mode, DepositChain | null>>,
    private readonly log: LoopLog,
    private readonly options: DepositWatchOptions = DEFAULT_DEPOSIT_WATCH_OPTIONS,
    private readonly beforeCredit: BeforeCredit | null = null,
  ) {
    assert(options.signaturesMax >= 1 && options.signaturesMax <= 1000, 'bounded signatures');
  }

  /** One pass over a batch of addresses. */
  async scanOnce(): Promise<ScanOutcome> {
    await this.store.assignDepositAddresses(this.options.backfillMax);
    const batch = await this.store.depositWatchBatch(this.options.addressesMax);
    let recorded = 0;
    for (const watched of batch) {
      try {
        recorded += await this.#scan(watched);
      } catch (error) {
        // The chain or the database did not answer: the next pass reads from the same cursor.
        this.log.warn({ err: error, address: watched.address }, 'deposit scan failed');
      }
    }
    this.stats.passes += 1;
    this.stats.recorded += recorded;
    return { addresses: batch.length, recorded };
  }

  async #scan(watched: WatchedAddress): Promise<number> {
    const from: WatchProgress = {
      cursorSignature: watched.cursorSignature,
      walkTopSignature: watched.walkTopSignature,
      walkBeforeSignature: watched.walkBeforeSignature,
    };
    const chain = this.chains[watched.mode];
    // No cluster for this mode: only the scan time moves, so the batch goes on to others.
    if (chain === null) {
      await this.store.advanceDepositWatch(watched.address, from, from);
      return 0;
    }
    const owner = new PublicKey(watched.ownerAddress);
    if (watched.fresh && watched.currency === 'USDC' && watched.address === watched.ownerAddress) {
      const tokenAccount = depositTokenAccount(owner, chain.usdcMint).toBase58();
      await this.store.watchTokenAccount(watched.vaultId, tokenAccount, watched.ownerAddress);
    }
    const signatures = await chain.connection.getSignaturesForAddress(
      new PublicKey(watched.address),
      {
        limit: this.options.signaturesMax,
        ...(from.cursorSignature === null ? {} : { until: from.cursorSignature }),
        ...(from.walkBeforeSignature === null ? {} : { before: from.walkBeforeSignature }),
      },
      'finalized',
    );
    assert(signatures.length <= this.options.signaturesMax, 'the node kept to the limit');
    let recorded = 0;
    // Oldest first, so that the deposits of one address are recorded in chain order.
    for (const info of [...signatures].reverse()) {
      recorded += await this.#record(chain, watched, owner, info);
    }
    await this.store.advanceDepositWatch(
      watched.address,
      from,
      progressAfter(from, signatures, this.options.signaturesMax),
    );
    return recorded;
  }

  async #record(
    chain: DepositChain,
    watched: WatchedAddress,
    owner: PublicKey,
    info: ConfirmedSignatureInfo,
  ): Promise<number> {
    if (info.err !== null) return 0;
    const response = await chain.connection.getTransaction(info.signature, {
      commitment: 'finalized',
      maxSupportedTransactionVersion: 0,
    });
    // Listed as finalized but not readable yet (a node behind another): the next pass retries.
    if (response === null) throw new Error('a listed transaction is not readable yet');
    let recorded = 0;
    for (const transfer of depositTransfersIn(response, { owner, usdcMint: chain.usdcMint })) {
      const found: FoundTransfer = {
        vaultId: watched.vaultId,
        signature: info.signature,
        instructionIndex: transfer.instructionIndex,
        innerIndex: transfer.innerIndex,
        slot: response.slot,
        sender: transfer.sender,
        mint: transfer.mint,
        currency: transfer.currency,
        amount: transfer.amount,
      };
      if (this.beforeCredit !== null) await this.beforeCredit(found);
      if ((await this.store.recordChainDeposit(found)).recorded) recorded += 1;
    }
    return recorded;
  }
}

/**
 * The address's progress after reading `signatures` (newest first) from `from`: a page shorter
 * than the limit reached the cursor, so the newest signature seen (or the walk's top) becomes
 * the cursor; a full page may have more behind it, so the walk goes on from its oldest.
 */
export function progressAfter(
  from: WatchProgress,
  signatures: readonly ConfirmedSignatureInfo[],
  signaturesMax: number,
): WatchProgress {
  const newest = signatures[0]?.signature ?? null;
  const oldest = signatures.at(-1)?.signature ?? null;
  if (signatures.length < signaturesMax || oldest === null) {
    return {
      cursorSignature: from.walkTopSignature ?? newest ?? from.cursorSignature,
      walkTopSignature: null,
      walkBeforeSignature: null,
    };
  }
  return {
    cursorSignature: from.cursorSignature,
    walkTopSignature: from.walkTopSignature ?? newest,
    walkBeforeSignature: oldest,
  };
}
