import pg from 'pg';
import type { SqlClient, SqlTransaction } from '../../src/store/sql/client.js';
import { GENERIC_PLAN_SETTINGS } from '../../src/store/sql/pg-client.js';

/**
 * The statements a store sends, recorded as sent, and the generic plans PostgreSQL makes of
 * them (as the hot path prepares them, under GENERIC_PLAN_SETTINGS): the authorize
 * batch's plans (test/store/authorize-plans.test.ts) and the distribution plan's keys
 * (test/store/distribution-plan.test.ts) are checked on the statements the code really sends.
 */

export interface Statement {
  readonly text: string;
  readonly params: readonly unknown[];
}

/** The client, recording every statement sent inside a transaction while `recording` is on. */
export function recordingClient(
  client: SqlClient,
  seen: Statement[],
  recording: { on: boolean },
): SqlClient {
  const record = (text: string, params: readonly unknown[] = []) => {
    if (recording.on) seen.push({ text, params });
  };
  const wrap = (tx: SqlTransaction): SqlTransaction => ({
    ...tx,
    query: (text, params) => (record(text, params), tx.query(text, params)),
    queryAndCommit: (text, params) => (record(text, params), tx.queryAndCommit(text, params)),
  });
  return {
    ...client,
    transaction: (work, options) => client.transaction((tx) => work(wrap(tx)), options),
  };
}

/** A scalar parameter as the text pg sends for it (the hot path binds strings, numbers, dates). */
function textOf(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value instanceof Date) return value.toISOString();
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  throw new Error(`a parameter of an unexpected type: ${typeof value}`);
}

/** A parameter as a literal of that text (arrays as PostgreSQL's array text). */
function literalOf(value: unknown): string {
  if (value === null || value === undefined) return 'NULL';
  if (!Array.isArray(value)) return pg.escapeLiteral(textOf(value));
  const element = (item: unknown) =>
    item === null ? 'NULL' : `"${textOf(item).replace(/[\\"]/g, (c) => `\\${c}`)}"`;
  return pg.escapeLiteral(`{${value.map(element).join(',')}}`);
}

/** EXPLAIN `options` of the generic plan PostgreSQL makes of `statement`: its rows' plans. */
async function explainGeneric(
  client: SqlClient,
  statement: Statement,
  options: string,
): Promise<unknown[]> {
  return client.transaction(async (tx) => {
    // As the authorize transaction plans them (its BEGIN sets these).
    await tx.exec(GENERIC_PLAN_SETTINGS);
    await tx.exec(`PREPARE authorize_plan_probe AS ${statement.text}`);
    // EXECUTE takes no bound parameters: the values go in as the literals pg would send.
    const args = statement.params.map((value) => literalOf(value)).join(', ');
    const { rows } = await tx.query<{ 'QUERY PLAN': unknown }>(
      `EXPLAIN ${options} EXECUTE authorize_plan_probe(${args})`,
    );
    await tx.exec('DEALLOCATE authorize_plan_probe');
    return rows.map((row) => row['QUERY PLAN']);
  });
}

/** The generic plan PostgreSQL makes of `statement`, as EXPLAIN prints it. */
export async function genericPlan(client: SqlClient, statement: Statement): Promise<string> {
  return (await explainGeneric(client, statement, '')).join('\n');
}

/**
 * The generic plan's tree (EXPLAIN (VERBOSE, FORMAT JSON)): every condition names its
 * columns with their relation's alias.
 */
export async function genericPlanTree(client: SqlClient, statement: Statement): Promise<unknown> {
  const [document] = await explainGeneric(client, statement, '(VERBOSE, FORMAT JSON)');
  return (document as { Plan?: unknown }[] | undefined)?.[0]?.Plan;
}
