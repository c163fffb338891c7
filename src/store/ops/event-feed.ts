import { assert, type Scope } from '../../core/index.js';
import type { SqlQueryable } from '../sql/client.js';
import { OUTBOX_EVENT_COLUMNS, outboxEventOf, type OutboxEventRow } from './events.js';
import type { OutboxEvent } from '../port/webhooks.js';

/*
 * The live feed's read of the outbox (the console's stream of decisions, http/event-hub.ts):
 * committed events of some types after an id, in id order, of every account and mode that has
 * a subscriber at once, so that one read per tick serves every subscriber of a process. A
 * range of the primary key from a recent id: its cost follows the events since then, never
 * the table, and only the subscribed accounts' rows leave the database.
 */

/** The most rows one read returns. */
export const EVENT_FEED_ROWS_MAX = 1_000;

/** Accounts and modes one read asks for at most (a process's bound of streams). */
export const EVENT_FEED_SCOPES_MAX = 1_000;

/**
 * readEventsAfter: one read-only statement. In: an id (`evt_` and any prefix of one: events
 * after it), the event types wanted (at most 20), the accounts and modes wanted (1 to
 * EVENT_FEED_SCOPES_MAX), the rows wanted (1 to EVENT_FEED_ROWS_MAX). Out: those events in id
 * order. Fails: never by input (asserted).
 */
export async function readEventsAfter(
  tx: SqlQueryable,
  afterId: string,
  types: readonly string[],
  scopes: readonly Scope[],
  rowsMax: number,
): Promise<OutboxEvent[]> {
  assert(afterId.startsWith('evt_'), 'an event id or a prefix of one');
  assert(types.length > 0 && types.length <= 20, 'a bounded list of types');
  assert(scopes.length > 0 && scopes.length <= EVENT_FEED_SCOPES_MAX, 'a bounded list of scopes');
  assert(
    Number.isSafeInteger(rowsMax) && rowsMax > 0 && rowsMax <= EVENT_FEED_ROWS_MAX,
    'a bounded read',
  );
  const { rows } = await tx.query<OutboxEventRow>(
    `SELECT ${OUTBOX_EVENT_COLUMNS} FROM outbox_events
     WHERE id > $1 AND type = ANY($2)
       AND (account_id, mode) IN (SELECT * FROM unnest($3::text[], $4::text[]))
     ORDER BY id LIMIT $5`,
    [
      afterId,
      types,
      scopes.map((scope) => scope.accountId),
      scopes.map((scope) => scope.mode),
      rowsMax,
    ],
  );
  assert(rows.length <= rowsMax, 'the read is bounded');
  return rows.map(outboxEventOf);
}
