import {
  assert,
  type Decimal,
  isDecimal,
  type Scope,
  type TransactionRecord,
} from '../../core/index.js';
import { idTimePrefix } from '../../ids.js';
import {
  TRANSACTION_COLUMNS,
  TRANSACTION_STATUSES,
  TRANSACTION_TYPES,
  transactionFromRow,
  type TransactionRow,
} from '../rows.js';
import type { SqlQueryable } from '../sql/client.js';
import {
  byId,
  checkEpochMs,
  checkIdCursor,
  checkLimit,
  Conditions,
  EPOCH_MS_MAX,
  pageOf,
} from './list-pages.js';
import { LIMIT_MAX, type Page } from '../port/pages.js';
import type { ListTransactionsQuery } from '../port/authorizations.js';

/**
 * List Transactions over a history of millions of rows (issue 19): every page is exact (full
 * pages while `hasMore`, the contract's pagination unchanged), and what a page costs is
 * bounded by the rows it lists rather than by the rows a filter skips.
 *
 * The id order comes only from indexes on `id COLLATE "C"` (migration 0008), whose leading
 * columns are equalities: the owner (the scope, a vault or a card), then (type, status). So a
 * filter on those reads only rows it lists. A filter on one of type and status reads one index
 * range per value of the other, and a list with neither one range per pair (24), merged by id
 * (PostgreSQL's Merge Append over the branches of a UNION ALL). The primary key, in the
 * default collation, cannot give the order, so no plan walks the whole table by id, filtering
 * row by row: what a filter matching little in a busy vault did before.
 *
 * A date range is an id range: an id starts with the millisecond it was made for, which is
 * the millisecond of its created_at, except for "unaligned" rows (an id written ahead of its
 * created_at after a clock step back, or rows written by hand), which one small partial index
 * holds. The range is read as (ids in the range, created_at checked) UNION ALL (unaligned rows
 * with created_at in the range and ids outside it): disjoint, and together exactly the rows
 * whose created_at is in the range.
 *
 * An amount range has no order that fits the id order. It is answered in up to four
 * statements, each a page on its own (never a mix of two statements' reads; issue 38):
 * 1. the rows in the range through the amount indexes, stopped after `matchesMax`: when there
 *    are no more, the newest of them are the page (a range rare in the whole history, or a
 *    small vault: one statement of a few index entries);
 * 2. otherwise a walk: the floor is the newest of the (type, status) ranges' `walkRows`-th
 *    newest ids, read from the indexes alone, and each range's rows above it are read newest
 *    first with the amount range checked as they are read, a page at most each, sorted
 *    together: the page, when it is full or there was no floor (every row was read);
 * 3. when that walk found some hits but too few, the same walk with `walkRowsMax`;
 * 4. otherwise every row in the range through the amount indexes, the newest kept.
 * What the fourth costs grows with the rows in the range, and it runs when the range has more
 * than `matchesMax` rows but too few among the newest (docs/performance.md).
 */

/** How an amount range is read (tests shorten the walks to reach every step). */
export interface AmountPlan {
  /** Rows of each (type, status) range above the first walk's floor. */
  readonly walkRows: number;
  /** The same, for the second walk. */
  readonly walkRowsMax: number;
  /** Rows in the range read whole at most: more, and the range is walked. */
  readonly matchesMax: number;
}

/**
 * A range of more than 2,000 rows is at least one in 500 of a 1,000,000-row vault. The floor
 * of a walk costs its rows of each live (type, status) range in index entries, and the hits
 * as many heap rows at most: 3,000 of each of two ranges fill a page of a range of one row in
 * 50 or more (the bench's "7 to 8" is 1 in 38) in one statement; 2,000 entries of an amount
 * index cost well under a millisecond, and they answer rare ranges and small vaults whole
 * (docs/performance.md, "History: a vault's growth").
 */
export const AMOUNT_PLAN: AmountPlan = { walkRows: 3_000, walkRowsMax: 20_000, matchesMax: 2_000 };

