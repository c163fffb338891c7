import { assert, type Scope } from '../../core/index.js';
import { newId } from '../../ids.js';
import type { StoreContext } from '../context.js';
import type { SqlQueryable } from '../sql/client.js';
import { purgeOlderIds } from './retention.js';
import {
  IN_FLIGHT_LISTED_MAX,
  type InFlightTransfer,
  type LedgerPosition,
  type ReserveRun,
  RUN_REQUESTS_MAX,
  type StoredReserveRun,
  type SweepInFlight,
  type UnsentTransfer,
  type UnsentTransfers,
} from '../port/reserves.js';

/*
 * The store's side of the reconciliation of reserves (issue 15; the formula and its reasoning:
 * src/workers/reserves.ts and docs/reserves.md): what the ledger owes per mode and currency,
 * read in one statement (one snapshot), each run's result (table reserve_runs, migration 0013),
 * the latest result per (mode, currency), the external transfers waiting on a shortfall, and
 * the runs asked for from the command line. No ledger state changes here.
 */

/**
 * ledgerPosition: one read-only statement, so that every term comes from one snapshot.
 * In: mode and currency. Out: the LedgerPosition. Fails: never by input (asserts the bound).
 */
export async function ledgerPosition(
  tx: SqlQueryable,
  mode: Scope['mode'],
  currency: string,
  listedMax = IN_FLIGHT_LISTED_MAX,
): Promise<LedgerPosition> {
  assert(Number.isInteger(listedMax) && listedMax > 0 && listedMax <= 10_000, 'a bounded list');
  const { rows } = await tx.query<{
    owed: string;
    unswept: string;
    in_flight: string;
    in_flight_count: string;
    listed: InFlightTransfer[] | string;
    sweeps: SweepInFlight[] | string;
  }>(
    `WITH flying AS (
       SELECT t.id, t.amount, s.signature FROM transfers t
       JOIN transfer_chain_sends s ON s.transfer_id = t.id
       WHERE t.kind = 'external' AND t.status = 'pending' AND t.mode = $1 AND t.currency = $2
     )
     SELECT
       (SELECT coalesce(sum(greatest(ledger, 0)), 0)::text FROM vaults
         WHERE mode = $1 AND currency = $2) AS owed,
       (SELECT coalesce(sum(amount), 0)::text FROM chain_deposits
         WHERE mode = $1 AND currency = $2 AND status = 'credited') AS unswept,
       (SELECT coalesce(sum(amount), 0)::text FROM flying) AS in_flight,
       (SELECT count(*)::text FROM flying) AS in_flight_count,
       (SELECT coalesce(json_agg(json_build_object('transferId', id, 'amount', amount::text,
                                                   'signature', signature) ORDER BY id), '[]')
          FROM (SELECT * FROM flying ORDER BY id LIMIT $3) AS oldest) AS listed,
       (SELECT coalesce(json_agg(json_build_object('depositId', id, 'amount', amount::text,
                                                   'signature', signature) ORDER BY id), '[]')
          FROM (SELECT d.id, d.amount, w.signature FROM chain_deposits d
                JOIN deposit_sweeps w ON w.deposit_id = d.id
                WHERE d.mode = $1 AND d.currency = $2 AND d.status = 'credited'
                  AND w.confirmed_at IS NULL AND w.failed_reason IS NULL
                ORDER BY d.id LIMIT $3) AS sweeping) AS sweeps`,
    [mode, currency, listedMax],
  );
  const row = rows[0];
  assert(row !== undefined, 'one row of sums');
  // PGlite hands json back parsed, node-postgres too; a string only from a driver that does not.
  const listed: InFlightTransfer[] =
    typeof row.listed === 'string' ? (JSON.parse(row.listed) as InFlightTransfer[]) : row.listed;
  const sweeps: SweepInFlight[] =
    typeof row.sweeps === 'string' ? (JSON.parse(row.sweeps) as SweepInFlight[]) : row.sweeps;
  assert(sweeps.length <= listedMax, 'the sweeps listed are bounded');
  const inFlightCount = Number(row.in_flight_count);
  assert(listed.length <= listedMax && listed.length <= inFlightCount, 'the list is bounded');
  return {
    owed: row.owed,
    unsweptDeposits: row.unswept,
    inFlight: row.in_flight,
    inFlightListed: listed,
    inFlightCount,
    sweepsListed: sweeps,
  };
}

