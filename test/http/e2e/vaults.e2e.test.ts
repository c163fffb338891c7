import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { Scope } from '../../../src/core/index.js';
import type { ApiScope } from '../../../src/store/port/index.js';
import type { paths } from '../../../src/client/api-types.js';
import { dataOf, refusalOf, typedClient, type TypedClient } from '../../support/client.js';
import { authorizeThroughStore } from '../../support/authorize.js';
import { useTestService } from '../../support/http.js';

/**
 * The vault operations end to end: a client typed from the OpenAPI document drives the real
 * service over loopback HTTP, on a fresh PostgreSQL database and the real Redis. It proves
 * every vault operation's success answer (status, shape, exact decimal strings), every
 * transition of contract section 9 for vaults (freeze and unfreeze with their no-ops, close
 * from active and from frozen, to a vault and to a Solana address, and each refusal: a closed
 * vault, open holds, a balance without a destination), each error code these operations can
 * produce with well-typed input (sections 1, 3, 4 and 8), the scopes they need (section 2) and
 * idempotent replays of their effects (section 5). Each test works in an account of its own.
 */
type CreateVaultBody = paths['/v1/vaults']['post']['requestBody']['content']['application/json'];

const SOLANA_ADDRESS = '9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin';
const UNKNOWN_VAULT = `vlt_${'0'.repeat(32)}`;

