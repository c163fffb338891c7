import type { Scope } from '../../core/index.js';

/** In-flight transfers whose chain status one run asks about, at most. */
export const IN_FLIGHT_LISTED_MAX = 1_000;

/** Requests one round answers at most. */
export const RUN_REQUESTS_MAX = 100;

/** An external transfer sent (its signed transaction recorded) and not final. */
export interface InFlightTransfer {
  readonly transferId: string;
  /** Exact decimal string, in the currency's unit. */
  readonly amount: string;
  readonly signature: string;
}

/** The ledger's side of one (mode, currency), read in one snapshot. Amounts: exact decimals. */
export interface LedgerPosition {
  /**
   * Σ ledger (available + held) of the vaults of the mode and currency, an overdrawn vault's
   * negative ledger counted as 0: what a vault owes the program is a debt to collect, not money
   * the treasury holds for the other vaults (contract v1.2, section 16).
   */
  readonly owed: string;
  /** Σ amount of `credited` chain_deposits rows: on chain at deposit addresses, not swept. */
  readonly unsweptDeposits: string;
  /** Σ amount of external transfers sent and not final. */
  readonly inFlight: string;
  /** The oldest of them, at most IN_FLIGHT_LISTED_MAX, with their signatures. */
  readonly inFlightListed: readonly InFlightTransfer[];
  /** How many are in flight in all (the list may be shorter). */
  readonly inFlightCount: number;
  /**
   * The oldest credited deposits whose sweep is signed and not yet recorded as landed (at
   * most IN_FLIGHT_LISTED_MAX), with the sweep's signature: their money may already be in the
   * treasury, so the run asks the chain, as for transfers in flight.
   */
  readonly sweepsListed: readonly SweepInFlight[];
}

/** One reconciliation's terms and result, as stored (amounts: exact decimal strings). */
export interface ReserveRun {
  readonly mode: Scope['mode'];
  readonly currency: string;
  readonly treasuryAddress: string;
  readonly slot: number;
  readonly treasuryBalance: string;
  readonly unsweptDeposits: string;
  readonly owed: string;
  readonly inFlight: string;
  readonly inFlightLanded: string;
  readonly inFlightCount: number;
  readonly reserves: string;
  readonly liabilities: string;
  readonly shortfall: string;
  readonly ratio: string;
  readonly short: boolean;
}

export interface StoredReserveRun extends ReserveRun {
  readonly id: string;
  readonly ranAtMs: number;
}

/** External transfers not yet sent, by mode and currency (those a shortfall keeps waiting). */
export interface UnsentTransfers {
  readonly mode: Scope['mode'];
  readonly currency: string;
  readonly count: number;
}

/** A pending external transfer not yet signed. */
export interface UnsentTransfer {
  readonly transferId: string;
  readonly mode: Scope['mode'];
  readonly currency: string;
  readonly amount: string;
}

/** A credited deposit whose sweep into the treasury is signed and not yet recorded. */
export interface SweepInFlight {
  readonly depositId: string;
  /** Exact decimal string, in the currency's unit. */
  readonly amount: string;
  readonly signature: string;
}

/** The reconciliation of reserves (workers/reserves.ts, ops/reserves.ts): reads and results. */
export interface ReserveOperations {
  ledgerPosition(mode: Scope['mode'], currency: string): Promise<LedgerPosition>;
  recordReserveRun(run: ReserveRun): Promise<StoredReserveRun>;
  latestReserveRuns(currencies: readonly string[]): Promise<StoredReserveRun[]>;
  unsentExternalTransfers(): Promise<UnsentTransfers[]>;
  unsentTransfersIn(
    pairs: readonly string[],
    max: number,
    afterId?: string | null,
  ): Promise<UnsentTransfer[]>;
  requestReserveRun(): Promise<string>;
  reserveRunRequests(): Promise<string[]>;
  closeReserveRunRequests(requestIds: readonly string[]): Promise<number>;
  reserveRunRequestOpen(requestId: string): Promise<boolean>;
  purgeReserveRuns(retentionMs: number, rowsMax: number): Promise<number>;
}
