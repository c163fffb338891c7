import { PublicKey, type Connection } from '@solana/web3.js';
import type { Scope } from '../core/index.js';
import type { TreasurySigner } from '../solana/signer.js';
import {
  broadcast,
  buildSignedTransfer,
  checkTransfer,
  toUnits,
  TransferRefusedError,
  type ChainCurrency,
  type SignedTransfer,
} from '../solana/transfers.js';
import type { PendingChainTransfer, Store } from '../store/store.js';
import type { SolanaOutcome, WorkerMetrics } from './metrics.js';
import { PollingLoop, type LoopLog } from './polling-loop.js';

export interface ChainTarget {
  readonly connection: Connection;
  readonly signer: TreasurySigner;
  readonly usdcMint: PublicKey;
}

export interface SolanaTransferOptions {
  readonly batchMax: number;
  readonly idleMs: number;
}

export const DEFAULT_SOLANA_TRANSFER_OPTIONS: SolanaTransferOptions = {
  batchMax: 50,
  idleMs: 500,
};

const DECIMALS: Record<ChainCurrency, number> = { SOL: 9, USDC: 6 };

/** NUMERIC(38,9) renders nine fraction digits; the currency's scale may be fewer. */
function withoutTrailingZeros(amount: string): string {
  return amount.includes('.') ? amount.replace(/0+$/, '').replace(/\.$/, '') : amount;
}

/**
 * Transfers whose first send this process remembers, for the confirmation time, at most: past
 * it the oldest is forgotten, and that transfer's confirmation goes untimed (never mistimed).
 */
const SENT_AT_MAX = 10_000;

function isChainCurrency(currency: string): currency is ChainCurrency {
  return currency === 'SOL' || currency === 'USDC';
}

/**
 * The Solana transfer worker (contract section 12). Each round walks the pending
 * external transfers and moves each one step, so that a crash between any two steps is safe:
 *
 * 1. Not signed yet: build and sign it, and record the signed bytes, the signature and the
 *    blockhash's lastValidBlockHeight (store: recordChainSend) before anything is sent.
 * 2. Signed: ask the chain about the signature.
 *    - landed: complete the transfer (the hold becomes a posted debit; transfer.completed);
 *    - failed (a definite on-chain error): fail it, releasing the hold (transfer.failed);
 *    - unknown, blockhash still valid: send the same bytes again (the chain applies them once);
 *    - unknown, blockhash expired: those bytes can never land, so sign anew with a fresh
 *      blockhash, replacing the record only if nobody replaced it first, then send.
 * So the same transfer is never sent under two live signatures, and never twice.
 */
export class SolanaTransferWorker {
  readonly #loop: PollingLoop;
  /** Transfers completed and failed by this worker: for tests and logs. */
  readonly stats = { completed: 0, failed: 0, sent: 0 };
  /**
   * When this process first sent each transfer still pending (performance.now()). A transfer
   * first sent by another process, or before a restart, is not timed: its start is unknown.
   */
  readonly #firstSentMs = new Map<string, number>();

