import { describe, expect, it } from 'vitest';
import { MERCHANT, networkId } from '../support/authorize.js';
import { useTestService } from '../support/http.js';
import { TestClock } from '../support/store.js';

/**
 * Get Balance History's row for today over real HTTP on PostgreSQL, on a test clock: a vault
 * has a history from its first day (today's live figures, `final: false`), before any UTC
 * midnight has passed; the row follows the query's days and cursor, and once the day is over
 * its end-of-day snapshot takes its place as `final: true`.
 */
interface Row {
  object: string;
  vaultId: string;
  date: string;
  currency: string;
  ledger: string;
  available: string;
  pending: string;
  final: boolean;
}
interface Json {
  id: string;
  object: string;
  data: Row[];
  hasMore: boolean;
  nextCursor: string | null;
  available: string;
  pending: string;
  ledger: string;
  error?: { type: string; code: string; message: string; param?: string };
}

const DAY_MS = 86_400_000;
const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);

describe('Get Balance History: today', () => {
  const clock = new TestClock();
  const harness = useTestService<Json>({ clock: clock.now });
  const { call } = harness;
  const history = (vaultId: string, query: Record<string, string> = {}) =>
    call('GET', `/v1/vaults/${vaultId}/balance/history?${new URLSearchParams(query).toString()}`);
  const datesOf = async (vaultId: string, query: Record<string, string> = {}) => {
    const answer = await history(vaultId, query);
    expect(answer.status, JSON.stringify(answer.body.error)).toBe(200);
    return answer.body.data.map((row) => `${row.date}${row.final ? '' : ' live'}`);
  };
  const newVault = async (initialDeposit: string, currency = 'USDC') =>
    (await call('POST', '/v1/vaults', { name: 'H', currency, network: 'solana', initialDeposit }))
      .body.id;
  const hold = async (vaultId: string, amount: string) => {
    const card = await call('POST', '/v1/cards', { vaultId, cardholderName: 'Ada' });
    const answer = await call('POST', '/v1/authorizations', {
      cardId: card.body.id,
      amount,
      currency: 'USDC',
      merchant: MERCHANT,
      networkTransactionId: networkId(),
    });
    expect(answer.status).toBe(200);
  };

  it('answers a new vault its live figures for today, the same as Get Vault Balance', async () => {
    clock.advance(DAY_MS);
    const today = day(clock.nowMs);
    const vaultId = await newVault('100.000001');
    await hold(vaultId, '0.5');
    const answer = await history(vaultId);
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({
      object: 'list',
      data: [
        {
          object: 'balance_snapshot',
          vaultId,
          date: today,
          currency: 'USDC',
          ledger: '100.000001',
          available: '99.500001',
          pending: '0.50',
          final: false,
        },
      ],
      hasMore: false,
      nextCursor: null,
    });
    const balance = (await call('GET', `/v1/vaults/${vaultId}/balance`)).body;
    const [row] = answer.body.data;
    expect([row?.ledger, row?.available, row?.pending]).toEqual([
      balance.ledger,
      balance.available,
      balance.pending,
    ]);
    // SOL at its own scale, at least two decimals.
    const sol = await newVault('1.000000001', 'SOL');
    expect((await history(sol)).body.data.map((r) => [r.ledger, r.currency, r.final])).toEqual([
      ['1.000000001', 'SOL', false],
    ]);
  });

  it('shows today only when the days asked for include it', async () => {
    clock.advance(DAY_MS);
    const today = day(clock.nowMs);
    const [yesterday, tomorrow] = [day(clock.nowMs - DAY_MS), day(clock.nowMs + DAY_MS)];
    const vaultId = await newVault('10');
    for (const query of [
      { startDate: today, endDate: today },
      { startDate: today },
      { endDate: today },
      { startDate: yesterday, endDate: tomorrow },
      { startingAfter: tomorrow },
    ]) {
      expect(await datesOf(vaultId, query), JSON.stringify(query)).toEqual([`${today} live`]);
    }
    for (const query of [
      { endDate: yesterday },
      { startDate: tomorrow },
      { startingAfter: today },
      { startingAfter: yesterday },
    ]) {
      expect(await datesOf(vaultId, query), JSON.stringify(query)).toEqual([]);
    }
  });

  it('puts today first, newest first, and pages from it to the end-of-day snapshots', async () => {
    clock.advance(DAY_MS);
    const first = day(clock.nowMs);
    const vaultId = await newVault('50');
    await hold(vaultId, '20');
    // Midnight passes; the snapshot job writes the day that ended.
    clock.advance(DAY_MS);
    const second = day(clock.nowMs);
    await harness.service.store.snapshotDay(first, null);
    await call('POST', '/v1/simulate/deposits', { vaultId, amount: '0.25' });
    clock.advance(DAY_MS);
    const third = day(clock.nowMs);
    await harness.service.store.snapshotDay(second, null);

    const all = await history(vaultId);
    expect(all.body.data.map((row) => [row.date, row.final, row.ledger, row.pending])).toEqual([
      [third, false, '50.25', '20.00'],
      [second, true, '50.25', '20.00'],
      [first, true, '50.00', '20.00'],
    ]);
    const page1 = await history(vaultId, { limit: '1' });
    expect([page1.body.data.map((r) => r.date), page1.body.hasMore, page1.body.nextCursor]).toEqual(
      [[third], true, third],
    );
    const page2 = await history(vaultId, { limit: '1', startingAfter: third });
    expect([page2.body.data.map((r) => r.date), page2.body.nextCursor]).toEqual([[second], second]);
    const page3 = await history(vaultId, { limit: '1', startingAfter: second });
    expect([page3.body.data.map((r) => r.date), page3.body.hasMore]).toEqual([[first], false]);
    expect(await datesOf(vaultId, { limit: '2' })).toEqual([`${third} live`, second]);
    expect(await datesOf(vaultId, { startDate: second, endDate: second })).toEqual([second]);

    // Today's live row follows the balances as they change.
    await call('POST', '/v1/simulate/deposits', { vaultId, amount: '1' });
    expect((await history(vaultId, { limit: '1' })).body.data[0]?.ledger).toBe('51.25');
  });

  it('has no row for today once the vault was closed before it; a vault closed today has one', async () => {
    clock.advance(DAY_MS);
    const closedYesterday = await newVault('0');
    expect((await call('POST', `/v1/vaults/${closedYesterday}/close`)).status).toBe(200);
    clock.advance(DAY_MS);
    const today = day(clock.nowMs);
    expect(await datesOf(closedYesterday)).toEqual([]);
    const closedToday = await newVault('0');
    expect((await call('POST', `/v1/vaults/${closedToday}/close`)).status).toBe(200);
    expect((await history(closedToday)).body.data).toEqual([
      expect.objectContaining({ date: today, ledger: '0.00', final: false }),
    ]);
  });

  it('refuses a bad query with the parameter at fault, and an unknown vault with 404', async () => {
    const vaultId = await newVault('1');
    for (const [query, param] of [
      [{ startDate: '2026-02-30' }, 'startDate'],
      [{ endDate: 'today' }, 'endDate'],
      [{ startingAfter: '2026-11-18T00:00:00Z' }, 'startingAfter'],
      [{ limit: '0' }, 'limit'],
    ] as const) {
      const answer = await history(vaultId, query);
      expect([answer.status, answer.body.error], JSON.stringify(query)).toEqual([
        400,
        {
          type: 'invalid_request_error',
          code: 'parameter_invalid',
          message: expect.stringMatching(new RegExp(`^${param}`)) as unknown,
          param,
          requestId: expect.stringMatching(/^req_/) as unknown,
        },
      ]);
    }
    const unknown = await history(`vlt_${'0'.repeat(32)}`);
    expect([unknown.status, unknown.body.error?.code, unknown.body.error?.param]).toEqual([
      404,
      'vault_not_found',
      'id',
    ]);
    // Reading wrote nothing: no snapshot was taken for today.
    const { rows } = await harness.service.store.client.query(
      'SELECT 1 FROM balance_snapshots WHERE vault_id = $1',
      [vaultId],
    );
    expect(rows).toEqual([]);
  });
});
