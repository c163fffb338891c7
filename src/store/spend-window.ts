import {
  assert,
  Decimal,
  isoDate,
  utcDayNumber,
  windowStartDay,
  ZERO,
  type AggregateSpec,
  type SpendTotals,
} from '../core/index.js';
import type { SqlQueryable } from './sql/client.js';
import { SqlParams } from './sql/params.js';
import { ALL_MERCHANTS, ALL_TIME_DAY, spendKeys } from './spend.js';

/**
 * The counter rows some policies' aggregates sum over, together: every MCC they name (and the
 * all-merchants rows), the days from the earliest window start to today, and the all-time
 * rows. A sum of at most 366 days per MCC, read through the primary key.
 */
export interface SpendWindow {
  readonly mccs: readonly string[];
  readonly firstDay: string;
  readonly lastDay: string;
}

export function spendWindowOf(
  aggregateLists: readonly (readonly AggregateSpec[])[],
  nowMs: number,
): SpendWindow {
  const today = utcDayNumber(nowMs);
  let firstDay = today;
  const mccs = new Set<string>([ALL_MERCHANTS]);
  for (const aggregates of aggregateLists) {
    for (const spec of aggregates) {
      if (spec.interval !== 'allTime')
        firstDay = Math.min(firstDay, windowStartDay(spec.interval, nowMs));
      for (const mcc of spec.merchantCategories ?? []) mccs.add(mcc);
    }
  }
  assert(today - firstDay <= 365, 'a window is at most a year');
  return { mccs: [...mccs], firstDay: isoDate(firstDay), lastDay: isoDate(today) };
}

/** The condition on spend_counters of the rows of `vaultIds` in `window`. */
export function spendWindowWhere(
  params: SqlParams,
  vaultIds: readonly string[],
  window: SpendWindow,
): string {
  const first = params.value(window.firstDay, 'date');
  const last = params.value(window.lastDay, 'date');
  return `vault_id = ANY(${params.texts(vaultIds)}) AND mcc = ANY(${params.texts(window.mccs)})
       AND ((day >= ${first} AND day <= ${last}) OR day = '${ALL_TIME_DAY}')`;
}

/** A spend counter row as read, amounts as the database's text. */
export interface SpendCounterRow {
  readonly vault_id: string;
  readonly mcc: string;
  readonly day: string;
  readonly amount: string;
  readonly count: number;
}

interface CounterRow {
  readonly mcc: string;
  readonly day: string;
  amount: Decimal;
  count: number;
}

/**
 * The counter rows of one vault in memory and the one sum over them that every spend
 * aggregate is, so that Simulate Policy, external transfers and the authorize batch (whose
 * approvals add to the rows as it decides) cannot disagree on a window: simulate exists to
 * predict authorize.
 */
export class SpendCounters {
  /** By `mcc|day`. */
  readonly #rows = new Map<string, CounterRow>();

  /** Adds to the row (mcc, day): a row read, or an approval the database has not seen yet. */
  add(mcc: string, day: string, amount: Decimal, count: number): void {
    assert(Number.isSafeInteger(count), 'a count is an integer');
    const key = `${mcc}|${day}`;
    let row = this.#rows.get(key);
    if (row === undefined) {
      row = { mcc, day, amount: ZERO, count: 0 };
      this.#rows.set(key, row);
    }
    row.amount = row.amount.plus(amount);
    row.count += count;
    assert(!row.amount.isNegative() && row.count >= 0, 'a counter never goes below zero');
  }

  /** An approval of `amount` at `mcc` on `day`: the rows changeSpend adds it to. */
  addApproval(day: string, mcc: string | null, amount: Decimal): void {
    const { mccs, days } = spendKeys({ day, mcc });
    mccs.forEach((rowMcc, index) => {
      this.add(rowMcc, days[index] as string, amount, 1);
    });
  }

  /** The value of each spec at `nowMs`, by key: the sum of the rows in its window. */
  totals(specs: readonly AggregateSpec[], nowMs: number): SpendTotals {
    const today = isoDate(utcDayNumber(nowMs));
    const totals: Record<string, Decimal | number> = {};
    for (const spec of specs) {
      const mccs = spec.merchantCategories ?? [ALL_MERCHANTS];
      const allTime = spec.interval === 'allTime';
      const first = allTime ? ALL_TIME_DAY : isoDate(windowStartDay(spec.interval, nowMs));
      const last = allTime ? ALL_TIME_DAY : today;
      let amount = ZERO;
      let count = 0;
      for (const row of this.#rows.values()) {
        // Day strings compare as dates; the all-time row sorts before every real day.
        if (row.day < first || row.day > last || !mccs.includes(row.mcc)) continue;
        if (spec.measure === 'amount') amount = amount.plus(row.amount);
        else count += row.count;
      }
      totals[spec.key] = spec.measure === 'amount' ? amount : count;
    }
    return totals;
  }
}

/** Puts counter rows into the counters of their vaults. */
function addCounterRows(
  counters: ReadonlyMap<string, SpendCounters>,
  rows: Iterable<SpendCounterRow>,
): void {
  for (const row of rows) {
    const vaultCounters = counters.get(row.vault_id);
    assert(vaultCounters !== undefined, 'a row read is of a vault asked for');
    vaultCounters.add(row.mcc, row.day, new Decimal(row.amount), row.count);
  }
}

/** The counter rows of `window` for each of `vaultIds` (none read: empty), in one query. */
export async function readSpendCounters(
  tx: SqlQueryable,
  vaultIds: readonly string[],
  window: SpendWindow,
): Promise<Map<string, SpendCounters>> {
  const counters = new Map(vaultIds.map((vaultId) => [vaultId, new SpendCounters()]));
  if (vaultIds.length === 0) return counters;
  const params = new SqlParams();
  const { rows } = await tx.query<SpendCounterRow>(
    `SELECT vault_id, mcc, day::text AS day, amount::text AS amount, count FROM spend_counters
     WHERE ${spendWindowWhere(params, vaultIds, window)}`,
    params.values,
  );
  addCounterRows(counters, rows);
  return counters;
}

/** The values of `specs` for a vault at `nowMs`: its rows of their window, read and summed. */
export async function readSpend(
  tx: SqlQueryable,
  vaultId: string,
  specs: readonly AggregateSpec[],
  nowMs: number,
): Promise<SpendTotals> {
  if (specs.length === 0) return {};
  const counters = await readSpendCounters(tx, [vaultId], spendWindowOf([specs], nowMs));
  const vaultCounters = counters.get(vaultId);
  assert(vaultCounters !== undefined, 'every vault asked for has counters');
  return vaultCounters.totals(specs, nowMs);
}
