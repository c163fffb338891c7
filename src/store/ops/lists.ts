import {
  assert,
  Decimal,
  dayNumberOf,
  isDecimal,
  isoDate,
  SpendgateError,
  utcDayNumber,
  type CardRecord,
  type CurrencyCode,
  type Scope,
  type TransactionRecord,
  type TransactionStatus,
  type TransactionType,
  type TransferRecord,
  type TransferStatus,
  type VaultRecord,
  type BalanceSnapshotRecord,
  type WebhookDeliveryRecord,
} from '../../core/index.js';
import { isIdOf, type IdKind } from '../../ids.js';
import { vaultNotFound } from '../context.js';
import {
  CARD_COLUMNS,
  cardFromRow,
  currencyFromRow,
  TRANSACTION_COLUMNS,
  transactionFromRow,
  TRANSFER_COLUMNS,
  transferFromRow,
  VAULT_COLUMNS,
  vaultFromRow,
  type CardRow,
  type TransactionRow,
  type TransferRow,
  type VaultRow,
} from '../rows.js';
import { DELIVERY_COLUMNS, deliveryFromRow, type DeliveryRow } from './webhook-deliveries.js';
import type { SqlQueryable } from '../sql/client.js';

/*
 * The list operations of contract sections 4 and 7: cursor pagination, newest first, over one
 * scope's rows. Read-only, one statement each (two for balance history: the vault, then its
 * snapshots); none takes a lock or opens a transaction.
 *
 * Every filter is a bound parameter. The SQL text of a query is assembled only from the fixed
 * fragments below and the placeholders `$n` that `Conditions` numbers; no caller value is ever
 * spliced into it.
 */

/** One page of a list: contract section 4 without `object: "list"` (the presenter adds it). */
export interface Page<T> {
  readonly data: T[];
  readonly hasMore: boolean;
  /** The last id (or day) of `data` when there is a next page, else null. */
  readonly nextCursor: string | null;
}

export const LIMIT_MIN = 1;
export const LIMIT_MAX = 100;

/**
 * Filters accept `undefined` as "absent" as well as a missing key: what a schema parser's
 * output holds for an optional query parameter under exactOptionalPropertyTypes.
 */
interface PageQuery {
  readonly limit: number;
  readonly startingAfter?: string | undefined;
}

export interface ListVaultsQuery extends PageQuery {
  readonly currency?: CurrencyCode | undefined;
  readonly status?: VaultRecord['status'] | undefined;
}

export interface ListCardsQuery extends PageQuery {
  readonly vaultId?: string | undefined;
  readonly status?: CardRecord['status'] | undefined;
}

export interface ListTransactionsQuery extends PageQuery {
  readonly vaultId?: string | undefined;
  readonly cardId?: string | undefined;
  readonly status?: TransactionStatus | undefined;
  readonly type?: TransactionType | undefined;
  /** Inclusive. */
  readonly minAmount?: Decimal | undefined;
  /** Inclusive. */
  readonly maxAmount?: Decimal | undefined;
  /** Epoch milliseconds on created_at, inclusive. */
  readonly startDate?: number | undefined;
  /** Epoch milliseconds on created_at, exclusive. */
  readonly endDate?: number | undefined;
}

export interface ListTransfersQuery extends PageQuery {
  /** Transfers from or to this vault (of those the scope's account made). */
  readonly vaultId?: string | undefined;
  readonly status?: TransferStatus | undefined;
}

export interface ListBalanceSnapshotsQuery {
  readonly limit: number;
  /** A day, `YYYY-MM-DD`: the next page holds the days before it. */
  readonly startingAfter?: string | undefined;
  /** `YYYY-MM-DD`, inclusive. */
  readonly startDate?: string | undefined;
  /** `YYYY-MM-DD`, inclusive. */
  readonly endDate?: string | undefined;
}

const BALANCE_SNAPSHOT_COLUMNS = 'vault_id, day, currency, ledger, pending, available';

/** balance_snapshots as the adapters return it (date and numeric as text). */
interface BalanceSnapshotRow {
  vault_id: string;
  day: string;
  currency: string;
  ledger: string;
  pending: string;
  available: string;
}

