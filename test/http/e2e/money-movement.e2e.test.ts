import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { Decimal, type Scope } from '../../../src/core/index.js';
import type { ApiScope } from '../../../src/store/port/index.js';
import type { components, paths } from '../../../src/client/api-types.js';
import { dataOf, refusalOf, typedClient, type TypedClient } from '../../support/client.js';
import { useTestService } from '../../support/http.js';
import { TestClock } from '../../support/store.js';

/**
 * Money movement end to end through the typed client, over loopback HTTP on PostgreSQL:
 * internal transfers (also to another account's vault of the same mode, section 12),
 * simulated deposits (test mode only), the transactions they and card authorizations record,
 * List Transactions with every filter its query schema accepts (vaultId, cardId, status,
 * minAmount, maxAmount, startDate, endDate, limit, startingAfter), transaction metadata
 * (owner and counterparty only, section 14), the real-time balance and the daily balance
 * history. It proves exact decimal amounts in every answer, each error code these operations
 * can produce with well-typed input, and idempotent replays of transfers and deposits. The
 * service runs on a test clock, so that dates and the days of the balance history are exact;
 * card holds, declines, captures and reversals are made through the store, as the card
 * routes are not served yet.
 */
type Transaction = components['schemas']['Transaction'];
type TransactionsQuery = NonNullable<paths['/v1/transactions']['get']['parameters']['query']>;
type TransferBody = paths['/v1/transfers']['post']['requestBody']['content']['application/json'];

const UNKNOWN_VAULT = `vlt_${'0'.repeat(32)}`;
const DAY_MS = 86_400_000;
const CAFE = { name: 'Cafe Rio', mcc: '5812', country: 'US' };

