import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigError, type Config } from '../config/env.js';
import type { Pricing } from '../core/index.js';
import { readMigrations } from '../store/migrations/runner.js';
import {
  DecryptionError,
  Keyring,
  loadMasterKeys,
  MASTER_KEY_DECRYPT_ONLY_ENV,
  MASTER_KEY_ENV,
  type MasterKeys,
} from '../store/secrets/index.js';
import type { SqlClient } from '../store/sql/client.js';
import { createPgClient } from '../store/sql/pg-client.js';
import { createPgliteClient } from '../store/sql/pglite-client.js';
import { openStore, type OpenedStore } from '../store/store.js';
import { checkDatabase, databaseAddress } from './database-check.js';
import { SILENT, type Progress } from './progress.js';

type Env = Readonly<Record<string, string | undefined>>;

/** A PostgreSQL server answers within this, or the command says it is still connecting. */
const SLOW_CONNECT_MS = 2_000;
/**
 * The embedded database takes seconds to open, longer on its first start (initdb); a folder
 * held by another process is refused at once, before this.
 */
const SLOW_EMBEDDED_MS = 250;
/** Migrations on a PostgreSQL server take well under this, unless a table is large. */
const SLOW_MIGRATIONS_MS = 2_000;
/**
 * A replica connection not made within this fails, and the read goes to the primary: a
 * replica that does not answer costs a read at most this, then is skipped for 5 s.
 */
const REPLICA_CONNECT_MS_MAX = 1_000;

/**
 * The database the configuration names: a PostgreSQL server at DATABASE_URL (checked first,
 * database-check.ts), or the embedded PostgreSQL (PGlite) in `<dataDir>/pglite`, so a
 * newcomer runs the service with nothing installed.
 */
export async function openDatabase(
  config: Pick<Config, 'databaseUrl' | 'dataDir'> & Partial<Pick<Config, 'databasePoolMax'>>,
  progress: Progress = SILENT,
): Promise<SqlClient> {
  const { databaseUrl } = config;
  if (databaseUrl !== null) {
    await progress.slow(
      `connecting to PostgreSQL at ${databaseAddress(databaseUrl)} (DATABASE_URL)...`,
      () => checkDatabase(databaseUrl),
      SLOW_CONNECT_MS,
    );
    return createPgClient({
      connectionString: databaseUrl,
      connectionsMax: config.databasePoolMax,
    });
  }
  mkdirSync(config.dataDir, { recursive: true, mode: 0o700 });
  const folder = join(config.dataDir, 'pglite');
  const message = existsSync(join(folder, 'PG_VERSION'))
    ? `opening the embedded database in ${folder}...`
    : `creating the embedded database in ${folder} (initdb, on the first start only)...`;
  return progress.slow(message, () => createPgliteClient(folder), SLOW_EMBEDDED_MS);
}

export interface OpenOptions {
  readonly env?: Env;
  readonly progress?: Progress;
  /**
   * The keys to open the store with, chosen once the database is open (the embedded one then
   * locked to this process): `keys rotate-master` replaces the data folder's key file here.
   */
  readonly rekey?: () => MasterKeys;
  /** Refuse master keys that do not open the database's vault keys (`serve`). */
  readonly checkKeys?: boolean;
  /** The price feeds' readings in memory, bounds and SOL hold buffer (`serve`: price-book.ts). */
  readonly pricing?: Pricing;
}

/**
 * The store, migrated, with the master key from SPENDGATE_MASTER_KEY or the data folder, and
 * the decrypt-only keys (SPENDGATE_MASTER_KEY_DECRYPT_ONLY, or the data folder's previous key
 * while a rotation is unfinished).
 */