function balanceSnapshotFromRow(row: BalanceSnapshotRow): BalanceSnapshotRecord {
  return {
    vaultId: row.vault_id,
    day: row.day,
    currency: currencyFromRow(row.currency),
    ledger: new Decimal(row.ledger),
    pending: new Decimal(row.pending),
    available: new Decimal(row.available),
    final: true,
  };
}

/**
 * A WHERE fragment: fixed SQL text around the placeholder of its one parameter (which it may
 * use more than once).
 */
type Fragment = (placeholder: string) => string;

const F = {
  accountId: (p) => `account_id = ${p}`,
  mode: (p) => `mode = ${p}`,
  idBefore: (p) => `id < ${p}`,
  vaultId: (p) => `vault_id = ${p}`,
  cardId: (p) => `card_id = ${p}`,
  currency: (p) => `currency = ${p}`,
  status: (p) => `status = ${p}`,
  type: (p) => `type = ${p}`,
  amountAtLeast: (p) => `amount >= ${p}::numeric`,
  amountAtMost: (p) => `amount <= ${p}::numeric`,
  createdFrom: (p) => `created_at >= ${p}::timestamptz`,
  createdBefore: (p) => `created_at < ${p}::timestamptz`,
  fromOrToVault: (p) => `(from_vault_id = ${p} OR to_vault_id = ${p})`,
  endpointId: (p) => `endpoint_id = ${p}`,
  dayBefore: (p) => `day < ${p}::date`,
  dayFrom: (p) => `day >= ${p}::date`,
  dayTo: (p) => `day <= ${p}::date`,
} as const satisfies Record<string, Fragment>;

/** Conditions joined by AND, each with its parameter; an absent (undefined) value adds nothing. */
class Conditions {
  readonly #clauses: string[] = [];
  readonly params: unknown[] = [];

  /** Binds `value` and returns its placeholder. */
  bind(value: unknown): string {
    this.params.push(value);
    return `$${this.params.length}`;
  }

  add(fragment: Fragment, value: unknown): this {
    if (value !== undefined) this.#clauses.push(fragment(this.bind(value)));
    return this;
  }

