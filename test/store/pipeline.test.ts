import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import type { SqlClient } from '../../src/store/sql/client.js';
import { inPipeline } from '../../src/store/sql/pipeline.js';
import { testDatabase } from '../support/databases.js';

/**
 * Statements of one transaction sent together (src/store/sql/pipeline.ts), on both clients:
 * they run in the order sent, in the transaction; a failure names its cause, not the
 * statements refused behind it; and nothing is still in flight when the caller goes on.
 */
describe.each(['pg', 'pglite'] as const)('statements sent together (%s)', (kind) => {
  const database = testDatabase(kind, 2);
  afterAll(() => database.close());
  const table = `together_${randomBytes(4).toString('hex')}`;

  async function ready(): Promise<SqlClient> {
    const client = await database.client();
    await client.exec(`CREATE TABLE IF NOT EXISTS ${table} (id int PRIMARY KEY, at int NOT NULL)`);
    return client;
  }
  const ids = async (client: SqlClient) =>
    (await client.query<{ id: number }>(`SELECT id FROM ${table} ORDER BY at`)).rows.map(
      (row) => row.id,
    );

  it('runs them in the order sent, in one transaction, each answer to its own', async () => {
    const client = await ready();
    const answers = await client.transaction((tx) =>
      inPipeline(tx, () => [
        tx.query<{ id: number }>(`INSERT INTO ${table} VALUES (1, 1) RETURNING id`),
        tx.query<{ id: number }>(`INSERT INTO ${table} VALUES (2, 2) RETURNING id`),
        tx.query<{ n: string }>(`SELECT count(*)::text AS n FROM ${table}`),
        tx.query<{ same: boolean }>('SELECT txid_current() = txid_current() AS same'),
      ]),
    );
    expect(answers.map((answer) => answer.rows[0])).toEqual([
      { id: 1 },
      { id: 2 },
      // The third statement saw the first two: the server ran them in the order sent.
      { n: '2' },
      { same: true },
    ]);
    expect(await ids(client)).toEqual([1, 2]);
  });

  it('rejects with the failing statement, not those refused behind it, and writes nothing', async () => {
    const client = await ready();
    const before = await ids(client);
    let settledAfter = 0;
    const failure = client.transaction((tx) =>
      inPipeline(tx, () => [
        tx.query(`INSERT INTO ${table} VALUES (100, 100)`),
        // 1 is taken (above): a unique violation, and what follows it is refused (25P02).
        tx.query(`INSERT INTO ${table} VALUES (1, 101)`),
        tx.query(`INSERT INTO ${table} VALUES (102, 102)`).finally(() => {
          settledAfter += 1;
        }),
      ]),
    );
    await expect(failure).rejects.toMatchObject({ code: '23505' });
    // Every statement had settled before the transaction was rolled back and answered.
    expect(settledAfter).toBe(1);
    expect(await ids(client)).toEqual(before);
    expect(await client.transaction(async (tx) => (await tx.query('SELECT 1')).rows.length)).toBe(
      1,
    );
  });

  it('waits for a work of several statements to finish before answering', async () => {
    const client = await ready();
    const order: string[] = [];
    await client.transaction((tx) =>
      inPipeline(tx, () => [
        (async () => {
          await tx.query(`INSERT INTO ${table} VALUES (200, 200)`);
          await tx.query(`INSERT INTO ${table} VALUES (201, 201)`);
          order.push('two statements');
        })(),
        tx.query('SELECT 1').then(() => order.push('one statement')),
      ]),
    );
    expect(order).toEqual(['one statement', 'two statements']);
    expect((await ids(client)).filter((id) => id >= 200)).toEqual([200, 201]);
  });
});
