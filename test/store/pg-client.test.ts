import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import type { SqlClient } from '../../src/store/sql/client.js';
import { testDatabase } from '../support/databases.js';

/**
 * The PostgreSQL adapter's plan choice: a transaction begun with `genericPlans` plans each of
 * its prepared statements once for any parameters; any other keeps PostgreSQL's default,
 * which plans the first executions again with each one's parameters. And its pipelined
 * transactions: BEGIN sent with the first statements, the last statement with the COMMIT.
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

  describe('pipelined transactions (the authorize path)', () => {
    const table = `pipelined_${randomBytes(4).toString('hex')}`;
    const count = async (client: SqlClient) =>
      Number((await client.query<{ n: string }>(`SELECT count(*) AS n FROM ${table}`)).rows[0]?.n);

    it('runs the statements sent with BEGIN inside the transaction', async () => {
      const client = await database.client();
      await client.exec(`CREATE TABLE IF NOT EXISTS ${table} (id int PRIMARY KEY)`);
      const ids = await client.transaction(
        async (tx) => {
          // Sent together with BEGIN, before any answer: one transaction id for both.
          const [first, second] = await Promise.all([
            tx.query<{ id: string }>('SELECT txid_current()::text AS id'),
            tx.query<{ id: string }>('SELECT txid_current()::text AS id'),
          ]);
          return [first.rows[0]?.id, second.rows[0]?.id];
        },
        { pipelineBegin: true },
      );
      expect(ids[0]).toBeDefined();
      expect(ids[1]).toBe(ids[0]);
      const before = await count(client);
      await expect(
        client.transaction(
          async (tx) => {
            await tx.query(`INSERT INTO ${table} VALUES ($1)`, [1]);
            throw new Error('the work fails');
          },
          { pipelineBegin: true },
        ),
      ).rejects.toThrow('the work fails');
      expect(await count(client)).toBe(before);
    });

    it('commits with the last statement, and rolls back all when that statement fails', async () => {
      const client = await database.client();
      await client.exec(`CREATE TABLE IF NOT EXISTS ${table} (id int PRIMARY KEY)`);
      const before = await count(client);
      const inserted = await client.transaction(
        async (tx) => {
          await tx.query(`INSERT INTO ${table} VALUES ($1)`, [10]);
          return tx.queryAndCommit(`INSERT INTO ${table} VALUES ($1), ($2)`, [11, 12]);
        },
        { pipelineBegin: true },
      );
      expect(inserted.rowCount).toBe(2);
      expect(await count(client)).toBe(before + 3);

      // 11 is taken: the last statement fails, and with it the first one's insert of 20.
      await expect(
        client.transaction(async (tx) => {
          await tx.query(`INSERT INTO ${table} VALUES ($1)`, [20]);
          return tx.queryAndCommit(`INSERT INTO ${table} VALUES ($1)`, [11]);
        }),
      ).rejects.toMatchObject({ code: '23505' });
      expect(await count(client)).toBe(before + 3);
      // The connection is whole again: the pool's next transaction works on it.
      expect(await client.transaction(async (tx) => (await tx.query('SELECT 1')).rowCount)).toBe(1);
    });

    it('refuses a statement after the one sent with COMMIT', async () => {
      const client = await database.client();
      await client.exec(`CREATE TABLE IF NOT EXISTS ${table} (id int PRIMARY KEY)`);
      await expect(
        client.transaction(async (tx) => {
          await tx.queryAndCommit(`INSERT INTO ${table} VALUES ($1)`, [30]);
          return tx.query('SELECT 1');
        }),
      ).rejects.toThrow('no statement after the one sent with COMMIT');
    });
  });
});
