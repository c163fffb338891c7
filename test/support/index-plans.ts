import type { SqlClient } from '../../src/store/sql/client.js';

/** A node of EXPLAIN (ANALYZE, FORMAT JSON). */
export interface PlanNode {
  readonly 'Node Type': string;
  readonly 'Relation Name'?: string;
  readonly 'Index Name'?: string;
  readonly 'Actual Rows': number;
  /** Times the node ran (a LATERAL subquery's once per outer row); its rows are per run. */
  readonly 'Actual Loops'?: number;
  /** Per run, as 'Actual Rows'. */
  readonly 'Rows Removed by Filter'?: number;
  readonly Plans?: readonly PlanNode[];
}

/**
 * Every node of the plan PostgreSQL runs for `statement` with table scans ruled out, the root
 * first. Why ruled out: a test's table is small enough that a scan is cheapest, and the plan
 * then says nothing of what the indexes can do for this text; on a table of millions the
 * planner takes them for the reason the test checks (few rows read).
 */
export async function indexPlanNodes(
  client: SqlClient,
  statement: { readonly text: string; readonly params: readonly unknown[] },
): Promise<PlanNode[]> {
  const plan = await client.transaction(async (tx) => {
    await tx.exec('SET LOCAL enable_seqscan = off');
    const { rows } = await tx.query<{ 'QUERY PLAN': { Plan: PlanNode }[] }>(
      `EXPLAIN (ANALYZE, FORMAT JSON) ${statement.text}`,
      statement.params,
    );
    return rows[0]?.['QUERY PLAN'][0]?.Plan;
  });
  if (plan === undefined) throw new Error('EXPLAIN answered no plan');
  const nodesOf = (node: PlanNode): PlanNode[] => [node, ...(node.Plans ?? []).flatMap(nodesOf)];
  return nodesOf(plan);
}
