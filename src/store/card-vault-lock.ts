import {
  assert,
  SpendgateError,
  type CardStatus,
  type Scope,
  type VaultRecord,
} from '../core/index.js';
import { vaultFromRow, type VaultRow } from './rows.js';
import type { SqlQueryable } from './sql/client.js';
import { inPipeline } from './sql/pipeline.js';
import { inScope, type ScopedRow } from './sql/scoped-row.js';
import { lockedVaultSql, vaultKey } from './vault-lock-sql.js';

/** A card's vault, locked, with what the card's row says and what was read behind the lock. */
export interface LockedCardVault<Read> {
  readonly vault: VaultRecord;
  readonly billingCurrency: string;
  readonly cardStatus: CardStatus;
  /** What `readBehind` answered, read once the lock was taken. */
  readonly read: Read;
}

/**
 * lockCardVault: the vault of a card locked, for a network message named by its card (a
 * force capture, a refund, an advice), in one round trip (sql/pipeline.ts) with the card's
 * row and `readBehind`'s statement: the vault, found by the card's id in the locking statement
 * itself, is locked first, so what `readBehind` reads (the message recorded before under the
 * same network id) is read after any concurrent repeat on the card has committed. The card is
 * read by its primary key alone and its scope checked here (sql/scoped-row.ts); the vault is
 * locked only when it is the scope's. `readBehind` must send its one statement at once. In a
 * shared transaction (sql/shared-transaction.ts) a vault another transaction holds is skipped
 * and the message leaves the batch; the vault found is claimed for this member.
 * Fails: card_not_found (none, or another scope's).
 */
export async function lockCardVault<Read>(
  tx: SqlQueryable,
  scope: Scope,
  cardId: string,
  readBehind: () => Promise<Read>,
): Promise<LockedCardVault<Read>> {
  const [{ rows: cards }, { rows: vaults }, read] = await inPipeline(tx, () => [
    tx.query<ScopedRow & { vault_id: string; billing_currency: string; status: CardStatus }>(
      'SELECT account_id, mode, vault_id, billing_currency, status FROM cards WHERE id = $1',
      [cardId],
    ),
    tx.query<VaultRow>(lockedVaultSql(tx, 'SELECT vault_id FROM cards WHERE id = $1'), [
      cardId,
      scope.accountId,
      scope.mode,
    ]),
    readBehind(),
  ]);
  const card = cards[0];
  const vaultRow = vaults[0];
  const found = card !== undefined && inScope(card, scope);
  // In a shared transaction, a vault not returned for a card found was skipped, locked by
  // another transaction: run alone.
  if (found && vaultRow === undefined) tx.batch?.leave();
  if (!found || vaultRow === undefined) {
    throw new SpendgateError('card_not_found', `No card ${cardId.slice(0, 64)} exists.`, 'cardId');
  }
  tx.batch?.claim(vaultKey(vaultRow.id));
  const vault = vaultFromRow(vaultRow);
  assert(vault.id === card.vault_id, "the vault locked is the card's");
  return { vault, billingCurrency: card.billing_currency, cardStatus: card.status, read };
}