  get sql(): string {
    assert(this.#clauses.length > 0, 'every list is scoped');
    return this.#clauses.join(' AND ');
  }
}

/** The conditions every id-paginated list starts with: the scope and the cursor. */
function scoped(scope: Scope, startingAfter: string | undefined): Conditions {
  return new Conditions()
    .add(F.accountId, scope.accountId)
    .add(F.mode, scope.mode)
    .add(F.idBefore, startingAfter);
}

function checkLimit(limit: number): void {
  if (!Number.isInteger(limit) || limit < LIMIT_MIN || limit > LIMIT_MAX) {
    throw new SpendgateError(
      'parameter_invalid',
      `limit must be an integer from ${LIMIT_MIN} to ${LIMIT_MAX}.`,
      'limit',
    );
  }
}

function checkIdCursor(kind: IdKind, startingAfter: string | undefined): void {
  if (startingAfter !== undefined && !isIdOf(kind, startingAfter)) {
    throw new SpendgateError(
      'parameter_invalid',
      `startingAfter must be the id of a ${kind} from a previous page.`,
      'startingAfter',
    );
  }
}

// 0001-01-01T00:00:00.000Z to 9999-12-31T23:59:59.999Z: what a YYYY-MM-DD day can name and
// well inside PostgreSQL's timestamptz range, so a bound never fails in the database.
const EPOCH_MS_MIN = -62_135_596_800_000;
const EPOCH_MS_MAX = 253_402_300_799_999;

function checkEpochMs(value: number | undefined, param: string, max = EPOCH_MS_MAX): void {
  if (
    value !== undefined &&
    (!Number.isSafeInteger(value) || value < EPOCH_MS_MIN || value > max)
  ) {
    throw new SpendgateError(
      'parameter_invalid',
      `${param} must be a time between the years 1 and 9999.`,
      param,
    );
  }
}

/** A calendar day `YYYY-MM-DD` that exists (not 2026-02-30), years 0001 to 9999. */
function isDay(value: unknown): value is string {
  return (
    typeof value === 'string' &&
    /^\d{4}-\d{2}-\d{2}$/.test(value) &&
    value >= '0001-01-01' &&
    isoDate(dayNumberOf(value)) === value
  );
}

function checkDay(value: string | undefined, param: string): void {
  if (value !== undefined && !isDay(value)) {
    throw new SpendgateError('parameter_invalid', `${param} must be a day, YYYY-MM-DD.`, param);
  }
}

function checkAmount(value: Decimal | undefined): string | undefined {
  if (value === undefined) return undefined;
  assert(isDecimal(value), 'amount bounds are core Decimals, parsed at the edge');
  return value.toFixed();
}

/**
 * Turns `limit + 1` fetched rows into a page. Fetching one row more than the page holds tells
 * whether a next page exists from the same index range scan, with no count(*) (which would
 * read every matching row) and no second query (whose answer could disagree with the first
 * under concurrent inserts). The extra row is dropped; the cursor is the last row kept.
 */
function pageOf<Row, T>(
  rows: readonly Row[],
  limit: number,
  map: (row: Row) => T,
  cursorOf: (record: T) => string,
): Page<T> {
  const hasMore = rows.length > limit;
  const data = rows.slice(0, limit).map(map);
  const last = data.at(-1);
  return {
    data,
    hasMore,
    nextCursor: hasMore && last !== undefined ? cursorOf(last) : null,
  };
}

const byId = (record: { readonly id: string }): string => record.id;

/** A table an id-paginated list reads: its columns, its id kind and how a row becomes a record. */
interface IdListSource<Row, T> {
  readonly table: string;
  readonly columns: string;
  readonly kind: IdKind;
  readonly fromRow: (row: Row) => T;
}

/**
 * The one statement of every id-paginated list: the scope and cursor conditions, the filters
 * `narrow` adds (after the limit and cursor checks, so those are reported first), newest first.
 */
async function pageById<Row, T extends { readonly id: string }>(
  db: SqlQueryable,
  scope: Scope,
  query: PageQuery,
  source: IdListSource<Row, T>,
  narrow: (where: Conditions) => Conditions,
): Promise<Page<T>> {
  checkLimit(query.limit);
  checkIdCursor(source.kind, query.startingAfter);
  const where = narrow(scoped(scope, query.startingAfter));
  const { rows } = await db.query<Row>(
    `SELECT ${source.columns} FROM ${source.table} WHERE ${where.sql}
     ORDER BY id DESC LIMIT ${where.bind(query.limit + 1)}`,
    where.params,
  );
  return pageOf(rows, query.limit, source.fromRow, byId);
}

const VAULTS: IdListSource<VaultRow, VaultRecord> = {
  table: 'vaults',
  columns: VAULT_COLUMNS,
  kind: 'vault',
  fromRow: vaultFromRow,
};
const CARDS: IdListSource<CardRow, CardRecord> = {
  table: 'cards',
  columns: CARD_COLUMNS,
  kind: 'card',
  fromRow: cardFromRow,
};
const TRANSACTIONS: IdListSource<TransactionRow, TransactionRecord> = {
  table: 'transactions',
  columns: TRANSACTION_COLUMNS,
  kind: 'transaction',
  fromRow: transactionFromRow,
};
const TRANSFERS: IdListSource<TransferRow, TransferRecord> = {
  table: 'transfers',
  columns: TRANSFER_COLUMNS,
  kind: 'transfer',
  fromRow: transferFromRow,
};

const DELIVERIES: IdListSource<DeliveryRow, WebhookDeliveryRecord> = {
  table: 'webhook_deliveries',
  columns: DELIVERY_COLUMNS,
  kind: 'webhookDelivery',
  fromRow: deliveryFromRow,
};

/**
 * listWebhookDeliveries (List Deliveries).
 * In: scope; the endpoint's id (the caller has checked it is the scope's); limit 1-100;
 *   startingAfter (a delivery id).
 * Out: a page of the endpoint's delivery attempts, newest first.
 * Reads: webhook_deliveries through webhook_deliveries_endpoint.
 * Fails: parameter_invalid (param limit or startingAfter).
 */
export async function listWebhookDeliveries(
  db: SqlQueryable,
  scope: Scope,
  endpointId: string,
  query: PageQuery,
): Promise<Page<WebhookDeliveryRecord>> {
  return pageById(db, scope, query, DELIVERIES, (where) => where.add(F.endpointId, endpointId));
}

/**
 * listVaults (List Vaults, contract sections 4 and 7).
 * In: scope; limit 1-100; startingAfter (a vault id); filters currency, status.
 * Out: a page of the scope's vaults, newest first (id descending).
 * Reads: vaults through vaults_owner (account_id, mode, id DESC).
 * Fails: parameter_invalid (param limit or startingAfter).
 */
export async function listVaults(
  db: SqlQueryable,
  scope: Scope,
  query: ListVaultsQuery,
): Promise<Page<VaultRecord>> {
  return pageById(db, scope, query, VAULTS, (where) =>
    where.add(F.currency, query.currency).add(F.status, query.status),
  );
}

/**
 * listCards (List Cards).
 * In: scope; limit 1-100; startingAfter (a card id); filters vaultId, status.
 * Out: a page of the scope's cards, newest first. A vaultId of another scope (or none) gives
 *   an empty page, not vault_not_found: a filter narrows, it does not look anything up.
 * Reads: cards through cards_owner, or cards_vault with a vaultId.
 * Fails: parameter_invalid (param limit or startingAfter).
 */
export async function listCards(
  db: SqlQueryable,
  scope: Scope,
  query: ListCardsQuery,
): Promise<Page<CardRecord>> {
  return pageById(db, scope, query, CARDS, (where) =>
    where.add(F.vaultId, query.vaultId).add(F.status, query.status),
  );
}

/**
 * listTransactions (List Transactions; filters of the interface document).
 * In: scope; limit 1-100; startingAfter (a transaction id); filters vaultId, cardId, status,
 *   type, minAmount and maxAmount (core Decimals, inclusive, compared exactly as numeric),
 *   startDate (inclusive) and endDate (exclusive), epoch milliseconds on created_at.
 * Out: a page of the scope's transactions, newest first. Empty bounds (min above max, start
 *   not before end) give an empty page.
 * Reads: transactions through transactions_owner, transactions_vault or transactions_card.
 *   The type, amount and date bounds have no index: they filter the rows the id order walks.
 * Fails: parameter_invalid (param limit, startingAfter, startDate or endDate).
 */
export async function listTransactions(
  db: SqlQueryable,
  scope: Scope,
  query: ListTransactionsQuery,
): Promise<Page<TransactionRecord>> {
  return pageById(db, scope, query, TRANSACTIONS, (where) => {
    checkEpochMs(query.startDate, 'startDate');
    // Exclusive: the instant after the last millisecond of 9999 ends a range through it.
    checkEpochMs(query.endDate, 'endDate', EPOCH_MS_MAX + 1);
    return where
      .add(F.vaultId, query.vaultId)
      .add(F.cardId, query.cardId)
      .add(F.status, query.status)
      .add(F.type, query.type)
      .add(F.amountAtLeast, checkAmount(query.minAmount))
      .add(F.amountAtMost, checkAmount(query.maxAmount))
      .add(F.createdFrom, query.startDate === undefined ? undefined : new Date(query.startDate))
      .add(F.createdBefore, query.endDate === undefined ? undefined : new Date(query.endDate));
  });
}

/**
 * listTransfers (List Transfers).
 * In: scope; limit 1-100; startingAfter (a transfer id); filters vaultId (from or to that
 *   vault), status.
 * Out: a page of the transfers the scope's account made, newest first. A transfer another
 *   account made into one of this account's vaults is that account's (its credit shows here
 *   as a transfer_in transaction), so a vaultId filter does not bring it in.
 * Reads: transfers through transfers_owner.
 * Fails: parameter_invalid (param limit or startingAfter).
 */
export async function listTransfers(
  db: SqlQueryable,
  scope: Scope,
  query: ListTransfersQuery,
): Promise<Page<TransferRecord>> {
  return pageById(db, scope, query, TRANSFERS, (where) =>
    where.add(F.fromOrToVault, query.vaultId).add(F.status, query.status),
  );
}

/** Whether a balance history's query and cursor reach `today`, and the vault was open on it. */
function listsToday(vault: VaultRecord, query: ListBalanceSnapshotsQuery, today: string): boolean {
  // Days compare as text: YYYY-MM-DD orders as the days do.
  return (
    (query.startingAfter === undefined || today < query.startingAfter) &&
    (query.startDate === undefined || query.startDate <= today) &&
    (query.endDate === undefined || today <= query.endDate) &&
    // As the snapshot job: a vault has a row for each day it was open, its closing day included.
    (vault.closedAtMs === null || isoDate(utcDayNumber(vault.closedAtMs)) >= today)
  );
}

/** Today's row of a balance history: the vault's balances as they are now, not final. */
function liveDay(vault: VaultRecord, today: string): BalanceSnapshotRecord {
  return {
    vaultId: vault.id,
    day: today,
    currency: vault.currency,
    ledger: vault.ledger,
    pending: vault.pending,
    available: vault.ledger.minus(vault.pending),
    final: false,
  };
}

/**
 * listBalanceSnapshots (Get Balance History).
 * In: scope; vaultId; limit 1-100; startingAfter (a day, YYYY-MM-DD: the next page holds the
 *   days before it); startDate and endDate, days YYYY-MM-DD, both inclusive; nowMs, the time
 *   now (epoch milliseconds), whose UTC day is today (without it, the snapshots alone).
 * Out: a page of the vault's balances by day, newest day first; the cursor is a day. Days
 *   before today are the end-of-day snapshots (`final`). Today, when the bounds and cursor
 *   admit it and the vault was not closed before it, is the first row: the vault's balances as
 *   they are now, not final, so that a vault shows a history before its first UTC midnight.
 * Reads: vaults (ownership and today's balances), then balance_snapshots through its key
 *   (vault_id, day).
 * Fails: parameter_invalid (param limit, startingAfter, startDate or endDate);
 *   vault_not_found (param id) when the vault is not the scope's.
 */
export async function listBalanceSnapshots(
  db: SqlQueryable,
  scope: Scope,
  vaultId: string,
  query: ListBalanceSnapshotsQuery,
  nowMs?: number,
): Promise<Page<BalanceSnapshotRecord>> {
  checkLimit(query.limit);
  checkDay(query.startingAfter, 'startingAfter');
  checkDay(query.startDate, 'startDate');
  checkDay(query.endDate, 'endDate');
  const { rows: owned } = await db.query<VaultRow>(
    `SELECT ${VAULT_COLUMNS} FROM vaults WHERE id = $1 AND account_id = $2 AND mode = $3`,
    [vaultId, scope.accountId, scope.mode],
  );
  const vault = owned[0] === undefined ? undefined : vaultFromRow(owned[0]);
  if (vault === undefined) throw vaultNotFound(vaultId, 'id');
  const today = nowMs === undefined ? undefined : isoDate(utcDayNumber(nowMs));
  const live =
    today !== undefined && listsToday(vault, query, today) ? [liveDay(vault, today)] : [];
  const where = new Conditions()
    .add(F.vaultId, vaultId)
    .add(F.dayBefore, query.startingAfter)
    // A day not over yet has no end-of-day figures: a stored row of today or later (taken by a
    // process whose clock runs ahead of this one) would pass for final and repeat today.
    .add(F.dayBefore, today)
    .add(F.dayFrom, query.startDate)
    .add(F.dayTo, query.endDate);
  const { rows } = await db.query<BalanceSnapshotRow>(
    `SELECT ${BALANCE_SNAPSHOT_COLUMNS} FROM balance_snapshots WHERE ${where.sql}
     ORDER BY day DESC LIMIT ${where.bind(query.limit + 1 - live.length)}`,
    where.params,
  );
  return pageOf(
    [...live, ...rows.map(balanceSnapshotFromRow)],
    query.limit,
    (record) => record,
    (snapshot) => snapshot.day,
  );
}
