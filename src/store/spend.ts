import {
  assert,
  countedBilling,
  isoDate,
  utcDayNumber,
  type Decimal,
  type TransactionRecord,
} from '../core/index.js';
import type { SqlQueryable } from './sql/client.js';
import { SqlParams } from './sql/params.js';

/*
 * Spend counters (see the spend_counters table): what policies' limits and spend facts read.
 * Every approval adds to four rows (the day and all time, for all merchants and for its MCC);
 * every release (reverse, expiry, the unused part of a capture) takes the same rows back down.
 * This module writes them; spend-window.ts reads and sums them.
 */

export const ALL_TIME_DAY = '0001-01-01';

/**
 * A table of spend counters and the column naming whose they are: a vault's (every approval
 * and release), or a card's own (card_spend_counters, kept only while the card has a policy:
 * ops/card-policies.ts). Both have the same rows and are summed by the same function.
 */
export interface SpendTable {
  readonly table: 'spend_counters' | 'card_spend_counters';
  readonly owner: 'vault_id' | 'card_id';
}
export const VAULT_SPEND: SpendTable = { table: 'spend_counters', owner: 'vault_id' };
export const CARD_SPEND: SpendTable = { table: 'card_spend_counters', owner: 'card_id' };
/** The MCC of the rows that count spend at every merchant. */
export const ALL_MERCHANTS = '';

/*
 * Billing spend (issue 35): limits written in a billing currency count the billing amounts of
 * approvals, in rows of the same tables whose `mcc` names the currency: `USD` for every
 * merchant, `USD:5812` for one MCC. No MCC is a currency code (MCCs are four digits), so the
 * two kinds of row never meet, and every reader and writer of counter rows (the window sum,
 * the batch upsert, retention) handles them as they are. Their `count` stays 0: a count limit
 * counts approvals in the asset's rows.
 */

/** The counter key of billing spend in `currency`, at every merchant or at `mcc`. */
export function billingMcc(currency: string, mcc: string | null): string {
  return mcc === null || mcc === ALL_MERCHANTS ? currency : `${currency}:${mcc}`;
}

/** The rows a billing amount in `currency` at `mcc` on `day` is counted in. */
export function billingSpendKeys(
  currency: string,
  day: string,
  mcc: string | null,
): { mccs: string[]; days: string[] } {
  const keys = spendKeys({ day, mcc });
  return { mccs: keys.mccs.map((key) => billingMcc(currency, key)), days: keys.days };
}

export interface SpendChange {
  readonly vaultId: string;
  /** The UTC day of the original authorization (`YYYY-MM-DD`): releases hit the same rows. */
  readonly day: string;
  readonly mcc: string | null;
  readonly amountDelta: Decimal;
  readonly countDelta: number;
}

export function spendDayOf(nowMs: number): string {
  return isoDate(utcDayNumber(nowMs));
}

/** The counter rows a change touches, as parallel (mcc, day) arrays in lock order. */
export function spendKeys(change: Pick<SpendChange, 'day' | 'mcc'>): {
  mccs: string[];
  days: string[];
} {
  const mccs = change.mcc === null ? [ALL_MERCHANTS] : [ALL_MERCHANTS, change.mcc];
  const keys = mccs.flatMap((mcc) => [
    [mcc, change.day],
    [mcc, ALL_TIME_DAY],
  ]);
  return { mccs: keys.map((key) => key[0] as string), days: keys.map((key) => key[1] as string) };
}

/**
 * Adds what one approval adds to its owner's counter rows (its amount and one count in the
 * asset's rows; its billing amount, when it counts one, in the billing rows) to `deltas`, by
 * row: an upsert may not touch a row twice, however many approvals of a batch touch it.
 */
export function addApprovalDeltas(
  deltas: Map<string, CounterRowDelta>,
  ownerId: string,
  approval: {
    readonly amount: Decimal;
    readonly mcc: string | null;
    readonly billing: { readonly amount: Decimal; readonly currency: string } | undefined;
  },
  day: string,
): void {
  const add = (keys: { mccs: string[]; days: string[] }, amount: Decimal, count: number) => {
    keys.mccs.forEach((mcc, index) => {
      const rowDay = keys.days[index] as string;
      const key = `${ownerId}|${mcc}|${rowDay}`;
      const delta = deltas.get(key);
      deltas.set(key, {
        ownerId,
        mcc,
        day: rowDay,
        amount: delta === undefined ? amount : delta.amount.plus(amount),
        count: (delta?.count ?? 0) + count,
      });
    });
  };
  add(spendKeys({ day, mcc: approval.mcc }), approval.amount, 1);
  const billing = approval.billing;
  if (billing !== undefined)
    add(billingSpendKeys(billing.currency, day, approval.mcc), billing.amount, 0);
}