  constructor(
    private readonly store: Store,
    private readonly chains: Readonly<Record<Scope['mode'], ChainTarget | null>>,
    private readonly log: LoopLog,
    private readonly options: SolanaTransferOptions = DEFAULT_SOLANA_TRANSFER_OPTIONS,
    private readonly metrics: WorkerMetrics | null = null,
  ) {
    this.#loop = new PollingLoop(
      'solana transfers',
      async () => (await this.sendOnce()) === options.batchMax,
      options.idleMs,
      log,
    );
  }

  start(): void {
    this.#loop.start();
  }

  stop(): Promise<void> {
    return this.#loop.stop();
  }

  /** One round: each pending transfer one step further; returns how many were pending. */
  async sendOnce(): Promise<number> {
    const pending = await this.store.pendingChainTransfers(this.options.batchMax);
    for (const transfer of pending) {
      try {
        await this.#step(transfer);
      } catch (error) {
        // The chain or the database did not answer: the next round tries the same step.
        this.#count(transfer, 'error');
        this.log.warn(
          { err: error, transferId: transfer.transferId },
          'solana transfer step failed',
        );
      }
    }
    return pending.length;
  }

  async #step(transfer: PendingChainTransfer): Promise<void> {
    const chain = this.chains[transfer.mode];
    // Live transfers wait while no cluster is configured (the API refuses new ones meanwhile).
    if (chain === null) return;
    if (!isChainCurrency(transfer.currency)) {
      await this.#fail(transfer, `unsupported_currency`);
      return;
    }
    const currency = transfer.currency;
    const send = transfer.send;
    if (send === null) {
      await this.#sign(transfer, chain, currency, null);
      return;
    }
    const status = await checkTransfer(chain.connection, {
      signature: send.signature,
      lastValidBlockHeight: send.lastValidBlockHeight,
    });
    switch (status.state) {
      case 'landed': {
        await this.store.completeExternalTransfer(transfer.transferId, send.signature);
        this.stats.completed += 1;
        this.#count(transfer, 'confirmed');
        const sentMs = this.#firstSentMs.get(transfer.transferId);
        if (sentMs !== undefined) {
          this.metrics?.solanaConfirmationSeconds.observe(
            { mode: transfer.mode },
            (performance.now() - sentMs) / 1000,
          );
        }
        this.#firstSentMs.delete(transfer.transferId);
        return;
      }
      case 'failed':
        this.log.warn(
          { transferId: transfer.transferId, reason: status.reason },
          'solana transfer failed on chain',
        );
        await this.#fail(transfer, 'chain_failed');
        return;
      case 'pending':
        await broadcast(chain.connection, Buffer.from(send.signedTransaction, 'base64'));
        this.stats.sent += 1;
        this.#count(transfer, 'resent');
        return;
      case 'expired':
        await this.#sign(transfer, chain, currency, send.signature);
        return;
    }
  }

  /** Signs (again), records, then sends: the record always comes before the bytes leave. */
  async #sign(
    transfer: PendingChainTransfer,
    chain: ChainTarget,
    currency: ChainCurrency,
    previousSignature: string | null,
  ): Promise<void> {
    let recipient: PublicKey;
    try {
      recipient = new PublicKey(transfer.address);
    } catch {
      await this.#fail(transfer, 'invalid_address');
      return;
    }
    let built: SignedTransfer;
    try {
      built = await buildSignedTransfer({
        connection: chain.connection,
        signer: chain.signer,
        currency,
        usdcMint: chain.usdcMint,
        recipient,
        amountUnits: toUnits(withoutTrailingZeros(transfer.amount), DECIMALS[currency]),
        ...(transfer.memo === null ? {} : { memo: transfer.memo }),
      });
    } catch (error) {
      // A transfer that can never be built as asked (the treasury as recipient, a USDC
      // recipient off the curve, a memo too long) fails now, rather than every round.
      if (!(error instanceof TransferRefusedError)) throw error;
      this.log.warn(
        { transferId: transfer.transferId, reason: error.message },
        'solana transfer refused',
      );
      await this.#fail(transfer, 'invalid_transfer');
      return;
    }
    const recorded = await this.store.recordChainSend(
      transfer.transferId,
      {
        signedTransaction: built.transaction.toString('base64'),
        signature: built.signature,
        lastValidBlockHeight: built.lastValidBlockHeight,
      },
      previousSignature,
    );
    // Another worker signed it first: its bytes are the ones to send.
    if (!recorded) return;
    await broadcast(chain.connection, built.transaction);
    this.stats.sent += 1;
    if (previousSignature !== null) {
      this.#count(transfer, 'resigned');
      return;
    }
    this.#count(transfer, 'sent');
    this.#firstSentMs.set(transfer.transferId, performance.now());
    if (this.#firstSentMs.size > SENT_AT_MAX) {
      const oldest = this.#firstSentMs.keys().next();
      if (oldest.done !== true) this.#firstSentMs.delete(oldest.value);
    }
  }

  /** Fails the transfer: `chain_failed` on chain, any other reason refused before sending. */
  async #fail(transfer: PendingChainTransfer, reason: string): Promise<void> {
    await this.store.failExternalTransfer(transfer.transferId, reason);
    this.stats.failed += 1;
    this.#count(transfer, reason === 'chain_failed' ? 'failed' : 'refused');
    this.#firstSentMs.delete(transfer.transferId);
  }

  #count(transfer: PendingChainTransfer, outcome: SolanaOutcome): void {
    this.metrics?.solanaSends.inc({ mode: transfer.mode, outcome });
  }
}
