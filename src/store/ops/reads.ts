import {
  SpendgateError,
  type CardRecord,
  type Scope,
  type TransactionRecord,
  type TransferRecord,
} from '../../core/index.js';
import type { StoreContext } from '../context.js';
import {
  CARD_COLUMNS,
  cardFromRow,
  TRANSACTION_COLUMNS,
  transactionFromRow,
  TRANSFER_COLUMNS,
  transferFromRow,
  type CardRow,
  type TransactionRow,
  type TransferRow,
} from '../rows.js';
import type { SqlQueryable } from '../sql/client.js';

/**
 * getTransaction: one read. In: scope, id. Out: the transaction of the scope's account.
 * Fails: transaction_not_found (also for another account's or mode's, so existence is not leaked).
 */
export async function getTransaction(
  _ctx: StoreContext,
  tx: SqlQueryable,
  scope: Scope,
  id: string,
): Promise<TransactionRecord> {
  const { rows } = await tx.query<TransactionRow>(
    `SELECT ${TRANSACTION_COLUMNS} FROM transactions WHERE id = $1 AND account_id = $2 AND mode = $3`,
    [id, scope.accountId, scope.mode],
  );
  const row = rows[0];
  if (row === undefined)
    throw new SpendgateError(
      'transaction_not_found',
      `No transaction ${id.slice(0, 64)} exists.`,
      'id',
    );
  return transactionFromRow(row);
}

/** getTransfer: one read. In: scope, id. Out: the scope's transfer. Fails: transfer_not_found. */
export async function getTransfer(
  _ctx: StoreContext,
  tx: SqlQueryable,
  scope: Scope,
  id: string,
): Promise<TransferRecord> {
  const { rows } = await tx.query<TransferRow>(
    `SELECT ${TRANSFER_COLUMNS} FROM transfers WHERE id = $1 AND account_id = $2 AND mode = $3`,
    [id, scope.accountId, scope.mode],
  );
  const row = rows[0];
  if (row === undefined)
    throw new SpendgateError('transfer_not_found', `No transfer ${id.slice(0, 64)} exists.`, 'id');
  return transferFromRow(row);
}

/** getCard: one read. In: scope, id. Out: the scope's card (never its number). Fails: card_not_found. */
export async function getCard(
  _ctx: StoreContext,
  tx: SqlQueryable,
  scope: Scope,
  id: string,
): Promise<CardRecord> {
  const { rows } = await tx.query<CardRow>(
    `SELECT ${CARD_COLUMNS} FROM cards WHERE id = $1 AND account_id = $2 AND mode = $3`,
    [id, scope.accountId, scope.mode],
  );
  const row = rows[0];
  if (row === undefined)
    throw new SpendgateError('card_not_found', `No card ${id.slice(0, 64)} exists.`, 'id');
  return cardFromRow(row);
}