export async function openConfiguredStore(
  config: Pick<Config, 'databaseUrl' | 'dataDir'> &
    Partial<
      Pick<
        Config,
        | 'databaseReadUrl'
        | 'databasePoolMax'
        | 'databaseWritesMax'
        | 'holdAgeMsMax'
        | 'holdLongAgeMsMax'
      >
    >,
  options: OpenOptions = {},
): Promise<OpenedStore> {
  const progress = options.progress ?? SILENT;
  // Read the keys before opening anything: a wrong key must stop the start with nothing opened.
  // An empty variable is an unset one, as for every other setting (config/env.ts).
  const present = Object.fromEntries(
    Object.entries(options.env ?? process.env).filter(([, value]) => value !== ''),
  );
  const loadKeys = () =>
    loadMasterKeys({ env: present, dataDir: config.databaseUrl === null ? config.dataDir : null });
  let keys = loadKeys();
  const client = await openDatabase(config, progress);
  // Not checked at start: a replica that is down costs a read nothing but a fallback.
  const readUrl = config.databaseReadUrl ?? null;
  const replicaClient =
    readUrl === null
      ? null
      : createPgClient({
          connectionString: readUrl,
          connectionsMax: config.databasePoolMax,
          replica: { connectTimeoutMs: REPLICA_CONNECT_MS_MAX },
        });
  try {
    if (options.rekey !== undefined) keys = options.rekey();
    const open = () =>
      openStore({
        client,
        masterKey: keys.current,
        decryptOnlyMasterKeys: keys.decryptOnly,
        // The holds approved here expire as the settings say (contract v1.2, section 16).
        ...(config.holdAgeMsMax === undefined || config.holdLongAgeMsMax === undefined
          ? {}
          : { holdExpiry: { defaultMs: config.holdAgeMsMax, longMs: config.holdLongAgeMsMax } }),
        ...(replicaClient === null ? {} : { replica: { client: replicaClient } }),
        ...(config.databaseWritesMax === undefined
          ? {}
          : { writesOpenMax: config.databaseWritesMax }),
        ...(options.pricing === undefined ? {} : { pricing: options.pricing }),
      });
    const pending = await pendingMigrations(client);
    const store =
      pending === 0
        ? await open()
        : await progress.slow(
            `applying ${pending} database migration${pending === 1 ? '' : 's'}...`,
            open,
            SLOW_MIGRATIONS_MS,
          );
    if (options.checkKeys === true) await checkMasterKeys(client, keys);
    return store;
  } catch (error) {
    await replicaClient?.close();
    await client.close();
    throw error;
  }
}

/** Migrations not yet applied (all of them on a new database). */
async function pendingMigrations(client: SqlClient): Promise<number> {
  const migrations = readMigrations();
  const { rows } = await client.query<{ present: boolean }>(
    "SELECT to_regclass('schema_migrations') IS NOT NULL AS present",
  );
  if (rows[0]?.present !== true) return migrations.length;
  const applied = await client.query<{ version: number }>('SELECT version FROM schema_migrations');
  const versions = new Set(applied.rows.map((row) => row.version));
  return migrations.filter((migration) => !versions.has(migration.version)).length;
}

/**
 * A sample, so that the start stays one indexed read: the first and the last vault (by id,
 * which begins with its creation time) must unwrap under the configured keys. A master key
 * that is not the database's, or an old key removed before `keys rotate-master` finished,
 * stops the start here rather than failing each card reveal later.
 */
async function checkMasterKeys(client: SqlClient, keys: MasterKeys): Promise<void> {
  const { rows } = await client.query<{ id: string; data_key_wrapped: string }>(
    `(SELECT id, data_key_wrapped FROM vaults ORDER BY id LIMIT 1)
     UNION ALL (SELECT id, data_key_wrapped FROM vaults ORDER BY id DESC LIMIT 1)`,
  );
  const keyring = new Keyring(keys);
  for (const row of rows) {
    try {
      keyring.rewrapVaultKey(row.id, row.data_key_wrapped);
    } catch (error) {
      if (!(error instanceof DecryptionError)) throw error;
      throw new ConfigError(
        `the master key (${MASTER_KEY_ENV}, or master.key in the data folder) does not open ` +
          `vault ${row.id}'s data key: it is not this database's key, or a key the database ` +
          `still needs was removed; list that key in ${MASTER_KEY_DECRYPT_ONLY_ENV} ` +
          '(docs/operations.md, rotating the master key)',
      );
    }
  }
}
