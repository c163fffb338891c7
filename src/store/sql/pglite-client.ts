import { PGlite, type Transaction } from '@electric-sql/pglite';
import type { SqlClient, SqlQueryable, SqlResult } from './client.js';
import { TEXT_TYPE_OIDS } from './client.js';

/**
 * The embedded PostgreSQL. PGlite is one connection: it runs one transaction at a time and
 * queues the rest, which makes every transaction serial (and so trivially serializable).
 */
const textParsers = Object.fromEntries(
  Object.values(TEXT_TYPE_OIDS).map((oid) => [oid, (value: string) => value]),
);

function queryable(target: PGlite | Transaction): SqlQueryable {
  return {
    query: async <Row>(text: string, params: readonly unknown[] = []): Promise<SqlResult<Row>> => {
      const result = await target.query<Row>(text, params as unknown[]);
      return { rows: result.rows, rowCount: result.affectedRows ?? result.rows.length };
    },
    exec: async (text: string): Promise<void> => {
      await target.exec(text);
    },
  };
}

/** `dataDir`: a folder to persist in, or undefined for an in-memory database (tests). */
export async function createPgliteClient(dataDir?: string): Promise<SqlClient> {
  const db = await PGlite.create(dataDir, { parsers: textParsers });
  await db.exec("SET TIME ZONE 'UTC'");
  const direct = queryable(db);
  return {
    kind: 'pglite',
    query: direct.query,
    exec: direct.exec,
    async transaction<T>(work: (tx: SqlQueryable) => Promise<T>): Promise<T> {
      return db.transaction((tx) => work(queryable(tx)));
    },
    async close(): Promise<void> {
      await db.close();
    },
  };
}