interface RunRow {
  id: string;
  mode: Scope['mode'];
  currency: string;
  ran_at_ms: string;
  treasury_address: string;
  slot: string;
  treasury_balance: string;
  unswept_deposits: string;
  owed: string;
  in_flight: string;
  in_flight_landed: string;
  in_flight_count: number;
  reserves: string;
  liabilities: string;
  shortfall: string;
  ratio: string;
  short: boolean;
}

function runFromRow(row: RunRow): StoredReserveRun {
  return {
    id: row.id,
    mode: row.mode,
    currency: row.currency,
    ranAtMs: Number(row.ran_at_ms),
    treasuryAddress: row.treasury_address,
    slot: Number(row.slot),
    treasuryBalance: row.treasury_balance,
    unsweptDeposits: row.unswept_deposits,
    owed: row.owed,
    inFlight: row.in_flight,
    inFlightLanded: row.in_flight_landed,
    inFlightCount: row.in_flight_count,
    reserves: row.reserves,
    liabilities: row.liabilities,
    shortfall: row.shortfall,
    ratio: row.ratio,
    short: row.short,
  };
}

/**
 * recordReserveRun: one INSERT. In: a run whose terms agree (the table's CHECKs repeat the
 * formula, so a run that does not add up is refused by the database). Out: the run as stored
 * (amounts as the database renders them, nine fraction digits).
 */
export async function recordReserveRun(
  ctx: StoreContext,
  tx: SqlQueryable,
  run: ReserveRun,
): Promise<StoredReserveRun> {
  const ranAtMs = ctx.clock();
  const { rows } = await tx.query<RunRow>(
    `INSERT INTO reserve_runs (id, mode, currency, ran_at, treasury_address, slot,
       treasury_balance, unswept_deposits, owed, in_flight, in_flight_landed, in_flight_count,
       reserves, liabilities, shortfall, ratio, short)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17)
     RETURNING ${runColumns('reserve_runs')}`,
    [
      newId('reserveRun', ranAtMs),
      run.mode,
      run.currency,
      new Date(ranAtMs),
      run.treasuryAddress,
      run.slot,
      run.treasuryBalance,
      run.unsweptDeposits,
      run.owed,
      run.inFlight,
      run.inFlightLanded,
      run.inFlightCount,
      run.reserves,
      run.liabilities,
      run.shortfall,
      run.ratio,
      run.short,
    ],
  );
  const row = rows[0];
  assert(row !== undefined, 'an insert returns its row');
  return runFromRow(row);
}

/** The stored run's columns, amounts as text (exact), the time in epoch milliseconds. */
function runColumns(table: string): string {
  return ['id', 'mode', 'currency', 'treasury_address', 'in_flight_count', 'short']
    .map((column) => `${table}.${column}`)
    .concat(
      `(extract(epoch FROM ${table}.ran_at) * 1000)::bigint::text AS ran_at_ms`,
      `${table}.slot::text AS slot`,
      ...[
        'treasury_balance',
        'unswept_deposits',
        'owed',
        'in_flight',
        'in_flight_landed',
        'reserves',
        'liabilities',
        'shortfall',
        'ratio',
      ].map((column) => `${table}.${column}::text AS ${column}`),
    )
    .join(', ');
}

/**
 * latestReserveRuns: one read. The latest run of each (mode, currency) that has one, each
 * read through reserve_runs_latest (one index entry per pair). In: the currencies to look at
 * (at most 100). Out: the runs, by mode then currency.
 */
export async function latestReserveRuns(
  tx: SqlQueryable,
  currencies: readonly string[],
): Promise<StoredReserveRun[]> {
  assert(currencies.length > 0 && currencies.length <= 100, 'a bounded list of currencies');
  const { rows } = await tx.query<RunRow>(
    `SELECT ${runColumns('r')}
     FROM unnest(ARRAY['test', 'live']::text[]) AS m(mode)
     CROSS JOIN unnest($1::text[]) AS c(currency)
     CROSS JOIN LATERAL (SELECT * FROM reserve_runs x
                         WHERE x.mode = m.mode AND x.currency = c.currency
                         ORDER BY x.id DESC LIMIT 1) AS r
     ORDER BY r.mode, r.currency`,
    [currencies],
  );
  return rows.map(runFromRow);
}

/**
 * unsentExternalTransfers: one read (the partial index of pending external transfers). Out:
 * the count of pending external transfers not yet signed, by mode and currency.
 */
