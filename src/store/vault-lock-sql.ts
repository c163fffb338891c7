import { VAULT_COLUMNS } from './rows.js';
import type { SqlQueryable } from './sql/client.js';

/*
 * The vault lock of a lifecycle message (lockAuthorization, lockCardVault), written once for
 * both ways a message runs: alone, it waits for a vault another transaction holds; in a shared
 * transaction (sql/shared-transaction.ts) it skips it, and the message leaves the batch to run
 * alone, so that a batch holding many vaults never waits for one more.
 */

/** The key a message claims for its vault in a shared transaction. */
export const vaultKey = (vaultId: string): string => `vault:${vaultId}`;

/** ` SKIP LOCKED` in a shared transaction, else nothing: a row lock's way to wait. */
export const skipLocked = (tx: SqlQueryable): string =>
  tx.batch === undefined ? '' : ' SKIP LOCKED';

/**
 * Locks the vault `vaultIdSql` names, when it is the scope's ($2 account, $3 mode), and
 * returns its row. Every writer that holds a vault's lock writes a new version of its row
 * (context.ts, lockVault): an UPDATE, which cannot skip a locked row, so in a shared
 * transaction the row is first locked by a SELECT that can.
 */
export function lockedVaultSql(tx: SqlQueryable, vaultIdSql: string): string {
  if (tx.batch === undefined) {
    return `UPDATE vaults SET id = id
       WHERE id = (${vaultIdSql}) AND account_id = $2 AND mode = $3
       RETURNING ${VAULT_COLUMNS}`;
  }
  return `WITH locked AS (
       SELECT id AS locked_id FROM vaults
       WHERE id = (${vaultIdSql}) AND account_id = $2 AND mode = $3
       FOR UPDATE SKIP LOCKED)
     UPDATE vaults SET id = id FROM locked WHERE id = locked.locked_id
     RETURNING ${VAULT_COLUMNS}`;
}
