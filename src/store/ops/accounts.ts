import { randomBytes } from 'node:crypto';
import { assert, type AccountRecord, type Mode } from '../../core/index.js';
import { newId } from '../../ids.js';
import type { StoreContext } from '../context.js';
import { hashApiKey } from '../secrets/index.js';
import type { SqlQueryable } from '../sql/client.js';
import { oneRow } from '../sql/one-row.js';
import {
  API_SCOPES,
  type ApiKeyRecord,
  type ApiScope,
  type Authentication,
} from '../port/accounts.js';

/** Random bytes in a key: 24 bytes, 192 bits, beyond any guessing. */
const KEY_RANDOM_BYTES = 24;
/** Characters of a key shown in lists ("sk_test_" and four more). */
const KEY_PREFIX_LENGTH = 12;

/**
 * findOrCreateAccount: one statement. In: a name. Out: the account of that name, created when
 * new (the CLI's `keys create --account NAME`). Fails: nothing.
 */
export async function findOrCreateAccount(
  ctx: StoreContext,
  tx: SqlQueryable,
  name: string,
): Promise<AccountRecord> {
  assert(name.length > 0 && name.length <= 100, 'account names are 1 to 100 characters');
  const { rows } = await tx.query<{ id: string; name: string; two_factor_enabled: boolean }>(
    `INSERT INTO accounts (id, name, created_at) VALUES ($1, $2, $3)
     ON CONFLICT (name) DO UPDATE SET name = EXCLUDED.name
     RETURNING id, name, two_factor_enabled`,
    [newId('account', ctx.clock()), name, new Date(ctx.clock())],
  );
  const row = oneRow(rows, 'the account upsert');
  return { id: row.id, name: row.name, twoFactorEnabled: row.two_factor_enabled };
}

/** The one account a fixed query finds, or null: the reads by id and by name. */
async function accountFound(
  tx: SqlQueryable,
  sql: string,
  value: string,
): Promise<AccountRecord | null> {
  const { rows } = await tx.query<{ id: string; name: string; two_factor_enabled: boolean }>(sql, [
    value,
  ]);
  const row = rows[0];
  return row === undefined
    ? null
    : { id: row.id, name: row.name, twoFactorEnabled: row.two_factor_enabled };
}

/** An account by name, or null: the CLI finds the account a key is for without making one. */
export function findAccountByName(tx: SqlQueryable, name: string): Promise<AccountRecord | null> {
  return accountFound(
    tx,
    'SELECT id, name, two_factor_enabled FROM accounts WHERE name = $1',
    name,
  );
}

/** An account by id, or null. */
export function getAccount(tx: SqlQueryable, accountId: string): Promise<AccountRecord | null> {
  return accountFound(
    tx,
    'SELECT id, name, two_factor_enabled FROM accounts WHERE id = $1',
    accountId,
  );
}

/** Whether any API key exists at all: an empty database gets a first key at start. */
export async function hasAnyApiKey(tx: SqlQueryable): Promise<boolean> {
  const { rows } = await tx.query<{ any: boolean }>(
    'SELECT EXISTS (SELECT 1 FROM api_keys) AS any',
  );
  return rows[0]?.any === true;
}

/**
 * createApiKey: one statement.
 * In: account id, mode, scopes (empty: all), optional expiry.
 * Out: the record and the full key, which is returned this once and stored only as its SHA-256.
 */
export async function createApiKey(
  ctx: StoreContext,
  tx: SqlQueryable,
  input: {
    accountId: string;
    mode: Mode;
    scopes: readonly ApiScope[];
    expiresAtMs?: number | null;
  },
): Promise<{ key: string; record: ApiKeyRecord }> {
  const key = `sk_${input.mode}_${randomBytes(KEY_RANDOM_BYTES).toString('base64url')}`;
  const scopes = input.scopes.length === 0 ? [...API_SCOPES] : [...new Set(input.scopes)];
  const nowMs = ctx.clock();
  const id = newId('apiKey', nowMs);
  await tx.query(
    `INSERT INTO api_keys (id, account_id, mode, key_hash, key_prefix, scopes, created_at, expires_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
    [
      id,
      input.accountId,
      input.mode,
      hashApiKey(key),
      key.slice(0, KEY_PREFIX_LENGTH),
      scopes,
      new Date(nowMs),
      input.expiresAtMs == null ? null : new Date(input.expiresAtMs),
    ],
  );
  return {
    key,
    record: {
      id,
      accountId: input.accountId,
      mode: input.mode,
      prefix: key.slice(0, KEY_PREFIX_LENGTH),
      scopes,
      createdAtMs: nowMs,
      expiresAtMs: input.expiresAtMs ?? null,
      revokedAtMs: null,
    },
  };
}

interface KeyRow {
  id: string;
  account_id: string;
  mode: Mode;
  key_prefix: string;
  scopes: ApiScope[];
  created_at: Date;
  expires_at: Date | null;
  revoked_at: Date | null;
}

const KEY_COLUMNS = 'id, account_id, mode, key_prefix, scopes, created_at, expires_at, revoked_at';

function keyFromRow(row: KeyRow): ApiKeyRecord {
  return {
    id: row.id,
    accountId: row.account_id,
    mode: row.mode,
    prefix: row.key_prefix,
    scopes: row.scopes,
    createdAtMs: row.created_at.getTime(),
    expiresAtMs: row.expires_at?.getTime() ?? null,
    revokedAtMs: row.revoked_at?.getTime() ?? null,
  };
}

/** Looks a presented key up by its hash (an index lookup: nothing is compared in JavaScript). */
export async function authenticateApiKey(
  ctx: StoreContext,
  tx: SqlQueryable,
  key: string,
): Promise<Authentication> {
  const { rows } = await tx.query<KeyRow>(
    `SELECT ${KEY_COLUMNS} FROM api_keys WHERE key_hash = $1`,
    [hashApiKey(key)],
  );
  const row = rows[0];
  if (row === undefined) return { status: 'unknown' };
  const record = keyFromRow(row);
  if (record.revokedAtMs !== null) return { status: 'revoked' };
  if (record.expiresAtMs !== null && record.expiresAtMs <= ctx.clock())
    return { status: 'expired' };
  return { status: 'ok', key: record };
}

export async function listApiKeys(tx: SqlQueryable, accountId: string): Promise<ApiKeyRecord[]> {
  const { rows } = await tx.query<KeyRow>(
    `SELECT ${KEY_COLUMNS} FROM api_keys WHERE account_id = $1 ORDER BY id DESC LIMIT 1000`,
    [accountId],
  );
  return rows.map(keyFromRow);
}

/** Revokes a key; true when it existed and was not revoked before. */
export async function revokeApiKey(
  ctx: StoreContext,
  tx: SqlQueryable,
  keyId: string,
): Promise<boolean> {
  const { rowCount } = await tx.query(
    'UPDATE api_keys SET revoked_at = $2 WHERE id = $1 AND revoked_at IS NULL',
    [keyId, new Date(ctx.clock())],
  );
  return rowCount === 1;
}
