import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Config } from '../config/env.js';
import { loadMasterKey } from '../store/secrets/index.js';
import type { SqlClient } from '../store/sql/client.js';
import { createPgClient } from '../store/sql/pg-client.js';
import { createPgliteClient } from '../store/sql/pglite-client.js';
import { openStore, type Store } from '../store/store.js';

/**
 * The database the configuration names: a PostgreSQL server at DATABASE_URL, or the embedded
 * PostgreSQL (PGlite) in `<dataDir>/pglite`, so a newcomer runs the service with nothing
 * installed.
 */
export async function openDatabase(
  config: Pick<Config, 'databaseUrl' | 'dataDir'>,
): Promise<SqlClient> {
  if (config.databaseUrl !== null) return createPgClient({ connectionString: config.databaseUrl });
  mkdirSync(config.dataDir, { recursive: true, mode: 0o700 });
  return createPgliteClient(join(config.dataDir, 'pglite'));
}

/** The store, migrated, with the master key from SPENDGATE_MASTER_KEY or the data folder. */
export async function openConfiguredStore(
  config: Pick<Config, 'databaseUrl' | 'dataDir'>,
  env: Readonly<Record<string, string | undefined>> = process.env,
): Promise<Store> {
  // Read the key before opening anything: a wrong key must stop the start with nothing opened.
  // An empty variable is an unset one, as for every other setting (config/env.ts).
  const present = Object.fromEntries(Object.entries(env).filter(([, value]) => value !== ''));
  const masterKey = loadMasterKey({
    env: present,
    dataDir: config.databaseUrl === null ? config.dataDir : null,
  });
  const client = await openDatabase(config);
  try {
    return await openStore({ client, masterKey });
  } catch (error) {
    await client.close();
    throw error;
  }
}
