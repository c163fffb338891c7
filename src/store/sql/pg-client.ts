import { createHash } from 'node:crypto';
import pg from 'pg';
import { DATABASE_POOL_MAX_DEFAULT } from '../../config/env.js';
import { assert } from '../../core/index.js';
import type {
  SqlClient,
  SqlQueryable,
  SqlResult,
  SqlTransaction,
  TransactionOptions,
} from './client.js';
import { withArrayLiterals } from './array-literal.js';
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
  /**
   * Pool size, DATABASE_POOL_MAX_DEFAULT when undefined (so a caller passes its setting as it
   * is); each concurrent transaction holds one connection.
   */
  readonly connectionsMax?: number | undefined;
  /**
   * A replica's pool (DATABASE_READ_URL): every transaction read-only, and a connection not
   * made within `connectTimeoutMs` fails, so that a replica that does not answer costs a read
   * a bounded wait before it falls back to the primary.
   */
  readonly replica?: { readonly connectTimeoutMs: number };
}

/**
 * Statement names by SQL text. A named statement is parsed and planned once per connection
 * and then only bound and executed, which is most of a short query's server time. The set of
 * texts is bounded by the code (dynamic parts are parameters, and the few texts that vary do
 * so by a bounded shape); past the bound, queries run unnamed rather than grow without end.
 */
const STATEMENT_NAMES_MAX = 2000;
// eslint-disable-next-line no-restricted-syntax -- the process's: one name per text, on every pool
const statementNames = new Map<string, string>();

function statementName(text: string): string | undefined {
  const known = statementNames.get(text);
  if (known !== undefined || statementNames.size >= STATEMENT_NAMES_MAX) return known;
  const name = `sg_${createHash('sha1').update(text).digest('hex').slice(0, 20)}`;
  statementNames.set(text, name);
  return name;
}

async function runQuery<Row>(
  target: pg.Pool | pg.PoolClient,
  text: string,
  params: readonly unknown[],
): Promise<SqlResult<Row>> {
  const name = params.length === 0 ? undefined : statementName(text);
  const config: pg.QueryConfig = { text, values: withArrayLiterals(params) };
  if (name !== undefined) config.name = name;
  const result = await target.query(config);
  return { rows: result.rows as Row[], rowCount: result.rowCount ?? 0 };
}

function queryable(target: pg.Pool | pg.PoolClient): SqlQueryable {
  return {
    query: <Row>(text: string, params: readonly unknown[] = []) =>
      runQuery<Row>(target, text, params),
    exec: async (text: string): Promise<void> => {
      await target.query(text);
    },
  };
}

/**
 * The connection's socket, to cork around statements sent together: corked, the messages of
 * several pipelined statements leave in one write instead of one system call each (a write
 * on this machine's loopback costs tens of microseconds of CPU). `connection.stream` is pg's
 * own field, not in its types; without it, statements still pipeline, one write each.
 */
function socketOf(connection: pg.PoolClient): { cork(): void; uncork(): void } | null {
  const stream = (connection as unknown as { connection?: { stream?: unknown } }).connection
    ?.stream;
  return typeof stream === 'object' &&
    stream !== null &&
    'cork' in stream &&
    typeof stream.cork === 'function' &&
    'uncork' in stream &&
    typeof stream.uncork === 'function'
    ? (stream as { cork(): void; uncork(): void })
    : null;
}

/** Sends what `send` issues in one write: every statement it issues leaves together. */
function together<T>(connection: pg.PoolClient, send: () => T): T {
  const socket = socketOf(connection);
  socket?.cork();
  try {
    return send();
  } finally {
    socket?.uncork();
  }
}

/** A transaction's state, shared by the wrapper and the queryable its work gets. */
interface TransactionState {
  /** queryAndCommit sent the COMMIT: the work may send nothing more, the wrapper no COMMIT. */
  commitSent: boolean;
  /** The socket is corked until the end of this turn of the event loop (corkForTick). */
  corkedForTick: boolean;
}

/** Corks the connection's socket until this turn of the event loop ends, once per turn. */
function corkForTick(connection: pg.PoolClient, state: TransactionState): void {
  if (state.corkedForTick) return;
  const socket = socketOf(connection);
  if (socket === null) return;
  socket.cork();
  state.corkedForTick = true;
  // setImmediate runs after this turn's I/O callbacks and their promise reactions: every
  // member woken by the answers that arrived in this turn has sent its next statements.
  setImmediate(() => {
    state.corkedForTick = false;
    socket.uncork();
  });
}

