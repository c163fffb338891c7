import {
  assert,
  presentVault,
  SpendgateError,
  type Decimal,
  type CompiledPolicyCache,
  type HoldExpirySettings,
  type Pricing,
  type Scope,
  type TemplateLibrary,
  type VaultRecord,
} from '../core/index.js';
import type { Keyring } from './secrets/index.js';
import type { SqlClient, SqlQueryable } from './sql/client.js';
import { appendEvent } from './outbox.js';
import { VAULT_COLUMNS, vaultFromRow, type VaultRow } from './rows.js';

/** What every store operation works with. The clock is injected so tests can move time. */
export interface StoreContext {
  readonly client: SqlClient;
  readonly clock: () => number;
  /** The master keys: vaults' data keys, and the secrets that belong to no vault. */
  readonly keyring: Keyring;
  readonly policyCache: CompiledPolicyCache;
  readonly templates: TemplateLibrary;
  /** How long holds live by merchant category (contract v1.2, section 16); default 7 and 31 days. */
  readonly holdExpiry?: HoldExpirySettings;
  /** The price feeds' latest readings, their bounds and the SOL hold buffer; none: NO_PRICING. */
  readonly pricing?: Pricing;
}

export function vaultNotFound(vaultId: string, param = 'vaultId'): SpendgateError {
  return new SpendgateError('vault_not_found', `No vault ${vaultId.slice(0, 64)} exists.`, param);
}

/**
 * Reads a vault of `scope` and locks its row until the transaction ends. Every operation that
 * changes a vault's money locks it first, so its ledger, pending and the CHECK on available
 * balance are judged on the latest committed values.
 *
 * The lock is taken by writing the row (a new version of it, unchanged), not by SELECT ... FOR
 * UPDATE. Why: an authorize batch on known state takes no lock before its write
 * (authorize/one-trip.ts), and its write skips a vault whose row version is not the one it
 * decided on. A writer that held the lock while the batch's statement ran (a card policy
 * filled from the authorizations it could see, a policy changed) has then made a new version,
 * so the batch finds it stale and reads again, instead of committing beside that writer on
 * what it knew before. The new version is HOT (no indexed value changes) and these operations
 * are rare beside authorizations, which never come through here. The row lock is the UPDATE's
 * (FOR NO KEY UPDATE): it excludes every other holder of this lock and the authorize batch's
 * FOR UPDATE alike; only a foreign key's check on a row referring to the vault, which changes
 * nothing of it, no longer waits.
 */
export async function lockVault(
  tx: SqlQueryable,
  scope: Pick<Scope, 'mode'> & { readonly accountId: string | null },
  vaultId: string,
  param = 'vaultId',
): Promise<VaultRecord> {
  const { rows } = await tx.query<VaultRow>(
    `UPDATE vaults SET id = id
     WHERE id = $1 AND mode = $2 AND ($3::text IS NULL OR account_id = $3)
     RETURNING ${VAULT_COLUMNS}`,
    [vaultId, scope.mode, scope.accountId],
  );
  const row = rows[0];
  if (row === undefined) throw vaultNotFound(vaultId, param);
  return vaultFromRow(row);
}

/**
 * Locks one of the caller's vaults and another vault (of any account in the same mode: a
 * counterparty) in vault id order. Every operation that locks two vaults goes through here,
 * so no two of them ever wait on each other in opposite orders (a deadlock); the authorize
 * batch locks its vaults in the same order (ORDER BY v.id).
 */
export async function lockVaultPair(
  tx: SqlQueryable,
  scope: Scope,
  own: { readonly vaultId: string; readonly param: string },
  other: { readonly vaultId: string; readonly param: string },
): Promise<{ own: VaultRecord; other: VaultRecord }> {
  assert(own.vaultId !== other.vaultId, 'a pair is two vaults');
  const lockOwn = () => lockVault(tx, scope, own.vaultId, own.param);
  const lockOther = () =>
    lockVault(tx, { mode: scope.mode, accountId: null }, other.vaultId, other.param);
  if (own.vaultId < other.vaultId) {
    const ownVault = await lockOwn();
    return { own: ownVault, other: await lockOther() };
  }
  const otherVault = await lockOther();
  return { own: await lockOwn(), other: otherVault };
}

