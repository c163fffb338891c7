import type { BacktestRecord, Scope } from '../../core/index.js';
import type { BacktestInput, BacktestSubject } from '../ops/backtests.js';

export {
  BACKTEST_ATTEMPTS_MAX,
  BACKTEST_SYNC_AUTHORIZATIONS_MAX,
  type BacktestInput,
  type BacktestRunOutcome,
  type BacktestSubject,
} from '../ops/backtests.js';

/**
 * Policy backtests (issue 14): asked for and read through the API, queued for the worker
 * role's jobs (its runs are `Store.runBacktest`, several transactions each).
 */
export interface BacktestOperations {
  /** Completed at once for a window of at most 10,000 authorizations; else queued. */
  createBacktest(
    scope: Scope,
    subject: BacktestSubject,
    input: BacktestInput,
  ): Promise<{ backtest: BacktestRecord; queued: boolean }>;
  getBacktest(scope: Scope, subject: BacktestSubject, backtestId: string): Promise<BacktestRecord>;
  /** The relay's side: unfinished backtests no run holds, locked, and their jobs recorded. */
  backtestsAwaitingJobs(
    batchMax: number,
    recheckAfterMs: number,
  ): Promise<{ id: string; jobGeneration: number }[]>;
  markBacktestJobs(
    jobs: readonly { readonly id: string; readonly jobGeneration: number }[],
  ): Promise<void>;
}