/** Walks longer than this per statement are never planned: a bound on any one statement. */
const WALK_ROWS_LIMIT = 100_000;

/**
 * Whether a row's id was not made for the millisecond of its created_at: verbatim the
 * predicate of the index transactions_unaligned (migration 0008), which the planner uses only
 * for a query that states it.
 */
const UNALIGNED_SQL =
  "(left(id, 16) <> 'txn_' || lpad(to_hex(floor(extract(epoch FROM created_at - timestamptz 'epoch') * 1000)::bigint), 12, '0')) IS TRUE";

/** The order of every list statement here: only the C-collated indexes of 0008 give it. */
const NEWEST_FIRST = 'ORDER BY id COLLATE "C" DESC';

function amountText(value: Decimal | undefined): string | undefined {
  if (value === undefined) return undefined;
  assert(isDecimal(value), 'amount bounds are core Decimals, parsed at the edge');
  return value.toFixed();
}

/** The query, checked, with its bounds in the forms the statements bind. */
interface Search {
  readonly scope: Scope;
  readonly query: ListTransactionsQuery;
  readonly minAmount: string | undefined;
  readonly maxAmount: string | undefined;
  readonly start: Date | undefined;
  readonly end: Date | undefined;
  /** The id range of the date range's aligned rows (C collation), present bounds only. */
  readonly idFrom: string | undefined;
  readonly idBefore: string | undefined;
}

function searchOf(scope: Scope, query: ListTransactionsQuery): Search {
  checkLimit(query.limit);
  checkIdCursor('transaction', query.startingAfter);
  checkEpochMs(query.startDate, 'startDate');
  // Exclusive: the instant after the last millisecond of 9999 ends a range through it.
  checkEpochMs(query.endDate, 'endDate', EPOCH_MS_MAX + 1);
  // A bound before 1970 is met by every aligned row (an id's time is never negative), or by
  // none for an end: the prefix of time 0 says both.
  return {
    scope,
    query,
    minAmount: amountText(query.minAmount),
    maxAmount: amountText(query.maxAmount),
    start: query.startDate === undefined ? undefined : new Date(query.startDate),
    end: query.endDate === undefined ? undefined : new Date(query.endDate),
    idFrom:
      query.startDate === undefined
        ? undefined
        : idTimePrefix('transaction', Math.max(query.startDate, 0)),
    idBefore:
      query.endDate === undefined
        ? undefined
        : idTimePrefix('transaction', Math.max(query.endDate, 0)),
  };
}

/**
 * The placeholders of a statement's parameters (undefined: the filter is absent). Each is
 * bound on its first use, and only then, so that a statement binds exactly the parameters
 * its text uses (PostgreSQL cannot type a parameter the text never mentions); every branch
 * of a statement shares them.
 */
interface Bound {
  readonly accountId: string;
  readonly mode: string;
  readonly vaultId: string | undefined;
  readonly cardId: string | undefined;
  readonly type: string | undefined;
  readonly status: string | undefined;
  readonly cursor: string | undefined;
  readonly minAmount: string | undefined;
  readonly maxAmount: string | undefined;
  readonly start: string | undefined;
  readonly end: string | undefined;
  readonly idFrom: string | undefined;
  readonly idBefore: string | undefined;
}

function bindAll(search: Search, params: Conditions): Bound {
  const { query } = search;
  assert(search.scope.accountId.length > 0, 'a scoped search');
  const values: { readonly [K in keyof Bound]: unknown } = {
    accountId: search.scope.accountId,
    mode: search.scope.mode,
    vaultId: query.vaultId,
    cardId: query.cardId,
    type: query.type,
    status: query.status,
    cursor: query.startingAfter,
    minAmount: search.minAmount,
    maxAmount: search.maxAmount,
    start: search.start,
    end: search.end,
    idFrom: search.idFrom,
    idBefore: search.idBefore,
  };
  const placeholders = new Map<keyof Bound, string>();
  const bound = {};
  for (const key of Object.keys(values) as (keyof Bound)[]) {
    const value = values[key];
    Object.defineProperty(bound, key, {
      enumerable: true,
      get: (): string | undefined => {
        if (value === undefined) return undefined;
        let placeholder = placeholders.get(key);
        if (placeholder === undefined) {
          placeholder = params.bind(value);
          placeholders.set(key, placeholder);
        }
        return placeholder;
      },
    });
  }
  // Every key of Bound has a getter above; accountId and mode are never undefined.
  return bound as Bound;
}

