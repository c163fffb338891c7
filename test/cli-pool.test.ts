import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../src/cli/open-store.js';
import { DATABASE_POOL_MAX_DEFAULT, loadConfig } from '../src/config/env.js';
import type { SqlClient } from '../src/store/sql/client.js';
import { serverDatabase } from './support/processes.js';

/**
 * DATABASE_POOL_MAX as the CLI reads it: the pool `serve` opens holds at most that many
 * connections to DATABASE_URL, and DATABASE_POOL_MAX_DEFAULT when it is unset. Concurrent
 * transactions each hold a connection for a while, and PostgreSQL's backend ids say how many
 * connections served them.
 */
describe('DATABASE_POOL_MAX', () => {
  let database: { url: string; drop(): Promise<void> };
  beforeAll(async () => {
    database = await serverDatabase();
  });
  afterAll(async () => {
    await database.drop();
  });

  const TRANSACTIONS = 6;

  /** The distinct backends that served TRANSACTIONS transactions run at once. */
  async function backendsServing(client: SqlClient): Promise<number> {
    const pids = await Promise.all(
      Array.from({ length: TRANSACTIONS }, () =>
        client.transaction(async (tx) => {
          const { rows } = await tx.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
          // Held a while, so that the others cannot all reuse one connection after it.
          await tx.query('SELECT pg_sleep(0.05)');
          return rows[0]?.pid;
        }),
      ),
    );
    return new Set(pids).size;
  }

  it('bounds the connections the pool opens, and is 20 unset', async () => {
    expect(DATABASE_POOL_MAX_DEFAULT).toBe(20);
    const bounded = await openDatabase(
      loadConfig({ DATABASE_URL: database.url, DATABASE_POOL_MAX: '2' }),
    );
    try {
      expect(await backendsServing(bounded)).toBe(2);
    } finally {
      await bounded.close();
    }
    const unset = await openDatabase(loadConfig({ DATABASE_URL: database.url }));
    try {
      expect(await backendsServing(unset)).toBe(TRANSACTIONS);
    } finally {
      await unset.close();
    }
  });

  it('refuses a value out of 1 to 1000, naming the setting', () => {
    for (const value of ['0', '1001', '2.5', 'many']) {
      expect(() => loadConfig({ DATABASE_POOL_MAX: value }), value).toThrow(/DATABASE_POOL_MAX/);
    }
    expect(loadConfig({ DATABASE_POOL_MAX: '1000' }).databasePoolMax).toBe(1000);
    expect(loadConfig({}).databasePoolMax).toBe(DATABASE_POOL_MAX_DEFAULT);
  });
});
