import { beforeAll, describe, expect, it } from 'vitest';
import { redisServer } from '../../src/config/env.js';
import { checkInvariants } from '../../src/store/invariants.js';
import { expireHolds, takeSnapshots } from '../../src/workers/maintenance.js';
import { SettlementWorker } from '../../src/workers/settlement.js';
import { startWorkers } from '../../src/workers/start.js';
import { fundedCard, MERCHANT, networkId } from '../support/authorize.js';
import {
  LOCAL_REDIS_URL,
  testRedisPrefix,
  useTestService,
  type ServiceHarness,
  SILENT_LOG,
} from '../support/http.js';
import { TestClock } from '../support/store.js';

/**
 * Settlement work against the real PostgreSQL, on a clock the tests move: clearing
 * batches (each record captured once, bad records reported without stopping the batch), hold
 * expiry, and end-of-day balance snapshots with missed days backfilled.
 */
const DAY_MS = 24 * 3_600_000;

interface Json {
  id: string;
  status: string;
  approved: boolean;
  failureReason: string | null;
  capturedAmount: string;
  recordCount: number;
  capturedCount: number;
  failedCount: number;
  pendingCount: number;
  errors: { position: number; type: string; authorizationId: string | null; code: string }[];
  balance: { available: string; pending: string; ledger: string };
  data: { date: string; ledger: string; final: boolean }[];
  error?: { code: string; param?: string };
}

async function hold(harness: ServiceHarness<Json>, cardId: string, amount: string) {
  const answer = await harness.call('POST', '/v1/authorizations', {
    cardId,
    amount,
    currency: 'USDC',
    merchant: MERCHANT,
    networkTransactionId: networkId(),
  });
  expect(answer.body.approved).toBe(true);
  return answer.body.id;
}

