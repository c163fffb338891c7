import {
  assert,
  countedBilling,
  dayNumberOf,
  Decimal,
  isoDate,
  MS_PER_DAY,
  storedAmount,
  utcDayNumber,
  windowStartDay,
  ZERO,
  type AggregateSpec,
  type DeclineCode,
  type DeclineReason,
  type Merchant,
  type RecordedDecision,
  type ReplayRow,
  type SpendTotals,
  type TransactionType,
} from '../core/index.js';
import { TRANSACTION_STATUSES } from './rows.js';
import { ALL_MERCHANTS, ALL_TIME_DAY, billingMcc } from './spend.js';
import { specMccs } from './spend-window.js';
import type { SqlQueryable } from './sql/client.js';
import { SqlParams } from './sql/params.js';

/*
 * What a backtest reads (ops/backtests.ts; the replay itself is core/decision/backtest.ts):
 * the recorded rows of its window in id order, a bounded batch per statement, and the spend
 * recorded before the window, which the draft's limits start from.
 */

/** What a backtest replays: a vault's card authorizations (and its external transfers), or a card's. */
export type BacktestTarget =
  | { readonly kind: 'vault'; readonly vaultId: string }
  | { readonly kind: 'card'; readonly vaultId: string; readonly cardId: string };

/** Rows one statement reads at most: a few megabytes of JSON, tens of milliseconds to replay. */
export const REPLAY_BATCH_ROWS = 10_000;

/** The first 16 characters of every transaction id made for the millisecond `epochMs`. */
export function transactionIdPrefixOf(epochMs: number): string {
  assert(Number.isSafeInteger(epochMs) && epochMs >= 0 && epochMs < 2 ** 48, 'a 48-bit time');
  return `txn_${epochMs.toString(16).padStart(12, '0')}`;
}

/**
 * The window's rows as id bounds: every id made in [startMs, endMs) lies strictly between them
 * (an id is its millisecond's prefix and more). A window is of decision times as ids carry
 * them; the rare id made ahead of its clock (ids.ts) counts at the time it carries.
 */
export function windowIdBounds(window: { readonly startMs: number; readonly endMs: number }): {
  readonly after: string;
  readonly before: string;
} {
  return {
    after: transactionIdPrefixOf(window.startMs),
    before: transactionIdPrefixOf(window.endMs),
  };
}

/**
 * The target's rows of `types` with ids strictly between `after` and `before` (placeholders),
 * at most `rowsMax` of them (a placeholder) in id order, as `columns`: a UNION ALL of one
 * branch per (type, status), each a range of the (owner, type, status, id) indexes of
 * migration 0008, which PostgreSQL merges by id. Why branches: the indexes on (owner, id)
 * are gone (migration 0017), and with the status free between type and id, the id range
 * bounds no scan of one index range: the owner's whole history of those types would be read.
 */
function targetRangeSql(
  params: SqlParams,
  target: BacktestTarget,
  types: readonly TransactionType[],
  range: { readonly after: string; readonly before: string; readonly rowsMax: string },
  columns: string,
): string {
  const owner =
    target.kind === 'vault'
      ? `vault_id = ${params.value(target.vaultId)}`
      : `card_id = ${params.value(target.cardId)}`;
  const branches = types.flatMap((type) =>
    TRANSACTION_STATUSES.map(
      (status) =>
        `(SELECT ${columns} FROM transactions
          WHERE ${owner} AND type = '${type}' AND status = '${status}'
            AND id COLLATE "C" > ${range.after} AND id COLLATE "C" < ${range.before}
          ORDER BY id COLLATE "C" LIMIT ${range.rowsMax})`,
    ),
  );
  return `SELECT * FROM (${branches.join(' UNION ALL ')}) AS branches ORDER BY id COLLATE "C" LIMIT ${range.rowsMax}`;
}

/**
 * The types a target replays: a vault's card authorizations, force captures and external
 * transfers; a card's authorizations and force captures. A refund is not replayed: it gives
 * no limit back (docs/guide.md, "Refunds"), so it changes nothing a draft decides.
 */
function targetTypes(target: BacktestTarget): readonly TransactionType[] {
  return target.kind === 'vault'
    ? ['card_authorization', 'force_capture', 'external_transfer']
    : ['card_authorization', 'force_capture'];
}

/**
 * Card authorizations of the target in the id range, counted up to `countMax` (each index
 * range is read that far and no further): how a request decides whether to replay at once.
 */
