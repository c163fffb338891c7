import { afterAll, describe, expect, it } from 'vitest';
import { migrate, readMigrations } from '../../src/store/migrations/runner.js';
import { forEachDatabase } from '../support/databases.js';

forEachDatabase('migrations', (database) => {
  afterAll(async () => {
    await database.close();
  });

  it('apply in order, then re-running is a no-op', async () => {
    const client = await database.client();
    const migrations = readMigrations();
    const first = await migrate(client);
    expect(first.applied).toEqual(migrations.map((migration) => migration.name));
    const second = await migrate(client);
    expect(second).toEqual({ applied: [], alreadyApplied: migrations.length });
    const { rows } = await client.query<{ version: number }>(
      'SELECT version FROM schema_migrations ORDER BY version',
    );
    expect(rows.map((row) => row.version)).toEqual(
      migrations.map((migration) => migration.version),
    );
  });

  it('refuse a migration changed after it was applied', async () => {
    const client = await database.client();
    const [first, ...rest] = readMigrations();
    if (first === undefined) throw new Error('no migrations');
    await expect(migrate(client, [{ ...first, checksum: 'changed' }, ...rest])).rejects.toThrow(
      /changed after it was applied/,
    );
  });

  it('roll a failing migration back whole', async () => {
    const client = await database.client();
    const migrations = readMigrations();
    const broken = {
      version: migrations.length + 1,
      name: 'broken.sql',
      sql: 'CREATE TABLE half_done (a int); SELECT no_such_function();',
      checksum: 'x',
    };
    await expect(migrate(client, [...migrations, broken])).rejects.toThrow();
    const { rows } = await client.query("SELECT to_regclass('half_done') AS t");
    expect(rows[0]).toEqual({ t: null });
  });
});

describe('migration files', () => {
  it('are numbered in sequence from 0001', () => {
    expect(readMigrations().map((migration) => migration.version)).toEqual(
      readMigrations().map((_, index) => index + 1),
    );
  });
});
