import {
  assert,
  Decimal,
  isoDate,
  utcDayNumber,
  windowStartDay,
  type AggregateSpec,
  type SpendTotals,
} from '../core/index.js';
import type { SqlQueryable } from './sql/client.js';

/**
 * Spend counters (see the spend_counters table): what policies' limits and spend facts read.
 * Every approval adds to four rows (the day and all time, for all merchants and for its MCC);
 * every release (reverse, expiry, the unused part of a capture) takes the same rows back down.
 */
export const ALL_TIME_DAY = '0001-01-01';
const ALL_MERCHANTS = '';

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
 * The upsert of approvals, written once: parameters from `$first` on are parallel arrays of
 * vault ids, MCCs, days, amounts and counts, one element per counter row (each row once: an
 * upsert may not touch a row twice). Rows go in key order, so concurrent writers lock them in
 * the same order.
 */
export function spendUpsertManySql(first: number): string {
  const p = (offset: number) => `$${first + offset}`;
  return `INSERT INTO spend_counters (vault_id, mcc, day, amount, count)
     SELECT vault_id, mcc, day::date, amount::numeric, count
     FROM unnest(${p(0)}::text[], ${p(1)}::text[], ${p(2)}::text[], ${p(3)}::text[], ${p(4)}::integer[])
       AS k(vault_id, mcc, day, amount, count)
     ORDER BY vault_id, mcc, day
     ON CONFLICT (vault_id, mcc, day) DO UPDATE
       SET amount = spend_counters.amount + EXCLUDED.amount,
           count = spend_counters.count + EXCLUDED.count`;
}

export async function changeSpend(tx: SqlQueryable, change: SpendChange): Promise<void> {
  assert(Number.isSafeInteger(change.countDelta), 'count deltas are integers');
  const { mccs, days } = spendKeys(change);
  const params = [change.vaultId, mccs, days, change.amountDelta.toFixed(), change.countDelta];
  if (!change.amountDelta.isNegative() && change.countDelta >= 0) {
    await tx.query(spendUpsertManySql(1), [
      mccs.map(() => change.vaultId),
      mccs,
      days,
      mccs.map(() => change.amountDelta.toFixed()),
      mccs.map(() => change.countDelta),
    ]);
    return;
  }
  // A release takes back what an approval added, so its rows exist. (An upsert would not do:
  // PostgreSQL checks the negative candidate row against the CHECK before finding the conflict.)
  const { rowCount } = await tx.query(
    `UPDATE spend_counters c SET amount = c.amount + $4::numeric, count = c.count + $5::integer
     FROM unnest($2::text[], $3::text[]) AS k(mcc, day)
     WHERE c.vault_id = $1 AND c.mcc = k.mcc AND c.day = k.day::date`,
    params,
  );
  assert(rowCount === mccs.length, 'a release finds the counters its approval wrote');
}

/**
 * SQL select-list columns `s0`, `s1`, ... with the value of each spec for the vault `vaultRef`
 * names (a parameter or a column), appending their parameters to `params`. Each is a sum over
 * at most 366 daily rows (or one all-time row per MCC) found through the primary key.
 */
export function spendColumns(
  specs: readonly AggregateSpec[],
  nowMs: number,
  params: unknown[],
  vaultRef: string,
): string[] {
  return specs.map((spec, index) => {
    params.push(spec.merchantCategories ?? [ALL_MERCHANTS]);
    const mccParam = `$${params.length}`;
    let dayFilter: string;
    if (spec.interval === 'allTime') {
      dayFilter = `day = '${ALL_TIME_DAY}'`;
    } else {
      params.push(isoDate(windowStartDay(spec.interval, nowMs)), isoDate(utcDayNumber(nowMs)));
      dayFilter = `day >= $${params.length - 1}::date AND day <= $${params.length}::date`;
    }
    const measure = spec.measure === 'amount' ? 'amount' : 'count';
    return `(SELECT coalesce(sum(${measure}), 0)::text FROM spend_counters
             WHERE vault_id = ${vaultRef} AND mcc = ANY(${mccParam}::text[]) AND ${dayFilter}) AS s${index}`;
  });
}

/** Reads the `s<index>` columns of `spendColumns` into spend totals by key. */
export function spendTotalsFrom(
  specs: readonly AggregateSpec[],
  row: Readonly<Record<string, unknown>>,
): SpendTotals {
  const totals: Record<string, Decimal | number> = {};
  specs.forEach((spec, index) => {
    const value = row[`s${index}`];
    assert(typeof value === 'string', 'each aggregate column is read');
    totals[spec.key] = spec.measure === 'amount' ? new Decimal(value) : Number(value);
  });
  return totals;
}

/** The values of `specs` for a vault at `nowMs`, in one query. */
export async function readSpend(
  tx: SqlQueryable,
  vaultId: string,
  specs: readonly AggregateSpec[],
  nowMs: number,
): Promise<SpendTotals> {
  if (specs.length === 0) return {};
  const params: unknown[] = [vaultId];
  const columns = spendColumns(specs, nowMs, params, '$1');
  const { rows } = await tx.query<Record<string, string>>(`SELECT ${columns.join(', ')}`, params);
  const row = rows[0];
  assert(row !== undefined, 'a SELECT of scalars returns one row');
  return spendTotalsFrom(specs, row);
}
