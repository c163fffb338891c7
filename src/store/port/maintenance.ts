/** A day, in milliseconds. */
export const DAY_MS = 86_400_000;

export interface RetentionSettings {
  readonly deliveryRetentionMs: number;
  readonly eventRetentionMs: number;
  readonly spendCounterRetentionDays: number;
  readonly holdJournalRetentionMs: number;
  readonly backtestRetentionMs: number;
}

export const DEFAULT_RETENTION: RetentionSettings = {
  deliveryRetentionMs: 30 * DAY_MS,
  eventRetentionMs: 30 * DAY_MS,
  // A yearly window reads 366 days back; the rest is margin.
  spendCounterRetentionDays: 400,
  holdJournalRetentionMs: 31 * DAY_MS,
  backtestRetentionMs: 30 * DAY_MS,
};

/** Vaults one candidate search of the hold journal looks at. */
export const HOLD_JOURNAL_VAULTS_MAX = 1_000;

export const REWRAP_BATCH_DEFAULT = 500;

export const REWRAP_BATCH_MAX = 10_000;

export interface RewrapCount {
  readonly kind: string;
  /** Rows read. */
  readonly checked: number;
  /** Rows that were under another key and now are under the current one. */
  readonly rewrapped: number;
  /** Rows no key of the keyring opens: left unchanged. */
  readonly unreadable: number;
  /** The first of them, by id. */
  readonly unreadableIds: readonly string[];
}

export interface RewrapOptions {
  readonly batchMax?: number;
  /** Called after each committed batch, with the kind's counts so far. */
  readonly onBatch?: (count: RewrapCount) => void;
}

/** The maintenance schedules' steps (workers/maintenance.ts): snapshots and purges. */
export interface MaintenanceOperations {
  /** Snapshots up to `batchMax` vaults of `day` after `afterVaultId`; the last one, or null. */
  snapshotDay(day: string, afterVaultId: string | null, batchMax?: number): Promise<string | null>;
  snapshotDaysDue(): Promise<string[]>;
  completeSnapshotDay(day: string): Promise<void>;
  /** Deletes idempotency records past their 24-hour window; returns how many. */
  purgeIdempotencyKeys(batchMax?: number): Promise<number>;
  /**
   * Retention (store/ops/retention.ts says what each keeps, and why): each deletes or folds at
   * most `rowsMax` rows in its transaction and returns how many.
   */
  purgeWebhookDeliveries(retentionMs: number, rowsMax: number): Promise<number>;
  purgeOutboxEvents(retentionMs: number, rowsMax: number): Promise<number>;
  purgeBacktests(retentionMs: number, rowsMax: number): Promise<number>;
  purgeSpendCounters(retentionDays: number, rowsMax: number): Promise<number>;
  purgeDisplayTokens(rowsMax: number): Promise<number>;
  holdJournalCandidates(
    retentionMs: number,
    afterVaultId: string | null,
    vaultsMax?: number,
  ): Promise<{ horizonMs: number | null; vaultIds: string[]; cursor: string | null }>;
  compactVaultHoldChanges(vaultId: string, horizonMs: number, rowsMax: number): Promise<number>;
}

/** The outbox's backlog, for the workers' metrics. */
export interface OutboxBacklog {
  /** Seconds since the oldest unrelayed event was written; 0 with none waiting. */
  readonly lagSeconds: number;
  /** Unrelayed events, counted up to the bound the caller gives. */
  readonly pending: number;
}
