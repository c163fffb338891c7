import { assert, type CurrencyCode, type Mode } from '../../core/index.js';
import type { StoreContext } from '../context.js';
import { depositAddressOf } from '../deposit-keys.js';
import type { SqlQueryable } from '../sql/client.js';
import {
  ADDRESS_BACKFILL_MAX,
  WATCH_BATCH_MAX,
  type WatchProgress,
  type WatchedAddress,
} from '../port/deposits.js';

/*
 * The deposit watcher's work list (deposit_watch, migration 0015): the addresses it follows,
 * each with its cursor, taken least recently scanned first in bounded batches.
 */

/** Starts watching a vault's deposit address; idempotent. */
export async function watchDepositAddress(
  tx: SqlQueryable,
  watched: { readonly vaultId: string; readonly address: string; readonly ownerAddress?: string },
): Promise<void> {
  await tx.query(
    `INSERT INTO deposit_watch (address, vault_id, owner_address) VALUES ($1, $2, $3)
     ON CONFLICT (address) DO NOTHING`,
    [watched.address, watched.vaultId, watched.ownerAddress ?? watched.address],
  );
}

/**
 * assignDepositAddresses: one transaction. Gives up to `batchMax` vaults made before deposit
 * addresses (deposit_address NULL) their address and their watch row. Out: how many.
 * Fails: nothing a client causes.
 */
export async function assignDepositAddresses(
  ctx: StoreContext,
  tx: SqlQueryable,
  batchMax: number,
): Promise<number> {
  assert(Number.isInteger(batchMax) && batchMax > 0 && batchMax <= ADDRESS_BACKFILL_MAX, 'bounded');
  const { rows } = await tx.query<{ id: string }>(
    `SELECT id FROM vaults WHERE deposit_address IS NULL ORDER BY id LIMIT $1 FOR UPDATE SKIP LOCKED`,
    [batchMax],
  );
  for (const { id } of rows) {
    const address = await depositAddressOf(ctx, tx, id);
    await tx.query('UPDATE vaults SET deposit_address = $2 WHERE id = $1', [id, address]);
    await watchDepositAddress(tx, { vaultId: id, address });
  }
  return rows.length;
}

/**
 * depositWatchBatch: one read. Up to `batchMax` watched addresses of open vaults, least
 * recently scanned first (never scanned before all).
 */
export async function depositWatchBatch(
  tx: SqlQueryable,
  batchMax: number,
): Promise<WatchedAddress[]> {
  assert(Number.isInteger(batchMax) && batchMax > 0 && batchMax <= WATCH_BATCH_MAX, 'bounded');
  const { rows } = await tx.query<{
    address: string;
    owner_address: string;
    vault_id: string;
    mode: Mode;
    currency: CurrencyCode;
    cursor_signature: string | null;
    walk_top_signature: string | null;
    walk_before_signature: string | null;
    scanned_at: Date | null;
  }>(
    `SELECT w.address, w.owner_address, w.vault_id, v.mode, v.currency, w.cursor_signature,
            w.walk_top_signature, w.walk_before_signature, w.scanned_at
     FROM deposit_watch w JOIN vaults v ON v.id = w.vault_id
     ORDER BY w.scanned_at NULLS FIRST, w.address LIMIT $1`,
    [batchMax],
  );
  return rows.map((row) => ({
    address: row.address,
    ownerAddress: row.owner_address,
    vaultId: row.vault_id,
    mode: row.mode,
    currency: row.currency,
    cursorSignature: row.cursor_signature,
    walkTopSignature: row.walk_top_signature,
    walkBeforeSignature: row.walk_before_signature,
    fresh: row.scanned_at === null,
  }));
}

/**
 * advanceDepositWatch: one statement. Records where the scan of `address` got to, once every
 * transfer it read is recorded. Conditional on the cursor it started from, so a slower watcher
 * never moves a cursor back. Out: whether it moved.
 */
export async function advanceDepositWatch(
  ctx: StoreContext,
  tx: SqlQueryable,
  address: string,
  from: WatchProgress,
  to: WatchProgress,
): Promise<boolean> {
  assert(
    (to.walkTopSignature === null) === (to.walkBeforeSignature === null),
    'a walk has a top and a position',
  );
  const { rowCount } = await tx.query(
    `UPDATE deposit_watch SET cursor_signature = $2, walk_top_signature = $3,
       walk_before_signature = $4, scanned_at = $5
     WHERE address = $1 AND cursor_signature IS NOT DISTINCT FROM $6
       AND walk_before_signature IS NOT DISTINCT FROM $7`,
    [
      address,
      to.cursorSignature,
      to.walkTopSignature,
      to.walkBeforeSignature,
      new Date(ctx.clock()),
      from.cursorSignature,
      from.walkBeforeSignature,
    ],
  );
  return rowCount === 1;
}
