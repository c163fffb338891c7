import { afterAll, beforeAll, expect, it } from 'vitest';
import { Decimal, type Scope } from '../../src/core/index.js';
import { newId } from '../../src/ids.js';
import { DAY_MS, DEFAULT_RETENTION } from '../../src/store/port/index.js';
import type { OpenedStore as Store, ReserveRun } from '../../src/store/store.js';
import {
  applyRetention,
  RESERVE_RUN_RETENTION_MS,
  takeSnapshots,
} from '../../src/workers/maintenance.js';
import { forEachDatabase } from '../support/databases.js';
import {
  merchant,
  networkTransactionId,
  openTestStore,
  usdc,
  type TestStore,
} from '../support/store.js';

/**
 * Retention and compaction (src/store/ops/retention.ts, the maintenance worker's
 * applyRetention): what each table the authorize path writes keeps, that the rest goes in
 * bounded batches, and that the ledger's invariants, releases and snapshots are unchanged.
 */

const count = async (store: Store, sql: string, params: unknown[]): Promise<number> =>
  Number((await store.client.query<{ n: string }>(sql, params)).rows[0]?.n);

async function fundedCard(t: TestStore, scope: Scope, deposit = '1000') {
  const { vault } = await t.store.createVault(scope, {
    name: 'retention',
    currency: 'USDC',
    metadata: {},
    initialDeposit: new Decimal(deposit),
  });
  const card = await t.store.createCard(scope, {
    vaultId: vault.id,
    cardholderName: 'Ada',
    metadata: {},
  });
  return { vaultId: vault.id, cardId: card.id };
}

async function approve(t: TestStore, scope: Scope, cardId: string, amount: string) {
  t.clock.advance(1000);
  const { decision, transaction } = await t.store.authorize(scope, {
    cardId,
    amount: usdc(amount),
    currency: 'USDC',
    merchant: merchant(),
    networkTransactionId: networkTransactionId(),
  });
  expect(decision.approved).toBe(true);
  if (transaction === null) throw new Error('no transaction recorded');
  return transaction;
}

