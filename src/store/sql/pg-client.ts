import { createHash } from 'node:crypto';
import pg from 'pg';
import type { SqlClient, SqlQueryable, SqlResult, TransactionOptions } from './client.js';
import { TEXT_TYPE_OIDS } from './client.js';

/** `pg` returns int8 and date as text only when told: a per-pool parser, never the global one. */
const TEXT_OIDS: ReadonlySet<number> = new Set(Object.values(TEXT_TYPE_OIDS));
const asText = (value: string): string => value;
// pg's own parser table is typed by an enum of OIDs; any OID it does not know parses as text.
const defaultParser = pg.types.getTypeParser as (
  oid: number,
  format?: 'text' | 'binary',
) => unknown;
const typeParsers = {
  getTypeParser: (oid: number, format?: 'text' | 'binary') =>
    TEXT_OIDS.has(oid) ? asText : defaultParser(oid, format),
};

export interface PgClientOptions {
  readonly connectionString: string;
  /** Pool size; each concurrent transaction holds one connection. */
  readonly connectionsMax?: number;
}

/**
 * Statement names by SQL text. A named statement is parsed and planned once per connection
 * and then only bound and executed, which is most of a short query's server time. The set of
 * texts is bounded by the code (dynamic parts are parameters, and the few texts that vary do
 * so by a bounded shape); past the bound, queries run unnamed rather than grow without end.
 */
const STATEMENT_NAMES_MAX = 2000;
const statementNames = new Map<string, string>();

function statementName(text: string): string | undefined {
  const known = statementNames.get(text);
  if (known !== undefined || statementNames.size >= STATEMENT_NAMES_MAX) return known;
  const name = `sg_${createHash('sha1').update(text).digest('hex').slice(0, 20)}`;
  statementNames.set(text, name);
  return name;
}

function queryable(target: pg.Pool | pg.PoolClient): SqlQueryable {
  return {
    query: async <Row>(text: string, params: readonly unknown[] = []): Promise<SqlResult<Row>> => {
      const name = params.length === 0 ? undefined : statementName(text);
      const config: pg.QueryConfig = { text, values: params as unknown[] };
      if (name !== undefined) config.name = name;
      const result = await target.query(config);
      return { rows: result.rows as Row[], rowCount: result.rowCount ?? 0 };
    },
    exec: async (text: string): Promise<void> => {
      await target.query(text);
    },
  };
}

export function createPgClient(options: PgClientOptions): SqlClient {
  const pool = new pg.Pool({
    connectionString: options.connectionString,
    max: options.connectionsMax ?? 20,
    types: typeParsers,
    // Timestamps are written and read in UTC whatever the server's default zone.
    options: '-c timezone=UTC',
  });
  // An idle connection that dies (server restart) must not crash the process; the next
  // query gets a fresh connection.
  pool.on('error', () => undefined);
  const direct = queryable(pool);
  return {
    kind: 'pg',
    query: direct.query,
    exec: direct.exec,
    async transaction<T>(
      work: (tx: SqlQueryable) => Promise<T>,
      options: TransactionOptions = {},
    ): Promise<T> {
      const connection = await pool.connect();
      let broken = false;
      // A connection that dies while checked out (server restart, terminated session) emits
      // 'error' on itself; unheard, that would end the process. The failed query rejects on
      // its own, so the listener only marks the connection to be discarded.
      const onError = (): void => {
        broken = true;
      };
      connection.on('error', onError);
      try {
        // One simple-protocol message with both statements: one round trip, as BEGIN alone.
        await connection.query(
          options.genericPlans === true
            ? 'BEGIN; SET LOCAL plan_cache_mode = force_generic_plan'
            : 'BEGIN',
        );
        const result = await work(queryable(connection));
        await connection.query('COMMIT');
        return result;
      } catch (error) {
        try {
          await connection.query('ROLLBACK');
        } catch {
          // The connection itself failed: do not return it to the pool.
          broken = true;
        }
        throw error;
      } finally {
        connection.off('error', onError);
        connection.release(broken);
      }
    },
    async close(): Promise<void> {
      await pool.end();
    },
  };
}