export async function countAuthorizations(
  db: SqlQueryable,
  target: BacktestTarget,
  bounds: { readonly after: string; readonly before: string },
  countMax: number,
): Promise<number> {
  assert(Number.isSafeInteger(countMax) && countMax > 0, 'a positive bound');
  const params = new SqlParams();
  const range = {
    after: params.value(bounds.after),
    before: params.value(bounds.before),
    rowsMax: params.value(countMax, 'integer'),
  };
  const { rows } = await db.query<{ count: number }>(
    `SELECT count(*)::int AS count FROM (${targetRangeSql(params, target, ['card_authorization'], range, 'id')}) AS counted`,
    params.values,
  );
  const count = rows[0]?.count ?? 0;
  assert(count >= 0 && count <= countMax, 'a bounded count');
  return count;
}

/** One batch: its rows in id order, and the id to read on after. */
export interface ReplayBatch {
  readonly rows: ReplayRow[];
  readonly lastId: string | null;
}

/**
 * The next batch of the target's rows after `afterId` (and before `beforeId`), at most
 * `REPLAY_BATCH_ROWS`, in id order. The database writes the batch as one JSON array of arrays
 * (each row's fields in the order of `RowField`), which one JSON.parse reads: far cheaper per
 * row than a result row per transaction through the driver (bench/backtest.bench.ts).
 */
export async function readReplayBatch(
  db: SqlQueryable,
  target: BacktestTarget,
  afterId: string,
  beforeId: string,
  rowsMax: number = REPLAY_BATCH_ROWS,
): Promise<ReplayBatch> {
  assert(rowsMax > 0 && rowsMax <= REPLAY_BATCH_ROWS, 'a bounded batch');
  const params = new SqlParams();
  const range = {
    after: params.value(afterId),
    before: params.value(beforeId),
    rowsMax: params.value(rowsMax, 'integer'),
  };
  // Per row the database does little: the stored merchant and decline reason go out as the JSON
  // they are, a row's time is its id's, and the released amount is worked out once.
  const { rows } = await db.query<{ rows: number; last_id: string | null; rows_json: string }>(
    `SELECT count(*)::int AS rows, max(id COLLATE "C") AS last_id,
            coalesce(json_agg(json_build_array(
              id, type, status <> 'declined', amount::text, card_id, currency,
              merchant, decline_code, decline_reason, stand_in OR failure_reason IS NOT DISTINCT FROM 'stand_in',
              CASE WHEN released > 0 THEN released::text END,
              CASE WHEN released > 0 THEN floor(extract(epoch FROM coalesce(completed_at, updated_at)) * 1000)::bigint END,
              status = 'failed', billing_amount::text, billing_currency
            ) ORDER BY id COLLATE "C"), '[]')::text AS rows_json
     FROM (${targetRangeSql(
       params,
       target,
       targetTypes(target),
       range,
       `id, type, status, amount, card_id, currency, merchant, decline_code, decline_reason, stand_in,
        failure_reason, completed_at, updated_at, billing_amount, billing_currency,
        CASE WHEN status <> 'declined' THEN amount - captured_amount - hold_remaining END AS released`,
     )}) AS batch`,
    params.values,
  );
  const row = rows[0];
  assert(row !== undefined, 'an aggregate answers one row');
  const fields = JSON.parse(row.rows_json) as RowFields[];
  assert(fields.length === row.rows && fields.length <= rowsMax, 'the batch is whole and bounded');
  const replayRows = new Array<ReplayRow>(fields.length);
  for (let index = 0; index < fields.length; index++)
    replayRows[index] = replayRowOf(fields[index] as RowFields);
  return { rows: replayRows, lastId: row.last_id };
}

/** The fields of one row, in the order readReplayBatch's json_build_array writes them. */
type RowFields = [
  id: string,
  type: TransactionType,
  approved: boolean,
  amount: string,
  cardId: string | null,
  currency: string,
  /** As stored: the request's merchant (name, mcc, country, and city and id when given). */
  merchant: Merchant | null,
  declineCode: DeclineCode | null,
  declineReason: DeclineReason | null,
  standIn: boolean,
  released: string | null,
  releasedMs: number | null,
  failed: boolean,
  billingAmount: string | null,
  billingCurrency: string | null,
];

/** The millisecond an id was made for: its first 12 hex digits after `txn_` (ids.ts). */
function idTimeMs(id: string): number {
  const ms = Number.parseInt(id.substring(4, 16), 16);
  assert(Number.isSafeInteger(ms), 'a transaction id leads with its millisecond');
  return ms;
}

// What most rows recorded, shared rather than made per row.
const RECORDED_APPROVED: RecordedDecision = Object.freeze({
  approved: true,
  declineCode: null,
  declineReason: null,
  standIn: false,
});
/** How each replayed type is replayed (core/decision/backtest.ts, ReplayRow). */
const KIND_OF_TYPE: Partial<Record<TransactionType, ReplayRow['kind']>> = {
  external_transfer: 'spend',
  force_capture: 'posting',
};

