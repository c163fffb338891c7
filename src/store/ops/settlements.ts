import {
  assert,
  parseAmount,
  SpendgateError,
  type Decimal,
  type Scope,
  type SettlementRecord,
} from '../../core/index.js';
import { newId } from '../../ids.js';
import type { StoreContext } from '../context.js';
import type { SqlQueryable } from '../sql/client.js';
import { capture } from './authorizations.js';
import { forceCapture, refund } from './clearing.js';
import type { ClearingInput } from '../port/authorizations.js';
import { getTransaction } from './reads.js';
import {
  type ClearingMessage,
  SETTLEMENT_RECORDS_MAX,
  type SettlementRecordInput,
} from '../port/settlements.js';

/*
 * Clearing batches: the card network's clearing file as one request. The batch is
 * accepted whole (202), then the settlement worker posts its records one at a time, each in a
 * transaction of its own that posts and marks the record together, so a record is settled
 * exactly once however often the worker crashes and starts again. A record is any of the
 * network's capture kinds (contract v1.2, section 16): a capture of an authorization, a force
 * capture or a refund, each posted by the same operation as its own route. A record that
 * fails (unknown authorization or card, a currency that does not match, ...) is marked with
 * its error and does not stop the others.
 */

/**
 * createSettlement: one transaction.
 * In: scope, 1 to 10,000 records.  Out: the pending settlement.
 * Writes: settlements, settlement_records (one statement).
 */
export async function createSettlement(
  ctx: StoreContext,
  tx: SqlQueryable,
  scope: Scope,
  records: readonly SettlementRecordInput[],
): Promise<SettlementRecord> {
  assert(
    records.length >= 1 && records.length <= SETTLEMENT_RECORDS_MAX,
    'a settlement holds 1 to 10,000 records',
  );
  const nowMs = ctx.clock();
  const id = newId('settlement', nowMs);
  await tx.query(
    `WITH settlement AS (
       INSERT INTO settlements (id, account_id, mode, status, record_count, created_at)
       VALUES ($1, $2, $3, 'pending', $4, $5)
     )
     INSERT INTO settlement_records (settlement_id, position, kind, authorization_id, amount, final, message, status)
     SELECT $1, r.position - 1, r.kind, r.authorization_id, r.amount, r.final, r.message, 'pending'
     FROM unnest($6::text[], $7::text[], $8::text[], $9::boolean[], $10::jsonb[])
       WITH ORDINALITY AS r(kind, authorization_id, amount, final, message, position)`,
    [
      id,
      scope.accountId,
      scope.mode,
      records.length,
      new Date(nowMs),
      records.map((record) => record.kind),
      records.map((record) => (record.kind === 'capture' ? record.authorizationId : null)),
      records.map((record) => (record.kind === 'capture' ? record.amount : null)),
      records.map((record) => (record.kind === 'capture' ? record.final : true)),
      records.map((record) => (record.kind === 'capture' ? null : JSON.stringify(record.message))),
    ],
  );
  return getSettlement(tx, scope, id);
}

/** getSettlement: one read. The scope's settlement with its failed records. Fails: settlement_not_found. */
export async function getSettlement(
  tx: SqlQueryable,
  scope: Scope,
  id: string,
): Promise<SettlementRecord> {
  const { rows } = await tx.query<{
    id: string;
    status: 'pending' | 'completed';
    record_count: number;
    captured_count: number;
    failed_count: number;
    created_at: Date;
    completed_at: Date | null;
  }>(
    `SELECT id, status, record_count, captured_count, failed_count, created_at, completed_at
     FROM settlements WHERE id = $1 AND account_id = $2 AND mode = $3`,
    [id, scope.accountId, scope.mode],
  );
  const row = rows[0];
  // Another account's settlement is not found either, so that existence is not leaked.
  if (row === undefined) {
    throw new SpendgateError(
      'settlement_not_found',
      `No settlement ${id.slice(0, 64)} exists.`,
      'id',
    );
  }
  const { rows: failed } = await tx.query<{
    position: number;
    kind: SettlementRecordInput['kind'];
    authorization_id: string | null;
    network_transaction_id: string | null;
    error_code: string;
    error_message: string;
  }>(
    `SELECT position, kind, authorization_id, message->>'networkTransactionId' AS network_transaction_id,
       error_code, error_message FROM settlement_records
     WHERE settlement_id = $1 AND status = 'failed' ORDER BY position LIMIT $2`,
    [id, SETTLEMENT_RECORDS_MAX],
  );
  return {
    id: row.id,
    status: row.status,
    recordCount: row.record_count,
    capturedCount: row.captured_count,
    failedCount: row.failed_count,
    errors: failed.map((record) => ({
      position: record.position,
      type: record.kind,
      authorizationId: record.authorization_id,
      networkTransactionId: record.network_transaction_id,
      code: record.error_code,
      message: record.error_message,
    })),
    createdAtMs: row.created_at.getTime(),
    completedAtMs: row.completed_at?.getTime() ?? null,
  };
}

