import {
  SpendgateError,
  type CardRecord,
  type ProcessorCardRef,
  type Scope,
  type TransactionRecord,
} from '../../core/index.js';
import { newId } from '../../ids.js';
import type { StoreContext } from '../context.js';
import {
  CARD_COLUMNS,
  cardFromRow,
  TRANSACTION_COLUMNS,
  transactionFromRow,
  type CardRow,
  type TransactionRow,
} from '../rows.js';
import type { SqlQueryable } from '../sql/client.js';
import { oneRow } from '../sql/one-row.js';
import {
  PROCESSOR_CONNECTIONS_MAX,
  type Processor,
  type ProcessorConnectionRecord,
  type ProcessorConnectionSecrets,
  type ProcessorSecrets,
  ROTATION_GRACE_MS_MAX,
} from '../port/processors.js';

/*
 * Processor connections (contract v1.2, section 17; migration 0022). A connection names the
 * account and mode a processor's messages act for, and keeps the secrets that verify them
 * (a Stripe endpoint's signing secret, Lithic's ASA secret, Marqeta's gateway credentials),
 * encrypted under the master key and bound to the connection's id, like webhook secrets.
 * They are answered once, at creation and at rotation; a rotation keeps the previous secrets
 * until its grace ends, so both verify while the processor's side is switched over.
 */

interface ConnectionRow {
  id: string;
  account_id: string;
  mode: Scope['mode'];
  processor: Processor;
  created_at: Date;
  rotated_at: Date | null;
  previous_until: Date | null;
}
const COLUMNS = 'id, account_id, mode, processor, created_at, rotated_at, previous_until';

function fromRow(row: ConnectionRow, nowMs: number): ProcessorConnectionRecord {
  const until = row.previous_until?.getTime() ?? null;
  return {
    id: row.id,
    accountId: row.account_id,
    mode: row.mode,
    processor: row.processor,
    createdAtMs: row.created_at.getTime(),
    rotatedAtMs: row.rotated_at?.getTime() ?? null,
    previousSecretsUntilMs: until !== null && until > nowMs ? until : null,
  };
}

/** Secrets are bound to their connection: moved to another row, they fail to decrypt. */
export const processorSecretsAad = (connectionId: string) => `processor-secrets:${connectionId}`;

const notFound = (connectionId: string) =>
  new SpendgateError(
    'processor_not_found',
    `No processor connection ${connectionId.slice(0, 64)} exists.`,
    'id',
  );

/**
 * createProcessorConnection: one transaction.
 * In: scope, processor, its secrets (checked at the edge).  Out: the connection.
 * Writes: processor_connections (secrets encrypted under the master key).
 * Fails: parameter_invalid (PROCESSOR_CONNECTIONS_MAX connections already).
 */
export async function createProcessorConnection(
  ctx: StoreContext,
  tx: SqlQueryable,
  scope: Scope,
  input: { readonly processor: Processor; readonly secrets: ProcessorSecrets },
): Promise<ProcessorConnectionRecord> {
  const nowMs = ctx.clock();
  const { rows: counted } = await tx.query<{ count: string }>(
    `SELECT count(*) AS count FROM processor_connections
     WHERE account_id = $1 AND mode = $2 AND deleted_at IS NULL`,
    [scope.accountId, scope.mode],
  );
  if (Number(counted[0]?.count ?? 0) >= PROCESSOR_CONNECTIONS_MAX)
    throw new SpendgateError(
      'parameter_invalid',
      `An account has at most ${PROCESSOR_CONNECTIONS_MAX} processor connections per mode.`,
      'processor',
    );
  const id = newId('processorConnection', nowMs);
  const { rows } = await tx.query<ConnectionRow>(
    `INSERT INTO processor_connections (id, account_id, mode, processor, secrets_enc, created_at)
     VALUES ($1, $2, $3, $4, $5, $6) RETURNING ${COLUMNS}`,
    [
      id,
      scope.accountId,
      scope.mode,
      input.processor,
      ctx.keyring.encryptSecret(JSON.stringify(input.secrets), processorSecretsAad(id)),
      new Date(nowMs),
    ],
  );
  return fromRow(oneRow(rows, 'the connection INSERT'), nowMs);
}