/**
 * A vault or card of another scope (or none) answers nothing at once, rather than after its
 * rows are read: one lookup by primary key, which PostgreSQL evaluates once per statement (a
 * one-time filter above the scans). Null: no vault or card is named.
 */
function gateSql(bound: Bound): string | null {
  if (bound.cardId !== undefined) {
    const sameVault = bound.vaultId === undefined ? '' : ` AND vault_id = ${bound.vaultId}`;
    return `EXISTS (SELECT 1 FROM cards WHERE id = ${bound.cardId} AND account_id = ${bound.accountId} AND mode = ${bound.mode}${sameVault})`;
  }
  if (bound.vaultId !== undefined) {
    return `EXISTS (SELECT 1 FROM vaults WHERE id = ${bound.vaultId} AND account_id = ${bound.accountId} AND mode = ${bound.mode})`;
  }
  return null;
}

/**
 * The conditions of every row: the scope, the vault and the card (a vault or card of the
 * scope has only rows of the scope, but a row is never listed on that belief alone) and the
 * cursor. Clauses are fixed text around the placeholders of `bound`.
 *
 * `spineOnly`: only the narrowest of scope, vault and card (the spine) is compared so that an
 * index can use it; the others are compared in the C collation, which no index on those
 * columns is built in. Otherwise a plan made for any parameters (PostgreSQL's generic plan of
 * a prepared statement, which guesses how many rows each value has) could walk the scope's
 * id order for a vault's rows, or the vault's for a card's: every row of a big account to
 * list a small vault. The result is the same; only the way to it is fixed.
 */
function owned(bound: Bound, spineOnly: boolean): string[] {
  const spine =
    bound.cardId !== undefined ? 'card' : bound.vaultId !== undefined ? 'vault' : 'scope';
  const equals = (column: string, placeholder: string, ownSpine: boolean) =>
    !spineOnly || ownSpine
      ? `${column} = ${placeholder}`
      : `${column} = ${placeholder} COLLATE "C"`;
  const where = [
    equals('account_id', bound.accountId, spine === 'scope'),
    equals('mode', bound.mode, spine === 'scope'),
  ];
  if (bound.vaultId !== undefined) where.push(equals('vault_id', bound.vaultId, spine === 'vault'));
  if (bound.cardId !== undefined) where.push(equals('card_id', bound.cardId, spine === 'card'));
  if (bound.cursor !== undefined) where.push(`id COLLATE "C" < ${bound.cursor}`);
  return where;
}

function amountSql(bound: Bound): string[] {
  return [
    ...(bound.minAmount === undefined ? [] : [`amount >= ${bound.minAmount}::numeric`]),
    ...(bound.maxAmount === undefined ? [] : [`amount <= ${bound.maxAmount}::numeric`]),
  ];
}

function datesSql(bound: Bound): string[] {
  return [
    ...(bound.start === undefined ? [] : [`created_at >= ${bound.start}::timestamptz`]),
    ...(bound.end === undefined ? [] : [`created_at < ${bound.end}::timestamptz`]),
  ];
}

/** The type and status the query gives, as parameters. */
function givenKindSql(bound: Bound): string[] {
  return [
    ...(bound.type === undefined ? [] : [`type = ${bound.type}`]),
    ...(bound.status === undefined ? [] : [`status = ${bound.status}`]),
  ];
}

