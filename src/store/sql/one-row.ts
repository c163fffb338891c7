import { assert } from '../../core/index.js';

/**
 * The one row of a statement that answers exactly one: an INSERT or UPDATE ... RETURNING of one
 * row, a SELECT by primary key of a row the transaction holds locked, a SELECT of aggregates.
 * Any other count is a bug, so it is asserted rather than cast; `what` names the statement in
 * the failed assertion.
 */
export function oneRow<Row>(rows: readonly Row[], what: string): Row {
  const row = rows[0];
  assert(
    rows.length === 1 && row !== undefined,
    `${what} answers exactly one row (answered ${rows.length})`,
  );
  return row;
}
