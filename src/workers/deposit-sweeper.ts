import { Keypair, type Connection, type PublicKey } from '@solana/web3.js';
import type { Mode } from '../core/index.js';
import { buildSignedSweep, SOL_DECIMALS } from '../solana/deposits.js';
import type { TreasurySigner } from '../solana/signer.js';
import {
  broadcast,
  recordThenBroadcast,
  checkTransfer,
  toUnits,
  USDC_DECIMALS,
  type SignedTransfer,
} from '../solana/transfers.js';
import { SWEEP_BATCH_MAX, type Store, type UnsweptDeposit } from '../store/store.js';
import type { LoopLog } from './polling-loop.js';

/** What the sweeper needs for one mode: the cluster, the treasury and the USDC mint. */
export interface SweepChain {
  readonly connection: Connection;
  readonly signer: TreasurySigner;
  readonly usdcMint: PublicKey;
}

export const DEFAULT_SWEEP_BATCH = 50;

/**
 * The sweeper (issue 15): moves each credited deposit from its vault's deposit address into
 * the treasury, exactly once, the way external transfers are sent (workers/solana-transfers.ts):
 *
 * 1. Not signed yet: build the sweep (the treasury pays the fee, the deposit key signs as the
 *    owner), record its signed bytes, signature and lastValidBlockHeight, then send.
 * 2. Signed: ask the chain. landed: the deposit is `swept` (store.completeSweep); failed on
 *    chain: the sweep is marked failed and left for an operator (the deposit stays credited at
 *    its address); pending: send the same bytes again; expired: sign anew, replacing the record
 *    only if its signature is still the old one (so two sweepers never both re-sign).
 *
 * The ledger does not move: the vault was credited when the deposit was found; a sweep only
 * moves the money between two addresses the service holds.
 */
export class DepositSweeper {
  readonly stats = { swept: 0, sent: 0, failed: 0 };

  constructor(
    private readonly store: Store,
    private readonly chains: Readonly<Record<Mode, SweepChain | null>>,
    private readonly log: LoopLog,
    private readonly batchMax = DEFAULT_SWEEP_BATCH,
  ) {
    if (batchMax < 1 || batchMax > SWEEP_BATCH_MAX) throw new RangeError('a bounded sweep batch');
  }

  /** One pass: each unswept deposit one step further; returns how many were waiting. */
  async sweepOnce(): Promise<number> {
    const waiting = await this.store.unsweptDeposits(this.batchMax);
    for (const deposit of waiting) {
      try {
        await this.#step(deposit);
      } catch (error) {
        this.log.warn({ err: error, depositId: deposit.depositId }, 'deposit sweep step failed');
      }
    }
    return waiting.length;
  }

  async #step(deposit: UnsweptDeposit): Promise<void> {
    const chain = this.chains[deposit.mode];
    if (chain === null) return;
    const send = deposit.send;
    if (send === null) {
      await this.#sign(deposit, chain, null);
      return;
    }
    const status = await checkTransfer(chain.connection, send);
    switch (status.state) {
      case 'landed':
        if (await this.store.completeSweep(deposit.depositId, send.signature))
          this.stats.swept += 1;
        return;
      case 'failed':
        this.log.warn(
          { depositId: deposit.depositId, reason: status.reason },
          'deposit sweep failed on chain',
        );
        await this.store.failSweep(deposit.depositId, status.reason);
        this.stats.failed += 1;
        return;
      case 'pending':
        await broadcast(chain.connection, Buffer.from(send.signedTransaction, 'base64'));
        this.stats.sent += 1;
        return;
      case 'expired':
        await this.#sign(deposit, chain, send.signature);
        return;
    }
  }

  /** Signs (again), records, then sends: the record always comes before the bytes leave. */
  async #sign(
    deposit: UnsweptDeposit,
    chain: SweepChain,
    previousSignature: string | null,
  ): Promise<void> {
    if (deposit.currency !== 'SOL' && deposit.currency !== 'USDC') return;
    const seed = await this.store.depositKeySeed(deposit.vaultId);
    let built: SignedTransfer;
    try {
      const depositKey = Keypair.fromSeed(seed);
      if (depositKey.publicKey.toBase58() !== deposit.depositAddress) {
        throw new Error('the derived deposit key does not match the vault address');
      }
      built = await buildSignedSweep({
        connection: chain.connection,
        treasury: chain.signer,
        depositKey,
        currency: deposit.currency,
        usdcMint: chain.usdcMint,
        amountUnits: toUnits(
          deposit.amount,
          deposit.currency === 'SOL' ? SOL_DECIMALS : USDC_DECIMALS,
        ),
      });
    } finally {
      seed.fill(0);
    }
    const sent = await recordThenBroadcast(chain.connection, built, (send) =>
      this.store.recordSweepSend(deposit.depositId, send, previousSignature),
    );
    if (sent) this.stats.sent += 1;
  }
}
