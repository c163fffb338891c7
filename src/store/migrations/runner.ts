import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import type { SqlClient } from '../sql/client.js';

/*
 * Applies the plain SQL files of this folder (`NNNN_name.sql`) in order, each in its own
 * transaction with its record in `schema_migrations`. Re-running is a no-op. Any number of
 * processes may start at once: each migration takes a transaction-scoped advisory lock and
 * re-checks under it, so exactly one applies it. A file changed after it was applied stops
 * the run, since the database no longer matches the code.
 */

export const MIGRATIONS_DIR = new URL('./', import.meta.url);

/** Arbitrary but fixed: the advisory lock key all spendgate migrators agree on. */
const MIGRATION_LOCK_KEY = 727_001;
const MIGRATION_FILES_MAX = 1000;
const FILE_PATTERN = /^(\d{4})_[a-z0-9_]+\.sql$/;

export interface Migration {
  readonly version: number;
  readonly name: string;
  readonly sql: string;
  readonly checksum: string;
}

export function readMigrations(dir: URL = MIGRATIONS_DIR): Migration[] {
  const files = readdirSync(dir)
    .filter((file) => file.endsWith('.sql'))
    .sort();
  if (files.length > MIGRATION_FILES_MAX)
    throw new Error(`more than ${MIGRATION_FILES_MAX} migrations`);
  return files.map((file, index) => {
    const match = FILE_PATTERN.exec(file);
    if (match === null) throw new Error(`migration file ${file} is not named NNNN_name.sql`);
    const version = Number(match[1]);
    if (version !== index + 1)
      throw new Error(`migration ${file} is out of sequence; expected ${index + 1}`);
    const sql = readFileSync(new URL(file, dir), 'utf8');
    return { version, name: file, sql, checksum: createHash('sha256').update(sql).digest('hex') };
  });
}

export interface MigrationReport {
  readonly applied: readonly string[];
  readonly alreadyApplied: number;
}

export async function migrate(
  client: SqlClient,
  migrations = readMigrations(),
): Promise<MigrationReport> {
  await client.exec(
    `CREATE TABLE IF NOT EXISTS schema_migrations (
       version integer PRIMARY KEY,
       name text NOT NULL,
       checksum text NOT NULL,
       applied_at timestamptz NOT NULL DEFAULT now()
     )`,
  );
  const applied: string[] = [];
  let alreadyApplied = 0;
  for (const migration of migrations) {
    const ran = await client.transaction(async (tx) => {
      await tx.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK_KEY]);
      const { rows } = await tx.query<{ checksum: string }>(
        'SELECT checksum FROM schema_migrations WHERE version = $1',
        [migration.version],
      );
      const existing = rows[0];
      if (existing !== undefined) {
        if (existing.checksum !== migration.checksum) {
          throw new Error(`migration ${migration.name} was changed after it was applied`);
        }
        return false;
      }
      await tx.exec(migration.sql);
      await tx.query(
        'INSERT INTO schema_migrations (version, name, checksum) VALUES ($1, $2, $3)',
        [migration.version, migration.name, migration.checksum],
      );
      return true;
    });
    if (ran) applied.push(migration.name);
    else alreadyApplied += 1;
  }
  return { applied, alreadyApplied };
}