/** The id range of the date range's aligned rows (null: no date bound). */
function idRangeSql(bound: Bound): string | null {
  const parts = [
    ...(bound.idFrom === undefined ? [] : [`id COLLATE "C" >= ${bound.idFrom}`]),
    ...(bound.idBefore === undefined ? [] : [`id COLLATE "C" < ${bound.idBefore}`]),
  ];
  return parts.length === 0 ? null : parts.join(' AND ');
}

/**
 * The type and status conditions of each branch: the given values as parameters, and a branch
 * per value of each of the two not given (so that the (type, status, id) indexes read only
 * matching rows, in id order): 4 or 6 branches for one given, 24 for neither. Why 24 rather
 * than an index on (owner, id): those indexes were an entry more per owner in every
 * authorization's write, and a page of 24 merged ranges costs a read of the first row of each
 * beyond the page's own (migration 0017, docs/performance.md).
 */
function kindsOf(bound: Bound): string[][] {
  if (bound.type === undefined && bound.status === undefined)
    return TRANSACTION_TYPES.flatMap((type) =>
      TRANSACTION_STATUSES.map((status) => [`type = '${type}'`, `status = '${status}'`]),
    );
  if (bound.type !== undefined && bound.status !== undefined) return [givenKindSql(bound)];
  if (bound.type !== undefined) {
    const type = `type = ${bound.type}`;
    return TRANSACTION_STATUSES.map((status) => [type, `status = '${status}'`]);
  }
  const status = `status = ${bound.status}`;
  return TRANSACTION_TYPES.map((type) => [`type = '${type}'`, status]);
}

/** A WHERE clause of fixed clauses. */
function and(clauses: readonly string[]): string {
  assert(clauses.length > 0, 'every list is scoped');
  return clauses.join(' AND ');
}

/**
 * The rows the filters other than amount select, newest first, at most `rowsMax` of them
 * (a number written into the text: a walk's bound is one of a few fixed sizes, and a plan
 * made for any parameters then costs it as a custom plan would), as `columns`: a UNION ALL of
 * branches each in id order (merged by id), plus, with dates, the unaligned rows in the date
 * range whose ids fall outside its id range.
 */
function walkSql(bound: Bound, columns: string, rowsMax: number): string {
  assert(Number.isSafeInteger(rowsMax) && rowsMax > 0 && rowsMax <= WALK_ROWS_LIMIT, 'a walk');
  const branch = (where: readonly string[]) =>
    `(SELECT ${columns} FROM transactions WHERE ${and(where)} ${NEWEST_FIRST} LIMIT ${rowsMax})`;
  const idRange = idRangeSql(bound);
  const branches = kindsOf(bound).map((kinds) =>
    branch([
      ...owned(bound, true),
      ...kinds,
      ...(idRange === null ? [] : [idRange]),
      ...datesSql(bound),
    ]),
  );
  if (idRange !== null) {
    branches.push(
      branch([
        ...owned(bound, true),
        ...givenKindSql(bound),
        ...datesSql(bound),
        UNALIGNED_SQL,
        `NOT (${idRange})`,
      ]),
    );
  }
  const gate = gateSql(bound);
  return `SELECT * FROM (${branches.join(' UNION ALL ')}) AS branches
          ${gate === null ? '' : `WHERE ${gate}`} ${NEWEST_FIRST} LIMIT ${rowsMax}`;
}

/** One page straight from the walk: no amount filter, so every row it reads is listed. */
async function pageFromWalk(
  db: SqlQueryable,
  search: Search,
  rowsMax: number,
): Promise<TransactionRow[]> {
  const params = new Conditions();
  const bound = bindAll(search, params);
  // The branches read at most a largest page each; the page's own size is a parameter.
  const { rows } = await db.query<TransactionRow>(
    `SELECT * FROM (${walkSql(bound, TRANSACTION_COLUMNS, LIMIT_MAX + 1)}) AS walk
     ${NEWEST_FIRST} LIMIT ${params.bind(rowsMax)}`,
    params.params,
  );
  assert(rows.length <= rowsMax, 'a page reads at most its rows');
  return rows;
}