/** A spend row has no merchant; the replay never reads this one (core/decision/backtest.ts). */
const NO_MERCHANT = Object.freeze({ name: '', mcc: '', country: '' });

function billingOfRow(
  amount: string | null,
  currency: string | null,
  asset: string,
): { amount: Decimal; currency: string } | undefined {
  if (amount === null || currency === null) return undefined;
  return countedBilling({ amount: new Decimal(amount), currency }, asset);
}

function replayRowOf(fields: RowFields): ReplayRow {
  const [id, type, approved, amount, cardId, currency, merchant] = fields;
  const standIn = fields[9];
  const atMs = idTimeMs(id);
  const recorded: RecordedDecision =
    approved && !standIn
      ? RECORDED_APPROVED
      : { approved, declineCode: fields[7], declineReason: fields[8], standIn };
  const released = fields[10];
  const releasedMs = fields[11];
  return {
    id,
    atMs,
    kind: KIND_OF_TYPE[type] ?? 'authorization',
    request: {
      cardId: cardId ?? '',
      amount: storedAmount(amount),
      currency,
      merchant: merchant ?? NO_MERCHANT,
      // What billing-currency limits count (issue 35), as the authorize path counts it.
      billing: billingOfRow(fields[13], fields[14], currency),
    },
    recorded,
    release:
      released === null || releasedMs === null
        ? null
        : {
            // A clock moved back may stamp a release before its authorization: not before it.
            atMs: Math.max(releasedMs, atMs),
            amount: storedAmount(released),
            count: fields[12] ? 1 : 0,
          },
  };
}

/** Spend recorded before a window, by MCC (ALL_MERCHANTS: at every merchant) and day. */
class PriorSpend {
  readonly #rows: { mcc: string; day: number; amount: Decimal; count: number }[] = [];

