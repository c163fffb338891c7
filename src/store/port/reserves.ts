import type { Scope } from '../../core/index.js';
import type {
  LedgerPosition,
  ReserveRun,
  StoredReserveRun,
  UnsentTransfer,
  UnsentTransfers,
} from '../ops/reserves.js';

export {
  IN_FLIGHT_LISTED_MAX,
  RUN_REQUESTS_MAX,
  type InFlightTransfer,
  type LedgerPosition,
  type ReserveRun,
  type StoredReserveRun,
  type UnsentTransfer,
  type UnsentTransfers,
} from '../ops/reserves.js';

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