/** Refuses money movement on a vault that is not active (contract section 9). */
export function assertVaultActive(vault: VaultRecord, param = 'vaultId'): void {
  if (vault.status === 'frozen') {
    throw new SpendgateError('vault_frozen', `Vault ${vault.id} is frozen.`, param);
  }
  if (vault.status === 'closed') {
    throw new SpendgateError('vault_closed', `Vault ${vault.id} is closed.`, param);
  }
}

/** How a change of a vault's totals may treat its available balance. */
export interface TotalsChangeOptions {
  /**
   * A posting the card network mandates (a capture above its hold, a late capture, a force
   * capture, an approved advice): recorded even when it takes available below 0, which makes
   * the vault overdrawn. Every other change is a decision of spendgate's and never may.
   */
  readonly mandated?: boolean;
}

/**
 * Updates a locked vault's totals by deltas and returns the new record. A change of pending is
 * also journaled in hold_changes against `transactionId`, so past pending totals can be rebuilt.
 *
 * Every change of a vault's totals but the authorize batch's (which only raises pending, and
 * approves nothing on an overdrawn vault) passes through here, so this is the one place a vault
 * becomes overdrawn and is restored (contract v1.2, section 16): a mandated change that leaves
 * available below 0 sets overdrawn_at (vault.overdrawn); any change that leaves it at 0 or
 * above clears it (vault.restored), both events in this transaction. A change that is not
 * mandated and would take a vault that is not overdrawn below 0 is refused by the database
 * (vaults_available_negative_only_overdrawn, migration 0019).
 */
export async function changeVaultTotals(
  tx: SqlQueryable,
  vaultId: string,
  deltas: { readonly ledger: Decimal; readonly pending: Decimal },
  transactionId: string,
  nowMs: number,
  options: TotalsChangeOptions = {},
): Promise<VaultRecord> {
  const at = new Date(nowMs);
  // The hold journal's row (none when pending does not change) in the same statement: a
  // round trip's statement fewer for every message that moves a hold. A vault not found
  // fails the transaction all the same (below), the journal's row with it.
  const { rows } = await tx.query<VaultRow & { was_overdrawn_at: Date | null }>(
    `WITH journal AS (
       INSERT INTO hold_changes (vault_id, transaction_id, delta, created_at)
       SELECT $1, $6, $3::numeric, $4 WHERE $3::numeric <> 0
     )
     UPDATE vaults SET ledger = ledger + $2::numeric, pending = pending + $3::numeric, updated_at = $4,
       overdrawn_at = CASE WHEN ledger + $2::numeric - (pending + $3::numeric) >= 0 THEN NULL
                           WHEN $5::boolean THEN coalesce(overdrawn_at, $4)
                           ELSE overdrawn_at END
     FROM (SELECT overdrawn_at AS was_overdrawn_at FROM vaults WHERE id = $1) AS before
     WHERE id = $1 RETURNING ${VAULT_COLUMNS}, before.was_overdrawn_at`,
    [
      vaultId,
      deltas.ledger.toFixed(),
      deltas.pending.toFixed(),
      at,
      options.mandated === true,
      transactionId,
    ],
  );
  const row = rows[0];
  if (row === undefined) throw vaultNotFound(vaultId);
  const vault = vaultFromRow(row);
  const availableDelta = deltas.ledger.minus(deltas.pending);
  assert(
    options.mandated === true ||
      !availableDelta.isNegative() ||
      !vault.ledger.minus(vault.pending).isNegative(),
    'only a posting the network mandates takes available below 0',
  );
  const wasOverdrawn = row.was_overdrawn_at !== null;
  const isOverdrawn = row.overdrawn_at !== null;
  if (wasOverdrawn !== isOverdrawn) {
    const scope = { accountId: vault.accountId, mode: vault.mode };
    const type = isOverdrawn ? 'vault.overdrawn' : 'vault.restored';
    await appendEvent(tx, scope, type, presentVault(vault), nowMs);
  }
  return vault;
}

/** The wrapped data key of a vault (read inside the caller's transaction). */
export async function vaultDataKey(tx: SqlQueryable, vaultId: string): Promise<string> {
  const { rows } = await tx.query<{ data_key_wrapped: string }>(
    'SELECT data_key_wrapped FROM vaults WHERE id = $1',
    [vaultId],
  );
  const wrapped = rows[0]?.data_key_wrapped;
  assert(wrapped !== undefined, 'a vault has a data key');
  return wrapped;
}
