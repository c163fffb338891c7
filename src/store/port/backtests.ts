import type { BacktestRecord, Scope } from '../../core/index.js';

/** Authorizations a request replays itself at most; a window holding more is queued. */
export const BACKTEST_SYNC_AUTHORIZATIONS_MAX = 10_000;

/** Runs a queued backtest gets at most before it is failed (a run that dies counts). */
export const BACKTEST_ATTEMPTS_MAX = 3;

/** What a backtest is asked for: whose authorizations (a vault's or a card's) and how. */
export type BacktestSubject =
  | { readonly kind: 'vault'; readonly vaultId: string }
  | { readonly kind: 'card'; readonly cardId: string };

export interface BacktestInput {
  /** The draft policy, compiled here as Set Policy compiles a body. */
  readonly draft: unknown;
  /** `YYYY-MM-DD`, both included, at most 90 days. */
  readonly startDate: string;
  readonly endDate: string;
}

/** How a run ended: its result stored, failed for good, or not this run's to do. */
export type BacktestRunOutcome = 'completed' | 'failed' | 'skipped';

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