/** The spine's own equality alone (see `owned`): the columns every (owner, kind) index leads with. */
function spineSql(bound: Bound): string[] {
  if (bound.cardId !== undefined) return [`card_id = ${bound.cardId}`];
  if (bound.vaultId !== undefined) return [`vault_id = ${bound.vaultId}`];
  return [`account_id = ${bound.accountId}`, `mode = ${bound.mode}`];
}

/**
 * The (type, status) pairs of a walk as rows `kinds (type, status)`: the given values, and
 * every value of each not given. A subquery run for each pair (LATERAL) is planned once: a
 * branch of its own for each (32 with neither given) cost most of a walk's time in planning
 * at 1,000,000 rows (docs/performance.md, "History: a vault's growth").
 */
function kindPairsSql(bound: Bound): string {
  const quoted = (value: string) => `'${value}'`;
  const types = bound.type === undefined ? TRANSACTION_TYPES.map(quoted) : [bound.type];
  const statuses = bound.status === undefined ? TRANSACTION_STATUSES.map(quoted) : [bound.status];
  const pairs = types.flatMap((type) =>
    statuses.map((status) => `(${type}::text, ${status}::text)`),
  );
  return `(VALUES ${pairs.join(', ')}) AS kinds (type, status)`;
}

/**
 * The floor of a walk of `walkRows`: the newest of the (type, status) ranges' `walkRows`-th
 * newest ids (null: every range holds fewer), each read from its index alone (its leading
 * columns, the cursor and a date range's id range: every row the walk's branch lists, and
 * perhaps more, which only raises the floor). Each range has fewer than `walkRows` rows above
 * it; no row of the walk but the unaligned rows of a date range (read from their own small
 * index) is read at or below it. Each range is skipped through on its own: merging them by id
 * to count a walk costs several times as much a row (docs/performance.md).
 */
function floorSql(bound: Bound, walkRows: number): string {
  assert(Number.isSafeInteger(walkRows) && walkRows > 0 && walkRows <= WALK_ROWS_LIMIT, 'a walk');
  const idRange = idRangeSql(bound);
  const cursor = bound.cursor === undefined ? [] : [`id COLLATE "C" < ${bound.cursor}`];
  return `(SELECT max(cut.id) FROM ${kindPairsSql(bound)},
           LATERAL (SELECT id COLLATE "C" AS id FROM transactions
             WHERE ${and([...spineSql(bound), 'type = kinds.type', 'status = kinds.status', ...cursor, ...(idRange === null ? [] : [idRange])])}
             ${NEWEST_FIRST} OFFSET ${walkRows - 1} LIMIT 1) AS cut)`;
}

/**
 * Statement 2 or 3 of an amount range (issue 38): the rows in the range among the rows the
 * other filters select above the floor of a walk of `walkRows` (floorSql), newest first, at
 * most `rowsMax`. The range is checked in each (type, status) branch as it reads its rows, so
 * that only hits are kept: a row costs one index entry and its heap tuple, where the walk of
 * before merged and ranked every row it read (docs/performance.md).
 * Out: the hits; `exhausted`, the walk had no floor (every row of the other filters was read).
 * The page is exact when it is full or the walk exhausted: every row above the floor was read.
 */
