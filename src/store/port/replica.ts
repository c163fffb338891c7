/*
 * What the store tells of its read replica (store/replica-reads.ts routes the reads): where
 * each read that may lag was served and why, for the server's metrics.
 */

/** Why a lagging read was served where it was (the metric's `reason`). */
export type ReplicaReadReason =
  'caught_up' | 'behind' | 'position_unknown' | 'positions_unavailable' | 'replica_unavailable';

export type ReplicaEvent =
  | {
      readonly kind: 'read';
      readonly servedBy: 'replica' | 'primary';
      readonly reason: ReplicaReadReason;
    }
  | { readonly kind: 'position_not_kept' };
