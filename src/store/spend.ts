import { assert, isoDate, utcDayNumber, type Decimal } from '../core/index.js';
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
