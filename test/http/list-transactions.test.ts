import { beforeAll, describe, expect, it } from 'vitest';
import { MERCHANT, networkId } from '../support/authorize.js';
import { useTestService } from '../support/http.js';
import { TestClock } from '../support/store.js';

/**
 * List Transactions' date bounds and type filter over real HTTP on PostgreSQL, on a test clock
 * so that transactions fall on either side of a UTC midnight to the millisecond: a date alone
 * names its whole UTC day (so `startDate=endDate=D` lists the day D), a date-time keeps its
 * exact instant (endDate exclusive), and `type` narrows to the types the API presents.
 */
interface Txn {
  id: string;
  type: string;
  createdAt: string;
}
interface Json {
  id: string;
  data: Txn[];
  hasMore: boolean;
  error?: { type: string; code: string; message: string; param?: string };
}

const D = '2026-11-18';
const NEXT = '2026-11-19';

describe('List Transactions: date bounds and type', () => {
  const clock = new TestClock();
  const harness = useTestService<Json>({ clock: clock.now });
  const { call } = harness;
  const list = async (query: Record<string, string | string[]>) => {
    const search = new URLSearchParams();
    const withLimit: Record<string, string | string[]> = { limit: '100', ...query };
    for (const [name, value] of Object.entries(withLimit)) {
      for (const one of typeof value === 'string' ? [value] : value) search.append(name, one);
    }
    return call('GET', `/v1/transactions?${search.toString()}`);
  };
  const idsOf = async (query: Record<string, string | string[]>) => {
    const answer = await list(query);
    expect(answer.status, JSON.stringify([query, answer.body.error])).toBe(200);
    return answer.body.data.map((txn) => txn.id);
  };
  /** Every transaction of the account, newest first, as the unfiltered list answers it. */
  let all: Txn[] = [];
  const where = (keep: (txn: Txn) => boolean) => all.filter(keep).map((txn) => txn.id);
  let vaultA = '';
  let vaultB = '';

  beforeAll(async () => {
    clock.nowMs = Date.parse(`${D}T12:00:00.000Z`);
    const create = (initialDeposit: string) =>
      call('POST', '/v1/vaults', {
        name: 'V',
        currency: 'USDC',
        network: 'solana',
        initialDeposit,
      });
    vaultA = (await create('100')).body.id;
    vaultB = (await create('0')).body.id;
    const card = await call('POST', '/v1/cards', { vaultId: vaultA, cardholderName: 'Ada' });
    // The last millisecond of D: a transfer out of A and into B.
    clock.nowMs = Date.parse(`${D}T23:59:59.999Z`);
    expect(
      (await call('POST', '/v1/transfers', { fromVaultId: vaultA, toVaultId: vaultB, amount: '5' }))
        .status,
    ).toBe(201);
    // The first millisecond of the next day: a card authorization on A.
    clock.nowMs = Date.parse(`${NEXT}T00:00:00.000Z`);
    const authorized = await call('POST', '/v1/authorizations', {
      cardId: card.body.id,
      amount: '10',
      currency: 'USDC',
      merchant: MERCHANT,
      networkTransactionId: networkId(),
    });
    expect(authorized.status).toBe(200);
    clock.nowMs = Date.parse(`${NEXT}T08:00:00.000Z`);
    await call('POST', '/v1/simulate/deposits', { vaultId: vaultA, amount: '1' });
    all = (await list({})).body.data;
    expect(all.map((txn) => [txn.type, txn.createdAt]).sort()).toEqual([
      ['card_authorization', `${NEXT}T00:00:00.000Z`],
      ['deposit', `${D}T12:00:00.000Z`],
      ['deposit', `${NEXT}T08:00:00.000Z`],
      ['transfer_in', `${D}T23:59:59.999Z`],
      ['transfer_out', `${D}T23:59:59.999Z`],
    ]);
  });

  const onDay = (day: string) => (txn: Txn) => txn.createdAt.startsWith(day);

  it('takes in the whole UTC day of a date-only bound, the last millisecond included', async () => {
    expect(await idsOf({ startDate: D, endDate: D })).toEqual(where(onDay(D)));
    expect(where(onDay(D))).toHaveLength(3);
    expect(await idsOf({ startDate: NEXT, endDate: NEXT })).toEqual(where(onDay(NEXT)));
    expect(await idsOf({ endDate: D })).toEqual(where(onDay(D)));
    expect(await idsOf({ startDate: NEXT })).toEqual(where(onDay(NEXT)));
    expect(await idsOf({ startDate: D, endDate: NEXT })).toEqual(where(() => true));
    // Start after end: nothing, not an error.
    expect(await idsOf({ startDate: NEXT, endDate: D })).toEqual([]);
    // The widest days there are.
    expect(await idsOf({ startDate: '0001-01-01', endDate: '9999-12-31' })).toEqual(
      where(() => true),
    );
  });

  it('keeps the exact instant of a date-time bound: start inclusive, end exclusive', async () => {
    const before = (iso: string) => (txn: Txn) => txn.createdAt < iso;
    const midnight = `${NEXT}T00:00:00.000Z`;
    expect(await idsOf({ endDate: midnight })).toEqual(where(before(midnight)));
    expect(await idsOf({ endDate: `${NEXT}T00:00:00.001Z` })).toEqual(
      where(before(`${NEXT}T00:00:00.001Z`)),
    );
    expect(where(before(`${NEXT}T00:00:00.001Z`))).toHaveLength(4);
    // The same instant as midnight UTC, written with another offset.
    expect(await idsOf({ endDate: `${NEXT}T01:00:00+01:00` })).toEqual(where(before(midnight)));
    expect(await idsOf({ startDate: `${D}T23:59:59.999Z` })).toEqual(
      where((txn) => txn.createdAt >= `${D}T23:59:59.999Z`),
    );
    expect(await idsOf({ startDate: midnight, endDate: midnight })).toEqual([]);
  });

  it('filters by type, alone and with the other filters', async () => {
    for (const type of [
      'card_authorization',
      'transfer_in',
      'transfer_out',
      'external_transfer',
      'deposit',
      'withdrawal',
    ]) {
      expect(await idsOf({ type }), type).toEqual(where((txn) => txn.type === type));
    }
    expect(where((txn) => txn.type === 'deposit')).toHaveLength(2);
    expect(await idsOf({ type: 'deposit', startDate: NEXT, endDate: NEXT })).toEqual(
      where((txn) => txn.type === 'deposit' && onDay(NEXT)(txn)),
    );
    expect(await idsOf({ type: 'transfer_in', vaultId: vaultB })).toHaveLength(1);
    expect(await idsOf({ type: 'transfer_out', vaultId: vaultB })).toEqual([]);
    const page = await list({ type: 'deposit', limit: '1' });
    expect([page.body.data.map((txn) => txn.type), page.body.hasMore]).toEqual([['deposit'], true]);
  });

  it('refuses a type the API does not present, naming the parameter', async () => {
    // `refund` is a type since contract v1.2 (section 16); `chargeback` is none.
    for (const type of ['chargeback', 'Deposit', '', ['deposit', 'transfer_in']]) {
      const answer = await list({ type });
      expect([answer.status, answer.body.error], JSON.stringify(type)).toEqual([
        400,
        {
          type: 'invalid_request_error',
          code: 'parameter_invalid',
          message: expect.stringMatching(/^type: /) as unknown,
          param: 'type',
          requestId: expect.stringMatching(/^req_/) as unknown,
        },
      ]);
    }
  });

  it('refuses a bound that is no date or date-time, naming it', async () => {
    for (const [param, value] of [
      ['endDate', '2026-11-31'],
      ['startDate', `${D}T10:00:00`],
      ['startDate', '18-11-2026'],
      ['endDate', `${D}T24:00:00Z`],
      ['startDate', '0000-12-31'],
    ] as const) {
      const answer = await list({ [param]: value });
      expect([answer.status, answer.body.error?.code, answer.body.error?.param], value).toEqual([
        400,
        'parameter_invalid',
        param,
      ]);
    }
  });
});
