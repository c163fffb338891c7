import {
  assert,
  type Decimal,
  type FiatAmount,
  type RateRecord,
  type TransactionRecord,
} from '../core/index.js';
import { changeSpend, spendDayOf, spendKeys } from './spend.js';
import type { SqlQueryable } from './sql/client.js';
import { oneRow } from './sql/one-row.js';
import { inPipeline } from './sql/pipeline.js';

/*
 * Pieces the lifecycle operations share (contract v1.2, section 16; ops/authorizations.ts and
 * ops/clearing.ts): a transaction's timeline of messages, and the spend a posting adds.
 */

/**
 * How an amount in a billing currency is read: to ISO 4217's finest minor units (3), as the
 * store keeps no table of them (the HTTP edge read the authorization's own billing amount to
 * its currency's).
 */
export const BILLING_READ = {
  code: 'billing',
  name: 'billing currency',
  network: null,
  scale: 3,
} as const;

/** The kinds of lifecycle message a transaction's timeline holds (transaction_messages). */
export type MessageKind =
  'authorization' | 'increment' | 'capture' | 'reversal' | 'expiry' | 'advice' | 'refund';

export interface LifecycleMessage {
  readonly transactionId: string;
  readonly kind: MessageKind;
  /** What the message moved: captured, released, raised or refunded. */
  readonly amount: Decimal;
  /** What the transaction still held after it. */
  readonly holdAfter: Decimal;
  readonly networkTransactionId: string | null;
  readonly nowMs: number;
  /**
   * What the message decided, kept for repeats and the timeline (transaction_messages.decision):
   * an increment's decision; an advice's, with the decision it overrode.
   */
  readonly decision?: object;
  /**
   * A capture converted at a price (migration 0023): what it captured in the billing currency
   * and the rate it used, which may differ from the authorization's.
   */
  readonly converted?: { readonly billing: FiatAmount; readonly rate: RateRecord };
}

/** Appends one message to its transaction's timeline, in the caller's transaction. */
export async function recordMessage(tx: SqlQueryable, message: LifecycleMessage): Promise<void> {
  assert(
    !message.amount.isNegative() && !message.holdAfter.isNegative(),
    'a message moves and leaves non-negative amounts',
  );
  await tx.query(
    `INSERT INTO transaction_messages (transaction_id, kind, amount, hold_after, network_transaction_id, created_at, decision,
                                       billing_amount, billing_currency, rate)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
    [
      message.transactionId,
      message.kind,
      message.amount.toFixed(),
      message.holdAfter.toFixed(),
      message.networkTransactionId,
      new Date(message.nowMs),
      message.decision === undefined ? null : JSON.stringify(message.decision),
      message.converted?.billing.amount.toFixed() ?? null,
      message.converted?.billing.currency ?? null,
      message.converted === undefined ? null : JSON.stringify(message.converted.rate),
    ],
  );
}

/** The keys a transaction's spend is counted under, once it has a spend day. */
export interface SpendCountKeys {
  readonly day: string;
  readonly mcc: string | null;
}

/** A transaction whose spend keys were read under its lock (ops/authorizations.ts). */
export interface CountedTransaction {
  readonly id: string;
  readonly vaultId: string;
  readonly cardId: string | null;
  readonly counted: SpendCountKeys;
}

/**
 * What addPostedSpend is given for a transaction read under its lock: its keys when it has
 * them (nothing read again), else its id (the spend day is set and read back).
 */
export function postedSpendTarget(
  held: Pick<TransactionRecord, 'id' | 'vaultId' | 'cardId'>,
  counted: SpendCountKeys | null,
): string | CountedTransaction {
  return counted === null
    ? held.id
    : { id: held.id, vaultId: held.vaultId, cardId: held.cardId, counted };
}

/**
 * Adds a posting's spend to the counters a card transaction counts in (a capture above its
 * hold, a late capture, a force capture): the vault's, and the card's own while it has a
 * policy. A transaction without a spend day (never approved: a declined authorization the
 * network captured anyway, a force capture) is given today's, so later releases find the same
 * rows. Given a transaction whose keys are known (`CountedTransaction`), the counters change
 * in the first round trip, with nothing read. Needs: the vault locked (every writer of these
 * counters holds it).
 */
export async function addPostedSpend(
  tx: SqlQueryable,
  transaction: string | CountedTransaction,
  amountDelta: Decimal,
  countDelta: 0 | 1,
  nowMs: number,
): Promise<void> {
  assert(!amountDelta.isNegative(), 'posted spend only adds');
  if (amountDelta.isZero() && countDelta === 0) return;
  const row =
    typeof transaction === 'string'
      ? await setSpendDay(tx, transaction, nowMs)
      : {
          vault_id: transaction.vaultId,
          card_id: transaction.cardId,
          spend_day: transaction.counted.day,
          mcc: transaction.counted.mcc,
        };
  const change = { day: row.spend_day, mcc: row.mcc, amountDelta, countDelta };
  const cardId = row.card_id;
  if (cardId === null) {
    await changeSpend(tx, { vaultId: row.vault_id, ...change });
    return;
  }
  const { mccs, days } = spendKeys(change);
  await inPipeline(tx, () => [
    changeSpend(tx, { vaultId: row.vault_id, ...change }),
    tx.query(
      `INSERT INTO card_spend_counters (card_id, mcc, day, amount, count)
     SELECT $1, k.mcc, k.day::date, $4::numeric, $5::integer
     FROM unnest($2::text[], $3::text[]) AS k(mcc, day)
     WHERE EXISTS (SELECT 1 FROM card_policies p WHERE p.card_id = $1 AND p.document IS NOT NULL)
     ORDER BY k.mcc, k.day
     ON CONFLICT (card_id, mcc, day) DO UPDATE
       SET amount = card_spend_counters.amount + EXCLUDED.amount,
           count = card_spend_counters.count + EXCLUDED.count`,
      [cardId, mccs, days, amountDelta.toFixed(), countDelta],
    ),
  ]);
}

/** Gives a transaction today's spend day unless it has one; answers its spend keys. */
async function setSpendDay(
  tx: SqlQueryable,
  transactionId: string,
  nowMs: number,
): Promise<{ vault_id: string; card_id: string | null; spend_day: string; mcc: string | null }> {
  const { rows } = await tx.query<{
    vault_id: string;
    card_id: string | null;
    spend_day: string;
    mcc: string | null;
  }>(
    `UPDATE transactions SET spend_day = coalesce(spend_day, $2::date) WHERE id = $1
     RETURNING vault_id, card_id, spend_day::text AS spend_day, mcc`,
    [transactionId, spendDayOf(nowMs)],
  );
  return oneRow(rows, 'the spend day UPDATE');
}
