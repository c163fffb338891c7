import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Scope } from '../../src/core/index.js';
import {
  DISTRIBUTION,
  HOT_PATH_GAPS,
  type HotPathGap,
  type Placement,
} from '../../src/store/distribution.js';
import type { SqlClient } from '../../src/store/sql/client.js';
import { testDatabase } from '../support/databases.js';
import {
  genericPlanTree,
  recordingClient,
  type Statement,
} from '../support/recorded-statements.js';
import {
  merchant,
  networkTransactionId,
  openTestStore,
  usdc,
  type TestStore,
} from '../support/store.js';

/**
 * The distribution plan (src/store/distribution.ts, docs/scaling.md) stays true as the code
 * changes: every table of the migrated schema is placed, every distribution column named is
 * there (and none marked to add is), and every statement the authorize batch sends, as the
 * code sends it, reads each distributed table by its distribution column, but for the gaps the
 * plan lists (each with the change it needs). A statement is judged on the generic plan
 * PostgreSQL makes of it (EXPLAIN VERBOSE: conditions name columns by their relation's
 * alias): a scan of a distributed table is by its key when the key is compared for equality,
 * in the scan or in a join above it, with a parameter, with a value made of parameters (an
 * unnest, a subquery's output), or with the key of another table of the statement that is read
 * by its own key (a join of colocated tables). A join on the key to a table read some other
 * way is not: that is a scan of every node.
 */

/** A scan of a table in a plan: the alias its conditions use, and every condition over it. */
interface Scan {
  readonly table: string;
  readonly alias: string;
  readonly conditions: readonly string[];
}

interface PlanNode {
  readonly 'Node Type'?: string;
  readonly 'Relation Name'?: string;
  readonly Alias?: string;
  readonly Plans?: readonly PlanNode[];
  readonly [condition: string]: unknown;
}

const SCAN_CONDITIONS = ['Index Cond', 'Recheck Cond', 'Filter', 'TID Cond'];
const JOIN_CONDITIONS = ['Hash Cond', 'Merge Cond', 'Join Filter'];
/** A bound on the walk: no plan of the hot path comes near it. */
const PLAN_NODES_MAX = 10_000;

/** The scans of a plan, each with its own conditions and those of the joins above it. */
function scansOf(plan: PlanNode): Scan[] {
  const scans: Scan[] = [];
  let visited = 0;
  const walk = (node: PlanNode, above: readonly string[]) => {
    visited += 1;
    if (visited > PLAN_NODES_MAX) throw new Error('a plan of more than 10,000 nodes');
    const strings = (keys: readonly string[]) =>
      keys.map((key) => node[key]).filter((value): value is string => typeof value === 'string');
    const joins = [...above, ...strings(JOIN_CONDITIONS)];
    const type = node['Node Type'] ?? '';
    const table = node['Relation Name'];
    // ModifyTable names its table too: an INSERT routes each row by its own key; an UPDATE's
    // or a DELETE's rows are read by the scan below it.
    if (table !== undefined && type !== 'ModifyTable') {
      // A bitmap heap scan's index conditions are on its bitmap index scans below.
      const below = (node.Plans ?? []).flatMap((child) =>
        child['Node Type']?.startsWith('Bitmap') === true && child['Relation Name'] === undefined
          ? SCAN_CONDITIONS.map((key) => child[key]).filter(
              (value): value is string => typeof value === 'string',
            )
          : [],
      );
      scans.push({
        table,
        alias: node.Alias ?? table,
        conditions: [...strings(SCAN_CONDITIONS), ...below, ...joins],
      });
    }
    for (const child of node.Plans ?? []) walk(child, joins);
  };
  walk(plan, []);
  return scans;
}

const OPERAND = String.raw`(\$\d+|[a-z_][a-z0-9_]*\.[a-z_][a-z0-9_]*)`;
/** `a = b` and `a = ANY (b)` of two operands (a parameter, or alias.column), either way round. */
const EQUALITY = new RegExp(`${OPERAND}\\s*=\\s*(?:ANY\\s*\\(\\s*)?${OPERAND}(?!\\s*\\|\\|)`, 'g');

function equalitiesOf(conditions: readonly string[]): [string, string][] {
  const pairs: [string, string][] = [];
  for (const condition of conditions) {
    for (const match of condition.matchAll(EQUALITY)) {
      const [left, right] = [match[1] as string, match[2] as string];
      // An operand right after a `||` is part of an expression, not a column compared.
      const before = condition.slice(0, match.index).trimEnd();
      if (before.endsWith('||')) continue;
      pairs.push([left, right], [right, left]);
    }
  }
  return pairs;
}

/** The scans of distributed tables that do not read by their distribution column. */
function keylessScans(scans: readonly Scan[]): Scan[] {
  const distributed = scans.filter((scan) => DISTRIBUTION[scan.table]?.kind === 'distributed');
  const keyOf = (scan: Scan) => {
    const placement = DISTRIBUTION[scan.table] as Placement & { column: string };
    return `${scan.alias}.${placement.column}`;
  };
  const relationAliases = new Set(scans.map((scan) => scan.alias));
  const keyed = new Set<Scan>();
  // A value is of the parameters when it is one, or a column of no relation read (a function
  // scan, a subquery's or a CTE's output); the key of a keyed scan carries its value on.
  const fromParameters = (operand: string) =>
    operand.startsWith('$') || !relationAliases.has(operand.split('.')[0] as string);
  for (let changed = true, rounds = 0; changed && rounds <= distributed.length; rounds += 1) {
    changed = false;
    for (const scan of distributed) {
      if (keyed.has(scan)) continue;
      const key = keyOf(scan);
      const byKey = equalitiesOf(scan.conditions).some(
        ([left, right]) =>
          left === key &&
          (fromParameters(right) ||
            distributed.some((other) => keyed.has(other) && keyOf(other) === right)),
      );
      if (byKey) {
        keyed.add(scan);
        changed = true;
      }
    }
  }
  return distributed.filter((scan) => !keyed.has(scan));
}

