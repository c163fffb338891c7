import { afterAll, expect, it } from 'vitest';
import { migrate, readMigrations } from '../../src/store/migrations/runner.js';
import { relayEvents } from '../../src/store/ops/events.js';
import { forEachDatabase } from '../support/databases.js';

/**
 * Migration 0016 (the relay's queue as a table of its own) on a database that already holds
 * events: exactly those the relay had not marked are queued, so no event is relayed twice or
 * left behind, and the old mark is gone (a process of an earlier version fails loudly on it).
 */
forEachDatabase('migration 0016', (database) => {
  afterAll(async () => {
    await database.close();
  });

  it('queues exactly the events not yet relayed, and drops the old mark', async () => {
    const client = await database.client();
    const migrations = readMigrations();
    await migrate(
      client,
      migrations.filter((migration) => migration.version < 16),
    );
    const at = '2026-11-01T10:00:00.000Z';
    await client.query(
      `INSERT INTO accounts (id, name, created_at) VALUES ('acct_m16', 'm16', $1)`,
      [at],
    );
    const events = [
      ['evt_m16_1', at],
      ['evt_m16_2', null],
      ['evt_m16_3', at],
      ['evt_m16_4', null],
    ] as const;
    for (const [id, relayedAt] of events) {
      await client.query(
        `INSERT INTO outbox_events (id, account_id, mode, type, payload, created_at, relayed_at)
         VALUES ($1, 'acct_m16', 'test', 'vault.created', '{}', $2, $3)`,
        [id, at, relayedAt],
      );
    }
    await migrate(client, migrations);

    const { rows: queued } = await client.query<{ id: string }>(
      'SELECT id FROM outbox_unrelayed ORDER BY id',
    );
    expect(queued.map((row) => row.id)).toEqual(['evt_m16_2', 'evt_m16_4']);
    const { rows: columns } = await client.query<{ column_name: string }>(
      `SELECT column_name FROM information_schema.columns
       WHERE table_name = 'outbox_events' AND column_name = 'relayed_at'`,
    );
    expect(columns).toEqual([]);
    // The relay takes them from there, and every event stays for its deliveries.
    const relayed = await client.transaction((tx) => relayEvents(tx, 10));
    expect(relayed.map((event) => event.id)).toEqual(['evt_m16_2', 'evt_m16_4']);
    const { rows: kept } = await client.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM outbox_events',
    );
    expect(kept[0]?.n).toBe(events.length);
  });
});