forEachDatabase('retention of delivery attempts, events and idempotency records', (database) => {
  let t: TestStore;
  let scope: Scope;
  beforeAll(async () => {
    t = await openTestStore(database);
    scope = await t.scope();
    // Ids never go back in time within a process (ids.ts), and the suites before this one
    // moved their clocks years on: start after the last id made, so that ids tell the age.
    t.clock.nowMs = Math.max(
      t.clock.nowMs,
      Number.parseInt(newId('event', 0).slice(4, 16), 16) + 1,
    );
  });
  afterAll(async () => {
    await database.close();
  });

  const eventOf = async (vaultId: string): Promise<string> => {
    const { rows } = await t.store.client.query<{ id: string }>(
      `SELECT id FROM outbox_events WHERE type = 'vault.created' AND payload->'data'->'object'->>'id' = $1`,
      [vaultId],
    );
    const id = rows[0]?.id;
    if (id === undefined) throw new Error('no vault.created event');
    return id;
  };
  const exists = async (table: 'outbox_events' | 'webhook_deliveries', id: string) =>
    (await count(t.store, `SELECT count(*) AS n FROM ${table} WHERE id = $1`, [id])) === 1;

  it('deletes them after their retention, deliveries before their events, in bounded batches', async () => {
    const { store } = t;
    const { endpoint } = await store.createWebhookEndpoint(scope, {
      url: 'https://example.test/hooks',
      events: ['*'],
      description: null,
    });
    const vault = async (name: string) =>
      (
        await store.createVault(scope, {
          name,
          currency: 'USDC',
          metadata: {},
          initialDeposit: new Decimal(0),
        })
      ).vault.id;
    const delivered = await eventOf(await vault('delivered'));
    const relayed = await eventOf(await vault('relayed'));
    // The relay's round: every event so far is relayed.
    for (;;) {
      const claimed = await store.transaction(async (operations) => {
        const events = await operations.relayEvents(100);
        return events.length;
      });
      if (claimed === 0) break;
    }
    const waiting = await eventOf(await vault('waiting'));
    const attempt = await store.recordDeliveryAttempt({
      scope,
      endpointId: endpoint.id,
      eventId: delivered,
      eventType: 'vault.created',
      attempt: 1,
      statusCode: 500,
      durationMs: 3,
      error: null,
    });
    const request = { key: 'retention-key', method: 'POST', path: '/v1/vaults', body: '{}' };
    await store.idempotent(
      scope,
      request,
      () => Promise.resolve({ status: 201, body: { ok: true } }),
      () => ({ status: 500, body: {} }),
    );

    // Within the retention nothing goes.
    t.clock.advance(DEFAULT_RETENTION.eventRetentionMs - DAY_MS);
    expect(await store.purgeWebhookDeliveries(DEFAULT_RETENTION.deliveryRetentionMs, 10)).toBe(0);
    expect(await store.purgeOutboxEvents(DEFAULT_RETENTION.eventRetentionMs, 10)).toBe(0);

    t.clock.advance(2 * DAY_MS);
    const recent = await eventOf(await vault('recent'));
    // An event a delivery attempt still names waits for the attempt to go.
    expect(await store.purgeOutboxEvents(DEFAULT_RETENTION.eventRetentionMs, 10)).toBe(1);
    expect([
      await exists('outbox_events', relayed),
      await exists('outbox_events', delivered),
    ]).toEqual([false, true]);
    expect(await store.purgeWebhookDeliveries(DEFAULT_RETENTION.deliveryRetentionMs, 10)).toBe(1);
    expect(await exists('webhook_deliveries', attempt.id)).toBe(false);
    // One row a batch: the bound holds.
    expect(await store.purgeOutboxEvents(DEFAULT_RETENTION.eventRetentionMs, 1)).toBe(1);
    expect(await store.purgeOutboxEvents(DEFAULT_RETENTION.eventRetentionMs, 1)).toBe(0);
    // Not yet relayed: kept whatever its age. Recent: kept.
    expect(await exists('outbox_events', waiting)).toBe(true);
    expect(await exists('outbox_events', recent)).toBe(true);

    const counts = await applyRetention(store);
    expect(counts.idempotencyKeys).toBe(1);
    const again = await store.idempotent(
      scope,
      request,
      () => Promise.resolve({ status: 201, body: { ok: 'again' } }),
      () => ({ status: 500, body: {} }),
    );
    expect(again.replayed).toBe(false);
    await t.expectInvariants();
  });

  it('deletes finished backtests after their retention, never one still to run', async () => {
    const { vaultId } = await fundedCard(t, scope);
    const backtest = async () =>
      (
        await t.store.createBacktest(
          scope,
          { kind: 'vault', vaultId },
          {
            draft: {},
            startDate: new Date(t.clock.nowMs).toISOString().slice(0, 10),
            endDate: new Date(t.clock.nowMs).toISOString().slice(0, 10),
          },
        )
      ).backtest.id;
    const finished = await backtest();
    // One the worker has yet to run, as a window of over 10,000 authorizations leaves it.
    const waiting = await backtest();
    await t.store.client.query(
      `UPDATE backtests SET status = 'queued', result = NULL, completed_at = NULL WHERE id = $1`,
      [waiting],
    );
    const kept = async () =>
      (
        await t.store.client.query<{ id: string }>(
          'SELECT id FROM backtests WHERE id = ANY($1) ORDER BY id',
          [[finished, waiting]],
        )
      ).rows.map((row) => row.id);
    t.clock.advance(DEFAULT_RETENTION.backtestRetentionMs - DAY_MS);
    expect(await t.store.purgeBacktests(DEFAULT_RETENTION.backtestRetentionMs, 10)).toBe(0);
    t.clock.advance(2 * DAY_MS);
    expect((await applyRetention(t.store)).backtests).toBe(1);
    expect(await kept()).toEqual([waiting]);
  });

  it('refuses a retention shorter than a day or a batch beyond its bound', async () => {
    await expect(t.store.purgeOutboxEvents(DAY_MS - 1, 10)).rejects.toThrow();
    await expect(t.store.purgeWebhookDeliveries(DAY_MS, 10_001)).rejects.toThrow();
    await expect(t.store.purgeSpendCounters(365, 10)).rejects.toThrow();
  });
});