const gapKey = (gap: Pick<HotPathGap, 'table' | 'statement'>) => `${gap.table}: ${gap.statement}`;

describe('the distribution plan [pg]', () => {
  const database = testDatabase('pg');
  const seen: Statement[] = [];
  const recording = { on: false };
  let t: TestStore;
  let client: SqlClient;

  beforeAll(async () => {
    client = await database.client();
    t = await openTestStore(database, {
      wrapClient: (inner) => recordingClient(inner, seen, recording),
    });
  });

  afterAll(async () => {
    await database.close();
  });

  it('places every table of the schema, and only those', async () => {
    const { rows } = await client.query<{ table_name: string }>(
      `SELECT table_name FROM information_schema.tables
       WHERE table_schema = 'public' AND table_type = 'BASE TABLE' ORDER BY table_name`,
    );
    const tables = rows.map((row) => row.table_name);
    expect(tables.length).toBeGreaterThan(20);
    expect(Object.keys(DISTRIBUTION).sort()).toEqual(tables);
  });

  it('is the table of docs/scaling.md: every table placed there too', () => {
    const doc = readFileSync(new URL('../../docs/scaling.md', import.meta.url), 'utf8');
    const missing = Object.keys(DISTRIBUTION).filter((table) => !doc.includes(`\`${table}\``));
    expect(missing).toEqual([]);
  });

  it('names distribution columns that exist, and only those marked to add are missing', async () => {
    const { rows } = await client.query<{ table_name: string; column_name: string }>(
      `SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = 'public'`,
    );
    const columns = new Set(rows.map((row) => `${row.table_name}.${row.column_name}`));
    const wrong: string[] = [];
    for (const [table, placement] of Object.entries(DISTRIBUTION)) {
      if (placement.kind !== 'distributed') continue;
      const exists = columns.has(`${table}.${placement.column}`);
      if (exists === (placement.toAdd !== undefined))
        wrong.push(`${table}.${placement.column} ${exists ? 'exists' : 'is missing'}`);
    }
    expect(wrong).toEqual([]);
  });

  it("reads every distributed table of the authorize batch by its key, but the plan's gaps", async () => {
    const scope: Scope = await t.scope();
    const cards: string[] = [];
    for (let index = 0; index < 3; index += 1) {
      const vault = await t.vault(scope, '1000');
      await t.store.setPolicy(scope, vault.id, {
        limits: [
          { interval: 'daily', amount: '900' },
          { interval: 'monthly', count: 1000 },
          { interval: 'daily', amount: '500', merchantCategories: ['5812'] },
        ],
      });
      cards.push((await t.card(scope, vault.id)).id);
    }
    // A card with a policy of its own: the card reads and writes of the batch.
    await t.store.setCardPolicy(scope, cards[0] as string, {
      limits: [{ interval: 'daily', amount: '400' }],
    });
    const authorize = (cardId: string, id = networkTransactionId()) =>
      t.store.authorize(scope, {
        cardId,
        amount: usdc('1.25'),
        currency: 'USDC',
        merchant: merchant({ mcc: '5812' }),
        networkTransactionId: id,
      });
    recording.on = true;
    // First sight of each vault (no policy hint: the policy and counters read apart), then
    // batches over several vaults (hinted: read with the lock), a repeat, an unknown card.
    for (const card of cards) expect((await authorize(card)).decision.approved).toBe(true);
    const outcomes = await Promise.all(cards.flatMap((card) => [authorize(card), authorize(card)]));
    expect(outcomes.every((outcome) => outcome.decision.approved)).toBe(true);
    const repeated = networkTransactionId();
    await authorize(cards[1] as string, repeated);
    expect((await authorize(cards[1] as string, repeated)).replayed).toBe(true);
    expect((await authorize('card_unknown')).decision.approved).toBe(false);
    recording.on = false;

    const statements = [...new Map(seen.map((statement) => [statement.text, statement])).values()];
    expect(statements.length).toBeGreaterThan(2);
    const found = new Map<string, string>();
    for (const statement of statements) {
      const plan = (await genericPlanTree(client, statement)) as PlanNode;
      const scans = scansOf(plan);
      for (const scan of scans) {
        // The hot path touches no table the plan keeps on the coordinator alone.
        expect(DISTRIBUTION[scan.table]?.kind, `${scan.table} in ${statement.text}`).not.toBe(
          'local',
        );
      }
      for (const scan of keylessScans(scans)) {
        const gap = HOT_PATH_GAPS.find(
          (candidate) =>
            candidate.table === scan.table && statement.text.includes(candidate.statement),
        );
        found.set(
          gap === undefined ? `${scan.table}: ${statement.text}` : gapKey(gap),
          `${scan.alias}: ${scan.conditions.join(' / ') || 'no condition'}`,
        );
      }
    }
    // New reads without the key fail with their statement; gaps no longer found, too.
    expect([...found.keys()].sort(), JSON.stringify([...found], null, 1)).toEqual(
      HOT_PATH_GAPS.map(gapKey).sort(),
    );
  });
});
