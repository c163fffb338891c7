import type { PolicyDocument } from '../../core/index.js';
import type { SqlQueryable } from '../sql/client.js';

/*
 * Writing a policy's history (policy_versions, migration 0009): the one row each Set, Delete
 * and Restore adds, for vaults (ops/policies.ts) and cards (ops/card-policies.ts) alike.
 * Reading and restoring it: ops/policy-versions.ts.
 */

/** Who made a change, and what a restore put back. */
export interface PolicyChange {
  /** The API key's id (never the key); null for a change made without one. */
  readonly keyId: string | null;
  /** The version a restore put back. */
  readonly restoredFrom?: number;
}

export const CHANGE_WITHOUT_KEY: PolicyChange = { keyId: null };

/**
 * Adds a policy change to its owner's history, in the transaction of the change (which holds
 * the owner's vault locked, so versions are added in order). A version is never written twice
 * (the primary key): the caller took it from the policy row it just changed.
 */
export async function recordPolicyVersion(
  tx: SqlQueryable,
  ownerId: string,
  version: number,
  document: PolicyDocument | null,
  change: PolicyChange,
  nowMs: number,
): Promise<void> {
  const kind = document === null ? 'delete' : change.restoredFrom === undefined ? 'set' : 'restore';
  await tx.query(
    `INSERT INTO policy_versions (owner_id, version, change, document, restored_from, key_id, created_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7)`,
    [
      ownerId,
      version,
      kind,
      document === null ? null : JSON.stringify(document),
      change.restoredFrom ?? null,
      change.keyId,
      new Date(nowMs),
    ],
  );
}