async function amountWalk(
  db: SqlQueryable,
  search: Search,
  walkRows: number,
  rowsMax: number,
): Promise<{ hits: TransactionRow[]; exhausted: boolean }> {
  const params = new Conditions();
  const bound = bindAll(search, params);
  const above = 'id COLLATE "C" > walk.floor';
  const pageLimit = params.bind(rowsMax);
  const branch = (where: readonly string[]) =>
    `SELECT ${TRANSACTION_COLUMNS} FROM transactions WHERE ${and(where)} ${NEWEST_FIRST} LIMIT ${pageLimit}`;
  const idRange = idRangeSql(bound);
  // Each pair's hits, its page at most, sorted together: a pair reads its rows above the floor
  // until it has a page, where a merge would stop them all at the page's last row; what that
  // reads more costs less than planning a branch a pair.
  const branches = [
    `SELECT hits.* FROM ${kindPairsSql(bound)}, LATERAL (${branch([
      ...owned(bound, true),
      'type = kinds.type',
      'status = kinds.status',
      ...(idRange === null ? [] : [idRange]),
      ...datesSql(bound),
      ...amountSql(bound),
      above,
    ])}) AS hits`,
  ];
  if (idRange !== null) {
    branches.push(
      `(${branch([
        ...owned(bound, true),
        ...givenKindSql(bound),
        ...datesSql(bound),
        ...amountSql(bound),
        UNALIGNED_SQL,
        `NOT (${idRange})`,
        above,
      ])})`,
    );
  }
  const gate = gateSql(bound);
  // The empty string is below every id (C collation): no floor, every row.
  const { rows } = await db.query<{ floor: string | null } & Partial<TransactionRow>>(
    `WITH walk AS MATERIALIZED (
       SELECT COALESCE(${floorSql(bound, walkRows)}, '' COLLATE "C") AS floor
     )
     SELECT walk.floor, page.* FROM walk LEFT JOIN LATERAL (
       SELECT * FROM (${branches.join(' UNION ALL ')}) AS branches
       ${gate === null ? '' : `WHERE ${gate}`} ${NEWEST_FIRST} LIMIT ${pageLimit}
     ) AS page ON true
     ORDER BY page.id COLLATE "C" DESC`,
    params.params,
  );
  assert(rows.length >= 1 && rows.length <= rowsMax, 'a walk answers its floor and a page');
  const hits = rows.filter((row): row is { floor: string } & TransactionRow => row.id != null);
  return { hits, exhausted: rows[0]?.floor === '' };
}

/**
 * Every condition of the rows in the range that an index could use, so that the amount,
 * vault or card index holding fewest of them is read: statements 1 and 4.
 */
function matchesSql(bound: Bound): string {
  const gate = gateSql(bound);
  return and([
    ...(gate === null ? [] : [gate]),
    ...owned(bound, false),
    ...givenKindSql(bound),
    ...datesSql(bound),
    ...amountSql(bound),
  ]);
}

/**
 * Statement 1 of an amount range: the rows in the range, read through the amount indexes and
 * stopped after `matchesMax`; when there are no more than that, the newest of them are the
 * page. Out: the count, at most `matchesMax + 1`; the page (empty when the count is over).
 */
async function amountCounted(
  db: SqlQueryable,
  search: Search,
  rowsMax: number,
  matchesMax: number,
): Promise<{ matches: number; rows: TransactionRow[] }> {
  assert(Number.isSafeInteger(matchesMax) && matchesMax > 0, 'a bounded count');
  const params = new Conditions();
  const where = matchesSql(bindAll(search, params));
  const pageLimit = params.bind(rowsMax);
  // The bound written into the text, so that a plan made for any parameters costs it; the
  // count a one-row subquery, so that it is answered with or without a page.
  const { rows } = await db.query<{ matches: string } & Partial<TransactionRow>>(
    `WITH counted AS MATERIALIZED (
       SELECT id FROM transactions WHERE ${where} LIMIT ${matchesMax + 1}
     ), total AS MATERIALIZED (SELECT count(*) AS matches FROM counted)
     SELECT total.matches, page.* FROM total LEFT JOIN LATERAL (
       SELECT ${TRANSACTION_COLUMNS} FROM transactions
       WHERE total.matches <= ${matchesMax}
         AND id IN (SELECT id FROM counted ${NEWEST_FIRST} LIMIT ${pageLimit})
     ) AS page ON true
     ORDER BY page.id COLLATE "C" DESC`,
    params.params,
  );
  const matches = Number(rows[0]?.matches ?? Number.NaN);
  assert(Number.isSafeInteger(matches) && matches <= matchesMax + 1, 'a count within its bound');
  const page = rows.filter((row): row is { matches: string } & TransactionRow => row.id != null);
  assert(page.length <= rowsMax, 'a page reads at most its rows');
  return { matches, rows: page };
}

