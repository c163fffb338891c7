import {
  Decimal,
  type RateRecord,
  type Scope,
  type TransactionRecord,
  ZERO,
} from '../../core/index.js';
import type { SqlQueryable } from '../sql/client.js';
import { getTransaction } from './reads.js';
import type { Timeline, TimelineEntry, TimelineKind } from '../port/authorizations.js';

/*
 * A transaction's timeline (contract v1.2, section 16; the console's transaction view): every
 * lifecycle message in the order it arrived, with what it moved and the hold it left.
 *
 * The authorize path writes no message row (one more INSERT per decision on the hottest path,
 * for a view read a thousand times less often): the opening decision is read back from the
 * transaction itself. Every later message (increment, capture, reversal, expiry, advice,
 * refund) has its row in transaction_messages, written in the same database transaction as
 * the change it describes.
 */

/** The most messages one timeline shows; a transaction with more says so (`truncated`). */
export const TIMELINE_MESSAGES_MAX = 500;

/** An advice's record of the decision it overrode (advice.ts); null when it made the record. */
interface Overrode {
  approved: boolean;
  amount: string;
}

interface MessageRow {
  kind: Exclude<TimelineKind, 'authorization'>;
  amount: string;
  hold_after: string;
  network_transaction_id: string | null;
  decision: { approved: boolean; overrode?: Overrode | null } | null;
  created_at: Date;
  billing_amount: string | null;
  billing_currency: string | null;
  rate: RateRecord | null;
}

/**
 * transactionTimeline: two reads.
 * In: scope, transaction id.  Out: the transaction and its messages, oldest first, at most
 *   TIMELINE_MESSAGES_MAX.  Fails: transaction_not_found (also for another scope's id).
 */
export async function transactionTimeline(
  tx: SqlQueryable,
  scope: Scope,
  transactionId: string,
): Promise<Timeline> {
  const transaction = await getTransaction(tx, scope, transactionId);
  const { rows } = await tx.query<MessageRow>(
    `SELECT kind, amount::text, hold_after::text, network_transaction_id, decision, created_at,
            billing_amount::text, billing_currency, rate
     FROM transaction_messages WHERE transaction_id = $1 ORDER BY id LIMIT $2`,
    [transaction.id, TIMELINE_MESSAGES_MAX + 1],
  );
  const truncated = rows.length > TIMELINE_MESSAGES_MAX;
  const shown = rows.slice(0, TIMELINE_MESSAGES_MAX);
  const messages = shown.map(entryOf);
  const opening = openingEntry(transaction, shown, messages);
  return {
    transaction,
    entries: opening === null ? messages : [opening, ...messages],
    truncated,
  };
}

function entryOf(row: MessageRow): TimelineEntry {
  return {
    kind: row.kind,
    amount: new Decimal(row.amount),
    holdAfter: new Decimal(row.hold_after),
    approved: row.decision?.approved ?? null,
    networkTransactionId: row.network_transaction_id,
    atMs: row.created_at.getTime(),
    billing:
      row.billing_amount === null || row.billing_currency === null
        ? null
        : { amount: new Decimal(row.billing_amount), currency: row.billing_currency },
    rate: row.rate,
  };
}

/**
 * The decision that opened a card authorization, read back from the transaction: its amount
 * less the approved increments that raised it since. An advice that overrode that decision
 * kept it (its `overrode`), since the transaction now says what the network decided. None for
 * a force capture or a refund (their first message is their own row), nor for an
 * authorization an advice created (the advice's row is its opening).
 */
function openingEntry(
  transaction: TransactionRecord,
  rows: readonly MessageRow[],
  messages: readonly TimelineEntry[],
): TimelineEntry | null {
  if (transaction.type !== 'card_authorization') return null;
  const adviceAt = rows.findIndex((row) => row.kind === 'advice');
  const advice = rows[adviceAt];
  const overrode = advice?.decision?.overrode;
  if (adviceAt === 0 && overrode === null) return null;
  const before =
    overrode === undefined || overrode === null ? messages : messages.slice(0, adviceAt);
  const raised = before
    .filter((entry) => entry.kind === 'increment' && entry.approved === true)
    .reduce((sum, entry) => sum.plus(entry.amount), ZERO);
  const opened =
    overrode === undefined || overrode === null
      ? { approved: transaction.declineCode === null, amount: transaction.amount }
      : { approved: overrode.approved, amount: new Decimal(overrode.amount) };
  const amount = opened.amount.minus(raised);
  return {
    kind: 'authorization',
    amount,
    holdAfter: opened.approved ? amount : ZERO,
    approved: opened.approved,
    networkTransactionId: transaction.networkTransactionId,
    atMs: transaction.createdAtMs,
    billing: null,
    rate: null,
  };
}
