import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import type { SqlClient } from '../../src/store/sql/client.js';
import { testDatabase } from '../support/databases.js';

/**
 * The PostgreSQL adapter's plan choice: a transaction begun with `genericPlans` plans each of
 * its prepared statements once for any parameters; any other keeps PostgreSQL's default,
 * which plans the first executions again with each one's parameters.
 */
describe('the PostgreSQL client', () => {
  const database = testDatabase('pg', 1);
  afterAll(() => database.close());

  /** Runs a fresh statement three times in one transaction; its plan counts, as the server saw them. */
  async function plansOf(client: SqlClient, genericPlans: boolean) {
    // A text no connection has prepared yet, so the counts are this test's alone.
    const text = `SELECT $1::int + 1 AS n, '${randomBytes(6).toString('hex')}' AS tag`;
    return client.transaction(
      async (tx) => {
        for (let index = 0; index < 3; index += 1) {
          const { rows } = await tx.query<{ n: number }>(text, [index]);
          expect(rows[0]?.n).toBe(index + 1);
        }
        const { rows } = await tx.query<{ generic: string; custom: string }>(
          `SELECT generic_plans::text AS generic, custom_plans::text AS custom
           FROM pg_prepared_statements WHERE statement = $1`,
          [text],
        );
        return rows[0];
      },
      { genericPlans },
    );
  }

  it('plans once for any parameters in a transaction that asks for generic plans', async () => {
    const client = await database.client();
    expect(await plansOf(client, true)).toEqual({ generic: '3', custom: '0' });
  });

  it('keeps the default elsewhere, also on the same connection afterwards', async () => {
    const client = await database.client();
    await plansOf(client, true);
    expect(await plansOf(client, false)).toEqual({ generic: '0', custom: '3' });
  });
});
