import type { Scope } from '../../core/index.js';

/*
 * Rows read by their primary key alone, their scope checked after the read. With the scope in
 * the WHERE clause (`id = $1 AND account_id = $2 AND mode = $3`), a planner working from young
 * statistics (a database filled since its last ANALYZE) rates an (account_id, mode, amount, id)
 * index as cheap as the primary key, and walking it reads every one of the account's rows: the
 * message bench saw 740 pages and 13 ms a capture. The primary key alone has no such choice.
 */

/** The columns a scope check needs. */
export interface ScopedRow {
  readonly account_id: string;
  readonly mode: string;
}

/** Whether a row read by its id is the scope's: another account's or mode's is not found. */
export const inScope = (row: ScopedRow, scope: Scope): boolean =>
  row.account_id === scope.accountId && row.mode === scope.mode;