/** An approval as the counters count it: amount, MCC, and billing amount (issue 35). */
export function approvalOf(
  transaction: TransactionRecord,
): Parameters<typeof addApprovalDeltas>[2] {
  return {
    amount: transaction.amount,
    mcc: transaction.merchant?.mcc ?? null,
    billing: billingCountedOf(transaction),
  };
}

/** The billing amount an approval counts in billing-currency limits, if any (countedBilling). */
export function billingCountedOf(
  transaction: TransactionRecord,
): { amount: Decimal; currency: string } | undefined {
  const billing = transaction.lifecycle?.billing;
  return billing == null ? undefined : countedBilling(billing, transaction.currency);
}

/** What one upsert adds to one counter row. */
export interface SpendRowDelta {
  readonly vaultId: string;
  readonly mcc: string;
  readonly day: string;
  readonly amount: Decimal;
  readonly count: number;
}

/** What one upsert adds to one counter row of a `SpendTable`, whose owner `ownerId` names. */
export interface CounterRowDelta {
  readonly ownerId: string;
  readonly mcc: string;
  readonly day: string;
  readonly amount: Decimal;
  readonly count: number;
}

/**
 * The upsert of approvals, written once, binding its rows in `params`: one row per counter
 * (each once: an upsert may not touch a row twice). Rows go in key order, so concurrent
 * writers lock them in the same order.
 */
export function spendUpsertManySql(params: SqlParams, deltas: readonly SpendRowDelta[]): string {
  return counterUpsertSql(
    params,
    VAULT_SPEND,
    deltas.map(({ vaultId, mcc, day, amount, count }) => ({
      ownerId: vaultId,
      mcc,
      day,
      amount,
      count,
    })),
  );
}

/** spendUpsertManySql on any `SpendTable` (the table and column names are constants). */
export function counterUpsertSql(
  params: SqlParams,
  target: SpendTable,
  deltas: readonly CounterRowDelta[],
): string {
  const { table, owner } = target;
  const rows = params.unnest('k', {
    owner_id: params.texts(deltas.map((delta) => delta.ownerId)),
    mcc: params.texts(deltas.map((delta) => delta.mcc)),
    day: params.texts(deltas.map((delta) => delta.day)),
    amount: params.texts(deltas.map((delta) => delta.amount.toFixed())),
    count: params.integers(deltas.map((delta) => delta.count)),
  });
  return `INSERT INTO ${table} (${owner}, mcc, day, amount, count)
     SELECT owner_id, mcc, day::date, amount::numeric, count FROM ${rows}
     ORDER BY owner_id, mcc, day
     ON CONFLICT (${owner}, mcc, day) DO UPDATE
       SET amount = ${table}.amount + EXCLUDED.amount,
           count = ${table}.count + EXCLUDED.count`;
}

export async function changeSpend(tx: SqlQueryable, change: SpendChange): Promise<void> {
  assert(Number.isSafeInteger(change.countDelta), 'count deltas are integers');
  const { mccs, days } = spendKeys(change);
  if (!change.amountDelta.isNegative() && change.countDelta >= 0) {
    const upsert = new SqlParams();
    const deltas = mccs.map((mcc, index) => ({
      vaultId: change.vaultId,
      mcc,
      day: days[index] as string,
      amount: change.amountDelta,
      count: change.countDelta,
    }));
    await tx.query(spendUpsertManySql(upsert, deltas), upsert.values);
    return;
  }
  // A release takes back what an approval added, so its rows exist. (An upsert would not do:
  // PostgreSQL checks the negative candidate row against the CHECK before finding the conflict.)
  const { rowCount } = await tx.query(
    `UPDATE spend_counters c SET amount = c.amount + $4::numeric, count = c.count + $5::integer
     FROM unnest($2::text[], $3::text[]) AS k(mcc, day)
     WHERE c.vault_id = $1 AND c.mcc = k.mcc AND c.day = k.day::date`,
    [change.vaultId, mccs, days, change.amountDelta.toFixed(), change.countDelta],
  );
  assert(rowCount === mccs.length, 'a release finds the counters its approval wrote');
}
