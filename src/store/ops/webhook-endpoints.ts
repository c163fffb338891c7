import { randomBytes } from 'node:crypto';
import { SpendgateError, type Scope, type WebhookEndpointRecord } from '../../core/index.js';
import { newId } from '../../ids.js';
import type { StoreContext } from '../context.js';
import type { SqlQueryable } from '../sql/client.js';
import { oneRow } from '../sql/one-row.js';
import { WEBHOOK_ENDPOINTS_MAX } from '../port/webhooks.js';

/*
 * Webhook endpoints (contract sections 7 and 13). The `whsec_` signing secret is returned once
 * at creation and stored encrypted under the master key, bound to its endpoint's id.
 */

interface EndpointRow {
  id: string;
  account_id: string;
  mode: Scope['mode'];
  url: string;
  events: string[];
  description: string | null;
  status: 'enabled' | 'disabled';
  created_at: Date;
}
const COLUMNS = 'id, account_id, mode, url, events, description, status, created_at';

function fromRow(row: EndpointRow): WebhookEndpointRecord {
  return {
    id: row.id,
    accountId: row.account_id,
    mode: row.mode,
    url: row.url,
    events: row.events,
    description: row.description,
    status: row.status,
    createdAtMs: row.created_at.getTime(),
  };
}

/** The secret is bound to its endpoint: moved to another row, it fails to decrypt. */
export const webhookSecretAad = (endpointId: string) => `webhook-secret:${endpointId}`;

/**
 * createWebhookEndpoint: one transaction. In: scope, url (checked at the edge), events,
 * description. Out: the endpoint and its secret (this once). Fails: parameter_invalid when the
 * account already has the most endpoints allowed.
 */
export async function createWebhookEndpoint(
  ctx: StoreContext,
  tx: SqlQueryable,
  scope: Scope,
  input: { url: string; events: readonly string[]; description: string | null },
): Promise<{ endpoint: WebhookEndpointRecord; secret: string }> {
  const { rows: counted } = await tx.query<{ n: number }>(
    'SELECT count(*)::int AS n FROM webhook_endpoints WHERE account_id = $1 AND mode = $2 AND deleted_at IS NULL',
    [scope.accountId, scope.mode],
  );
  if ((counted[0]?.n ?? 0) >= WEBHOOK_ENDPOINTS_MAX) {
    throw new SpendgateError(
      'parameter_invalid',
      `An account may have at most ${WEBHOOK_ENDPOINTS_MAX} webhook endpoints.`,
      'url',
    );
  }
  const nowMs = ctx.clock();
  const id = newId('webhookEndpoint', nowMs);
  const secret = `whsec_${randomBytes(32).toString('base64')}`;
  const { rows } = await tx.query<EndpointRow>(
    `INSERT INTO webhook_endpoints (id, account_id, mode, url, events, description, status, secret_enc, created_at)
     VALUES ($1, $2, $3, $4, $5, $6, 'enabled', $7, $8) RETURNING ${COLUMNS}`,
    [
      id,
      scope.accountId,
      scope.mode,
      input.url,
      input.events,
      input.description,
      ctx.keyring.encryptSecret(secret, webhookSecretAad(id)),
      new Date(nowMs),
    ],
  );
  return { endpoint: fromRow(oneRow(rows, 'the endpoint INSERT')), secret };
}

/** Endpoints of the scope that are not deleted, newest first (bounded by WEBHOOK_ENDPOINTS_MAX). */
export async function listWebhookEndpoints(
  tx: SqlQueryable,
  scope: Scope,
): Promise<WebhookEndpointRecord[]> {
  const { rows } = await tx.query<EndpointRow>(
    `SELECT ${COLUMNS} FROM webhook_endpoints WHERE account_id = $1 AND mode = $2 AND deleted_at IS NULL ORDER BY id DESC LIMIT $3`,
    [scope.accountId, scope.mode, WEBHOOK_ENDPOINTS_MAX],
  );
  return rows.map(fromRow);
}

/** Deletes an endpoint (kept as a row, so deliveries already recorded still name it). */
export async function deleteWebhookEndpoint(
  ctx: StoreContext,
  tx: SqlQueryable,
  scope: Scope,
  endpointId: string,
): Promise<void> {
  const { rowCount } = await tx.query(
    `UPDATE webhook_endpoints SET deleted_at = $4, status = 'disabled'
     WHERE id = $1 AND account_id = $2 AND mode = $3 AND deleted_at IS NULL`,
    [endpointId, scope.accountId, scope.mode, new Date(ctx.clock())],
  );
  if (rowCount === 0)
    throw new SpendgateError(
      'webhook_not_found',
      `No webhook endpoint ${endpointId.slice(0, 64)} exists.`,
      'id',
    );
}

/** The signing secret of an endpoint, for the delivery worker. */
export async function webhookSecret(
  ctx: StoreContext,
  tx: SqlQueryable,
  endpointId: string,
): Promise<string> {
  const { rows } = await tx.query<{ secret_enc: string }>(
    'SELECT secret_enc FROM webhook_endpoints WHERE id = $1',
    [endpointId],
  );
  const token = rows[0]?.secret_enc;
  if (token === undefined)
    throw new SpendgateError(
      'webhook_not_found',
      `No webhook endpoint ${endpointId.slice(0, 64)} exists.`,
      'id',
    );
  return ctx.keyring.decryptSecret(token, webhookSecretAad(endpointId));
}

/** getWebhookEndpoint: one read. The scope's endpoint; a deleted one is not found. Fails: webhook_not_found. */
export async function getWebhookEndpoint(
  tx: SqlQueryable,
  scope: Scope,
  endpointId: string,
): Promise<WebhookEndpointRecord> {
  const { rows } = await tx.query<EndpointRow>(
    `SELECT ${COLUMNS} FROM webhook_endpoints WHERE id = $1 AND account_id = $2 AND mode = $3 AND deleted_at IS NULL`,
    [endpointId, scope.accountId, scope.mode],
  );
  const row = rows[0];
  if (row === undefined)
    throw new SpendgateError(
      'webhook_not_found',
      `No webhook endpoint ${endpointId.slice(0, 64)} exists.`,
      'id',
    );
  return fromRow(row);
}
