import { PGlite, type Transaction } from '@electric-sql/pglite';
import { lockDataFolder } from '../data-folder-lock.js';
import { assert } from '../../core/index.js';
import type { SqlClient, SqlQueryable, SqlResult, SqlTransaction } from './client.js';
import { TEXT_TYPE_OIDS } from './client.js';

/*
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

/**
 * In-process, a COMMIT costs no round trip: `queryAndCommit` is the statement, and PGlite
 * commits when the work returns. The same rule holds as on a server: nothing after it.
 */
function pgliteTransaction(tx: Transaction): SqlTransaction {
  const inner = queryable(tx);
  let commitSent = false;
  const query = <Row>(text: string, params?: readonly unknown[]): Promise<SqlResult<Row>> => {
    assert(!commitSent, 'no statement after the one sent with COMMIT');
    return inner.query<Row>(text, params);
  };
  return {
    query,
    exec: (text) => {
      assert(!commitSent, 'no statement after the one sent with COMMIT');
      return inner.exec(text);
    },
    queryAndCommit: <Row>(text: string, params?: readonly unknown[]) => {
      const result = query<Row>(text, params);
      commitSent = true;
      return result;
    },
  };
}

/**
 * `dataDir`: a folder to persist in, or undefined for an in-memory database (tests). A folder
 * is locked for this client until it closes (data-folder-lock.ts): a second client on it, in
 * this process or another, is refused with DataFolderInUseError.
 */
export async function createPgliteClient(dataDir?: string): Promise<SqlClient> {
  const lock = dataDir === undefined ? null : await lockDataFolder(dataDir);
  let db: PGlite;
  try {
    db = await PGlite.create(dataDir, { parsers: textParsers });
    await db.exec("SET TIME ZONE 'UTC'");
  } catch (error) {
    lock?.release();
    throw error;
  }
  const direct = queryable(db);
  // A client whose lock was taken over must not write beside the new holder.
  const checkLock = (): void => {
    if (lock?.lost === true)
      throw new Error(`the lock on the embedded database in ${dataDir ?? ''} was taken over`);
  };
  return {
    kind: 'pglite',
    query: async (text, params) => {
      checkLock();
      return direct.query(text, params);
    },
    exec: async (text) => {
      checkLock();
      return direct.exec(text);
    },
    // No TransactionOptions here: PGlite plans each statement in-process, unnamed, so there is
    // no plan cache for `genericPlans` to steer, and no round trip for `pipelineBegin` to save.
    async transaction<T>(work: (tx: SqlTransaction) => Promise<T>): Promise<T> {
      checkLock();
      return db.transaction((tx) => work(pgliteTransaction(tx)));
    },
    async close(): Promise<void> {
      try {
        await db.close();
      } finally {
        lock?.release();
      }
    },
  };
}