/** pendingSettlementRecords: one read. Up to `batchMax` unsettled records, oldest settlement first. */
export async function pendingSettlementRecords(
  tx: SqlQueryable,
  batchMax: number,
): Promise<{ settlementId: string; position: number }[]> {
  assert(Number.isInteger(batchMax) && batchMax > 0 && batchMax <= 1000, 'a bounded batch');
  const { rows } = await tx.query<{ settlement_id: string; position: number }>(
    `SELECT r.settlement_id, r.position FROM settlements s
     JOIN settlement_records r ON r.settlement_id = s.id AND r.status = 'pending'
     WHERE s.status = 'pending' ORDER BY s.id, r.position LIMIT $1`,
    [batchMax],
  );
  return rows.map((row) => ({ settlementId: row.settlement_id, position: row.position }));
}

interface PendingRecordRow {
  kind: SettlementRecordInput['kind'];
  authorization_id: string | null;
  amount: string | null;
  final: boolean;
  message: ClearingMessage | null;
  account_id: string;
  mode: Scope['mode'];
}

/**
 * settleRecord: one transaction (the caller's).
 * In: settlement id, position.  Out: what became of the record; `skipped` when another worker
 *   holds it or it is settled already.
 * Writes: the posting in a savepoint (a capture: authorizations.ts, capture; a force capture
 *   or a refund: clearing.ts, as their routes post them, idempotent by their network id); the
 *   record (captured with the transaction it posted, or failed with the refusal's code and
 *   message, the posting's writes rolled back); the settlement's counters, and its completion
 *   with the last record.
 * Fails: only on database errors (a refusal of the posting is the record's outcome).
 */
export async function settleRecord(
  ctx: StoreContext,
  tx: SqlQueryable,
  settlementId: string,
  position: number,
): Promise<'captured' | 'failed' | 'skipped'> {
  const { rows } = await tx.query<PendingRecordRow>(
    `SELECT r.kind, r.authorization_id, r.amount, r.final, r.message, s.account_id, s.mode
     FROM settlement_records r JOIN settlements s ON s.id = r.settlement_id
     WHERE r.settlement_id = $1 AND r.position = $2 AND r.status = 'pending'
     FOR UPDATE OF r SKIP LOCKED`,
    [settlementId, position],
  );
  const record = rows[0];
  if (record === undefined) return 'skipped';
  await tx.exec('SAVEPOINT settle_record');
  let posted: string | null = null;
  let refusal: SpendgateError | null = null;
  try {
    posted = await postRecord(ctx, tx, record);
  } catch (error) {
    if (!(error instanceof SpendgateError)) throw error;
    refusal = error;
    await tx.exec('ROLLBACK TO SAVEPOINT settle_record');
  }
  const nowMs = ctx.clock();
  await tx.query(
    `UPDATE settlement_records SET status = $3, error_code = $4, error_message = $5, settled_at = $6,
       transaction_id = $7
     WHERE settlement_id = $1 AND position = $2`,
    [
      settlementId,
      position,
      refusal === null ? 'captured' : 'failed',
      refusal?.code ?? null,
      refusal?.message.slice(0, 500) ?? null,
      new Date(nowMs),
      posted,
    ],
  );
  await tx.query(
    `UPDATE settlements SET
       captured_count = captured_count + $2, failed_count = failed_count + $3,
       status = CASE WHEN captured_count + failed_count + 1 = record_count THEN 'completed' ELSE status END,
       completed_at = CASE WHEN captured_count + failed_count + 1 = record_count THEN $4::timestamptz END
     WHERE id = $1`,
    [settlementId, refusal === null ? 1 : 0, refusal === null ? 0 : 1, new Date(nowMs)],
  );
  return refusal === null ? 'captured' : 'failed';
}

/** Posts one record as its own route would; the id of the transaction it posted. */
async function postRecord(
  ctx: StoreContext,
  tx: SqlQueryable,
  record: PendingRecordRow,
): Promise<string> {
  const scope: Scope = { accountId: record.account_id, mode: record.mode };
  if (record.kind === 'capture') {
    assert(record.authorization_id !== null, 'a capture record names its authorization');
    const held = await getTransaction(tx, scope, record.authorization_id);
    const amount: Decimal | null =
      record.amount === null
        ? null
        : parseAmount(record.amount, held.currency, { allowZero: false });
    await capture(ctx, tx, scope, held.id, amount, record.final);
    return held.id;
  }
  assert(record.message !== null, 'a force capture or refund record carries its message');
  const input: ClearingInput = record.message;
  const outcome =
    record.kind === 'refund'
      ? await refund(ctx, tx, scope, record.message)
      : await forceCapture(ctx, tx, scope, input);
  return outcome.transaction.id;
}
