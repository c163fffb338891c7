import { Decimal, type Mode } from '../core/index.js';
import { signaturesLandedBy, treasuryBalance } from '../solana/reserves.js';
import type { ChainCurrency } from '../solana/transfers.js';
import type { Store, StoredReserveRun } from '../store/store.js';
import type { WorkerMetrics } from './metrics.js';
import { PollingLoop, type LoopLog } from './polling-loop.js';
import { reserveFigures } from './reserve-formula.js';
import { valueReserveRun, type ReserveValuationSource } from './reserve-valuation.js';
import type { ChainTarget } from './solana-transfers.js';

/*
 * The reconciliation of reserves (issue 15): per mode that has a chain and per currency, does
 * the treasury on chain hold at least what the ledger owes? Each run reads, in this order:
 *
 * 1. the ledger, in one statement (one snapshot): owed = Σ (available + held) = Σ ledger of
 *    the vaults (an overdrawn vault's negative ledger as 0: a debt, not a reserve); unswept = Σ amount of `credited` chain_deposits rows (credited to a vault,
 *    still at its deposit address, not yet in the treasury); in flight = the external
 *    transfers whose signed transaction is recorded (sent, or about to be) and not final;
 * 2. the treasury's balance at `confirmed`, with the slot of the read (solana/reserves.ts);
 * 3. the chain status of each in-flight transfer: landed = those confirmed without error in a
 *    slot at or before the balance's slot.
 *
 * Then (reserve-formula.ts):
 *
 *   reserves    = treasury + unswept
 *   liabilities = owed − landed
 *   shortfall   = max(liabilities − reserves, 0), ratio = reserves / liabilities
 *
 * Why in flight is split: an external transfer's hold stays in `owed` until the transfer
 * worker sees it land and completes it. Before it lands, the treasury still holds the money
 * and the ledger still owes it (to the recipient now, through the hold): both sides count it,
 * nothing to adjust. Once it has landed, the money has left the treasury while the ledger
 * still holds it: the treasury no longer has to cover it, so it comes off the liabilities.
 * Counting every in-flight transfer as gone would hide a shortfall as large as the transfers
 * not yet landed; counting none as gone would report a false shortfall for each transfer
 * between its landing and its completion. The balance's slot tells the two apart exactly:
 * a transfer landed at or before that slot is reflected in the balance read.
 *
 * What is left unexact (docs/reserves.md): a transfer signed after step 1 that lands before
 * step 2 is not in the list, so its amount shows as a shortfall for that one run. A credited
 * deposit whose sweep is signed (deposit_sweeps) is asked about like a transfer in flight: a
 * sweep landed by the balance's slot is in the treasury, so its deposit comes off unswept
 * (else it would count twice, in the treasury and at its address, until the sweeper records
 * it). Transfers or sweeps beyond IN_FLIGHT_LISTED_MAX are not asked about: a transfer counts
 * as not landed (the safe side), a sweep as not landed either (counted twice: the unsafe
 * side, bounded by the oldest IN_FLIGHT_LISTED_MAX sweeps being answered first).
 *
 * Each result is stored (reserve_runs), set in `spendgate_reserve_ratio` and
 * `spendgate_reserve_shortfall`, and logged at error level while short. The transfer worker
 * keeps new external transfers of a short (mode, currency) pending (solana-transfers.ts).
 * Runs happen every `everyMs` in each worker process, and at once when `spendgate reserves
 * --run` asks (a row in reserve_run_requests, looked for every `roundMs`).
 */

export const RESERVE_CURRENCIES: readonly ChainCurrency[] = ['SOL', 'USDC'];

export interface ReserveSettings {
  /** A run every this long (in each worker process). */
  readonly everyMs: number;
  /** How often the loop looks for runs asked for now. */
  readonly roundMs: number;
}

export const DEFAULT_RESERVE_SETTINGS: ReserveSettings = { everyMs: 60_000, roundMs: 1_000 };

export interface ReserveLog extends LoopLog {
  error(object: object, message: string): void;
}

export class ReserveReconciler {
  readonly #loop: PollingLoop;
  #lastRunMs = -Infinity;