forEachDatabase('retention of spend counters', (database) => {
  let t: TestStore;
  beforeAll(async () => {
    t = await openTestStore(database);
  });
  afterAll(async () => {
    await database.close();
  });

  it('deletes daily counters past every window, but not those a pending hold was counted on', async () => {
    const scope = await t.scope();
    const settled = await fundedCard(t, scope);
    const held = await fundedCard(t, scope);
    const captured = await approve(t, scope, settled.cardId, '12');
    await t.store.capture(scope, captured.id, null);
    const pending = await approve(t, scope, held.cardId, '8');
    const daily = (vaultId: string) =>
      count(
        t.store,
        "SELECT count(*) AS n FROM spend_counters WHERE vault_id = $1 AND day > '0001-01-01'",
        [vaultId],
      );
    const allTime = (vaultId: string) =>
      count(
        t.store,
        "SELECT count(*) AS n FROM spend_counters WHERE vault_id = $1 AND day = '0001-01-01'",
        [vaultId],
      );
    expect([await daily(settled.vaultId), await daily(held.vaultId)]).toEqual([2, 2]);

    t.clock.advance(400 * DAY_MS);
    expect(await t.store.purgeSpendCounters(400, 10)).toBe(0);
    t.clock.advance(DAY_MS);
    expect(await t.store.purgeSpendCounters(400, 1)).toBe(1);
    expect((await applyRetention(t.store)).spendCounters).toBe(1);
    expect([await daily(settled.vaultId), await daily(held.vaultId)]).toEqual([0, 2]);
    expect([await allTime(settled.vaultId), await allTime(held.vaultId)]).toEqual([2, 2]);

    // The hold's release takes back the rows it was counted on: they are still there.
    await t.store.reverse(scope, pending.id, null);
    await t.expectInvariants();
    expect(await t.store.purgeSpendCounters(400, 10)).toBe(2);
    await t.expectInvariants();
  });
});

forEachDatabase('compaction of the hold journal', (database) => {
  let t: TestStore;
  beforeAll(async () => {
    t = await openTestStore(database);
  });
  afterAll(async () => {
    await database.close();
  });

  const journal = async (vaultId: string) =>
    (
      await t.store.client.query<{ delta: string; created_at: Date }>(
        'SELECT delta, created_at FROM hold_changes WHERE vault_id = $1 ORDER BY created_at, id',
        [vaultId],
      )
    ).rows;
  const pendingAt = async (vaultId: string, atMs: number) =>
    (
      await t.store.client.query<{ total: string }>(
        'SELECT coalesce(sum(delta), 0)::text AS total FROM hold_changes WHERE vault_id = $1 AND created_at < $2',
        [vaultId, new Date(atMs)],
      )
    ).rows[0]?.total;

  it('folds the changes before its horizon into one row, every sum after it unchanged', async () => {
    const scope = await t.scope();
    const { vaultId, cardId } = await fundedCard(t, scope);
    const startMs = t.clock.nowMs;
    const a1 = await approve(t, scope, cardId, '50');
    await t.store.capture(scope, a1.id, null);
    const a2 = await approve(t, scope, cardId, '30');
    await t.store.reverse(scope, a2.id, null);
    const held = await approve(t, scope, cardId, '20');
    const a4 = await approve(t, scope, cardId, '10');
    await t.store.capture(scope, a4.id, usdc('5'));
    expect(await journal(vaultId)).toHaveLength(7);

    // Nothing is folded before any day's snapshots are complete.
    t.clock.advance(40 * DAY_MS);
    expect((await applyRetention(t.store)).holdChanges).toBe(0);
    await takeSnapshots(t.store);
    const recent = await approve(t, scope, cardId, '7');
    const probes = [startMs + 5 * DAY_MS, startMs + 35 * DAY_MS, t.clock.nowMs + 1];
    const before = await Promise.all(probes.map((atMs) => pendingAt(vaultId, atMs)));
    expect(before).toEqual(['20.000000000', '20.000000000', '27.000000000']);

    // A batch folds at most its rows.
    const { horizonMs, vaultIds } = await t.store.holdJournalCandidates(
      DEFAULT_RETENTION.holdJournalRetentionMs,
      null,
    );
    expect(horizonMs).toBe(t.clock.nowMs - DEFAULT_RETENTION.holdJournalRetentionMs);
    expect(vaultIds).toEqual([vaultId]);
    expect(await t.store.compactVaultHoldChanges(vaultId, horizonMs ?? 0, 3)).toBe(3);
    expect(await journal(vaultId)).toHaveLength(6);

    const counts = await applyRetention(t.store);
    expect(counts.holdChanges).toBe(5);
    const rows = await journal(vaultId);
    expect(rows.map((row) => row.delta)).toEqual(['20.000000000', '7.000000000']);
    expect(await Promise.all(probes.map((atMs) => pendingAt(vaultId, atMs)))).toEqual(before);
    await t.expectInvariants();

    // Snapshots still to be taken read the same sums; the old hold is released as before.
    t.clock.advance(DAY_MS);
    await takeSnapshots(t.store);
    const { rows: snapshot } = await t.store.client.query<{ pending: string }>(
      'SELECT pending FROM balance_snapshots WHERE vault_id = $1 ORDER BY day DESC LIMIT 1',
      [vaultId],
    );
    expect(snapshot[0]?.pending).toBe('27.000000000');
    await t.store.reverse(scope, held.id, null);
    await t.store.reverse(scope, recent.id, null);
    await t.expectInvariants();
    expect((await applyRetention(t.store)).holdChanges).toBe(0);
  });

  it('never folds past the first day whose snapshots are still to be taken', async () => {
    const scope = await t.scope();
    const { vaultId, cardId } = await fundedCard(t, scope);
    await approve(t, scope, cardId, '1');
    await approve(t, scope, cardId, '2');
    t.clock.advance(40 * DAY_MS);
    // The snapshots stop 35 days back: a worker that was down. The journal keeps those days.
    const { rows } = await t.store.client.query<{ day: string }>(
      'SELECT max(day)::text AS day FROM snapshot_days',
    );
    const lastDone = rows[0]?.day;
    expect(lastDone).toBeDefined();
    const found = await t.store.holdJournalCandidates(
      DEFAULT_RETENTION.holdJournalRetentionMs,
      null,
    );
    const expectedHorizon = Math.min(
      t.clock.nowMs - DEFAULT_RETENTION.holdJournalRetentionMs,
      (Math.floor(Date.parse(`${lastDone ?? ''}T00:00:00Z`) / DAY_MS) + 1) * DAY_MS,
    );
    expect(found.horizonMs).toBe(expectedHorizon);
    expect(found.vaultIds).not.toContain(vaultId);
  });
});

