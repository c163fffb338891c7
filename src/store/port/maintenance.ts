/** The maintenance schedules' steps (workers/maintenance.ts): snapshots and purges. */
export interface MaintenanceOperations {
  /** Snapshots up to `batchMax` vaults of `day` after `afterVaultId`; the last one, or null. */
  snapshotDay(day: string, afterVaultId: string | null, batchMax?: number): Promise<string | null>;
  snapshotDaysDue(): Promise<string[]>;
  completeSnapshotDay(day: string): Promise<void>;
  /** Deletes idempotency records past their 24-hour window; returns how many. */
  purgeIdempotencyKeys(batchMax?: number): Promise<number>;
}

/** The outbox's backlog, for the workers' metrics. */
export interface OutboxBacklog {
  /** Seconds since the oldest unrelayed event was written; 0 with none waiting. */
  readonly lagSeconds: number;
  /** Unrelayed events, counted up to the bound the caller gives. */
  readonly pending: number;
}