/** Statement 4 of an amount range: every row in the range (amount indexes), newest first. */
async function amountMatches(
  db: SqlQueryable,
  search: Search,
  rowsMax: number,
): Promise<TransactionRow[]> {
  const params = new Conditions();
  const where = matchesSql(bindAll(search, params));
  const pageLimit = params.bind(rowsMax);
  // Materialized and unordered, so that the planner fetches the matches by the amount
  // indexes rather than walking the id order for a few rows it believes common.
  const { rows } = await db.query<TransactionRow>(
    `WITH matched AS MATERIALIZED (SELECT id FROM transactions WHERE ${where})
     SELECT ${TRANSACTION_COLUMNS} FROM transactions
     WHERE id IN (SELECT id FROM matched ${NEWEST_FIRST} LIMIT ${pageLimit})
     ${NEWEST_FIRST}`,
    params.params,
  );
  assert(rows.length <= rowsMax, 'a page reads at most its rows');
  return rows;
}

/** The rows of a page with an amount range: statements 1 to 4 of the header. */
async function amountPage(
  db: SqlQueryable,
  search: Search,
  rowsMax: number,
  plan: AmountPlan,
): Promise<TransactionRow[]> {
  assert(plan.walkRows > 0 && plan.walkRowsMax >= plan.walkRows, 'a first walk, then longer');
  assert(plan.walkRowsMax <= WALK_ROWS_LIMIT, 'a bounded walk');
  assert(Number.isSafeInteger(plan.matchesMax) && plan.matchesMax > 0, 'a bounded count');
  // Few rows in the range in the whole history: they are the page, whatever their ages.
  const counted = await amountCounted(db, search, rowsMax, plan.matchesMax);
  if (counted.matches <= plan.matchesMax) return counted.rows;
  const exact = (walk: { hits: TransactionRow[]; exhausted: boolean }) =>
    walk.hits.length === rowsMax || walk.exhausted;
  const first = await amountWalk(db, search, plan.walkRows, rowsMax);
  if (exact(first)) return first.hits;
  // Some hits among the newest rows: the range is common there too, and a longer walk likely
  // fills the page. None: it is common only among older rows, which the amount index reads.
  if (plan.walkRowsMax > plan.walkRows && first.hits.length > 0) {
    const second = await amountWalk(db, search, plan.walkRowsMax, rowsMax);
    if (exact(second)) return second.hits;
  }
  return amountMatches(db, search, rowsMax);
}

/**
 * listTransactions (List Transactions; filters of the interface document).
 * In: scope; limit 1-100; startingAfter (a transaction id); filters vaultId, cardId, status,
 *   type, minAmount and maxAmount (core Decimals, inclusive, compared exactly as numeric),
 *   startDate (inclusive) and endDate (exclusive), epoch milliseconds on created_at; `plan`,
 *   the walks of an amount range (tests only).
 * Out: a page of the scope's transactions, newest first (id order). A vaultId or cardId of
 *   another scope (or none) gives an empty page. Empty bounds (min above max, start not before
 *   end) give an empty page.
 * Reads: transactions through the indexes of migration 0008 (see the header); one statement,
 *   or up to four with an amount range (see the header). Read only: no lock, no transaction of its own.
 * Fails: parameter_invalid (param limit, startingAfter, startDate or endDate).
 */
export async function listTransactions(
  db: SqlQueryable,
  scope: Scope,
  query: ListTransactionsQuery,
  plan: AmountPlan = AMOUNT_PLAN,
): Promise<Page<TransactionRecord>> {
  const search = searchOf(scope, query);
  const rowsMax = query.limit + 1;
  const rows =
    search.minAmount === undefined && search.maxAmount === undefined
      ? await pageFromWalk(db, search, rowsMax)
      : await amountPage(db, search, rowsMax, plan);
  return pageOf(rows, query.limit, transactionFromRow, byId);
}