describe('vaults over the typed client', () => {
  const harness = useTestService();

  /** A new account (test mode, all scopes unless told) with its typed client. */
  const account = async (options: { mode?: Scope['mode']; scopes?: ApiScope[] } = {}) => {
    const { key, scope } = await harness.service.key(options);
    return { client: typedClient(harness.service.base, key), scope };
  };
  const createVault = async (client: TypedClient, body: Partial<CreateVaultBody> = {}) =>
    dataOf(
      await client.POST('/v1/vaults', {
        body: { name: 'Ops', currency: 'USDC', network: 'solana', ...body },
      }),
    );
  const retrieve = async (client: TypedClient, id: string) =>
    dataOf(await client.GET('/v1/vaults/{id}', { params: { path: { id } } }));
  const transactionsOf = async (client: TypedClient, vaultId: string) =>
    dataOf(await client.GET('/v1/transactions', { params: { query: { vaultId } } })).data;

  /** An open card hold of `amount` on a vault, placed through the store (no card routes yet). */
  const hold = async (scope: Scope, vaultId: string, amount: string) => {
    const held = await authorizeThroughStore(harness.service.store, scope, vaultId, amount);
    expect(held.approved).toBe(true);
    return held;
  };

  describe('Create Vault', () => {
    it('creates a vault, records its initial deposit as a completed deposit, and answers it as section 8 shapes it', async () => {
      const { client } = await account();
      const created = await client.POST('/v1/vaults', {
        body: {
          name: 'Operations',
          currency: 'USDC',
          network: 'solana',
          initialDeposit: 1250.5,
          metadata: { department: 'ops', costCenter: 'cc-42' },
        },
      });
      expect(created.response.status).toBe(201);
      const vault = dataOf(created);
      expect(vault).toEqual({
        id: expect.stringMatching(/^vlt_[0-9a-f]{32}$/) as unknown,
        object: 'vault',
        name: 'Operations',
        currency: 'USDC',
        network: 'solana',
        overdrawnAt: null,
        status: 'active',
        balance: { available: '1250.50', pending: '0.00', ledger: '1250.50' },
        metadata: { department: 'ops', costCenter: 'cc-42' },
        createdAt: vault.createdAt,
        updatedAt: vault.updatedAt,
        frozenAt: null,
        closedAt: null,
        // A Solana address (base58 of 32 bytes), this vault's alone.
        depositAddress: expect.stringMatching(/^[1-9A-HJ-NP-Za-km-z]{32,44}$/) as unknown,
      });
      expect(new Date(vault.createdAt).toISOString()).toBe(vault.createdAt);
      expect(await retrieve(client, vault.id)).toEqual(vault);
      const transactions = await transactionsOf(client, vault.id);
      expect(transactions).toEqual([
        expect.objectContaining({
          object: 'transaction',
          type: 'deposit',
          status: 'completed',
          vaultId: vault.id,
          amount: '1250.50',
          currency: 'USDC',
          hasMetadata: false,
        }),
      ]);
    });

    it('keeps every digit of an amount up to the currency scale, as a decimal string', async () => {
      const { client } = await account();
      const sol = await createVault(client, { currency: 'SOL', initialDeposit: '0.000000001' });
      expect(sol.balance).toEqual({
        available: '0.000000001',
        pending: '0.00',
        ledger: '0.000000001',
      });
      const usdc = await createVault(client, { initialDeposit: '1000000000000' });
      expect(usdc.balance.ledger).toBe('1000000000000.00');
      const fine = await createVault(client, { initialDeposit: '0.000001' });
      expect(fine.balance.ledger).toBe('0.000001');
    });

    it('creates an empty vault with no deposit transaction when initialDeposit is left out', async () => {
      const { client } = await account();
      const vault = await createVault(client);
      expect(vault.balance).toEqual({ available: '0.00', pending: '0.00', ledger: '0.00' });
      expect(vault.metadata).toEqual({});
      expect(await transactionsOf(client, vault.id)).toEqual([]);
    });

    it.each<[string, Partial<CreateVaultBody>, number, string, string]>([
      ['an unsupported currency', { currency: 'DOGE' }, 400, 'invalid_currency', 'currency'],
      ['another network', { network: 'ethereum' }, 400, 'parameter_invalid', 'network'],
      ['an empty name', { name: '' }, 400, 'parameter_invalid', 'name'],
      ['a name of 101 characters', { name: 'n'.repeat(101) }, 400, 'parameter_invalid', 'name'],
      [
        'more decimals than USDC has',
        { initialDeposit: '1.0000001' },
        400,
        'invalid_amount',
        'initialDeposit',
      ],
      [
        'more decimals than SOL has',
        { currency: 'SOL', initialDeposit: '0.0000000001' },
        400,
        'invalid_amount',
        'initialDeposit',
      ],
      ['a negative amount', { initialDeposit: -5 }, 400, 'invalid_amount', 'initialDeposit'],
      [
        'an amount above 1,000,000,000,000',
        { initialDeposit: '1000000000000.000001' },
        400,
        'invalid_amount',
        'initialDeposit',
      ],
      [
        'an amount that is no number',
        { initialDeposit: 'ten' },
        400,
        'invalid_amount',
        'initialDeposit',
      ],
      [
        'a metadata key of 41 characters',
        { metadata: { ['k'.repeat(41)]: 'v' } },
        400,
        'parameter_invalid',
        'metadata',
      ],
    ])('refuses %s, creating nothing', async (_title, change, status, code, param) => {
      const { client } = await account();
      const refusal = refusalOf(
        await client.POST('/v1/vaults', {
          body: { name: 'Ops', currency: 'USDC', network: 'solana', ...change },
        }),
      );
      expect(refusal).toMatchObject({ status, type: 'invalid_request_error', code });
      expect(refusal.param ?? '').toContain(param);
      expect(dataOf(await client.GET('/v1/vaults')).data).toEqual([]);
    });

    it('refuses a vault without its required name with parameter_missing', async () => {
      const { client } = await account();
      // The typed body requires a name; what a client built from the document cannot send
      // unless it bypasses its types, as here.
      const body = { currency: 'USDC', network: 'solana' } as unknown as CreateVaultBody;
      expect(refusalOf(await client.POST('/v1/vaults', { body }))).toEqual({
        status: 400,
        type: 'invalid_request_error',
        code: 'parameter_missing',
        param: 'name',
      });
    });
  });

  describe('Retrieve Vault and List Vaults', () => {
    it('answers vault_not_found for an unknown id, another account’s vault and the other mode’s', async () => {
      const { client } = await account();
      const stranger = await account();
      const live = await account({ mode: 'live' });
      const vault = await createVault(client);
      for (const [caller, id] of [
        [client, UNKNOWN_VAULT],
        [stranger.client, vault.id],
        [live.client, vault.id],
      ] as const) {
        expect(
          refusalOf(await caller.GET('/v1/vaults/{id}', { params: { path: { id } } })),
        ).toEqual({
          status: 404,
          type: 'invalid_request_error',
          code: 'vault_not_found',
          param: 'id',
        });
      }
    });

    // Contract v1.1: a malformed id is one that names nothing, as a stranger's id (404).
    it('answers an id that cannot name any object 404 vault_not_found', async () => {
      const { client } = await account();
      for (const id of ['not-an-id', 'vlt_nope']) {
        expect(
          refusalOf(await client.GET('/v1/vaults/{id}', { params: { path: { id } } })),
        ).toMatchObject({ status: 404, code: 'vault_not_found', param: 'id' });
      }
    });

    it('lists newest first, pages with limit and startingAfter, and filters by currency and status', async () => {
      const { client } = await account();
      const first = await createVault(client, { name: 'first' });
      const second = await createVault(client, { name: 'second', currency: 'SOL' });
      const third = await createVault(client, { name: 'third' });
      const fourth = await createVault(client, { name: 'fourth' });
      dataOf(
        await client.POST('/v1/vaults/{id}/freeze', {
          params: { path: { id: third.id } },
          body: { reason: 'incident' },
        }),
      );
      const all = dataOf(await client.GET('/v1/vaults'));
      expect(all.object).toBe('list');
      expect(all.data.map((vault) => vault.id)).toEqual([fourth.id, third.id, second.id, first.id]);
      expect([all.hasMore, all.nextCursor]).toEqual([false, null]);

      const page1 = dataOf(await client.GET('/v1/vaults', { params: { query: { limit: 3 } } }));
      expect(page1.data.map((vault) => vault.id)).toEqual([fourth.id, third.id, second.id]);
      expect([page1.hasMore, page1.nextCursor]).toEqual([true, second.id]);
      const page2 = dataOf(
        await client.GET('/v1/vaults', {
          params: { query: { limit: 3, startingAfter: page1.nextCursor ?? '' } },
        }),
      );
      expect(page2.data.map((vault) => vault.id)).toEqual([first.id]);
      expect([page2.hasMore, page2.nextCursor]).toEqual([false, null]);

      const list = async (query: {
        currency?: 'USDC' | 'SOL';
        status?: 'active' | 'frozen' | 'closed';
      }) =>
        dataOf(await client.GET('/v1/vaults', { params: { query } })).data.map((vault) => vault.id);
      expect(await list({ currency: 'SOL' })).toEqual([second.id]);
      expect(await list({ status: 'frozen' })).toEqual([third.id]);
      expect(await list({ currency: 'USDC', status: 'active' })).toEqual([fourth.id, first.id]);
      expect(await list({ status: 'closed' })).toEqual([]);
    });

    it('answers pages of 10 when no limit is given (section 4)', async () => {
      const { client } = await account();
      const created: string[] = [];
      for (let index = 0; index < 11; index++) {
        created.push((await createVault(client, { name: `v${index}` })).id);
      }
      const page = dataOf(await client.GET('/v1/vaults'));
      expect(page.data.map((vault) => vault.id)).toEqual(created.slice(1).reverse());
      expect([page.hasMore, page.nextCursor]).toEqual([true, created[1]]);
    });

    it('never lists another account’s vaults', async () => {
      const { client } = await account();
      const other = await account();
      await createVault(other.client);
      expect(dataOf(await client.GET('/v1/vaults')).data).toEqual([]);
    });

    it.each<[string, { limit?: number; startingAfter?: string }, string]>([
      ['a limit of 0', { limit: 0 }, 'limit'],
      ['a limit of 101', { limit: 101 }, 'limit'],
      ['a limit that is no integer', { limit: 1.5 }, 'limit'],
      ['a cursor that is no id', { startingAfter: 'page-2' }, 'startingAfter'],
      ['a cursor of another kind', { startingAfter: `txn_${'0'.repeat(32)}` }, 'startingAfter'],
    ])('refuses %s with parameter_invalid', async (_title, query, param) => {
      const { client } = await account();
      expect(refusalOf(await client.GET('/v1/vaults', { params: { query } }))).toEqual({
        status: 400,
        type: 'invalid_request_error',
        code: 'parameter_invalid',
        param,
      });
    });
  });

  describe('Update Vault', () => {
    it('renames, sets and removes metadata keys (null removes), keeping the others', async () => {
      const { client } = await account();
      const vault = await createVault(client, {
        metadata: { department: 'ops', costCenter: 'cc-1' },
      });
      const patch = (body: { name?: string; metadata?: Record<string, string | null> }) =>
        client.PATCH('/v1/vaults/{id}', { params: { path: { id: vault.id } }, body });
      const renamed = await patch({ name: 'Treasury' });
      expect(renamed.response.status).toBe(200);
      expect(dataOf(renamed)).toMatchObject({
        id: vault.id,
        name: 'Treasury',
        metadata: { department: 'ops', costCenter: 'cc-1' },
      });
      const changed = dataOf(await patch({ metadata: { costCenter: null, region: 'eu' } }));
      expect(changed.name).toBe('Treasury');
      expect(changed.metadata).toEqual({ department: 'ops', region: 'eu' });
      expect(Date.parse(changed.updatedAt)).toBeGreaterThanOrEqual(Date.parse(vault.updatedAt));
      expect(changed.createdAt).toBe(vault.createdAt);
      expect(await retrieve(client, vault.id)).toEqual(changed);
    });

    it('refuses metadata that would pass 50 keys, and an unknown vault', async () => {
      const { client } = await account();
      const metadata = Object.fromEntries(
        Array.from({ length: 50 }, (_, index) => [`key${index}`, 'v']),
      );
      const vault = await createVault(client, { metadata });
      expect(
        refusalOf(
          await client.PATCH('/v1/vaults/{id}', {
            params: { path: { id: vault.id } },
            body: { metadata: { key50: 'one too many' } },
          }),
        ),
      ).toMatchObject({ status: 400, code: 'parameter_invalid', param: 'metadata' });
      // Replacing a key keeps 50: allowed.
      const replaced = await client.PATCH('/v1/vaults/{id}', {
        params: { path: { id: vault.id } },
        body: { metadata: { key0: null, key50: 'v' } },
      });
      expect(Object.keys(dataOf(replaced).metadata)).toHaveLength(50);
      expect(
        refusalOf(
          await client.PATCH('/v1/vaults/{id}', {
            params: { path: { id: UNKNOWN_VAULT } },
            body: { name: 'x' },
          }),
        ),
      ).toMatchObject({ status: 404, code: 'vault_not_found', param: 'id' });
    });
  });

  describe('Freeze, Unfreeze and Close Vault (contract section 9)', () => {
    it('freezes an active vault, answers a second freeze as a no-op, and unfreezes it likewise', async () => {
      const { client } = await account();
      const vault = await createVault(client, { initialDeposit: '10' });
      const path = { path: { id: vault.id } };
      const frozen = await client.POST('/v1/vaults/{id}/freeze', {
        params: path,
        body: { reason: 'suspected compromise' },
      });
      expect(frozen.response.status).toBe(200);
      const frozenVault = dataOf(frozen);
      expect(frozenVault).toMatchObject({ status: 'frozen', balance: vault.balance });
      expect(frozenVault.frozenAt).not.toBeNull();

      const again = dataOf(
        await client.POST('/v1/vaults/{id}/freeze', { params: path, body: null }),
      );
      expect(again).toEqual(frozenVault);

      // A frozen vault may still be renamed: only a closed one refuses updates.
      const renamed = dataOf(
        await client.PATCH('/v1/vaults/{id}', { params: path, body: { name: 'Quarantined' } }),
      );
      expect([renamed.status, renamed.name]).toEqual(['frozen', 'Quarantined']);

      const unfrozen = await client.POST('/v1/vaults/{id}/unfreeze', { params: path });
      expect(unfrozen.response.status).toBe(200);
      const active = dataOf(unfrozen);
      expect(active).toMatchObject({ status: 'active', frozenAt: null, balance: vault.balance });
      const noop = dataOf(await client.POST('/v1/vaults/{id}/unfreeze', { params: path }));
      expect(noop).toEqual(active);
    });

    it('closes an empty vault without a destination, and then refuses every change with vault_closed', async () => {
      const { client } = await account();
      const vault = await createVault(client);
      const path = { path: { id: vault.id } };
      const closed = await client.POST('/v1/vaults/{id}/close', { params: path, body: null });
      expect(closed.response.status).toBe(200);
      const closedVault = dataOf(closed);
      expect(closedVault).toMatchObject({
        status: 'closed',
        balance: { available: '0.00', pending: '0.00', ledger: '0.00' },
      });
      expect(closedVault.closedAt).not.toBeNull();
      expect(await retrieve(client, vault.id)).toEqual(closedVault);

      const refusals = [
        await client.POST('/v1/vaults/{id}/freeze', { params: path, body: {} }),
        await client.POST('/v1/vaults/{id}/unfreeze', { params: path }),
        await client.POST('/v1/vaults/{id}/close', { params: path, body: {} }),
        await client.PATCH('/v1/vaults/{id}', { params: path, body: { name: 'again' } }),
      ];
      for (const refused of refusals) {
        expect(refusalOf(refused)).toEqual({
          status: 409,
          type: 'invalid_request_error',
          code: 'vault_closed',
          param: 'id',
        });
      }
      expect(await retrieve(client, vault.id)).toEqual(closedVault);
      const closedList = dataOf(
        await client.GET('/v1/vaults', { params: { query: { status: 'closed' } } }),
      );
      expect(closedList.data.map((listed) => listed.id)).toEqual([vault.id]);
    });

    it('refuses to close a vault with a balance and no destination (parameter_missing), leaving it untouched', async () => {
      const { client } = await account();
      const vault = await createVault(client, { initialDeposit: '25.5' });
      expect(
        refusalOf(
          await client.POST('/v1/vaults/{id}/close', {
            params: { path: { id: vault.id } },
            body: {},
          }),
        ),
      ).toEqual({
        status: 400,
        type: 'invalid_request_error',
        code: 'parameter_missing',
        param: 'destination',
      });
      expect(await retrieve(client, vault.id)).toEqual(vault);
    });

    it('closes a frozen vault into another vault: the whole balance moves, exactly', async () => {
      const { client } = await account();
      const source = await createVault(client, { initialDeposit: '40.123456' });
      const target = await createVault(client, { initialDeposit: '0.000001' });
      dataOf(
        await client.POST('/v1/vaults/{id}/freeze', {
          params: { path: { id: source.id } },
          body: {},
        }),
      );
      const closed = dataOf(
        await client.POST('/v1/vaults/{id}/close', {
          params: { path: { id: source.id } },
          body: { destination: { vaultId: target.id } },
        }),
      );
      expect(closed).toMatchObject({
        status: 'closed',
        balance: { available: '0.00', pending: '0.00', ledger: '0.00' },
      });
      expect((await retrieve(client, target.id)).balance).toEqual({
        available: '40.123457',
        pending: '0.00',
        ledger: '40.123457',
      });
      const debits = await transactionsOf(client, source.id);
      expect(debits.map((txn) => [txn.type, txn.status, txn.amount])).toEqual([
        ['withdrawal', 'completed', '40.123456'],
        ['deposit', 'completed', '40.123456'],
      ]);
      const credits = await transactionsOf(client, target.id);
      expect(credits.map((txn) => [txn.type, txn.status, txn.amount])).toEqual([
        ['transfer_in', 'completed', '40.123456'],
        ['deposit', 'completed', '0.000001'],
      ]);
    });

    it('closes a vault to a Solana address: the balance leaves in a pending external transfer', async () => {
      const { client } = await account();
      const vault = await createVault(client, { currency: 'SOL', initialDeposit: '2.5' });
      const closed = dataOf(
        await client.POST('/v1/vaults/{id}/close', {
          params: { path: { id: vault.id } },
          body: { destination: { address: SOLANA_ADDRESS } },
        }),
      );
      expect(closed).toMatchObject({ status: 'closed', balance: { ledger: '0.00' } });
      const transactions = await transactionsOf(client, vault.id);
      expect(transactions.map((txn) => [txn.type, txn.status, txn.amount])).toEqual([
        ['withdrawal', 'completed', '2.50'],
        ['deposit', 'completed', '2.50'],
      ]);
      const transfers = dataOf(
        await client.GET('/v1/transfers', { params: { query: { vaultId: vault.id } } }),
      ).data;
      expect(transfers).toEqual([
        expect.objectContaining({
          object: 'transfer',
          fromVaultId: vault.id,
          address: SOLANA_ADDRESS,
          amount: '2.50',
          currency: 'SOL',
          status: 'pending',
        }),
      ]);
      expect(transactions[0]?.transferId).toBe(transfers[0]?.id);
    });

    it('refuses each faulty destination at the field at fault, leaving the vault open', async () => {
      const { client } = await account();
      const vault = await createVault(client, { initialDeposit: '5' });
      const sol = await createVault(client, { currency: 'SOL' });
      const frozen = await createVault(client);
      dataOf(
        await client.POST('/v1/vaults/{id}/freeze', {
          params: { path: { id: frozen.id } },
          body: {},
        }),
      );
      const closedOne = await createVault(client);
      dataOf(
        await client.POST('/v1/vaults/{id}/close', {
          params: { path: { id: closedOne.id } },
          body: null,
        }),
      );
      const cases: [{ vaultId: string } | { address: string }, number, string, string][] = [
        [{ vaultId: UNKNOWN_VAULT }, 404, 'vault_not_found', 'destination.vaultId'],
        [{ vaultId: sol.id }, 400, 'currency_mismatch', 'destination.vaultId'],
        [{ vaultId: frozen.id }, 409, 'vault_frozen', 'destination.vaultId'],
        [{ vaultId: closedOne.id }, 409, 'vault_closed', 'destination.vaultId'],
        [{ vaultId: vault.id }, 400, 'parameter_invalid', 'destination.vaultId'],
        [{ address: 'not-a-solana-address' }, 400, 'invalid_address', 'destination.address'],
        // Valid base58, but 31 bytes: not an ed25519 public key.
        [{ address: '1'.repeat(31) }, 400, 'invalid_address', 'destination.address'],
      ];
      for (const [destination, status, code, param] of cases) {
        const refusal = refusalOf(
          await client.POST('/v1/vaults/{id}/close', {
            params: { path: { id: vault.id } },
            body: { destination },
          }),
        );
        expect({ destination, ...refusal }).toEqual({
          destination,
          status,
          type: 'invalid_request_error',
          code,
          param,
        });
      }
      expect(await retrieve(client, vault.id)).toEqual(vault);
    });

    it('refuses to close a vault with an open card hold (vault_has_pending_transactions), and closes it once released', async () => {
      const { client, scope } = await account();
      const vault = await createVault(client, { initialDeposit: '100' });
      const target = await createVault(client);
      const { cardId, transactionId } = await hold(scope, vault.id, '30');
      const held = await retrieve(client, vault.id);
      expect(held.balance).toEqual({ available: '70.00', pending: '30.00', ledger: '100.00' });
      const close = () =>
        client.POST('/v1/vaults/{id}/close', {
          params: { path: { id: vault.id } },
          body: { destination: { vaultId: target.id } },
        });
      expect(refusalOf(await close())).toEqual({
        status: 409,
        type: 'invalid_request_error',
        code: 'vault_has_pending_transactions',
        param: 'id',
      });
      expect(await retrieve(client, vault.id)).toEqual(held);

      await harness.service.store.reverse(scope, transactionId, null);
      const closed = dataOf(await close());
      expect(closed.status).toBe('closed');
      expect((await retrieve(client, target.id)).balance.ledger).toBe('100.00');
      // Closing a vault cancels its cards (section 9).
      const cards = await harness.service.store.listCards(scope, { limit: 10, vaultId: vault.id });
      expect(cards.data.map((listed) => [listed.id, listed.status])).toEqual([
        [cardId, 'cancelled'],
      ]);
    });

    it('answers vault_not_found for each state change of an unknown vault', async () => {
      const { client } = await account();
      const path = { path: { id: UNKNOWN_VAULT } };
      for (const answer of [
        await client.POST('/v1/vaults/{id}/freeze', { params: path, body: {} }),
        await client.POST('/v1/vaults/{id}/unfreeze', { params: path }),
        await client.POST('/v1/vaults/{id}/close', { params: path, body: {} }),
      ]) {
        expect(refusalOf(answer)).toMatchObject({
          status: 404,
          code: 'vault_not_found',
          param: 'id',
        });
      }
    });
  });

  describe('scopes (contract section 2)', () => {
    it('refuses a vault change to a key without vaults:write, and a read to a key without vaults:read', async () => {
      const owner = await account();
      const vault = await createVault(owner.client, { initialDeposit: '1' });
      const reader = await account({ scopes: ['vaults:read'] });
      const path = { path: { id: vault.id } };
      const writes = [
        await reader.client.POST('/v1/vaults', {
          body: { name: 'x', currency: 'USDC', network: 'solana' },
        }),
        await reader.client.PATCH('/v1/vaults/{id}', { params: path, body: { name: 'x' } }),
        await reader.client.POST('/v1/vaults/{id}/freeze', { params: path, body: {} }),
        await reader.client.POST('/v1/vaults/{id}/unfreeze', { params: path }),
        await reader.client.POST('/v1/vaults/{id}/close', { params: path, body: {} }),
      ];
      for (const refused of writes) {
        expect(refusalOf(refused)).toMatchObject({
          status: 403,
          type: 'permission_error',
          code: 'insufficient_scope',
        });
      }
      expect(dataOf(await reader.client.GET('/v1/vaults')).data).toEqual([]);
      const writer = await account({ scopes: ['vaults:write'] });
      for (const refused of [
        await writer.client.GET('/v1/vaults'),
        await writer.client.GET('/v1/vaults/{id}', { params: path }),
        await writer.client.GET('/v1/vaults/{id}/balance', { params: path }),
        await writer.client.GET('/v1/vaults/{id}/balance/history', { params: path }),
      ]) {
        expect(refusalOf(refused)).toMatchObject({ status: 403, code: 'insufficient_scope' });
      }
      expect((await retrieve(owner.client, vault.id)).status).toBe('active');
    });
  });

  describe('idempotency (contract section 5)', () => {
    const idempotencyKey = () => `idem-${randomUUID()}`;

    it('replays the same request with Idempotent-Replayed and the same body, creating one vault', async () => {
      const { client } = await account();
      const key = idempotencyKey();
      const body: CreateVaultBody = {
        name: 'Once',
        currency: 'USDC',
        network: 'solana',
        initialDeposit: '10',
      };
      const first = await client.POST('/v1/vaults', { body, headers: { 'Idempotency-Key': key } });
      const second = await client.POST('/v1/vaults', { body, headers: { 'Idempotency-Key': key } });
      expect([first.response.status, second.response.status]).toEqual([201, 201]);
      expect(first.response.headers.get('idempotent-replayed')).toBeNull();
      expect(second.response.headers.get('idempotent-replayed')).toBe('true');
      expect(dataOf(second)).toEqual(dataOf(first));
      const vaults = dataOf(await client.GET('/v1/vaults')).data;
      expect(vaults.map((vault) => vault.id)).toEqual([dataOf(first).id]);
      expect(await transactionsOf(client, dataOf(first).id)).toHaveLength(1);
    });

    it('refuses the same key with another body or another operation (duplicate_idempotency_key)', async () => {
      const { client } = await account();
      const key = idempotencyKey();
      const headers = { 'Idempotency-Key': key };
      const vault = dataOf(
        await client.POST('/v1/vaults', {
          body: { name: 'A', currency: 'USDC', network: 'solana' },
          headers,
        }),
      );
      for (const reused of [
        await client.POST('/v1/vaults', {
          body: { name: 'B', currency: 'USDC', network: 'solana' },
          headers,
        }),
        await client.PATCH('/v1/vaults/{id}', {
          params: { path: { id: vault.id } },
          body: { name: 'B' },
          headers,
        }),
      ]) {
        expect(refusalOf(reused)).toEqual({
          status: 409,
          type: 'invalid_request_error',
          code: 'duplicate_idempotency_key',
          param: 'Idempotency-Key',
        });
      }
      expect(dataOf(await client.GET('/v1/vaults')).data.map((listed) => listed.name)).toEqual([
        'A',
      ]);
    });

    it('stores nothing for a 400, so the key can be used again; stores and replays a 409', async () => {
      const { client } = await account();
      const retried = idempotencyKey();
      const bad = await client.POST('/v1/vaults', {
        body: { name: 'A', currency: 'USDC', network: 'solana', initialDeposit: '-1' },
        headers: { 'Idempotency-Key': retried },
      });
      expect(refusalOf(bad).code).toBe('invalid_amount');
      const good = await client.POST('/v1/vaults', {
        body: { name: 'A', currency: 'USDC', network: 'solana', initialDeposit: '1' },
        headers: { 'Idempotency-Key': retried },
      });
      expect(good.response.status).toBe(201);
      expect(good.response.headers.get('idempotent-replayed')).toBeNull();

      const vault = dataOf(good);
      dataOf(
        await client.POST('/v1/vaults/{id}/close', {
          params: { path: { id: vault.id } },
          body: {
            destination: { address: SOLANA_ADDRESS },
          },
        }),
      );
      const stored = idempotencyKey();
      const freeze = () =>
        client.POST('/v1/vaults/{id}/freeze', {
          params: { path: { id: vault.id } },
          body: {},
          headers: { 'Idempotency-Key': stored },
        });
      const first = await freeze();
      const replay = await freeze();
      expect(refusalOf(first)).toMatchObject({ status: 409, code: 'vault_closed' });
      // The original status and body, its requestId included (section 5).
      expect(replay.response.status).toBe(409);
      expect(replay.error).toEqual(first.error);
      expect(replay.response.headers.get('idempotent-replayed')).toBe('true');
      // Section 3: the Request-Id header names the body's id, on a replay too (refusalOf
      // checks it): the first request's.
      expect(refusalOf(replay)).toMatchObject({ status: 409, code: 'vault_closed' });
    });

    it('keeps keys per account: another account’s same key creates its own vault', async () => {
      const one = await account();
      const two = await account();
      const headers = { 'Idempotency-Key': idempotencyKey() };
      const body: CreateVaultBody = { name: 'Shared key', currency: 'USDC', network: 'solana' };
      const first = dataOf(await one.client.POST('/v1/vaults', { body, headers }));
      const second = await two.client.POST('/v1/vaults', { body, headers });
      expect(second.response.headers.get('idempotent-replayed')).toBeNull();
      expect(dataOf(second).id).not.toBe(first.id);
    });

    it('refuses an Idempotency-Key longer than 255 characters with parameter_invalid', async () => {
      const { client } = await account();
      expect(
        refusalOf(
          await client.POST('/v1/vaults', {
            body: { name: 'A', currency: 'USDC', network: 'solana' },
            headers: { 'Idempotency-Key': 'k'.repeat(256) },
          }),
        ),
      ).toMatchObject({ status: 400, code: 'parameter_invalid', param: 'Idempotency-Key' });
      expect(dataOf(await client.GET('/v1/vaults')).data).toEqual([]);
    });
  });
});
