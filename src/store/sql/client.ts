/*
 * The SQL port the store speaks: one interface over a PostgreSQL server (`pg`) and the
 * embedded PostgreSQL (PGlite). Both run the same SQL; the adapters make them return the same
 * JavaScript values: numeric, int8 and date as strings (exact; parsed at the edge), timestamptz
 * as Date, jsonb as parsed JSON, arrays as arrays.
 */

import type { Corkable } from './pipeline.js';
import type { BatchMember } from './shared-transaction.js';

export interface SqlResult<Row> {
  readonly rows: Row[];
  readonly rowCount: number;
}

// Function-valued properties rather than methods: adapters hand out closures, never `this`.
export interface SqlQueryable {
  /** One statement with `$1`-style parameters. */
  readonly query: <Row = Record<string, unknown>>(
    text: string,
    params?: readonly unknown[],
  ) => Promise<SqlResult<Row>>;
  /** Several statements, no parameters (migrations). */
  readonly exec: (text: string) => Promise<void>;
  /**
   * Present when the work runs in a shared transaction with other messages
   * (shared-transaction.ts): the lock functions claim their vault through it, and skip a vault
   * another transaction has locked.
   */
  readonly batch?: BatchMember;
}

export interface TransactionOptions {
  /**
   * Plan every prepared statement of the transaction once, for any parameters
   * (`plan_cache_mode = force_generic_plan`), for the authorize path's fixed statements over
   * parameter arrays: PostgreSQL otherwise plans them again on each execution, as its cost
   * estimates for arrays never favour the generic plan (about 0.3 ms per statement, measured
   * in docs/performance.md); and by index wherever an index reaches the rows
   * (GENERIC_PLAN_SETTINGS in pg-client.ts says why). Set in the statement that begins the
   * transaction, so it costs no round trip; other transactions keep the server's default.
   */
  readonly genericPlans?: boolean;
  /**
   * Send BEGIN together with the work's first statements rather than one round trip before
   * them. Only for work whose statements before its first `await` are reads, or a write that
   * checks on its own snapshot everything it depends on (authorize/one-trip.ts): were
   * BEGIN to fail, they would have run outside the transaction, which a read survives, and
   * such a write refuses. Every result the work awaits waits for BEGIN's answer too, so
   * nothing that follows it can write outside the transaction.
   */
  readonly pipelineBegin?: boolean;
}

/**
 * The queryable a transaction's work gets. `queryAndCommit` sends the work's last statement
 * with the COMMIT behind it, in one round trip instead of two; once called, the transaction
 * takes no further statement (an assertion). It resolves with the statement's result once
 * both are answered, and rejects, with the transaction rolled back, if either fails.
 */
export interface SqlTransaction extends SqlQueryable, Corkable {
  readonly queryAndCommit: <Row = Record<string, unknown>>(
    text: string,
    params?: readonly unknown[],
  ) => Promise<SqlResult<Row>>;
}

export interface SqlClient extends SqlQueryable {
  readonly kind: 'pg' | 'pglite';
  /**
   * Runs `work` in one transaction: committed when it resolves, rolled back when it throws.
   * Not retried here; `runTransaction` in transaction.ts retries serialization failures.
   */
  transaction<T>(
    work: (tx: SqlTransaction) => Promise<T>,
    options?: TransactionOptions,
  ): Promise<T>;
  close(): Promise<void>;
}

/** PostgreSQL type OIDs whose values the adapters return as the server's text. */
export const TEXT_TYPE_OIDS = {
  int8: 20,
  date: 1082,
  numeric: 1700,
} as const;