forEachDatabase('retention of reserve runs', (database) => {
  let t: TestStore;
  beforeAll(async () => {
    t = await openTestStore(database);
    // As above: start after the last id made, so that ids tell the age.
    t.clock.nowMs = Math.max(
      t.clock.nowMs,
      Number.parseInt(newId('reserveRun', 0).slice(4, 16), 16) + 1,
    );
  });
  afterAll(async () => {
    await database.close();
  });

  const covered = (currency: string): ReserveRun => ({
    mode: 'test',
    currency,
    treasuryAddress: 'treasury',
    slot: 1,
    treasuryBalance: '2',
    unsweptDeposits: '0',
    owed: '1',
    inFlight: '0',
    inFlightLanded: '0',
    inFlightCount: 0,
    reserves: '2',
    liabilities: '1',
    shortfall: '0',
    ratio: '2',
    short: false,
  });

  it('deletes runs past 30 days, but never the latest of a mode and currency', async () => {
    const old = await t.store.recordReserveRun(covered('SOL'));
    t.clock.advance(1000);
    const older = await t.store.recordReserveRun(covered('SOL'));
    const onlyUsdc = await t.store.recordReserveRun(covered('USDC'));
    t.clock.advance(RESERVE_RUN_RETENTION_MS - 500);
    // Not yet 30 days for the second SOL run.
    expect((await applyRetention(t.store)).reserveRuns).toBe(1);
    t.clock.advance(DAY_MS);
    const latest = await t.store.recordReserveRun(covered('SOL'));
    expect((await applyRetention(t.store)).reserveRuns).toBe(1);
    const left = await count(t.store, 'SELECT count(*) AS n FROM reserve_runs WHERE id = ANY($1)', [
      [old.id, older.id, onlyUsdc.id, latest.id],
    ]);
    expect(left).toBe(2);
    expect((await t.store.latestReserveRuns(['SOL', 'USDC'])).map((run) => run.id)).toEqual([
      latest.id,
      onlyUsdc.id,
    ]);
  });

  it('refuses a run whose terms do not add up', async () => {
    await expect(
      t.store.recordReserveRun({ ...covered('SOL'), shortfall: '1', short: true }),
    ).rejects.toThrow();
  });
});
