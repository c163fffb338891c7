import {
  aggregateSpec,
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

export async function changeSpend(tx: SqlQueryable, change: SpendChange): Promise<void> {
  assert(Number.isSafeInteger(change.countDelta), 'count deltas are integers');
  const mccs = change.mcc === null ? [ALL_MERCHANTS] : [ALL_MERCHANTS, change.mcc];
  const keys = mccs.flatMap((mcc) => [
    [mcc, change.day],
    [mcc, ALL_TIME_DAY],
  ]);
  const params = [
    change.vaultId,
    keys.map((key) => key[0]),
    keys.map((key) => key[1]),
    change.amountDelta.toFixed(),
    change.countDelta,
  ];
  if (!change.amountDelta.isNegative() && change.countDelta >= 0) {
    // One statement, rows in key order, so concurrent changes lock them in the same order.
    await tx.query(
      `INSERT INTO spend_counters (vault_id, mcc, day, amount, count)
       SELECT $1, mcc, day::date, $4::numeric, $5::integer
       FROM unnest($2::text[], $3::text[]) AS k(mcc, day)
       ORDER BY mcc, day
       ON CONFLICT (vault_id, mcc, day) DO UPDATE
         SET amount = spend_counters.amount + EXCLUDED.amount,
             count = spend_counters.count + EXCLUDED.count`,
      params,
    );
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
  assert(rowCount === keys.length, 'a release finds the counters its approval wrote');
}

/**
 * The values of `specs` for a vault at `nowMs`, in one query: each is a sum over at most 366
 * daily rows (or one all-time row per MCC) found through the primary key.
 */
export async function readSpend(
  tx: SqlQueryable,
  vaultId: string,
  specs: readonly AggregateSpec[],
  nowMs: number,
): Promise<SpendTotals> {
  if (specs.length === 0) return {};
  const params: unknown[] = [vaultId];
  const columns = specs.map((spec, index) => {
    params.push(spec.merchantCategories ?? [ALL_MERCHANTS]);
    const mccParam = `$${params.length}`;
    let dayFilter: string;
    if (spec.interval === 'allTime') {
      dayFilter = `day = '${ALL_TIME_DAY}'`;
    } else {
      params.push(isoDate(windowStartDay(spec.interval, nowMs)));
      dayFilter = `day >= $${params.length}::date AND day <= $${params.length + 1}::date`;
      params.push(isoDate(utcDayNumber(nowMs)));
    }
    const measure = spec.measure === 'amount' ? 'amount' : 'count';
    return `(SELECT coalesce(sum(${measure}), 0)::text FROM spend_counters
             WHERE vault_id = $1 AND mcc = ANY(${mccParam}::text[]) AND ${dayFilter}) AS s${index}`;
  });
  const { rows } = await tx.query<Record<string, string>>(`SELECT ${columns.join(', ')}`, params);
  const row = rows[0];
  assert(row !== undefined, 'a SELECT of scalars returns one row');
  const totals: Record<string, Decimal | number> = {};
  specs.forEach((spec, index) => {
    const value = row[`s${index}`] ?? '0';
    totals[spec.key] = spec.measure === 'amount' ? new Decimal(value) : Number(value);
  });
  return totals;
}

/** The counters' view for one vault, for tests and the invariant checker. */
export function allSpendSpecs(): AggregateSpec[] {
  return [aggregateSpec('amount', 'allTime', null), aggregateSpec('count', 'allTime', null)];
}
