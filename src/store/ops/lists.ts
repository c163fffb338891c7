import {
  type BalanceSnapshotRecord,
  type CardRecord,
  dayNumberOf,
  Decimal,
  isoDate,
  type Scope,
  SpendgateError,
  type TransferRecord,
  utcDayNumber,
  type VaultRecord,
  type WebhookDeliveryRecord,
} from '../../core/index.js';
import type { IdKind } from '../../ids.js';
import { vaultNotFound } from '../context.js';
import {
  CARD_COLUMNS,
  cardFromRow,
  currencyFromRow,
  TRANSFER_COLUMNS,
  transferFromRow,
  VAULT_COLUMNS,
  vaultFromRow,
  type CardRow,
  type TransferRow,
  type VaultRow,
} from '../rows.js';
import {
  byId,
  checkIdCursor,
  checkLimit,
  Conditions,
  pageOf,
  type Fragment,
} from './list-pages.js';
import type { Page, PageQuery } from '../port/pages.js';
import { DELIVERY_COLUMNS, deliveryFromRow, type DeliveryRow } from './webhook-deliveries.js';
import type { SqlQueryable } from '../sql/client.js';
import type { ListBalanceSnapshotsQuery, ListVaultsQuery } from '../port/vaults.js';
import type { ListCardsQuery } from '../port/cards.js';
import type { ListTransfersQuery } from '../port/transfers.js';

/*
 * The list operations of contract sections 4 and 7: cursor pagination, newest first, over one
 * scope's rows. Read-only, one statement each (two for balance history: the vault, then its
 * snapshots; List Transactions, which must stay fast over millions of rows, is planned in
 * ops/transaction-list.ts); none takes a lock or opens a transaction.
 *
 * Every filter is a bound parameter. The SQL text of a query is assembled only from the fixed
 * fragments below and the placeholders `$n` that `Conditions` numbers; no caller value is ever
 * spliced into it.
 */

export { listTransactions } from './transaction-list.js';

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

const F = {
  accountId: (p) => `account_id = ${p}`,
  mode: (p) => `mode = ${p}`,
  idBefore: (p) => `id < ${p}`,
  vaultId: (p) => `vault_id = ${p}`,
  currency: (p) => `currency = ${p}`,
  status: (p) => `status = ${p}`,
  fromOrToVault: (p) => `(from_vault_id = ${p} OR to_vault_id = ${p})`,
  endpointId: (p) => `endpoint_id = ${p}`,
  dayBefore: (p) => `day < ${p}::date`,
  dayFrom: (p) => `day >= ${p}::date`,
  dayTo: (p) => `day <= ${p}::date`,
} as const satisfies Record<string, Fragment>;

/** The conditions every id-paginated list starts with: the scope and the cursor. */
function scoped(scope: Scope, startingAfter: string | undefined): Conditions {
  return new Conditions()
    .add(F.accountId, scope.accountId)
    .add(F.mode, scope.mode)
    .add(F.idBefore, startingAfter);
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
