import { createHash } from 'node:crypto';
import { SpendgateError, type Scope } from '../../core/index.js';
import type { StoreContext } from '../context.js';
import type { SqlQueryable } from '../sql/client.js';
import { inPipeline } from '../sql/pipeline.js';
import type { IdempotentRequest, StoredResponse } from '../port/idempotency.js';

/*
 * Idempotency records (contract section 5). A record is written in the same transaction as the
 * effect it answers for, so there is never one without the other. The key's transaction takes
 * an advisory lock on the key first: a second request with the same key while the first runs
 * gets 409 `idempotency_key_in_use` at once, instead of waiting or running twice.
 */

export const IDEMPOTENCY_WINDOW_MS = 24 * 3_600_000;

function requestHash(request: IdempotentRequest): string {
  return createHash('sha256')
    .update(request.method)
    .update('\n')
    .update(request.path)
    .update('\n')
    .update(request.body)
    .digest('hex');
}

/**
 * beginIdempotent, inside the effect's transaction, before the effect.
 * Out: the stored response to replay, or null to go ahead.
 * Fails: idempotency_key_in_use (the same key's transaction is running),
 *   duplicate_idempotency_key (the key was used for another method, path or body).
 */
export async function beginIdempotent(
  ctx: StoreContext,
  tx: SqlQueryable,
  scope: Scope,
  request: IdempotentRequest,
): Promise<StoredResponse | null> {
  // The lock and the read in one round trip (sql/pipeline.ts): the read runs after the lock
  // is taken, as sent, and its answer is not used when the lock was not.
  const [{ rows: locked }, { rows }] = await inPipeline(tx, () => [
    tx.query<{ locked: boolean }>(
      'SELECT pg_try_advisory_xact_lock(hashtextextended($1, 0)) AS locked',
      // U+001F: text cannot hold NUL, and a key is printable ASCII, so it never holds this
      // either.
      [`${scope.accountId}\u001f${scope.mode}\u001f${request.key}`],
    ),
    tx.query<{
      request_hash: string;
      response_status: number;
      response_body: unknown;
      created_at: Date;
    }>(
      `SELECT request_hash, response_status, response_body, created_at FROM idempotency_keys
       WHERE account_id = $1 AND mode = $2 AND key = $3`,
      [scope.accountId, scope.mode, request.key],
    ),
  ]);
  if (locked[0]?.locked !== true) {
    throw new SpendgateError(
      'idempotency_key_in_use',
      'A request with this Idempotency-Key is still running.',
      'Idempotency-Key',
    );
  }
  const stored = rows[0];
  if (stored === undefined) return null;
  if (stored.created_at.getTime() <= ctx.clock() - IDEMPOTENCY_WINDOW_MS) {
    // Older than the window: forgotten, as if never used.
    await tx.query(
      'DELETE FROM idempotency_keys WHERE account_id = $1 AND mode = $2 AND key = $3',
      [scope.accountId, scope.mode, request.key],
    );
    return null;
  }
  if (stored.request_hash !== requestHash(request)) {
    throw new SpendgateError(
      'duplicate_idempotency_key',
      'This Idempotency-Key was used with another request; use a new key.',
      'Idempotency-Key',
    );
  }
  return { status: stored.response_status, body: stored.response_body };
}

/** saveIdempotent, inside the effect's transaction, after the effect: records the response. */
export async function saveIdempotent(
  ctx: StoreContext,
  tx: SqlQueryable,
  scope: Scope,
  request: IdempotentRequest,
  response: StoredResponse,
): Promise<void> {
  await tx.query(
    `INSERT INTO idempotency_keys (account_id, mode, key, method, path, request_hash, response_status, response_body, created_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
    [
      scope.accountId,
      scope.mode,
      request.key,
      request.method,
      request.path,
      requestHash(request),
      response.status,
      JSON.stringify(response.body),
      new Date(ctx.clock()),
    ],
  );
}

/** Deletes records older than the window, at most `batchMax`; returns how many. */
export async function purgeIdempotencyKeys(
  ctx: StoreContext,
  tx: SqlQueryable,
  batchMax = 10_000,
): Promise<number> {
  const { rowCount } = await tx.query(
    `DELETE FROM idempotency_keys WHERE ctid IN (
       SELECT ctid FROM idempotency_keys WHERE created_at <= $1 LIMIT $2)`,
    [new Date(ctx.clock() - IDEMPOTENCY_WINDOW_MS), batchMax],
  );
  return rowCount;
}
