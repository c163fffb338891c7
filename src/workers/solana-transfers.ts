import { PublicKey, type Connection } from '@solana/web3.js';
import type { Scope } from '../core/index.js';
import type { TreasurySigner } from '../solana/signer.js';
import {
  broadcast,
  recordThenBroadcast,
  buildSignedTransfer,
  checkTransfer,
  toUnits,
  TransferRefusedError,
  type ChainCurrency,
  type SignedTransfer,
} from '../solana/transfers.js';
import type { PendingChainTransfer, Store, StoredReserveRun } from '../store/store.js';
import type { SolanaOutcome, WorkerMetrics } from './metrics.js';
import { PollingLoop, type LoopLog } from './polling-loop.js';
import { RESERVE_CURRENCIES } from './reserves.js';

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

/** Waiting transfers logged per round at most, and remembered as logged at most. */
const WAITING_LISTED_MAX = 100;
const WAITING_LOGGED_MAX = 10_000;

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
 *
 * Reserves (workers/reserves.ts): while the latest reconciliation of a (mode, currency) is
 * short, its transfers not yet signed wait, pending (they are not even read: the others go on),
 * each logged once with the reason, and counted in `spendgate_transfers_waiting_reserves`.
 * Transfers already signed go on: their bytes may already be on chain, and stopping them would
 * change nothing the ledger owes. A run that finds the currency covered lifts the wait.
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
  /** Waiting transfers already logged (insertion order: the oldest is forgotten first). */
  readonly #waitingLogged = new Set<string>();
  /**
   * Where the next round's look at waiting transfers starts: each round reads at most
   * WAITING_LISTED_MAX after it, and a short read starts the next from the first again, so
   * that every waiting transfer is seen, however many wait.
   */
  #waitingCursor: string | null = null;

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
    const short = await this.#shortPairs();
    await this.#reportWaiting(short);
    const pending = await this.store.pendingChainTransfers(this.options.batchMax, [
      ...short.keys(),
    ]);
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

  /** The (mode, currency) keys whose latest reconciliation is short, with that run. */
  async #shortPairs(): Promise<Map<string, StoredReserveRun>> {
    const latest = await this.store.latestReserveRuns(RESERVE_CURRENCIES);
    return new Map(
      latest.filter((run) => run.short).map((run) => [`${run.mode}:${run.currency}`, run]),
    );
  }

  /** Logs each transfer kept waiting once, and sets the gauge of waiting transfers. */
  async #reportWaiting(short: ReadonlyMap<string, StoredReserveRun>): Promise<void> {
    const waiting = await this.store.unsentTransfersIn(
      [...short.keys()],
      WAITING_LISTED_MAX,
      this.#waitingCursor,
    );
    this.#waitingCursor =
      waiting.length < WAITING_LISTED_MAX ? null : (waiting.at(-1)?.transferId ?? null);
    for (const transfer of waiting) {
      if (this.#waitingLogged.has(transfer.transferId)) continue;
      const run = short.get(`${transfer.mode}:${transfer.currency}`);
      this.log.warn(
        {
          transferId: transfer.transferId,
          mode: transfer.mode,
          currency: transfer.currency,
          ratio: run?.ratio,
          shortfall: run?.shortfall,
          reserveRunId: run?.id,
        },
        'solana transfer waits: the reserves of its currency are short; it is sent once a reconciliation finds them covered (spendgate reserves)',
      );
      this.#waitingLogged.add(transfer.transferId);
      if (this.#waitingLogged.size > WAITING_LOGGED_MAX) {
        const oldest = this.#waitingLogged.values().next();
        if (oldest.done !== true) this.#waitingLogged.delete(oldest.value);
      }
    }
    const gauge = this.metrics?.transfersWaitingReserves;
    if (gauge === undefined) return;
    const counts = short.size === 0 ? [] : await this.store.unsentExternalTransfers();
    for (const mode of ['test', 'live'] as const) {
      for (const currency of RESERVE_CURRENCIES) {
        const key = `${mode}:${currency}`;
        const count = short.has(key)
          ? (counts.find((c) => c.mode === mode && c.currency === currency)?.count ?? 0)
          : 0;
        gauge.set({ mode, currency }, count);
      }
    }
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
    const sent = await recordThenBroadcast(chain.connection, built, (send) =>
      this.store.recordChainSend(transfer.transferId, send, previousSignature),
    );
    // Another worker signed it first: its bytes are the ones to send.
    if (!sent) return;
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