/** getProcessorConnection: one read. Fails: processor_not_found (deleted, or not the scope's). */
export async function getProcessorConnection(
  ctx: StoreContext,
  tx: SqlQueryable,
  scope: Scope,
  connectionId: string,
): Promise<ProcessorConnectionRecord> {
  const { rows } = await tx.query<ConnectionRow>(
    `SELECT ${COLUMNS} FROM processor_connections
     WHERE id = $1 AND account_id = $2 AND mode = $3 AND deleted_at IS NULL`,
    [connectionId, scope.accountId, scope.mode],
  );
  const row = rows[0];
  if (row === undefined) throw notFound(connectionId);
  return fromRow(row, ctx.clock());
}

/** The scope's connections, newest first (bounded by PROCESSOR_CONNECTIONS_MAX). */
export async function listProcessorConnections(
  ctx: StoreContext,
  tx: SqlQueryable,
  scope: Scope,
): Promise<ProcessorConnectionRecord[]> {
  const { rows } = await tx.query<ConnectionRow>(
    `SELECT ${COLUMNS} FROM processor_connections
     WHERE account_id = $1 AND mode = $2 AND deleted_at IS NULL ORDER BY id DESC LIMIT $3`,
    [scope.accountId, scope.mode, PROCESSOR_CONNECTIONS_MAX],
  );
  const nowMs = ctx.clock();
  return rows.map((row) => fromRow(row, nowMs));
}

/**
 * deleteProcessorConnection: one transaction.
 * In: scope, connection id.  Out: nothing.
 * Writes: processor_connections.deleted_at (its secrets erased: nothing verifies any more);
 *   cards tied to it are untied, so their processor card ids may be tied again elsewhere.
 * Fails: processor_not_found.
 */
export async function deleteProcessorConnection(
  ctx: StoreContext,
  tx: SqlQueryable,
  scope: Scope,
  connectionId: string,
): Promise<void> {
  const { rowCount } = await tx.query(
    `UPDATE processor_connections
     SET deleted_at = $4, secrets_enc = NULL, previous_secrets_enc = NULL, previous_until = NULL
     WHERE id = $1 AND account_id = $2 AND mode = $3 AND deleted_at IS NULL`,
    [connectionId, scope.accountId, scope.mode, new Date(ctx.clock())],
  );
  if (rowCount === 0) throw notFound(connectionId);
  await tx.query(
    `UPDATE cards SET processor_connection_id = NULL, processor_card_id = NULL
     WHERE processor_connection_id = $1`,
    [connectionId],
  );
}

/**
 * rotateProcessorSecrets: one transaction.
 * In: scope, connection id, the new secrets, the grace (ms, at most ROTATION_GRACE_MS_MAX)
 *   during which the current ones still verify.  Out: the connection.
 * Writes: processor_connections (secrets_enc, previous_secrets_enc, previous_until).
 * Fails: processor_not_found; parameter_invalid (a grace out of bounds).
 */
export async function rotateProcessorSecrets(
  ctx: StoreContext,
  tx: SqlQueryable,
  scope: Scope,
  connectionId: string,
  input: { readonly secrets: ProcessorSecrets; readonly graceMs: number },
): Promise<ProcessorConnectionRecord> {
  if (!Number.isSafeInteger(input.graceMs) || input.graceMs < 0)
    throw new SpendgateError('parameter_invalid', 'The grace is a whole number.', 'graceSeconds');
  if (input.graceMs > ROTATION_GRACE_MS_MAX)
    throw new SpendgateError('parameter_invalid', 'The grace is 7 days at most.', 'graceSeconds');
  const nowMs = ctx.clock();
  const previous = input.graceMs === 0 ? null : new Date(nowMs + input.graceMs);
  const { rows } = await tx.query<ConnectionRow>(
    `UPDATE processor_connections
     SET previous_secrets_enc = CASE WHEN $5::timestamptz IS NULL THEN NULL ELSE secrets_enc END,
         previous_until = $5::timestamptz, secrets_enc = $4, rotated_at = $6
     WHERE id = $1 AND account_id = $2 AND mode = $3 AND deleted_at IS NULL
     RETURNING ${COLUMNS}`,
    [
      connectionId,
      scope.accountId,
      scope.mode,
      ctx.keyring.encryptSecret(JSON.stringify(input.secrets), processorSecretsAad(connectionId)),
      previous,
      new Date(nowMs),
    ],
  );
  const row = rows[0];
  if (row === undefined) throw notFound(connectionId);
  return fromRow(row, nowMs);
}

/**
 * processorConnectionSecrets: one read, for an adapter (no API key: the message's signature
 * is its authentication). The connection of `processor` with this id and its secrets.
 * Fails: processor_not_found (unknown, deleted, or of another processor).
 */
