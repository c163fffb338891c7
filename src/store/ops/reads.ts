import {
  SpendgateError,
  type CardRecord,
  type Scope,
  type TransactionRecord,
  type TransferRecord,
} from '../../core/index.js';
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
import { inScope } from '../sql/scoped-row.js';

/**
 * The scope's row of `table` with this id, or the not-found refusal: another account's or
 * mode's row is not found either, so that existence is not leaked.
 */
export async function readScoped<Row extends object>(
  tx: SqlQueryable,
  read: { readonly table: string; readonly columns: string },
  scope: Scope,
  id: string,
  notFound: () => SpendgateError,
): Promise<Row> {
  // By the primary key alone, the scope checked here (sql/scoped-row.ts says why).
  const { rows } = await tx.query<Row & { scope_account_id: string; scope_mode: string }>(
    `SELECT ${read.columns}, account_id AS scope_account_id, mode AS scope_mode
     FROM ${read.table} WHERE id = $1`,
    [id],
  );
  const row = rows[0];
  if (row === undefined) throw notFound();
  if (!inScope({ account_id: row.scope_account_id, mode: row.scope_mode }, scope)) throw notFound();
  return row;
}

const shown = (id: string) => id.slice(0, 64);

/** getTransaction: one read. In: scope, id. Out: the scope's transaction. Fails: transaction_not_found. */
export async function getTransaction(
  tx: SqlQueryable,
  scope: Scope,
  id: string,
): Promise<TransactionRecord> {
  const row = await readScoped<TransactionRow>(
    tx,
    { table: 'transactions', columns: TRANSACTION_COLUMNS },
    scope,
    id,
    () => new SpendgateError('transaction_not_found', `No transaction ${shown(id)} exists.`, 'id'),
  );
  return transactionFromRow(row);
}

/** getTransfer: one read. In: scope, id. Out: the scope's transfer. Fails: transfer_not_found. */
export async function getTransfer(
  tx: SqlQueryable,
  scope: Scope,
  id: string,
): Promise<TransferRecord> {
  const row = await readScoped<TransferRow>(
    tx,
    { table: 'transfers', columns: TRANSFER_COLUMNS },
    scope,
    id,
    () => new SpendgateError('transfer_not_found', `No transfer ${shown(id)} exists.`, 'id'),
  );
  return transferFromRow(row);
}

/** getCard: one read. In: scope, id. Out: the scope's card (never its number). Fails: card_not_found. */
export async function getCard(tx: SqlQueryable, scope: Scope, id: string): Promise<CardRecord> {
  const row = await readScoped<CardRow>(
    tx,
    { table: 'cards', columns: CARD_COLUMNS },
    scope,
    id,
    () => new SpendgateError('card_not_found', `No card ${shown(id)} exists.`, 'id'),
  );
  return cardFromRow(row);
}