export async function unsentExternalTransfers(tx: SqlQueryable): Promise<UnsentTransfers[]> {
  const { rows } = await tx.query<{ mode: Scope['mode']; currency: string; count: string }>(
    `SELECT t.mode, t.currency, count(*)::text AS count FROM transfers t
     WHERE t.kind = 'external' AND t.status = 'pending'
       AND NOT EXISTS (SELECT 1 FROM transfer_chain_sends s WHERE s.transfer_id = t.id)
     GROUP BY t.mode, t.currency ORDER BY t.mode, t.currency`,
  );
  return rows.map((row) => ({ mode: row.mode, currency: row.currency, count: Number(row.count) }));
}

/**
 * unsentTransfersIn: one read. Up to `max` (at most 1,000) pending external transfers not yet
 * signed whose `mode:currency` is one of `pairs`, after `afterId` (null: from the first), in
 * id order: those a shortfall keeps waiting.
 */
export async function unsentTransfersIn(
  tx: SqlQueryable,
  pairs: readonly string[],
  max: number,
  afterId: string | null = null,
): Promise<UnsentTransfer[]> {
  assert(Number.isInteger(max) && max > 0 && max <= 1_000, 'a bounded list');
  assert(pairs.length <= 100, 'a bounded list of pairs');
  if (pairs.length === 0) return [];
  const { rows } = await tx.query<{
    id: string;
    mode: Scope['mode'];
    currency: string;
    amount: string;
  }>(
    `SELECT t.id, t.mode, t.currency, t.amount::text AS amount FROM transfers t
     WHERE t.kind = 'external' AND t.status = 'pending'
       AND t.mode || ':' || t.currency = ANY($1::text[])
       AND NOT EXISTS (SELECT 1 FROM transfer_chain_sends s WHERE s.transfer_id = t.id)
       AND ($3::text IS NULL OR t.id > $3)
     ORDER BY t.id LIMIT $2`,
    [pairs, max, afterId],
  );
  return rows.map((row) => ({
    transferId: row.id,
    mode: row.mode,
    currency: row.currency,
    amount: row.amount,
  }));
}

/** requestReserveRun: one INSERT. Out: the request's id (its row goes once a run answers). */
export async function requestReserveRun(ctx: StoreContext, tx: SqlQueryable): Promise<string> {
  const nowMs = ctx.clock();
  const id = newId('reserveRunRequest', nowMs);
  await tx.query('INSERT INTO reserve_run_requests (id, requested_at) VALUES ($1, $2)', [
    id,
    new Date(nowMs),
  ]);
  return id;
}

/** reserveRunRequests: one read. The oldest open requests, at most RUN_REQUESTS_MAX. */
export async function reserveRunRequests(tx: SqlQueryable): Promise<string[]> {
  const { rows } = await tx.query<{ id: string }>(
    'SELECT id FROM reserve_run_requests ORDER BY id LIMIT $1',
    [RUN_REQUESTS_MAX],
  );
  return rows.map((row) => row.id);
}

/** closeReserveRunRequests: one DELETE of the given requests (answered, or given up). */
export async function closeReserveRunRequests(
  tx: SqlQueryable,
  requestIds: readonly string[],
): Promise<number> {
  assert(requestIds.length <= RUN_REQUESTS_MAX, 'a bounded list of requests');
  if (requestIds.length === 0) return 0;
  const { rowCount } = await tx.query('DELETE FROM reserve_run_requests WHERE id = ANY($1)', [
    requestIds,
  ]);
  return rowCount;
}

/** reserveRunRequestOpen: one read. Whether the request still waits for a run. */
export async function reserveRunRequestOpen(tx: SqlQueryable, requestId: string): Promise<boolean> {
  const { rows } = await tx.query('SELECT 1 FROM reserve_run_requests WHERE id = $1', [requestId]);
  return rows.length === 1;
}

/**
 * purgeReserveRuns: deletes up to `rowsMax` runs older than the retention, oldest first (by
 * id, through the primary key), except the latest of each (mode, currency), which the
 * transfer worker's wait reads. Out: how many were deleted.
 */
export function purgeReserveRuns(
  ctx: StoreContext,
  tx: SqlQueryable,
  retentionMs: number,
  rowsMax: number,
): Promise<number> {
  return purgeOlderIds(
    ctx,
    tx,
    'reserveRun',
    retentionMs,
    `DELETE FROM reserve_runs WHERE id IN (
       SELECT r.id FROM reserve_runs r WHERE r.id < $1
         AND EXISTS (SELECT 1 FROM reserve_runs n
                     WHERE n.mode = r.mode AND n.currency = r.currency AND n.id > r.id)
       ORDER BY r.id LIMIT $2)`,
    rowsMax,
  );
}
