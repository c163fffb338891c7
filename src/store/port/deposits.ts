import type { ChainDepositRecord, CurrencyCode, Mode, Scope } from '../../core/index.js';
import type { Page, PageQuery } from './pages.js';

export type { ChainDepositRecord } from '../../core/index.js';

/**
 * The smallest deposit credited, per currency: less is recorded as ignored (`below_minimum`).
 * Dust would cost more to sweep (a transaction fee, paid by the treasury) than it brings, and
 * dust sends are a common way to spam an address's history.
 */
export const DEPOSIT_MINIMUMS: Readonly<Record<string, string>> = { USDC: '0.01', SOL: '0.001' };

/** Why a found transfer was not credited (chain_deposits.ignored_reason). */
export type IgnoredReason = NonNullable<ChainDepositRecord['ignoredReason']>;

export interface FoundTransfer {
  readonly vaultId: string;
  readonly signature: string;
  readonly instructionIndex: number;
  /** -1 for an outer instruction. */
  readonly innerIndex: number;
  readonly slot: number;
  readonly sender: string;
  /** The token's mint; null for SOL. */
  readonly mint: string | null;
  /** What the transfer is in the service's terms: SOL, USDC, or null for another mint. */
  readonly currency: CurrencyCode | null;
  /** Exact, in the transferred token's own units ("12.5"). */
  readonly amount: string;
}

/** A credited deposit waiting to be swept, with its sweep's recorded send (if any). */
export interface UnsweptDeposit {
  readonly depositId: string;
  readonly vaultId: string;
  readonly mode: Mode;
  readonly currency: string;
  readonly amount: string;
  /** The vault's deposit address: the owner of the swept funds. */
  readonly depositAddress: string;
  readonly send: {
    readonly signedTransaction: string;
    readonly signature: string;
    readonly lastValidBlockHeight: number;
  } | null;
}

/** Sweeps per sweeper pass, at most. */
export const SWEEP_BATCH_MAX = 500;

/** Addresses per watcher pass, at most. */
export const WATCH_BATCH_MAX = 1_000;

/** Vaults given their address per backfill statement, at most. */
export const ADDRESS_BACKFILL_MAX = 1_000;

export interface WatchedAddress {
  /** What the watcher asks the chain about: the deposit address, or its token account. */
  readonly address: string;
  /** The vault's deposit address (the owner, when `address` is a token account). */
  readonly ownerAddress: string;
  readonly vaultId: string;
  readonly mode: Mode;
  readonly currency: CurrencyCode;
  readonly cursorSignature: string | null;
  readonly walkTopSignature: string | null;
  readonly walkBeforeSignature: string | null;
  /** Never scanned yet. */
  readonly fresh: boolean;
}

/** Where the scan of one address got to (see migration 0015 for the cursor and the walk). */
export interface WatchProgress {
  readonly cursorSignature: string | null;
  readonly walkTopSignature: string | null;
  readonly walkBeforeSignature: string | null;
}

/** On-chain deposits (issue 15): the watcher's, the sweeper's and the owner's side. */
export interface DepositOperations {
  /** Transfers found at a vault's deposit address, newest first (credited, swept, ignored). */
  listChainDeposits(
    scope: Scope,
    vaultId: string,
    query: PageQuery,
  ): Promise<Page<ChainDepositRecord>>;
  /** The watcher: gives old vaults their address, reads its work list, records what it finds. */
  assignDepositAddresses(batchMax: number): Promise<number>;
  depositWatchBatch(batchMax: number): Promise<WatchedAddress[]>;
  watchTokenAccount(vaultId: string, address: string, ownerAddress: string): Promise<void>;
  recordChainDeposit(
    found: FoundTransfer,
  ): Promise<{ deposit: ChainDepositRecord; recorded: boolean }>;
  advanceDepositWatch(address: string, from: WatchProgress, to: WatchProgress): Promise<boolean>;
  /** The sweeper: what to sweep, its signed bytes before sending, and how it ended. */
  unsweptDeposits(batchMax: number): Promise<UnsweptDeposit[]>;
  recordSweepSend(
    depositId: string,
    send: { signedTransaction: string; signature: string; lastValidBlockHeight: number },
    previousSignature: string | null,
  ): Promise<boolean>;
  completeSweep(depositId: string, signature: string): Promise<boolean>;
  failSweep(depositId: string, reason: string): Promise<void>;
  /** The 32-byte seed of a vault's deposit keypair (secret: for signing, never logged). */
  depositKeySeed(vaultId: string): Promise<Buffer>;
}