describe('clearing batches', () => {
  const harness = useTestService<Json>();

  it('captures each good record once and reports each bad one, without stopping', async () => {
    const { vaultId, cardId } = await fundedCard(harness, '100');
    const whole = await hold(harness, cardId, '10');
    const part = await hold(harness, cardId, '20');
    const small = await hold(harness, cardId, '5');
    const accepted = await harness.call('POST', '/v1/settlements', {
      records: [
        { authorizationId: whole },
        { authorizationId: part, amount: '12.5' },
        { authorizationId: 'txn_0123456789abcdef0123456789abcdef', amount: '1' },
        // Above its 5.00 hold: a capture always posts (contract v1.2, section 16).
        { authorizationId: small, amount: '5.01' },
        { authorizationId: small, amount: '1.0000001' },
      ],
    });
    expect(accepted.status).toBe(202);
    expect(accepted.body).toMatchObject({
      status: 'pending',
      recordCount: 5,
      pendingCount: 5,
      errors: [],
    });
    const worker = new SettlementWorker(harness.service.store, SILENT_LOG);
    expect(await worker.settleOnce()).toBe(5);
    const report = await harness.call('GET', `/v1/settlements/${accepted.body.id}`);
    expect(report.body).toMatchObject({
      status: 'completed',
      capturedCount: 3,
      failedCount: 2,
      pendingCount: 0,
    });
    expect(report.body.errors.map((error) => [error.position, error.code])).toEqual([
      [2, 'transaction_not_found'],
      [4, 'invalid_amount'],
    ]);
    expect((await harness.call('GET', `/v1/transactions/${part}`)).body.capturedAmount).toBe(
      '12.50',
    );
    // 100 - 10 - 12.5 - 5.01 captured; the rest of the 20 released.
    expect((await harness.call('GET', `/v1/vaults/${vaultId}`)).body.balance).toEqual({
      available: '72.49',
      pending: '0.00',
      ledger: '72.49',
    });
    // Settled once: another round finds nothing, and changes nothing.
    expect(await worker.settleOnce()).toBe(0);
    expect((await harness.call('GET', `/v1/vaults/${vaultId}`)).body.balance.ledger).toBe('72.49');
  });

  it('posts every capture kind: partial captures, force captures and refunds, each once', async () => {
    const { vaultId, cardId } = await fundedCard(harness, '100');
    const split = await hold(harness, cardId, '40');
    const forcedId = networkId();
    const clearing = { cardId, currency: 'USDC', merchant: MERCHANT };
    const accepted = await harness.call('POST', '/v1/settlements', {
      records: [
        { type: 'capture', authorizationId: split, amount: '15', final: false },
        { type: 'force_capture', ...clearing, amount: '30', networkTransactionId: forcedId },
        // The same force capture again (a file sent twice): recorded once.
        { type: 'force_capture', ...clearing, amount: '30', networkTransactionId: forcedId },
        { authorizationId: split, amount: '5' },
        {
          type: 'refund',
          ...clearing,
          amount: '4',
          networkTransactionId: networkId(),
          transactionId: split,
        },
        {
          type: 'refund',
          ...clearing,
          cardId: 'card_unknown',
          amount: '1',
          networkTransactionId: networkId(),
        },
        {
          type: 'force_capture',
          ...clearing,
          currency: 'EUR',
          amount: '1',
          networkTransactionId: networkId(),
        },
      ],
    });
    expect(accepted.status).toBe(202);
    const worker = new SettlementWorker(harness.service.store, SILENT_LOG);
    expect(await worker.settleOnce()).toBe(7);
    const report = await harness.call('GET', `/v1/settlements/${accepted.body.id}`);
    expect(report.body).toMatchObject({ status: 'completed', capturedCount: 5, failedCount: 2 });
    expect(report.body.errors).toMatchObject([
      { position: 5, type: 'refund', authorizationId: null, code: 'card_not_found' },
      { position: 6, type: 'force_capture', authorizationId: null, code: 'currency_mismatch' },
    ]);
    const captured = (await harness.call('GET', `/v1/transactions/${split}`)).body;
    expect(captured).toMatchObject({ status: 'completed', capturedAmount: '20.00' });
    const forced = await harness.service.store.client.query<{ count: number }>(
      `SELECT count(*)::int AS count FROM transactions WHERE message_network_transaction_id = $1`,
      [forcedId],
    );
    expect(forced.rows[0]?.count).toBe(1);
    // 100 - 20 captured - 30 forced + 4 refunded; the rest of the 40 released.
    expect((await harness.call('GET', `/v1/vaults/${vaultId}`)).body.balance).toEqual({
      available: '54.00',
      pending: '0.00',
      ledger: '54.00',
    });
    expect(await checkInvariants(harness.service.store.client)).toEqual([]);
  });

  it('refuses a record of an unknown kind or missing a field, naming it', async () => {
    const unknownKind = await harness.call('POST', '/v1/settlements', {
      records: [{ type: 'chargeback', authorizationId: 'txn_1' }],
    });
    expect(unknownKind.status).toBe(400);
    const missing = await harness.call('POST', '/v1/settlements', {
      records: [{ authorizationId: 'txn_1' }, { type: 'refund', cardId: 'card_1', amount: '1' }],
    });
    // Reported at the field of the kind the record names, not at the whole record.
    expect([missing.status, missing.body.error?.code, missing.body.error?.param]).toEqual([
      400,
      'parameter_missing',
      'records[1].currency',
    ]);
  });

  it('refuses a malformed batch whole, at the record at fault', async () => {
    const empty = await harness.call('POST', '/v1/settlements', { records: [] });
    expect([empty.status, empty.body.error?.param]).toEqual([400, 'records']);
    const malformed = await harness.call('POST', '/v1/settlements', {
      records: [{ authorizationId: 'txn_1' }, { authorizationId: 'txn_2', amount: 'ten' }],
    });
    expect([malformed.status, malformed.body.error?.code, malformed.body.error?.param]).toEqual([
      400,
      'invalid_amount',
      'records[1].amount',
    ]);
    const tooMany = await harness.call('POST', '/v1/settlements', {
      records: Array.from({ length: 10_001 }, () => ({ authorizationId: 'txn_1' })),
    });
    expect([tooMany.status, tooMany.body.error?.param]).toEqual([400, 'records']);
  });

  it('is settled by the running workers', async () => {
    const { cardId } = await fundedCard(harness, '50');
    const held = await hold(harness, cardId, '7');
    const workers = startWorkers({
      store: harness.service.store,
      redis: redisServer(LOCAL_REDIS_URL),
      redisPrefix: testRedisPrefix(),
      delivery: { concurrency: 4, endpointConcurrency: 2, retryDelaysMs: [100], timeoutMs: 1000 },
      settlement: { batchMax: 10, idleMs: 20 },
      log: SILENT_LOG,
    });
    try {
      const accepted = await harness.call('POST', '/v1/settlements', {
        records: [{ authorizationId: held }],
      });
      let status = accepted.body.status;
      for (let attempt = 0; attempt < 100 && status !== 'completed'; attempt++) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        status = (await harness.call('GET', `/v1/settlements/${accepted.body.id}`)).body.status;
      }
      expect(status).toBe('completed');
      expect((await harness.call('GET', `/v1/transactions/${held}`)).body.status).toBe('completed');
    } finally {
      await workers.stop();
    }
  });
});

