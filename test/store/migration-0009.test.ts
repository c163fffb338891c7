import { afterAll, expect, it } from 'vitest';
import { migrate, readMigrations } from '../../src/store/migrations/runner.js';
import { forEachDatabase } from '../support/databases.js';

/**
 * Migration 0009 (card policies, card counters, policy versions) on a database that already
 * has vault policies: each existing policy keeps its current version as its first history
 * row (a deleted one as the delete it was), with no key, so List Policy Versions and Restore
 * work on it at once and the next change goes on from its version.
 */
forEachDatabase('migration 0009', (database) => {
  afterAll(async () => {
    await database.close();
  });

  it("starts each existing vault policy's history at its current version", async () => {
    const client = await database.client();
    const migrations = readMigrations();
    const before = migrations.filter((migration) => migration.version < 9);
    await migrate(client, before);
    const at = '2026-11-01T10:00:00.000Z';
    await client.query(`INSERT INTO accounts (id, name, created_at) VALUES ('acct_m9', 'm9', $1)`, [
      at,
    ]);
    for (const id of ['vlt_m9_set', 'vlt_m9_deleted']) {
      await client.query(
        `INSERT INTO vaults (id, account_id, mode, name, currency, network, status, data_key_wrapped, created_at, updated_at)
         VALUES ($1, 'acct_m9', 'test', 'm9', 'USDC', 'solana', 'active', 'x', $2, $2)`,
        [id, at],
      );
    }
    await client.query(
      `INSERT INTO policies (vault_id, version, document, created_at, updated_at, deleted_at) VALUES
         ('vlt_m9_set', 3, '{"limits": [{"interval": "daily", "amount": "10"}]}', $1, $1, NULL),
         ('vlt_m9_deleted', 2, NULL, $1, $1, $1)`,
      [at],
    );
    await migrate(client, migrations);
    const { rows } = await client.query<{
      owner_id: string;
      version: number;
      change: string;
      document: unknown;
      key_id: string | null;
    }>('SELECT owner_id, version, change, document, key_id FROM policy_versions ORDER BY owner_id');
    expect(rows).toEqual([
      { owner_id: 'vlt_m9_deleted', version: 2, change: 'delete', document: null, key_id: null },
      {
        owner_id: 'vlt_m9_set',
        version: 3,
        change: 'set',
        document: { limits: [{ interval: 'daily', amount: '10' }] },
        key_id: null,
      },
    ]);
  });
});
