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
import {
  ALL_MERCHANTS,
  ALL_TIME_DAY,
  billingMcc,
  billingSpendKeys,
  spendKeys,
  VAULT_SPEND,
  type SpendTable,
} from './spend.js';

/** A billing amount that billing-currency limits count (core countedBilling). */
export interface CountedBilling {
  readonly amount: Decimal;
  readonly currency: string;
}

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

/** The counter keys a spec sums: its MCCs (or all merchants), as billing keys for a currency. */
export function specMccs(spec: AggregateSpec): readonly string[] {
  const mccs = spec.merchantCategories ?? [ALL_MERCHANTS];
  return spec.currency === null ? mccs : mccs.map((mcc) => billingMcc(spec.currency ?? '', mcc));
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
      for (const mcc of specMccs(spec)) mccs.add(mcc);
    }
  }
  assert(today - firstDay <= 365, 'a window is at most a year');
  // The two ranges of spendWindowRows must not meet: the all-time day is long before any.
  assert(isoDate(firstDay) > ALL_TIME_DAY, 'a window starts after the all-time day');
  return { mccs: [...mccs], firstDay: isoDate(firstDay), lastDay: isoDate(today) };
}

/**
 * The counter rows of `ownerIds` (vaults, or cards) in `window`, as a FROM item: columns
 * `w.owner_id`, `c.mcc`, `c.day`, `c.amount`, `c.count`.
 *
 * Why a lateral join and two ranges rather than one WHERE with an OR: each owner's rows are
 * then read through the primary key (owner, mcc, day), two ranges per MCC, whatever the
 * planner thinks of the table. With the condition written as one WHERE, the generic plan the
 * hot path prepares chose the retention index on `day` instead and filtered every owner's
 * rows of the window: a read that grew with the number of vaults, not with the batch. The
 * OFFSET 0 keeps the planner from flattening the lateral subquery into a join it could answer
 * with a scan of the table.
 */
export function spendWindowRows(
  params: SqlParams,
  ownerIds: readonly string[],
  window: SpendWindow,
  target: SpendTable = VAULT_SPEND,
): string {
  const owners = params.texts(ownerIds);
  const mccs = params.texts(window.mccs);
  const first = params.value(window.firstDay, 'date');
  const last = params.value(window.lastDay, 'date');
  const columns = 'mcc, day, amount, count';
  return `unnest(${owners}) AS w(owner_id) CROSS JOIN LATERAL (
       SELECT ${columns} FROM ${target.table}
       WHERE ${target.owner} = w.owner_id AND mcc = ANY(${mccs}) AND day >= ${first} AND day <= ${last}
       UNION ALL
       SELECT ${columns} FROM ${target.table}
       WHERE ${target.owner} = w.owner_id AND mcc = ANY(${mccs}) AND day = '${ALL_TIME_DAY}'
       OFFSET 0
     ) AS c`;
}

/** A spend counter row as read, amounts as the database's text; `owner_id`: vault or card. */
export interface SpendCounterRow {
  readonly owner_id: string;
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

  /** Rows held: what the counters cost in memory. */
  get rowCount(): number {
    return this.#rows.size;
  }

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

  /**
   * An approval's billing amount (issue 35): the rows billingSpendKeys names, count 0. Nothing
   * for an approval with no billing amount to count.
   */
  addBilling(day: string, mcc: string | null, billing: CountedBilling | undefined): void {
    if (billing === undefined) return;
    const { mccs, days } = billingSpendKeys(billing.currency, day, mcc);
    mccs.forEach((rowMcc, index) => {
      this.add(rowMcc, days[index] as string, billing.amount, 0);
    });
  }

  /** The value of each spec at `nowMs`, by key: the sum of the rows in its window. */
  totals(specs: readonly AggregateSpec[], nowMs: number): SpendTotals {
    const today = isoDate(utcDayNumber(nowMs));
    const totals: Record<string, Decimal | number> = {};
    for (const spec of specs) {
      const mccs = specMccs(spec);
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

/** Puts counter rows into the counters of their owners. */
function addCounterRows(
  counters: ReadonlyMap<string, SpendCounters>,
  rows: Iterable<SpendCounterRow>,
): void {
  for (const row of rows) {
    const ownerCounters = counters.get(row.owner_id);
    assert(ownerCounters !== undefined, 'a row read is of an owner asked for');
    ownerCounters.add(row.mcc, row.day, new Decimal(row.amount), row.count);
  }
}

/**
 * The counter rows of `window` for each of `ownerIds` (vaults, or cards with `CARD_SPEND`;
 * none read: empty), in one query.
 */
export async function readSpendCounters(
  tx: SqlQueryable,
  ownerIds: readonly string[],
  window: SpendWindow,
  target: SpendTable = VAULT_SPEND,
): Promise<Map<string, SpendCounters>> {
  const counters = new Map(ownerIds.map((ownerId) => [ownerId, new SpendCounters()]));
  if (ownerIds.length === 0) return counters;
  const params = new SqlParams();
  const { rows } = await tx.query<SpendCounterRow>(
    `SELECT w.owner_id, c.mcc, c.day::text AS day, c.amount::text AS amount, c.count
     FROM ${spendWindowRows(params, ownerIds, window, target)}`,
    params.values,
  );
  addCounterRows(counters, rows);
  return counters;
}

/**
 * The values of `specs` for a vault (or a card, with `CARD_SPEND`) at `nowMs`: its rows of
 * their window, read and summed.
 */
export async function readSpend(
  tx: SqlQueryable,
  ownerId: string,
  specs: readonly AggregateSpec[],
  nowMs: number,
  target: SpendTable = VAULT_SPEND,
): Promise<SpendTotals> {
  if (specs.length === 0) return {};
  const counters = await readSpendCounters(tx, [ownerId], spendWindowOf([specs], nowMs), target);
  const ownerCounters = counters.get(ownerId);
  assert(ownerCounters !== undefined, 'every owner asked for has counters');
  return ownerCounters.totals(specs, nowMs);
}