function transactionQueryable(
  connection: pg.PoolClient,
  begun: Promise<unknown> | null,
  state: TransactionState,
): SqlTransaction {
  const query = async <Row>(text: string, params: readonly unknown[] = []) => {
    assert(!state.commitSent, 'no statement after the one sent with COMMIT');
    const sent = runQuery<Row>(connection, text, params);
    if (begun === null) return sent;
    // BEGIN's answer arrives before this statement's: waiting for it costs nothing, and a
    // failed BEGIN fails every statement of the work, so none writes outside a transaction.
    const [result] = await Promise.all([sent, begun]);
    return result;
  };
  return {
    query,
    exec: async (text: string): Promise<void> => {
      await query(text);
    },
    together: (send) => together(connection, send),
    corkForTick: () => {
      corkForTick(connection, state);
    },
    queryAndCommit: async <Row>(text: string, params: readonly unknown[] = []) => {
      assert(!state.commitSent, 'one statement is sent with COMMIT');
      const [sent, committed] = together(connection, () => [
        runQuery<Row>(connection, text, params),
        connection.query('COMMIT'),
      ]);
      state.commitSent = true;
      // Both settle before either's answer is used: the connection goes back to the pool only
      // once the COMMIT is answered.
      const [statement, commit] = await Promise.allSettled([sent, committed, begun]);
      if (statement.status === 'rejected') throw statement.reason;
      if (commit.status === 'rejected') throw commit.reason;
      // A COMMIT of a transaction that failed is answered ROLLBACK, not an error. The statement
      // before it succeeded, so the transaction had not failed: ROLLBACK here is a bug.
      assert(
        commit.value.command === 'COMMIT',
        `a transaction whose last statement succeeded commits (answered ${commit.value.command})`,
      );
      return statement.value;
    },
  };
}

export function createPgClient(options: PgClientOptions): SqlClient {
  const pool = new pg.Pool({
    connectionString: options.connectionString,
    max: options.connectionsMax ?? DATABASE_POOL_MAX_DEFAULT,
    // Statements sent before the previous one is answered go out at once (pg's pipelining,
    // each with its own Sync); the authorize path sends its reads, and its write with COMMIT,
    // this way. Code that awaits each statement behaves as without it.
    pipeline: true,
    types: typeParsers,
    // Timestamps are written and read in UTC whatever the server's default zone. JIT off: every
    // statement here runs in milliseconds, and a plan made for any parameters (a prepared
    // statement's generic plan) can be costed high enough to be compiled first, 100-300 ms
    // for a list that then runs in one (measured, docs/performance.md).
    options:
      options.replica === undefined
        ? '-c timezone=UTC -c jit=off'
        : '-c timezone=UTC -c jit=off -c default_transaction_read_only=on',
    ...(options.replica === undefined
      ? {}
      : { connectionTimeoutMillis: options.replica.connectTimeoutMs }),
  });
  // An idle connection that dies (server restart) must not crash the process; the next
  // query gets a fresh connection.
  pool.on('error', () => undefined);
  const direct = queryable(pool);
  return {
    kind: 'pg',
    query: direct.query,
    exec: direct.exec,
    // Not async itself: the transaction's promise is handed on, with no await of its own.
    transaction: (work, options) => runPooledTransaction(pool, work, options),
    async close(): Promise<void> {
      await pool.end();
    },
  };
}

/**
 * The settings of a transaction with `genericPlans` (TransactionOptions), set with its BEGIN:
 * - plan every prepared statement once, for any parameters: PostgreSQL otherwise plans the
 *   authorize path's statements over parameter arrays again on each execution;
 * - never a scan of a whole table where an index reaches the rows. The statements of such a
 *   transaction read and write the rows their parameters name, and a generic plan guesses an
 *   array parameter at 10 rows: against a small fleet's table of a few pages, a scan and a
 *   hash join looked cheaper to the planner than ten probes, so every batch, however small,
 *   read every row (the vaults' totals update did: 0.13 ms of an idle authorization's 1.2 ms
 *   write, with 200 vaults; docs/performance.md). A scan remains where no index serves.
 * Tests plan the statements under the same settings (test/support/recorded-statements.ts).
 */
export const GENERIC_PLAN_SETTINGS =
  'SET LOCAL plan_cache_mode = force_generic_plan; SET LOCAL enable_seqscan = off';

/** One transaction on a connection of its own, which goes back to the pool whole or not at all. */
async function runPooledTransaction<T>(
  pool: pg.Pool,
  work: (tx: SqlTransaction) => Promise<T>,
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
  const state: TransactionState = { commitSent: false, corkedForTick: false };
  try {
    // One simple-protocol message with all its statements: one round trip, as BEGIN alone.
    const beginText = options.genericPlans === true ? `BEGIN; ${GENERIC_PLAN_SETTINGS}` : 'BEGIN';
    let result: T;
    if (options.pipelineBegin === true) {
      // The pool pipelines: BEGIN and the statements the work sends before its first await
      // leave in one write and are answered in one round trip.
      const { begun, pending } = together(connection, () => {
        const begin = connection.query(beginText);
        return { begun: begin, pending: work(transactionQueryable(connection, begin, state)) };
      });
      // Settled before the work's own results can be (each waits for it), so never unheard.
      begun.catch(() => undefined);
      result = await pending;
      await begun;
    } else {
      await connection.query(beginText);
      result = await work(transactionQueryable(connection, null, state));
    }
    if (!state.commitSent) await connection.query('COMMIT');
    return result;
  } catch (error) {
    try {
      // After a failed queryAndCommit the server has already rolled back: this ROLLBACK
      // only draws a warning, and waiting for it means every answer is in.
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
}
