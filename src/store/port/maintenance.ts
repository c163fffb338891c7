export {
  DEFAULT_RETENTION,
  HOLD_JOURNAL_VAULTS_MAX,
  type RetentionSettings,
} from '../ops/retention.js';

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
