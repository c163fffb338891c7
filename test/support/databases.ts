import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { describe } from 'vitest';
import type { SqlClient } from '../../src/store/sql/client.js';
import { createPgClient } from '../../src/store/sql/pg-client.js';
import { createPgliteClient } from '../../src/store/sql/pglite-client.js';

/**
 * Databases for tests: a fresh database on the real PostgreSQL server for each suite (so runs
 * never see each other's data, and are dropped afterwards), or an in-memory PGlite. Store
 * suites run once against each.
 */
export const SERVER_URL =
  process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

export type DatabaseKind = 'pg' | 'pglite';

export interface TestDatabase {
  readonly kind: DatabaseKind;
  /** The client, created on first use. */
  client(): Promise<SqlClient>;
  /** Closes the client and drops the database. */
  close(): Promise<void>;
}

function withDatabase(url: string, name: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${name}`;
  return parsed.toString();
}

async function admin<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: SERVER_URL });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

export function testDatabase(kind: DatabaseKind, connectionsMax = 20): TestDatabase {
  let client: Promise<SqlClient> | undefined;
  const name = `sg_test_${process.pid}_${randomBytes(6).toString('hex')}`;
  return {
    kind,
    client() {
      client ??=
        kind === 'pglite'
          ? createPgliteClient()
          : admin((server) => server.query(`CREATE DATABASE ${name}`)).then(() =>
              createPgClient({ connectionString: withDatabase(SERVER_URL, name), connectionsMax }),
            );
      return client;
    },
    async close() {
      if (client === undefined) return;
      await (await client).close();
      if (kind === 'pg')
        await admin((server) => server.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
    },
  };
}

/** Declares the suite once per database kind. */
export function forEachDatabase(title: string, body: (database: TestDatabase) => void): void {
  for (const kind of ['pg', 'pglite'] as const) {
    describe(`${title} [${kind}]`, () => {
      body(testDatabase(kind));
    });
  }
}