  constructor(
    private readonly store: Store,
    private readonly chains: Readonly<Record<Mode, ChainTarget | null>>,
    private readonly log: ReserveLog,
    private readonly settings: ReserveSettings = DEFAULT_RESERVE_SETTINGS,
    private readonly metrics: WorkerMetrics | null = null,
    private readonly valuation: ReserveValuationSource | null = null,
  ) {
    this.#loop = new PollingLoop(
      'reserves',
      async () => {
        await this.round();
        return false;
      },
      settings.roundMs,
      log,
    );
  }

  start(): void {
    this.#loop.start();
  }

  stop(): Promise<void> {
    return this.#loop.stop();
  }

  /** One round: a run when one is due or asked for; the requests it answered are closed. */
  async round(): Promise<StoredReserveRun[]> {
    const requests = await this.store.reserveRunRequests();
    const due = performance.now() - this.#lastRunMs >= this.settings.everyMs;
    if (!due && requests.length === 0) return [];
    const runs = await this.runOnce();
    await this.store.closeReserveRunRequests(requests);
    return runs;
  }

  /**
   * One run: every (mode with a chain, currency). A pair whose chain or database does not
   * answer is logged and left to the next run; the others are still stored.
   */
  async runOnce(): Promise<StoredReserveRun[]> {
    this.#lastRunMs = performance.now();
    const runs: StoredReserveRun[] = [];
    for (const mode of ['test', 'live'] as const) {
      const chain = this.chains[mode];
      if (chain === null) continue;
      for (const currency of RESERVE_CURRENCIES) {
        try {
          runs.push(await this.reconcile(mode, currency, chain));
        } catch (error) {
          this.log.warn({ err: error, mode, currency }, 'reserves: a reconciliation failed');
        }
      }
    }
    return runs;
  }

  /** One (mode, currency): read, compute, store, export (the module's header says how). */
  async reconcile(
    mode: Mode,
    currency: ChainCurrency,
    chain: ChainTarget,
  ): Promise<StoredReserveRun> {
    const position = await this.store.ledgerPosition(mode, currency);
    const balance = await treasuryBalance(
      chain.connection,
      chain.signer.publicKey,
      currency,
      chain.usdcMint,
    );
    // One question to the chain for both lists: which signatures landed by the balance's slot.
    const landed = await signaturesLandedBy(
      chain.connection,
      [
        ...position.inFlightListed.map((transfer) => transfer.signature),
        ...position.sweepsListed.map((sweep) => sweep.signature),
      ],
      balance.slot,
    );
    const landedSum = (items: readonly { amount: string; signature: string }[]) =>
      items
        .filter((item) => landed.has(item.signature))
        .reduce((sum, item) => sum.plus(item.amount), new Decimal(0));
    const inFlightLanded = landedSum(position.inFlightListed);
    // A sweep that landed by the balance's slot is in the treasury balance read: its deposit
    // is no longer at its address, though the sweeper has not yet recorded it as swept.
    const unsweptDeposits = new Decimal(position.unsweptDeposits)
      .minus(landedSum(position.sweepsListed))
      .toFixed();
    const figures = reserveFigures({
      treasuryUnits: balance.units,
      decimals: balance.decimals,
      unsweptDeposits,
      owed: position.owed,
      inFlight: position.inFlight,
      inFlightLanded: inFlightLanded.toFixed(),
    });
    const run = await this.store.recordReserveRun({
      mode,
      currency,
      treasuryAddress: balance.address,
      slot: balance.slot,
      unsweptDeposits,
      owed: position.owed,
      inFlight: position.inFlight,
      inFlightLanded: inFlightLanded.toFixed(),
      inFlightCount: position.inFlightListed.length,
      ...figures,
    });
    await this.#value(run);
    this.#export(run);
    return run;
  }

  /**
   * The run in USD at its currency's feed price, read once now, beside its own figures
   * (metrics and the log; the stored run keeps its currency's exact figures).
   */
  async #value(run: StoredReserveRun): Promise<void> {
    if (this.valuation === null) return;
    const labels = { mode: run.mode, currency: run.currency };
    const reading = await this.valuation.read(run.mode, `${run.currency}/USD`).catch(() => null);
    const valued = valueReserveRun(run, reading, Date.now(), this.valuation.bounds);
    if (valued === null) {
      for (const term of ['reserves', 'liabilities', 'shortfall']) {
        this.metrics?.reserveValueUsd.remove({ ...labels, term });
      }
      return;
    }
    this.metrics?.reserveValueUsd.set({ ...labels, term: 'reserves' }, Number(valued.reservesUsd));
    this.metrics?.reserveValueUsd.set(
      { ...labels, term: 'liabilities' },
      Number(valued.liabilitiesUsd),
    );
    this.metrics?.reserveValueUsd.set(
      { ...labels, term: 'shortfall' },
      Number(valued.shortfallUsd),
    );
    this.log.info(
      `reserves ${run.mode} ${run.currency} at ${valued.price} USD (${valued.source}): reserves ${valued.reservesUsd} USD, liabilities ${valued.liabilitiesUsd} USD, shortfall ${valued.shortfallUsd} USD`,
    );
  }

  #export(run: StoredReserveRun): void {
    const labels = { mode: run.mode, currency: run.currency };
    // Prometheus values are floats: the metric is for graphs and alerts; the exact figures
    // are the stored run's (`spendgate reserves`).
    this.metrics?.reserveRatio.set(labels, Number(run.ratio));
    this.metrics?.reserveShortfall.set(labels, Number(run.shortfall));
    this.metrics?.reserveRunTime.set(labels, run.ranAtMs / 1000);
    if (run.short) {
      this.log.error(
        {
          ...labels,
          ratio: run.ratio,
          shortfall: run.shortfall,
          reserves: run.reserves,
          liabilities: run.liabilities,
          runId: run.id,
        },
        'reserves short: the treasury on chain holds less than the ledger owes',
      );
    }
  }
}