  /** `day`: a day number, or -Infinity for spend older than every window read by day. */
  add(mcc: string, day: number, amount: Decimal, count: number): void {
    assert(this.#rows.length < PRIOR_ROWS_MAX, 'prior spend rows are bounded');
    this.#rows.push({ mcc, day, amount, count });
  }

  /** Each spec's spend from its window's start (at `startMs`) to the day before `startMs`. */
  totals(specs: readonly AggregateSpec[], startMs: number): SpendTotals {
    const startDay = utcDayNumber(startMs);
    const totals: Record<string, Decimal | number> = {};
    for (const spec of specs) {
      const mccs = specMccs(spec);
      const firstDay =
        spec.interval === 'allTime' ? -Infinity : windowStartDay(spec.interval, startMs);
      let amount = ZERO;
      let count = 0;
      for (const row of this.#rows) {
        if (row.day < firstDay || row.day >= startDay || !mccs.includes(row.mcc)) continue;
        amount = amount.plus(row.amount);
        count += row.count;
      }
      // A counter purged by retention (400 days) reads as less: never below nothing.
      totals[spec.key] = spec.measure === 'amount' ? Decimal.max(amount, ZERO) : Math.max(count, 0);
    }
    return totals;
  }
}

/** Days a window reaches back at most (a year), times the MCCs a draft may name, with room. */
const PRIOR_ROWS_MAX = 1_000_000;

/** The first day any of `specs`' windows holds at `startMs` (a year back at most). */
function firstPriorDay(specs: readonly AggregateSpec[], startMs: number): number {
  let first = utcDayNumber(startMs);
  for (const spec of specs)
    if (spec.interval !== 'allTime')
      first = Math.min(first, windowStartDay(spec.interval, startMs));
  return first;
}

/**
 * The draft's aggregates at the window's start: the spend recorded before it, as the store's
 * counters hold it now (so a hold approved before the window and released since counts as
 * released). A vault's come from its spend counters (the rows authorize reads); a card's from
 * its own authorizations, since counters are kept per vault (billing amounts too, as its
 * vault's billing rows count them: issue 35). All-time spend of a vault is its all-time counter
 * less the days from the window's start on.
 */
export async function readPriorSpend(
  db: SqlQueryable,
  target: BacktestTarget,
  specs: readonly AggregateSpec[],
  startMs: number,
): Promise<SpendTotals> {
  if (specs.length === 0) return {};
  assert(startMs % MS_PER_DAY === 0, 'a window starts at a midnight');
  const prior =
    target.kind === 'vault'
      ? await vaultPriorSpend(db, target.vaultId, specs, startMs)
      : await cardPriorSpend(db, target.cardId, specs, startMs);
  return prior.totals(specs, startMs);
}

async function vaultPriorSpend(
  db: SqlQueryable,
  vaultId: string,
  specs: readonly AggregateSpec[],
  startMs: number,
): Promise<PriorSpend> {
  const allTime = specs.some((spec) => spec.interval === 'allTime');
  const mccs = new Set<string>([ALL_MERCHANTS]);
  for (const spec of specs) for (const mcc of specMccs(spec)) mccs.add(mcc);
  const params = new SqlParams();
  const startDay = utcDayNumber(startMs);
  const first = params.value(isoDate(firstPriorDay(specs, startMs)), 'date');
  // With an all-time aggregate, the days from the start on too: they come off the all-time row.
  const more = allTime
    ? `OR day = '${ALL_TIME_DAY}'`
    : `AND day < ${params.value(isoDate(startDay), 'date')}`;
  const { rows } = await db.query<{ mcc: string; day: string; amount: string; count: number }>(
    `SELECT mcc, day::text AS day, amount::text AS amount, count FROM spend_counters
     WHERE vault_id = ${params.value(vaultId)} AND mcc = ANY(${params.texts([...mccs])})
       AND (day >= ${first} ${more})`,
    params.values,
  );
  const prior = new PriorSpend();
  // Per MCC: the all-time row, less every day read (those before the start are added by day).
  const older = new Map<string, { amount: Decimal; count: number }>();
  const takeOff = (mcc: string, amount: Decimal, count: number) => {
    const total = older.get(mcc) ?? { amount: ZERO, count: 0 };
    older.set(mcc, { amount: total.amount.plus(amount), count: total.count + count });
  };
  for (const row of rows) {
    const amount = new Decimal(row.amount);
    if (row.day === ALL_TIME_DAY) {
      takeOff(row.mcc, amount, row.count);
      continue;
    }
    const day = dayNumberOf(row.day);
    if (day < startDay) prior.add(row.mcc, day, amount, row.count);
    if (allTime) takeOff(row.mcc, amount.negated(), -row.count);
  }
  if (allTime) for (const [mcc, rest] of older) prior.add(mcc, -Infinity, rest.amount, rest.count);
  return prior;
}

async function cardPriorSpend(
  db: SqlQueryable,
  cardId: string,
  specs: readonly AggregateSpec[],
  startMs: number,
): Promise<PriorSpend> {
  const allTime = specs.some((spec) => spec.interval === 'allTime');
  const params = new SqlParams();
  const firstDay = firstPriorDay(specs, startMs);
  const firstDate = params.value(isoDate(firstDay), 'date');
  const startId = params.value(transactionIdPrefixOf(startMs));
  // Without an all-time aggregate, nothing older than the first day's id is read.
  const older = allTime
    ? ''
    : `AND id COLLATE "C" > ${params.value(transactionIdPrefixOf(firstDay * MS_PER_DAY))}`;
  // A card's approvals as its vault's counters hold them: what is still held or was captured,
  // counted once unless it failed whole. Older days (for all-time spend) in one row per MCC.
  // And the billing amounts its vault's billing rows count (issue 35): an approval's, in its
  // billing currency, while billing_counted says the counters hold it (a whole release takes
  // it back), so a limit written in the billing currency starts from what it counted.
  const { rows } = await db.query<{
    mcc: string | null;
    day: string | null;
    billing_currency: string | null;
    amount: string;
    count: number;
    billing_amount: string | null;
  }>(
    `SELECT mcc, CASE WHEN spend_day >= ${firstDate} THEN spend_day::text END AS day,
            CASE WHEN billing_counted THEN billing_currency END AS billing_currency,
            sum(captured_amount + hold_remaining)::text AS amount,
            (count(*) FILTER (WHERE status <> 'failed'))::int AS count,
            (sum(billing_amount) FILTER (WHERE billing_counted))::text AS billing_amount
     FROM transactions
     WHERE card_id = ${params.value(cardId)} AND type = 'card_authorization' AND status <> 'declined'
       AND id COLLATE "C" < ${startId} ${older}
     GROUP BY 1, 2, 3`,
    params.values,
  );
  const prior = new PriorSpend();
  for (const row of rows) {
    const day = row.day === null ? -Infinity : dayNumberOf(row.day);
    const amount = new Decimal(row.amount);
    // As the counters keep it: at all merchants, and at its MCC.
    prior.add(ALL_MERCHANTS, day, amount, row.count);
    if (row.mcc !== null) prior.add(row.mcc, day, amount, row.count);
    if (row.billing_currency === null || row.billing_amount === null) continue;
    // The billing rows count no approvals (spend.ts): a count limit reads the asset's rows.
    const billing = new Decimal(row.billing_amount);
    prior.add(billingMcc(row.billing_currency, ALL_MERCHANTS), day, billing, 0);
    if (row.mcc !== null) prior.add(billingMcc(row.billing_currency, row.mcc), day, billing, 0);
  }
  return prior;
}
