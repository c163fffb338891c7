import type { Scope } from '../../core/index.js';
import type { ChainDepositRecord, FoundTransfer, UnsweptDeposit } from '../ops/chain-deposits.js';
import type { WatchedAddress, WatchProgress } from '../ops/deposit-watch.js';
import type { Page, PageQuery } from '../ops/list-pages.js';

export type {
  ChainDepositRecord,
  FoundTransfer,
  IgnoredReason,
  UnsweptDeposit,
} from '../ops/chain-deposits.js';
export { DEPOSIT_MINIMUMS, SWEEP_BATCH_MAX } from '../ops/chain-deposits.js';
export type { WatchedAddress, WatchProgress } from '../ops/deposit-watch.js';
export { ADDRESS_BACKFILL_MAX, WATCH_BATCH_MAX } from '../ops/deposit-watch.js';

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
