import { assert } from '../core/index.js';
import type { SqlQueryable } from './sql/client.js';

/*
 * The installation id: 16 hex digits made with the database by migration 0005, one row,
 * immutable. It names this database to everything outside it that must not be shared between
 * two databases: the default Redis prefix (`spendgate-<id>`) and the claim on a prefix set by
 * hand (src/workers/prefix-claim.ts).
 */

export const INSTALLATION_ID_PATTERN = /^[0-9a-f]{16}$/;

/** Reads the id; the database must be migrated. */
export async function readInstallationId(client: SqlQueryable): Promise<string> {
  const { rows } = await client.query<{ id: string }>('SELECT id FROM installation LIMIT 2');
  assert(rows.length === 1, 'a migrated database has exactly one installation row');
  const id = rows[0]?.id ?? '';
  assert(INSTALLATION_ID_PATTERN.test(id), 'an installation id is 16 hex digits');
  return id;
}