describe('hold expiry and balance snapshots, on a moving clock', () => {
  const clock = new TestClock();
  const harness = useTestService<Json>({ clock: clock.now });
  beforeAll(() => {
    // Midday, so that days pass whole as the clock moves by days.
    clock.nowMs = Date.UTC(2026, 10, 2, 12, 0, 0);
  });

  it('expires holds older than the configured age, and only those, with their events', async () => {
    const { vaultId, cardId } = await fundedCard(harness, '100');
    const old = await hold(harness, cardId, '30');
    clock.advance(3 * DAY_MS);
    const young = await hold(harness, cardId, '20');
    clock.advance(4 * DAY_MS + 1);
    expect(await expireHolds(harness.service.store, 7 * DAY_MS)).toBe(1);
    const expired = (await harness.call('GET', `/v1/transactions/${old}`)).body;
    expect([expired.status, expired.failureReason]).toEqual(['failed', 'expired']);
    expect((await harness.call('GET', `/v1/transactions/${young}`)).body.status).toBe('pending');
    expect((await harness.call('GET', `/v1/vaults/${vaultId}`)).body.balance.pending).toBe('20.00');
    const { rows } = await harness.service.store.client.query<{ type: string }>(
      `SELECT type FROM outbox_events WHERE payload->'data'->'object'->>'id' = $1 ORDER BY id`,
      [old],
    );
    expect(rows.map((row) => row.type)).toEqual(['authorization.approved', 'transaction.failed']);
    // Nothing left to expire until the young one comes of age.
    expect(await expireHolds(harness.service.store, 7 * DAY_MS)).toBe(0);
  });

  it('snapshots each ended day once, backfilling the missed ones in order', async () => {
    const store = harness.service.store;
    // Whatever earlier tests left due, taken now; from here each day is counted.
    await takeSnapshots(store);
    const vault = (
      await harness.call('POST', '/v1/vaults', {
        name: 'S',
        currency: 'USDC',
        network: 'solana',
        initialDeposit: '10',
      })
    ).body;
    const today = new Date(clock.nowMs).toISOString().slice(0, 10);
    clock.advance(DAY_MS);
    await harness.call('POST', '/v1/simulate/deposits', { vaultId: vault.id, amount: '5' });
    // Three days pass with no snapshot run: the next run backfills all of them.
    clock.advance(3 * DAY_MS);
    const taken = await takeSnapshots(store);
    expect(taken).toHaveLength(4);
    expect(taken[0]).toBe(today);
    expect(await takeSnapshots(store)).toEqual([]);
    const history = await harness.call('GET', `/v1/vaults/${vault.id}/balance/history?limit=10`);
    const now = new Date(clock.nowMs).toISOString().slice(0, 10);
    expect(
      history.body.data.map((snapshot) => [snapshot.date, snapshot.ledger, snapshot.final]),
    ).toEqual([
      // Today, not over yet: its live figures, ahead of the snapshots of the ended days.
      [now, '15.00', false],
      [taken[3], '15.00', true],
      [taken[2], '15.00', true],
      [taken[1], '15.00', true],
      [taken[0], '10.00', true],
    ]);
    clock.advance(DAY_MS);
    expect(await takeSnapshots(store)).toHaveLength(1);
  });
});

describe('the maintenance schedules on BullMQ', () => {
  const clock = new TestClock();
  // Holds approved here live a day, as the worker's setting says (HOLD_EXPIRY_HOURS=24).
  const harness = useTestService<Json>({
    clock: clock.now,
    holdExpiry: { defaultMs: DAY_MS, longMs: 31 * DAY_MS },
  });

  it('runs hold expiry and snapshots on their schedules, from the worker role', async () => {
    const { vaultId, cardId } = await fundedCard(harness, '10');
    await hold(harness, cardId, '4');
    // Two days on: the hold is old enough, and two ended days want their snapshots.
    clock.advance(2 * DAY_MS);
    const workers = startWorkers({
      store: harness.service.store,
      redis: redisServer(LOCAL_REDIS_URL),
      redisPrefix: testRedisPrefix(),
      delivery: { concurrency: 4, endpointConcurrency: 2, retryDelaysMs: [100], timeoutMs: 1000 },
      // Both jobs come round every 200 ms.
      maintenance: { holdAgeMsMax: DAY_MS, holdExpiryEveryMs: 200, snapshotEveryMs: 200 },
      log: SILENT_LOG,
    });
    try {
      const snapshots = async () =>
        (
          await harness.service.store.client.query<{ n: number }>(
            'SELECT count(*)::int AS n FROM balance_snapshots WHERE vault_id = $1',
            [vaultId],
          )
        ).rows[0]?.n ?? 0;
      let pending = '';
      let taken = 0;
      for (let attempt = 0; attempt < 100 && (pending !== '0.00' || taken < 2); attempt++) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        pending = (await harness.call('GET', `/v1/vaults/${vaultId}`)).body.balance.pending;
        taken = await snapshots();
      }
      expect([pending, taken]).toEqual(['0.00', 2]);
    } finally {
      await workers.stop();
    }
  });
});