export async function processorConnectionSecrets(
  ctx: StoreContext,
  tx: SqlQueryable,
  processor: Processor,
  connectionId: string,
): Promise<ProcessorConnectionSecrets> {
  const { rows } = await tx.query<
    ConnectionRow & { secrets_enc: string | null; previous_secrets_enc: string | null }
  >(
    `SELECT ${COLUMNS}, secrets_enc, previous_secrets_enc FROM processor_connections
     WHERE id = $1 AND processor = $2 AND deleted_at IS NULL`,
    [connectionId, processor],
  );
  const row = rows[0];
  if (row?.secrets_enc == null) throw notFound(connectionId);
  const nowMs = ctx.clock();
  const connection = fromRow(row, nowMs);
  const aad = processorSecretsAad(connectionId);
  const read = (token: string) =>
    JSON.parse(ctx.keyring.decryptSecret(token, aad)) as ProcessorSecrets;
  const secrets = [read(row.secrets_enc)];
  if (connection.previousSecretsUntilMs !== null && row.previous_secrets_enc !== null)
    secrets.push(read(row.previous_secrets_enc));
  return { connection, secrets, readAtMs: nowMs };
}

/** The card tied to `processorCardId` on the connection, or null (one read, by the index). */
export async function cardOfProcessorCard(
  tx: SqlQueryable,
  scope: Scope,
  connectionId: string,
  processorCardId: string,
): Promise<string | null> {
  const { rows } = await tx.query<{ id: string }>(
    `SELECT id FROM cards WHERE processor_connection_id = $1 AND processor_card_id = $2
       AND account_id = $3 AND mode = $4`,
    [connectionId, processorCardId, scope.accountId, scope.mode],
  );
  return rows[0]?.id ?? null;
}

/**
 * The scope's card authorization recorded under the network's id, or null: how a processor's
 * later message (increment, capture, reversal) finds the hold its authorization placed.
 */
export async function authorizationByNetworkId(
  tx: SqlQueryable,
  scope: Scope,
  networkTransactionId: string,
): Promise<TransactionRecord | null> {
  const { rows } = await tx.query<TransactionRow>(
    `SELECT ${TRANSACTION_COLUMNS} FROM transactions
     WHERE account_id = $1 AND mode = $2 AND network_transaction_id = $3
       AND type = 'card_authorization'`,
    [scope.accountId, scope.mode, networkTransactionId],
  );
  const row = rows[0];
  return row === undefined ? null : transactionFromRow(row);
}

/**
 * Ties the card to a processor's card, or unties it (null): part of Create and Update Card's
 * transaction. The connection's row is locked first, so two ties of one processor card are
 * ordered and the second is refused rather than failing on the unique index.
 * Fails: processor_not_found (not the scope's, or deleted); parameter_invalid (that processor
 *   card is tied to another card of the connection).
 */
export async function tieProcessorCard(
  tx: SqlQueryable,
  scope: Scope,
  cardId: string,
  ref: ProcessorCardRef | null,
): Promise<CardRecord> {
  if (ref !== null) {
    const { rows: locked } = await tx.query<{ id: string }>(
      `SELECT id FROM processor_connections
       WHERE id = $1 AND account_id = $2 AND mode = $3 AND deleted_at IS NULL FOR UPDATE`,
      [ref.connectionId, scope.accountId, scope.mode],
    );
    if (locked.length === 0) {
      const error = notFound(ref.connectionId);
      throw new SpendgateError(error.code, error.message, 'processorCard.connectionId');
    }
    const { rows: taken } = await tx.query<{ id: string }>(
      `SELECT id FROM cards WHERE processor_connection_id = $1 AND processor_card_id = $2 AND id <> $3`,
      [ref.connectionId, ref.cardId, cardId],
    );
    if (taken.length > 0)
      throw new SpendgateError(
        'parameter_invalid',
        'That processor card is tied to another card of the connection.',
        'processorCard.cardId',
      );
  }
  const { rows } = await tx.query<CardRow>(
    `UPDATE cards SET processor_connection_id = $2, processor_card_id = $3 WHERE id = $1
     RETURNING ${CARD_COLUMNS}`,
    [cardId, ref?.connectionId ?? null, ref?.cardId ?? null],
  );
  return cardFromRow(oneRow(rows, 'the card tie UPDATE'));
}