describe('money movement over the typed client', () => {
  const clock = new TestClock();
  const harness = useTestService({ clock: clock.now });

  const account = async (options: { mode?: Scope['mode']; scopes?: ApiScope[] } = {}) => {
    const { key, scope } = await harness.service.key(options);
    return { client: typedClient(harness.service.base, key), scope };
  };
  const createVault = async (client: TypedClient, initialDeposit = '100', currency = 'USDC') =>
    dataOf(
      await client.POST('/v1/vaults', {
        body: { name: 'Treasury', currency, network: 'solana', initialDeposit },
      }),
    );
  const balanceOf = async (client: TypedClient, id: string) =>
    dataOf(await client.GET('/v1/vaults/{id}', { params: { path: { id } } })).balance;
  const transactions = async (client: TypedClient, query: TransactionsQuery) =>
    dataOf(await client.GET('/v1/transactions', { params: { query } })).data;
  const freeze = async (client: TypedClient, id: string) =>
    dataOf(await client.POST('/v1/vaults/{id}/freeze', { params: { path: { id } }, body: {} }));
  const close = async (client: TypedClient, id: string) =>
    dataOf(await client.POST('/v1/vaults/{id}/close', { params: { path: { id } }, body: null }));

  /** A card on the vault and an authorization of `amount` on it, through the store. */
  const card = async (scope: Scope, vaultId: string) =>
    harness.service.store.createCard(scope, { vaultId, cardholderName: 'Ada', metadata: {} });
  const authorize = async (scope: Scope, cardId: string, amount: string) => {
    const outcome = await harness.service.store.authorize(scope, {
      cardId,
      amount: new Decimal(amount),
      currency: 'USDC',
      merchant: CAFE,
      networkTransactionId: `ntx_${randomUUID()}`,
    });
    return { approved: outcome.decision.approved, id: outcome.transaction?.id ?? '' };
  };

  describe('Create, Retrieve and List Transfers', () => {
    it('moves funds between two vaults in one step: a completed transfer and both transactions, exact', async () => {
      const { client } = await account();
      const from = await createVault(client, '100');
      const to = await createVault(client, '0.000001');
      const made = await client.POST('/v1/transfers', {
        body: { fromVaultId: from.id, toVaultId: to.id, amount: 40.5, description: 'rent' },
      });
      expect(made.response.status).toBe(201);
      const transfer = dataOf(made);
      expect(transfer).toMatchObject({
        object: 'transfer',
        fromVaultId: from.id,
        toVaultId: to.id,
        amount: '40.50',
        currency: 'USDC',
        status: 'completed',
        description: 'rent',
        memo: null,
        signature: null,
        failureReason: null,
      });
      expect(transfer.id).toMatch(/^tr_[0-9a-f]{32}$/);
      expect(transfer.completedAt).toBe(transfer.createdAt);
      expect(
        dataOf(await client.GET('/v1/transfers/{id}', { params: { path: { id: transfer.id } } })),
      ).toEqual(transfer);
      expect(await balanceOf(client, from.id)).toEqual({
        available: '59.50',
        pending: '0.00',
        ledger: '59.50',
      });
      expect((await balanceOf(client, to.id)).ledger).toBe('40.500001');
      const [debit] = await transactions(client, { vaultId: from.id, limit: 1 });
      const [credit] = await transactions(client, { vaultId: to.id, limit: 1 });
      expect(debit).toMatchObject({
        type: 'transfer_out',
        status: 'completed',
        amount: '40.50',
        transferId: transfer.id,
      });
      expect(credit).toMatchObject({
        type: 'transfer_in',
        status: 'completed',
        amount: '40.50',
        transferId: transfer.id,
      });
    });

    it('transfers to another account’s vault of the same mode: the counterparty sees only its credit', async () => {
      const payer = await account();
      const payee = await account();
      const from = await createVault(payer.client, '10');
      const to = await createVault(payee.client, '0');
      const transfer = dataOf(
        await payer.client.POST('/v1/transfers', {
          body: { fromVaultId: from.id, toVaultId: to.id, amount: '2.000001' },
        }),
      );
      expect([transfer.status, transfer.toVaultId]).toEqual(['completed', to.id]);
      expect(await balanceOf(payee.client, to.id)).toEqual({
        available: '2.000001',
        pending: '0.00',
        ledger: '2.000001',
      });
      expect(
        (await transactions(payee.client, { vaultId: to.id })).map((txn) => [txn.type, txn.amount]),
      ).toEqual([['transfer_in', '2.000001']]);
      // The transfer is the payer's: the payee neither lists nor retrieves it.
      expect(dataOf(await payee.client.GET('/v1/transfers')).data).toEqual([]);
      expect(
        refusalOf(
          await payee.client.GET('/v1/transfers/{id}', { params: { path: { id: transfer.id } } }),
        ),
      ).toEqual({
        status: 404,
        type: 'invalid_request_error',
        code: 'transfer_not_found',
        param: 'id',
      });
      // A vault of the other mode is not there at all.
      const live = await account({ mode: 'live' });
      const liveVault = await createVault(live.client, '0');
      expect(
        refusalOf(
          await payer.client.POST('/v1/transfers', {
            body: { fromVaultId: from.id, toVaultId: liveVault.id, amount: '1' },
          }),
        ),
      ).toMatchObject({ status: 404, code: 'vault_not_found', param: 'toVaultId' });
      expect((await balanceOf(payer.client, from.id)).ledger).toBe('7.999999');
    });

    it('lists transfers newest first, by vault (from or to) and status, page by page', async () => {
      const { client } = await account();
      const [a, b, c] = [
        await createVault(client, '100'),
        await createVault(client, '0'),
        await createVault(client, '5'),
      ];
      const send = async (fromVaultId: string, toVaultId: string, amount: string) =>
        dataOf(await client.POST('/v1/transfers', { body: { fromVaultId, toVaultId, amount } }));
      const t1 = await send(a.id, b.id, '1');
      const t2 = await send(b.id, c.id, '0.5');
      const t3 = await send(a.id, c.id, '2');
      // Closing c to an address makes a pending external transfer.
      dataOf(
        await client.POST('/v1/vaults/{id}/close', {
          params: { path: { id: c.id } },
          body: { destination: { address: '9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin' } },
        }),
      );
      const list = async (query: {
        vaultId?: string;
        status?: 'pending' | 'completed' | 'failed';
        limit?: number;
        startingAfter?: string;
      }) => dataOf(await client.GET('/v1/transfers', { params: { query } }));
      const all = await list({});
      expect(all.data).toHaveLength(4);
      const [external] = all.data;
      expect(external).toMatchObject({ status: 'pending', fromVaultId: c.id, amount: '7.50' });
      expect(all.data.slice(1).map((transfer) => transfer.id)).toEqual([t3.id, t2.id, t1.id]);
      expect((await list({ vaultId: b.id })).data.map((transfer) => transfer.id)).toEqual([
        t2.id,
        t1.id,
      ]);
      expect((await list({ status: 'completed' })).data.map((transfer) => transfer.id)).toEqual([
        t3.id,
        t2.id,
        t1.id,
      ]);
      expect((await list({ status: 'pending' })).data.map((transfer) => transfer.id)).toEqual([
        external?.id,
      ]);
      expect((await list({ status: 'failed' })).data).toEqual([]);
      const page1 = await list({ limit: 3 });
      expect([page1.hasMore, page1.nextCursor]).toEqual([true, t2.id]);
      const page2 = await list({ limit: 3, startingAfter: page1.nextCursor ?? '' });
      expect([page2.data.map((transfer) => transfer.id), page2.hasMore, page2.nextCursor]).toEqual([
        [t1.id],
        false,
        null,
      ]);
      for (const [query, param] of [
        [{ limit: 101 }, 'limit'],
        [{ startingAfter: a.id }, 'startingAfter'],
      ] as const) {
        expect(refusalOf(await client.GET('/v1/transfers', { params: { query } }))).toMatchObject({
          status: 400,
          code: 'parameter_invalid',
          param,
        });
      }
    });

    it('answers transfer_not_found for an unknown transfer id', async () => {
      const { client } = await account();
      expect(
        refusalOf(
          await client.GET('/v1/transfers/{id}', {
            params: { path: { id: `tr_${'0'.repeat(32)}` } },
          }),
        ),
      ).toEqual({
        status: 404,
        type: 'invalid_request_error',
        code: 'transfer_not_found',
        param: 'id',
      });
    });

    it('refuses what section 12 refuses, with the contract’s status and param, moving nothing', async () => {
      const { client, scope } = await account();
      const from = await createVault(client, '100');
      const to = await createVault(client, '0');
      const sol = await createVault(client, '1', 'SOL');
      const frozen = await createVault(client, '10');
      await freeze(client, frozen.id);
      const closed = await createVault(client, '0');
      await close(client, closed.id);
      // A 30.00 hold leaves 70.00 available of the 100.00 ledger.
      const held = await authorize(scope, (await card(scope, from.id)).id, '30');
      expect(held.approved).toBe(true);
      const cases: [string, Partial<TransferBody>, number, string, string][] = [
        ['more than available', { amount: '70.000001' }, 402, 'insufficient_balance', 'amount'],
        ['another currency', { toVaultId: sol.id }, 400, 'currency_mismatch', 'toVaultId'],
        ['a frozen source', { fromVaultId: frozen.id }, 409, 'vault_frozen', 'fromVaultId'],
        ['a frozen destination', { toVaultId: frozen.id }, 409, 'vault_frozen', 'toVaultId'],
        ['a closed destination', { toVaultId: closed.id }, 409, 'vault_closed', 'toVaultId'],
        [
          'an unknown source',
          { fromVaultId: UNKNOWN_VAULT },
          404,
          'vault_not_found',
          'fromVaultId',
        ],
        [
          'an unknown destination',
          { toVaultId: UNKNOWN_VAULT },
          404,
          'vault_not_found',
          'toVaultId',
        ],
        ['the same vault', { toVaultId: from.id }, 400, 'parameter_invalid', 'toVaultId'],
        ['too many decimals', { amount: '1.0000001' }, 400, 'invalid_amount', 'amount'],
        ['a negative amount', { amount: -1 }, 400, 'invalid_amount', 'amount'],
        ['a zero amount', { amount: 0 }, 400, 'invalid_amount', 'amount'],
        ['an amount above 1e12', { amount: '1000000000000.01' }, 400, 'invalid_amount', 'amount'],
        ['an amount that is no number', { amount: '1e' }, 400, 'invalid_amount', 'amount'],
      ];
      for (const [title, change, status, code, param] of cases) {
        const refusal = refusalOf(
          await client.POST('/v1/transfers', {
            body: { fromVaultId: from.id, toVaultId: to.id, amount: '1', ...change },
          }),
        );
        expect({ title, ...refusal, param: refusal.param ?? '' }).toEqual({
          title,
          status,
          type: 'invalid_request_error',
          code,
          param,
        });
      }
      expect(await balanceOf(client, from.id)).toEqual({
        available: '70.00',
        pending: '30.00',
        ledger: '100.00',
      });
      expect((await balanceOf(client, to.id)).ledger).toBe('0.00');
      expect(dataOf(await client.GET('/v1/transfers')).data).toEqual([]);
      // Exactly the available balance is allowed.
      const all = await client.POST('/v1/transfers', {
        body: { fromVaultId: from.id, toVaultId: to.id, amount: '70' },
      });
      expect(all.response.status).toBe(201);
      expect((await balanceOf(client, from.id)).available).toBe('0.00');
    });

    it('needs transfers:write to transfer and transactions:read to read transfers', async () => {
      const { client } = await account();
      const from = await createVault(client, '10');
      const to = await createVault(client, '0');
      const reader = await account({ scopes: ['transactions:read'] });
      const writer = await account({ scopes: ['transfers:write'] });
      for (const answer of [
        await reader.client.POST('/v1/transfers', {
          body: { fromVaultId: from.id, toVaultId: to.id, amount: '1' },
        }),
        await writer.client.GET('/v1/transfers'),
        await writer.client.GET('/v1/transfers/{id}', {
          params: { path: { id: `tr_${'0'.repeat(32)}` } },
        }),
        await writer.client.GET('/v1/transactions'),
      ]) {
        expect(refusalOf(answer)).toMatchObject({
          status: 403,
          type: 'permission_error',
          code: 'insufficient_scope',
        });
      }
      expect((await balanceOf(client, from.id)).ledger).toBe('10.00');
    });

    it('replays a transfer under its Idempotency-Key, moving the funds once, and refuses the key for another amount', async () => {
      const { client } = await account();
      const from = await createVault(client, '10');
      const to = await createVault(client, '0');
      const headers = { 'Idempotency-Key': `transfer-${randomUUID()}` };
      const body: TransferBody = { fromVaultId: from.id, toVaultId: to.id, amount: '4' };
      const first = await client.POST('/v1/transfers', { body, headers });
      const replay = await client.POST('/v1/transfers', { body, headers });
      expect([first.response.status, replay.response.status]).toEqual([201, 201]);
      expect(dataOf(replay)).toEqual(dataOf(first));
      expect(replay.response.headers.get('idempotent-replayed')).toBe('true');
      expect(
        refusalOf(await client.POST('/v1/transfers', { body: { ...body, amount: '5' }, headers })),
      ).toMatchObject({ status: 409, code: 'duplicate_idempotency_key' });
      expect((await balanceOf(client, from.id)).ledger).toBe('6.00');
      expect(dataOf(await client.GET('/v1/transfers')).data).toHaveLength(1);
    });

    it('stores a refusal that is no 400 and replays it, even once the funds are there', async () => {
      const { client } = await account();
      const from = await createVault(client, '1');
      const to = await createVault(client, '0');
      const headers = { 'Idempotency-Key': `short-${randomUUID()}` };
      const body: TransferBody = { fromVaultId: from.id, toVaultId: to.id, amount: '2' };
      const first = await client.POST('/v1/transfers', { body, headers });
      expect(refusalOf(first)).toMatchObject({ status: 402, code: 'insufficient_balance' });
      dataOf(
        await client.POST('/v1/simulate/deposits', { body: { vaultId: from.id, amount: '5' } }),
      );
      const replay = await client.POST('/v1/transfers', { body, headers });
      expect(replay.response.status).toBe(402);
      expect(replay.error).toEqual(first.error);
      expect(replay.response.headers.get('idempotent-replayed')).toBe('true');
      expect((await balanceOf(client, from.id)).ledger).toBe('6.00');
    });
  });

  describe('List and Retrieve Transactions', () => {
    it('filters by every parameter the query accepts, exactly, and pages through the rest', async () => {
      const { client, scope } = await account();
      clock.advance(DAY_MS);
      const day0 = clock.nowMs;
      const vault = await createVault(client, '100');
      const other = await createVault(client, '3');
      const first = await card(scope, vault.id);
      clock.advance(DAY_MS);
      const day1 = clock.nowMs;
      const pending = await authorize(scope, first.id, '10');
      const declined = await authorize(scope, first.id, '5000');
      const reversed = await authorize(scope, first.id, '7.5');
      await harness.service.store.reverse(scope, reversed.id, null);
      const captured = await authorize(scope, first.id, '2.25');
      await harness.service.store.capture(scope, captured.id, null);
      expect([pending.approved, declined.approved, reversed.approved, captured.approved]).toEqual([
        true,
        false,
        true,
        true,
      ]);
      clock.advance(DAY_MS);
      const day2 = clock.nowMs;
      const deposit = dataOf(
        await client.POST('/v1/simulate/deposits', {
          body: { vaultId: vault.id, amount: '0.000001' },
        }),
      );
      const everything = await transactions(client, { vaultId: vault.id });
      const ids = (list: Transaction[]) => list.map((txn) => txn.id);
      const initial = everything.at(-1);
      expect(ids(everything)).toEqual([
        deposit.id,
        captured.id,
        reversed.id,
        declined.id,
        pending.id,
        initial?.id,
      ]);
      expect(initial).toMatchObject({ type: 'deposit', amount: '100.00' });

      // Each state a card transaction can be in (section 9), as the contract shapes it.
      const byId = new Map(everything.map((txn) => [txn.id, txn]));
      expect(byId.get(pending.id)).toMatchObject({
        type: 'card_authorization',
        status: 'pending',
        cardId: first.id,
        amount: '10.00',
        capturedAmount: '0.00',
        merchant: { ...CAFE, city: null, id: null },
        completedAt: null,
      });
      expect(byId.get(declined.id)).toMatchObject({
        status: 'declined',
        declineCode: 'insufficient_balance',
        declineReason: { rule: 'available_balance' },
      });
      expect(byId.get(reversed.id)).toMatchObject({ status: 'failed', failureReason: 'reversed' });
      expect(byId.get(captured.id)).toMatchObject({
        status: 'completed',
        amount: '2.25',
        capturedAmount: '2.25',
      });

      const only = async (query: TransactionsQuery) =>
        ids(await transactions(client, { vaultId: vault.id, ...query }));
      expect(await only({ cardId: first.id })).toEqual([
        captured.id,
        reversed.id,
        declined.id,
        pending.id,
      ]);
      expect(await only({ status: 'pending' })).toEqual([pending.id]);
      expect(await only({ status: 'declined' })).toEqual([declined.id]);
      expect(await only({ status: 'failed' })).toEqual([reversed.id]);
      expect(await only({ status: 'completed' })).toEqual([deposit.id, captured.id, initial?.id]);
      // Amount bounds are inclusive and exact to the last digit.
      expect(await only({ minAmount: '10', maxAmount: '10' })).toEqual([pending.id]);
      expect(await only({ maxAmount: '0.000001' })).toEqual([deposit.id]);
      expect(await only({ maxAmount: '0.0000009' })).toEqual([]);
      expect(await only({ minAmount: '7.5', maxAmount: '100' })).toEqual([
        reversed.id,
        pending.id,
        initial?.id,
      ]);
      expect(await only({ minAmount: '5000' })).toEqual([declined.id]);
      // startDate is inclusive; a date-time endDate is exclusive, a date-only one takes in its
      // whole UTC day.
      const iso = (ms: number) => new Date(ms).toISOString();
      expect(await only({ startDate: iso(day2) })).toEqual([deposit.id]);
      expect(await only({ endDate: iso(day1) })).toEqual([initial?.id]);
      expect(await only({ startDate: iso(day1), endDate: iso(day2) })).toEqual([
        captured.id,
        reversed.id,
        declined.id,
        pending.id,
      ]);
      expect(
        await only({ startDate: iso(day0).slice(0, 10), endDate: iso(day0).slice(0, 10) }),
      ).toEqual([initial?.id]);
      expect(
        await only({ startDate: iso(day0).slice(0, 10), endDate: iso(day1).slice(0, 10) }),
      ).toEqual([captured.id, reversed.id, declined.id, pending.id, initial?.id]);
      expect(await only({ startDate: iso(day2 + 1) })).toEqual([]);
      // A filter of another account's card or vault narrows to nothing.
      expect(await only({ cardId: `card_${'0'.repeat(32)}` })).toEqual([]);
      expect(ids(await transactions(client, { vaultId: other.id }))).toHaveLength(1);

      // Pages of two, following nextCursor, give the whole list once, in order.
      const seen: string[] = [];
      let cursor: string | undefined;
      for (let page = 0; page < 10; page++) {
        const answer = dataOf(
          await client.GET('/v1/transactions', {
            params: {
              query: {
                vaultId: vault.id,
                limit: 2,
                ...(cursor === undefined ? {} : { startingAfter: cursor }),
              },
            },
          }),
        );
        seen.push(...ids(answer.data));
        expect(answer.hasMore).toBe(answer.nextCursor !== null);
        if (answer.nextCursor === null) break;
        expect(answer.nextCursor).toBe(answer.data.at(-1)?.id);
        cursor = answer.nextCursor;
      }
      expect(seen).toEqual(ids(everything));
      // Without a vault filter: the account's transactions of both vaults, default page of 10.
      const unfiltered = dataOf(await client.GET('/v1/transactions'));
      expect([unfiltered.data.length, unfiltered.hasMore]).toEqual([7, false]);
    });

    it.each<[string, TransactionsQuery, string, string]>([
      ['a limit of 0', { limit: 0 }, 'parameter_invalid', 'limit'],
      ['a limit of 101', { limit: 101 }, 'parameter_invalid', 'limit'],
      [
        'a cursor of another kind',
        { startingAfter: UNKNOWN_VAULT },
        'parameter_invalid',
        'startingAfter',
      ],
      ['a minAmount that is no number', { minAmount: 'ten' }, 'invalid_amount', 'minAmount'],
      ['a negative maxAmount', { maxAmount: '-1' }, 'invalid_amount', 'maxAmount'],
      ['a startDate that is no date', { startDate: 'yesterday' }, 'parameter_invalid', 'startDate'],
      ['an endDate of month 13', { endDate: '2026-13-01' }, 'parameter_invalid', 'endDate'],
    ])('refuses %s', async (_title, query, code, param) => {
      const { client } = await account();
      expect(refusalOf(await client.GET('/v1/transactions', { params: { query } }))).toEqual({
        status: 400,
        type: 'invalid_request_error',
        code,
        param,
      });
    });

    it('retrieves a transaction of the caller only, as it is listed', async () => {
      const { client } = await account();
      const vault = await createVault(client, '12.5');
      const [listed] = await transactions(client, { vaultId: vault.id });
      const id = listed?.id ?? '';
      const retrieved = await client.GET('/v1/transactions/{id}', { params: { path: { id } } });
      expect(retrieved.response.status).toBe(200);
      expect(dataOf(retrieved)).toEqual(listed);
      expect(dataOf(retrieved)).toMatchObject({
        object: 'transaction',
        type: 'deposit',
        status: 'completed',
        vaultId: vault.id,
        cardId: null,
        transferId: null,
        amount: '12.50',
        currency: 'USDC',
        merchant: null,
        declineCode: null,
        declineReason: null,
        failureReason: null,
        hasMetadata: false,
      });
      const stranger = await account();
      for (const [caller, missing] of [
        [client, `txn_${'0'.repeat(32)}`],
        [stranger.client, id],
      ] as const) {
        expect(
          refusalOf(
            await caller.GET('/v1/transactions/{id}', { params: { path: { id: missing } } }),
          ),
        ).toEqual({
          status: 404,
          type: 'invalid_request_error',
          code: 'transaction_not_found',
          param: 'id',
        });
      }
    });
  });

  describe('Transaction Metadata (contract section 14)', () => {
    it('lets the owner and the counterparty read a transfer’s metadata, and no one else', async () => {
      const payer = await account();
      const payee = await account();
      const from = await createVault(payer.client, '20');
      const to = await createVault(payee.client, '0');
      const metadata = { invoice: 'INV-2026-001', note: 'Q4 settlement' };
      dataOf(
        await payer.client.POST('/v1/transfers', {
          body: { fromVaultId: from.id, toVaultId: to.id, amount: '5', metadata },
        }),
      );
      const [debit] = await transactions(payer.client, { vaultId: from.id, limit: 1 });
      const [credit] = await transactions(payee.client, { vaultId: to.id, limit: 1 });
      const debitId = debit?.id ?? '';
      const creditId = credit?.id ?? '';
      expect([debit?.hasMetadata, credit?.hasMetadata]).toEqual([true, true]);
      // Metadata is never inline in a transaction.
      expect(debit).not.toHaveProperty('metadata');
      const read = (client: TypedClient, id: string) =>
        client.GET('/v1/transactions/{id}/metadata', { params: { path: { id } } });
      for (const [client, id] of [
        [payer.client, debitId],
        [payee.client, creditId],
        [payee.client, debitId],
      ] as const) {
        const answer = await read(client, id);
        expect(answer.response.status).toBe(200);
        expect(answer.response.headers.get('cache-control')).toBe('no-store');
        expect(dataOf(answer)).toEqual({
          object: 'transaction_metadata',
          transactionId: id,
          metadata,
        });
      }
      const stranger = await account();
      for (const id of [debitId, creditId, `txn_${'0'.repeat(32)}`]) {
        expect(refusalOf(await read(stranger.client, id))).toEqual({
          status: 404,
          type: 'invalid_request_error',
          code: 'transaction_not_found',
          param: 'id',
        });
      }
      const noScope = await account({ scopes: ['transactions:read'] });
      expect(refusalOf(await read(noScope.client, debitId))).toMatchObject({
        status: 403,
        type: 'permission_error',
        code: 'insufficient_scope',
      });
    });

    it('answers empty metadata for a transaction that has none', async () => {
      const { client } = await account();
      const vault = await createVault(client, '1');
      const [deposit] = await transactions(client, { vaultId: vault.id });
      const id = deposit?.id ?? '';
      expect(
        dataOf(await client.GET('/v1/transactions/{id}/metadata', { params: { path: { id } } })),
      ).toEqual({ object: 'transaction_metadata', transactionId: id, metadata: {} });
    });
  });

  describe('Simulate Deposit', () => {
    it('deposits into a vault in test mode: a completed deposit with its metadata, the balance raised exactly', async () => {
      const { client } = await account();
      const vault = await createVault(client, '0', 'SOL');
      const answer = await client.POST('/v1/simulate/deposits', {
        body: { vaultId: vault.id, amount: '1.000000001', metadata: { source: 'faucet' } },
      });
      expect(answer.response.status).toBe(201);
      const deposit = dataOf(answer);
      expect(deposit).toMatchObject({
        object: 'transaction',
        type: 'deposit',
        status: 'completed',
        vaultId: vault.id,
        amount: '1.000000001',
        currency: 'SOL',
        hasMetadata: true,
      });
      expect(deposit.id).toMatch(/^txn_[0-9a-f]{32}$/);
      expect(deposit.completedAt).toBe(deposit.createdAt);
      expect(await balanceOf(client, vault.id)).toEqual({
        available: '1.000000001',
        pending: '0.00',
        ledger: '1.000000001',
      });
      expect(
        dataOf(
          await client.GET('/v1/transactions/{id}/metadata', {
            params: { path: { id: deposit.id } },
          }),
        ).metadata,
      ).toEqual({ source: 'faucet' });
    });

    it('refuses a live key with parameter_invalid (test mode only), depositing nothing', async () => {
      const { client } = await account({ mode: 'live' });
      const vault = await createVault(client, '0');
      expect(
        refusalOf(
          await client.POST('/v1/simulate/deposits', { body: { vaultId: vault.id, amount: '1' } }),
        ),
      ).toEqual({
        status: 400,
        type: 'invalid_request_error',
        code: 'parameter_invalid',
        param: 'mode',
      });
      expect((await balanceOf(client, vault.id)).ledger).toBe('0.00');
    });

    it('refuses an unknown, frozen or closed vault and a faulty amount, at the field at fault', async () => {
      const { client } = await account();
      const vault = await createVault(client, '0');
      const frozen = await createVault(client, '0');
      await freeze(client, frozen.id);
      const closed = await createVault(client, '0');
      await close(client, closed.id);
      const cases: [string, string | number, number, string, string][] = [
        [UNKNOWN_VAULT, '1', 404, 'vault_not_found', 'vaultId'],
        [frozen.id, '1', 409, 'vault_frozen', 'vaultId'],
        [closed.id, '1', 409, 'vault_closed', 'vaultId'],
        [vault.id, 0, 400, 'invalid_amount', 'amount'],
        [vault.id, '-0.01', 400, 'invalid_amount', 'amount'],
        [vault.id, '0.0000001', 400, 'invalid_amount', 'amount'],
        [vault.id, '1000000000000.000001', 400, 'invalid_amount', 'amount'],
      ];
      for (const [vaultId, amount, status, code, param] of cases) {
        const refusal = refusalOf(
          await client.POST('/v1/simulate/deposits', { body: { vaultId, amount } }),
        );
        expect({ vaultId, amount, ...refusal }).toEqual({
          vaultId,
          amount,
          status,
          type: 'invalid_request_error',
          code,
          param,
        });
      }
      for (const id of [vault.id, frozen.id, closed.id]) {
        expect((await balanceOf(client, id)).ledger).toBe('0.00');
      }
      const reader = await account({ scopes: ['vaults:read'] });
      expect(
        refusalOf(
          await reader.client.POST('/v1/simulate/deposits', {
            body: { vaultId: vault.id, amount: '1' },
          }),
        ),
      ).toMatchObject({ status: 403, code: 'insufficient_scope' });
    });

    it('replays a deposit under its Idempotency-Key, depositing once', async () => {
      const { client } = await account();
      const vault = await createVault(client, '0');
      const headers = { 'Idempotency-Key': `deposit-${randomUUID()}` };
      const body = { vaultId: vault.id, amount: '3.5' };
      const first = await client.POST('/v1/simulate/deposits', { body, headers });
      const replay = await client.POST('/v1/simulate/deposits', { body, headers });
      expect(dataOf(replay)).toEqual(dataOf(first));
      expect(replay.response.headers.get('idempotent-replayed')).toBe('true');
      expect((await balanceOf(client, vault.id)).ledger).toBe('3.50');
    });

    it('forgets a key after 24 hours: the same request then deposits again', async () => {
      const { client } = await account();
      const vault = await createVault(client, '0');
      const headers = { 'Idempotency-Key': `window-${randomUUID()}` };
      const body = { vaultId: vault.id, amount: '1' };
      const first = dataOf(await client.POST('/v1/simulate/deposits', { body, headers }));
      clock.advance(24 * 3_600_000 - 1000);
      const within = await client.POST('/v1/simulate/deposits', { body, headers });
      expect(within.response.headers.get('idempotent-replayed')).toBe('true');
      expect(dataOf(within).id).toBe(first.id);
      clock.advance(1000);
      const after = await client.POST('/v1/simulate/deposits', { body, headers });
      expect(after.response.status).toBe(201);
      expect(after.response.headers.get('idempotent-replayed')).toBeNull();
      expect(dataOf(after).id).not.toBe(first.id);
      expect((await balanceOf(client, vault.id)).ledger).toBe('2.00');
    });
  });

  describe('concurrent requests under one Idempotency-Key (contract section 5)', () => {
    it('moves the funds once: each answer is the one transfer or idempotency_key_in_use', async () => {
      const { client } = await account();
      const from = await createVault(client, '10');
      const to = await createVault(client, '0');
      const headers = { 'Idempotency-Key': `race-${randomUUID()}` };
      const body: TransferBody = { fromVaultId: from.id, toVaultId: to.id, amount: '1' };
      const answers = await Promise.all(
        Array.from({ length: 8 }, () => client.POST('/v1/transfers', { body, headers })),
      );
      const transfers = dataOf(await client.GET('/v1/transfers')).data;
      expect(transfers).toHaveLength(1);
      for (const answer of answers) {
        if (answer.response.status === 201) {
          expect(dataOf(answer)).toEqual(transfers[0]);
        } else {
          expect(refusalOf(answer)).toEqual({
            status: 409,
            type: 'invalid_request_error',
            code: 'idempotency_key_in_use',
            param: 'Idempotency-Key',
          });
        }
      }
      expect(answers.some((answer) => answer.response.status === 201)).toBe(true);
      expect((await balanceOf(client, from.id)).ledger).toBe('9.00');
      // Once the first is done, the key replays.
      const later = await client.POST('/v1/transfers', { body, headers });
      expect(later.response.headers.get('idempotent-replayed')).toBe('true');
      expect(dataOf(later)).toEqual(transfers[0]);
    });
  });

  describe('Get Vault Balance and Get Balance History', () => {
    it('answers the real-time balance, holds included, exactly', async () => {
      const { client, scope } = await account();
      const vault = await createVault(client, '100.000001');
      await authorize(scope, (await card(scope, vault.id)).id, '0.000002');
      const answer = await client.GET('/v1/vaults/{id}/balance', {
        params: { path: { id: vault.id } },
      });
      expect(answer.response.status).toBe(200);
      const balance = dataOf(answer);
      expect(balance).toEqual({
        object: 'balance',
        vaultId: vault.id,
        currency: 'USDC',
        available: '99.999999',
        pending: '0.000002',
        ledger: '100.000001',
        asOf: balance.asOf,
      });
      expect(new Date(balance.asOf).toISOString()).toBe(balance.asOf);
      const stranger = await account();
      for (const [caller, id] of [
        [client, UNKNOWN_VAULT],
        [stranger.client, vault.id],
      ] as const) {
        expect(
          refusalOf(await caller.GET('/v1/vaults/{id}/balance', { params: { path: { id } } })),
        ).toEqual({
          status: 404,
          type: 'invalid_request_error',
          code: 'vault_not_found',
          param: 'id',
        });
      }
    });

    it('answers the end-of-day snapshots, newest first, by date range and page', async () => {
      const { client, scope } = await account();
      clock.advance(DAY_MS);
      const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);
      const [d0, d1, d2] = [
        day(clock.nowMs),
        day(clock.nowMs + DAY_MS),
        day(clock.nowMs + 2 * DAY_MS),
      ];
      const dayBefore = day(clock.nowMs - DAY_MS);
      const vault = await createVault(client, '100');
      const sink = await createVault(client, '0');
      await authorize(scope, (await card(scope, vault.id)).id, '30');
      clock.advance(DAY_MS);
      dataOf(
        await client.POST('/v1/transfers', {
          body: { fromVaultId: vault.id, toVaultId: sink.id, amount: '40' },
        }),
      );
      clock.advance(DAY_MS);
      dataOf(
        await client.POST('/v1/simulate/deposits', { body: { vaultId: vault.id, amount: '0.5' } }),
      );
      clock.advance(DAY_MS);
      const today = day(clock.nowMs);
      for (const snapshotDay of [dayBefore, d0, d1, d2]) {
        await harness.service.store.snapshotDay(snapshotDay, null);
      }
      const history = async (query: {
        limit?: number;
        startingAfter?: string;
        startDate?: string;
        endDate?: string;
      }) =>
        dataOf(
          await client.GET('/v1/vaults/{id}/balance/history', {
            params: { path: { id: vault.id }, query },
          }),
        );
      const all = await history({});
      expect(all).toEqual({
        object: 'list',
        data: [
          // Today, as it stands: the figures of d2's end, since nothing moved since.
          {
            object: 'balance_snapshot',
            vaultId: vault.id,
            date: today,
            currency: 'USDC',
            ledger: '60.50',
            available: '30.50',
            pending: '30.00',
            final: false,
          },
          {
            object: 'balance_snapshot',
            vaultId: vault.id,
            date: d2,
            currency: 'USDC',
            ledger: '60.50',
            available: '30.50',
            pending: '30.00',
            final: true,
          },
          {
            object: 'balance_snapshot',
            vaultId: vault.id,
            date: d1,
            currency: 'USDC',
            ledger: '60.00',
            available: '30.00',
            pending: '30.00',
            final: true,
          },
          {
            object: 'balance_snapshot',
            vaultId: vault.id,
            date: d0,
            currency: 'USDC',
            ledger: '100.00',
            available: '70.00',
            pending: '30.00',
            final: true,
          },
        ],
        hasMore: false,
        nextCursor: null,
      });
      const dates = (page: { data: { date: string }[] }) =>
        page.data.map((snapshot) => snapshot.date);
      const page1 = await history({ limit: 2 });
      expect([dates(page1), page1.hasMore, page1.nextCursor]).toEqual([[today, d2], true, d2]);
      const page2 = await history({ limit: 2, startingAfter: page1.nextCursor ?? '' });
      expect([dates(page2), page2.hasMore, page2.nextCursor]).toEqual([[d1, d0], false, null]);
      expect(dates(await history({ startDate: d1 }))).toEqual([today, d2, d1]);
      expect(dates(await history({ endDate: d1 }))).toEqual([d1, d0]);
      expect(dates(await history({ startDate: d1, endDate: d1 }))).toEqual([d1]);
      expect(dates(await history({ endDate: dayBefore }))).toEqual([]);
      for (const [query, param] of [
        [{ limit: 0 }, 'limit'],
        [{ limit: 101 }, 'limit'],
        [{ startDate: '2026-02-30' }, 'startDate'],
        [{ endDate: '18-11-2026' }, 'endDate'],
        [{ startingAfter: vault.id }, 'startingAfter'],
      ] as const) {
        expect(
          refusalOf(
            await client.GET('/v1/vaults/{id}/balance/history', {
              params: { path: { id: vault.id }, query },
            }),
          ),
        ).toMatchObject({ status: 400, code: 'parameter_invalid', param });
      }
      expect(
        refusalOf(
          await client.GET('/v1/vaults/{id}/balance/history', {
            params: { path: { id: UNKNOWN_VAULT } },
          }),
        ),
      ).toEqual({
        status: 404,
        type: 'invalid_request_error',
        code: 'vault_not_found',
        param: 'id',
      });
    });
  });
});
