import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { Scope } from '../../../src/core/index.js';
import type { ApiScope } from '../../../src/store/port/index.js';
import type { paths } from '../../../src/client/api-types.js';
import { dataOf, refusalOf, typedClient, type TypedClient } from '../../support/client.js';
import { authorizeThroughStore } from '../../support/authorize.js';
import { useTestService } from '../../support/http.js';
import { TestClock } from '../../support/store.js';

/**
 * The authorization policy operations end to end through the typed client, over loopback HTTP
 * on PostgreSQL: Set, Get, Delete and Simulate Policy (contract sections 7 and 11). It proves
 * that the contract's own example policy is stored and answered as sent, versioned on each set
 * (deleted versions included), deleted as a whole; that every part of it decides a simulation
 * (categories, countries, limits against the vault's live spend, templates at the store
 * clock's hour, rules, shadow rules, the balance, the vault and card states) without any side
 * effect; and that each error these operations can produce with well-typed input is answered
 * with its code and, for `policy_invalid`, the JSON path of the fault. The service runs on a
 * test clock (Wednesday 2026-11-18, 12:00 UTC) so that hour-dependent templates are exact.
 */
type SimulateBody =
  paths['/v1/vaults/{id}/policy/simulate']['post']['requestBody']['content']['application/json'];
type Merchant = SimulateBody['transaction']['merchant'];
type PolicyBody = NonNullable<SimulateBody['policy']>;

/** The example policy of contract section 11, as a client would send it. */
const CONTRACT_POLICY: PolicyBody = {
  limits: [
    { interval: 'perTransaction', amount: '500' },
    { interval: 'daily', amount: '2000' },
    { interval: 'monthly', amount: '300', merchantCategories: ['5812'] },
    { interval: 'daily', count: 20 },
  ],
  merchantCategories: { block: ['7995', '6051'] },
  merchantCountries: { allow: ['US', 'CA', 'GB'] },
  templates: [
    { name: 'block-gambling' },
    { name: 'business-hours', params: { startHour: 8, endHour: 18 } },
  ],
  rules: [
    {
      name: 'no-big-online-spend',
      action: 'decline',
      mode: 'enforce',
      message: 'Online spend over 200 needs approval',
      conditions: {
        all: [
          { fact: 'amount', operator: 'greaterThan', value: 200 },
          { fact: 'merchantCountry', operator: 'notIn', value: ['US'] },
        ],
      },
    },
  ],
};

const CAFE: Merchant = { name: 'Cafe Rio', mcc: '5812', country: 'US', city: 'Austin' };
const STORE: Merchant = { name: 'Hardware Co', mcc: '5251', country: 'US' };
const UNKNOWN_VAULT = `vlt_${'0'.repeat(32)}`;
const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

describe('authorization policies over the typed client', () => {
  const clock = new TestClock();
  const harness = useTestService({ clock: clock.now });

  const account = async (options: { scopes?: ApiScope[] } = {}) => {
    const { key, scope } = await harness.service.key(options);
    return { client: typedClient(harness.service.base, key), scope };
  };
  const createVault = async (client: TypedClient, initialDeposit = '1000') =>
    dataOf(
      await client.POST('/v1/vaults', {
        body: { name: 'Spend', currency: 'USDC', network: 'solana', initialDeposit },
      }),
    );
  const setPolicy = (client: TypedClient, id: string, body: Record<string, unknown>) =>
    client.PUT('/v1/vaults/{id}/policy', { params: { path: { id } }, body });
  const simulate = (client: TypedClient, id: string, body: SimulateBody) =>
    client.POST('/v1/vaults/{id}/policy/simulate', { params: { path: { id } }, body });
  /** The decision of a simulation: approved, or the decline code and rule. */
  const outcomeOf = async (client: TypedClient, id: string, body: SimulateBody) => {
    const decision = dataOf(await simulate(client, id, body));
    return decision.approved
      ? 'approved'
      : `${decision.declineCode ?? ''}:${decision.declineReason?.rule ?? ''}`;
  };

  describe('Set, Get and Delete Authorization Policy', () => {
    it('stores the contract’s example policy and answers it as sent, with its version', async () => {
      const { client } = await account();
      const vault = await createVault(client);
      const set = await setPolicy(client, vault.id, CONTRACT_POLICY);
      expect(set.response.status).toBe(200);
      const policy = dataOf(set);
      expect(policy).toMatchObject({
        object: 'policy',
        vaultId: vault.id,
        version: 1,
        ...CONTRACT_POLICY,
      });
      expect(new Date(policy.createdAt).toISOString()).toBe(policy.createdAt);
      expect(policy.updatedAt).toBe(policy.createdAt);
      const read = await client.GET('/v1/vaults/{id}/policy', {
        params: { path: { id: vault.id } },
      });
      expect(read.response.status).toBe(200);
      expect(dataOf(read)).toEqual(policy);
    });

    it('versions each set, deletes the policy as a whole, and keeps counting versions after a delete', async () => {
      const { client } = await account();
      const vault = await createVault(client);
      const path = { path: { id: vault.id } };
      expect(
        dataOf(await setPolicy(client, vault.id, { limits: [{ interval: 'daily', amount: '10' }] }))
          .version,
      ).toBe(1);
      clock.advance(1000);
      const second = dataOf(
        await setPolicy(client, vault.id, { merchantCountries: { block: ['FR'] } }),
      );
      expect(second.version).toBe(2);
      // A set replaces the whole policy: the limits of version 1 are gone.
      expect(second).not.toHaveProperty('limits');
      expect(second.merchantCountries).toEqual({ block: ['FR'] });
      expect(Date.parse(second.updatedAt)).toBeGreaterThan(Date.parse(second.createdAt));

      const deleted = await client.DELETE('/v1/vaults/{id}/policy', { params: path });
      expect(deleted.response.status).toBe(200);
      expect(dataOf(deleted)).toEqual({ object: 'policy', vaultId: vault.id, deleted: true });
      for (const answer of [
        await client.GET('/v1/vaults/{id}/policy', { params: path }),
        await client.DELETE('/v1/vaults/{id}/policy', { params: path }),
      ]) {
        expect(refusalOf(answer)).toEqual({
          status: 404,
          type: 'invalid_request_error',
          code: 'policy_not_found',
          param: 'id',
        });
      }
      // The delete was version 3: every change is a version of the history (List Policy
      // Versions), and the count goes on from it.
      expect(dataOf(await setPolicy(client, vault.id, {})).version).toBe(4);
    });

    it('answers policy_not_found for a vault that never had a policy', async () => {
      const { client } = await account();
      const vault = await createVault(client);
      expect(
        refusalOf(
          await client.GET('/v1/vaults/{id}/policy', { params: { path: { id: vault.id } } }),
        ),
      ).toMatchObject({ status: 404, code: 'policy_not_found' });
    });

    it.each<[string, Record<string, unknown>, string]>([
      [
        'an unknown interval',
        { limits: [{ interval: 'hourly', amount: '5' }] },
        'limits[0].interval',
      ],
      [
        'a limit finer than USDC',
        { limits: [{ interval: 'daily', amount: '1.0000001' }] },
        'limits[0].amount',
      ],
      [
        'both allow and block',
        { merchantCategories: { allow: ['5812'], block: ['7995'] } },
        'merchantCategories',
      ],
      [
        'an MCC of two digits',
        { merchantCategories: { block: ['79'] } },
        'merchantCategories.block[0]',
      ],
      [
        'a country of three letters',
        { merchantCountries: { allow: ['USA'] } },
        'merchantCountries.allow[0]',
      ],
      ['an unknown template', { templates: [{ name: 'no-such-template' }] }, 'templates[0].name'],
      [
        'an ordering operator on a string fact',
        {
          rules: [
            {
              name: 'r',
              conditions: { all: [{ fact: 'merchantName', operator: 'greaterThan', value: 'A' }] },
            },
          ],
        },
        'rules[0].conditions.all[0].operator',
      ],
      [
        'an unknown fact',
        {
          rules: [
            { name: 'r', conditions: { all: [{ fact: 'nope', operator: 'equal', value: 1 }] } },
          ],
        },
        'rules[0].conditions.all[0].fact',
      ],
      [
        'two rules of one name',
        {
          rules: [
            {
              name: 'twice',
              conditions: { all: [{ fact: 'amount', operator: 'greaterThan', value: 1 }] },
            },
            {
              name: 'twice',
              conditions: { all: [{ fact: 'amount', operator: 'greaterThan', value: 2 }] },
            },
          ],
        },
        'rules[1].name',
      ],
      [
        'more than 100 rules',
        {
          rules: Array.from({ length: 101 }, (_, index) => ({
            name: `r${index}`,
            conditions: { all: [{ fact: 'amount', operator: 'greaterThan', value: index }] },
          })),
        },
        'rules',
      ],
      ['an unknown field', { colour: 'red' }, 'colour'],
    ])(
      'refuses %s with policy_invalid at the fault, keeping the policy',
      async (_title, body, param) => {
        const { client } = await account();
        const vault = await createVault(client);
        const kept = dataOf(
          await setPolicy(client, vault.id, { merchantCountries: { allow: ['US'] } }),
        );
        expect(refusalOf(await setPolicy(client, vault.id, body))).toEqual({
          status: 400,
          type: 'invalid_request_error',
          code: 'policy_invalid',
          param,
        });
        expect(
          dataOf(
            await client.GET('/v1/vaults/{id}/policy', { params: { path: { id: vault.id } } }),
          ),
        ).toEqual(kept);
      },
    );

    it('answers vault_not_found on an unknown vault and vault_closed on setting a closed one', async () => {
      const { client } = await account();
      const path = { path: { id: UNKNOWN_VAULT } };
      for (const answer of [
        await setPolicy(client, UNKNOWN_VAULT, {}),
        await client.GET('/v1/vaults/{id}/policy', { params: path }),
        await client.DELETE('/v1/vaults/{id}/policy', { params: path }),
        await simulate(client, UNKNOWN_VAULT, { transaction: { amount: '1', merchant: CAFE } }),
      ]) {
        expect(refusalOf(answer)).toEqual({
          status: 404,
          type: 'invalid_request_error',
          code: 'vault_not_found',
          param: 'id',
        });
      }
      const vault = await createVault(client, '0');
      dataOf(
        await client.POST('/v1/vaults/{id}/close', {
          params: { path: { id: vault.id } },
          body: null,
        }),
      );
      expect(refusalOf(await setPolicy(client, vault.id, {}))).toMatchObject({
        status: 409,
        code: 'vault_closed',
      });
    });

    it('needs policies:write to set or delete, and vaults:read to get or simulate', async () => {
      const { client } = await account();
      const vault = await createVault(client);
      dataOf(await setPolicy(client, vault.id, {}));
      const path = { path: { id: vault.id } };
      const reader = await account({ scopes: ['vaults:read'] });
      const writer = await account({ scopes: ['policies:write'] });
      for (const answer of [
        await setPolicy(reader.client, vault.id, {}),
        await reader.client.DELETE('/v1/vaults/{id}/policy', { params: path }),
        await writer.client.GET('/v1/vaults/{id}/policy', { params: path }),
        await simulate(writer.client, vault.id, { transaction: { amount: '1', merchant: CAFE } }),
      ]) {
        expect(refusalOf(answer)).toMatchObject({
          status: 403,
          type: 'permission_error',
          code: 'insufficient_scope',
        });
      }
      expect(dataOf(await client.GET('/v1/vaults/{id}/policy', { params: path })).version).toBe(1);
    });

    it('replays a set and a delete under one Idempotency-Key, and refuses the key for another policy', async () => {
      const { client } = await account();
      const vault = await createVault(client);
      const headers = { 'Idempotency-Key': `policy-${randomUUID()}` };
      const body = { merchantCategories: { block: ['7995'] } };
      const put = () =>
        client.PUT('/v1/vaults/{id}/policy', { params: { path: { id: vault.id } }, body, headers });
      const first = await put();
      const replay = await put();
      expect(dataOf(first).version).toBe(1);
      expect(dataOf(replay)).toEqual(dataOf(first));
      expect(replay.response.headers.get('idempotent-replayed')).toBe('true');
      expect(
        refusalOf(
          await client.PUT('/v1/vaults/{id}/policy', {
            params: { path: { id: vault.id } },
            body: { merchantCategories: { block: ['6051'] } },
            headers,
          }),
        ),
      ).toMatchObject({ status: 409, code: 'duplicate_idempotency_key' });
      expect(
        dataOf(await client.GET('/v1/vaults/{id}/policy', { params: { path: { id: vault.id } } })),
      ).toMatchObject({ version: 1, ...body });

      const deleteHeaders = { 'Idempotency-Key': `delete-${randomUUID()}` };
      const del = () =>
        client.DELETE('/v1/vaults/{id}/policy', {
          params: { path: { id: vault.id } },
          headers: deleteHeaders,
        });
      const deleted = await del();
      const again = await del();
      expect([deleted.response.status, again.response.status]).toEqual([200, 200]);
      expect(dataOf(again)).toEqual(dataOf(deleted));
      expect(again.response.headers.get('idempotent-replayed')).toBe('true');
    });
  });

  describe('Simulate Policy', () => {
    it('answers an approval as an authorization decision with id null, exactly', async () => {
      const { client } = await account();
      const vault = await createVault(client);
      const answer = await simulate(client, vault.id, {
        policy: CONTRACT_POLICY,
        transaction: { amount: 12.5, merchant: CAFE },
      });
      expect(answer.response.status).toBe(200);
      const decision = dataOf(answer);
      expect(decision).toEqual({
        id: null,
        object: 'authorization',
        approved: true,
        status: 'pending',
        declineCode: null,
        declineReason: null,
        amount: '12.50',
        currency: 'USDC',
        cardId: null,
        vaultId: vault.id,
        standIn: false,
        decidedInMicros: decision.decidedInMicros,
        partial: false,
        requestedAmount: null,
        shadowMatches: [],
      });
      expect(Number.isInteger(decision.decidedInMicros) && decision.decidedInMicros >= 0).toBe(
        true,
      );
    });

    it('declines with each part of the contract’s example policy, first failure first', async () => {
      const { client } = await account();
      const vault = await createVault(client, '5000');
      const decide = (amount: string, merchant: Merchant) =>
        outcomeOf(client, vault.id, { policy: CONTRACT_POLICY, transaction: { amount, merchant } });
      expect(await decide('10', { ...STORE, mcc: '7995' })).toBe(
        'authorization_failed:merchantCategories',
      );
      expect(await decide('10', { ...STORE, country: 'FR' })).toBe(
        'authorization_failed:merchantCountries',
      );
      expect(await decide('500.000001', STORE)).toBe('authorization_failed:limits[0]');
      // The rule reads the merchant's country: over 200 at home is allowed.
      expect(await decide('500', STORE)).toBe('approved');
      expect(await decide('500', { ...STORE, country: 'GB' })).toBe(
        'authorization_failed:no-big-online-spend',
      );
      expect(await decide('300.01', CAFE)).toBe('authorization_failed:limits[2]');
      expect(await decide('300', CAFE)).toBe('approved');
      const rule = dataOf(
        await simulate(client, vault.id, {
          policy: CONTRACT_POLICY,
          transaction: { amount: '201', merchant: { ...STORE, country: 'CA' } },
        }),
      );
      expect(rule).toMatchObject({
        approved: false,
        status: 'declined',
        declineCode: 'authorization_failed',
        declineReason: {
          rule: 'no-big-online-spend',
          message: 'Online spend over 200 needs approval',
        },
      });
    });

    it('evaluates a template at the store clock’s hour (business hours 8:00-18:59 UTC)', async () => {
      const { client } = await account();
      const vault = await createVault(client);
      const body: SimulateBody = {
        policy: { templates: [{ name: 'business-hours', params: { startHour: 8, endHour: 18 } }] },
        transaction: { amount: '5', merchant: CAFE },
      };
      const dayStart = Math.floor(clock.nowMs / DAY_MS) * DAY_MS;
      clock.nowMs = Math.max(clock.nowMs, dayStart + 12 * HOUR_MS);
      expect(await outcomeOf(client, vault.id, body)).toBe('approved');
      clock.nowMs = dayStart + 18 * HOUR_MS + 59 * 60_000;
      expect(await outcomeOf(client, vault.id, body)).toBe('approved');
      clock.nowMs = dayStart + 19 * HOUR_MS;
      expect(await outcomeOf(client, vault.id, body)).toBe('authorization_failed:business-hours');
      // On to noon of the next day, the clock never going back, for the tests after this one.
      clock.nowMs = dayStart + DAY_MS + 12 * HOUR_MS;
      expect(await outcomeOf(client, vault.id, body)).toBe('approved');
    });

    it('reports shadow rules without declining, and uses the vault’s current policy when no draft is sent', async () => {
      const { client } = await account();
      const vault = await createVault(client);
      dataOf(
        await setPolicy(client, vault.id, {
          rules: [
            {
              name: 'watch-big',
              mode: 'shadow',
              message: 'Big spend',
              conditions: { all: [{ fact: 'amount', operator: 'greaterThan', value: 20 }] },
            },
            {
              name: 'no-casino',
              conditions: {
                all: [{ fact: 'merchantName', operator: 'contains', value: 'Casino' }],
              },
            },
          ],
        }),
      );
      const watched = dataOf(
        await simulate(client, vault.id, { transaction: { amount: '25', merchant: CAFE } }),
      );
      expect([watched.approved, watched.shadowMatches]).toEqual([
        true,
        [{ rule: 'watch-big', message: 'Big spend' }],
      ]);
      const declined = dataOf(
        await simulate(client, vault.id, {
          transaction: { amount: '25', merchant: { ...CAFE, name: 'Casino Royale' } },
        }),
      );
      expect(declined.declineReason?.rule).toBe('no-casino');
      expect(declined.shadowMatches.map((match) => match.rule)).toEqual(['watch-big']);
      // A draft replaces the current policy for the simulation only.
      expect(
        await outcomeOf(client, vault.id, {
          policy: {},
          transaction: { amount: '25', merchant: { ...CAFE, name: 'Casino Royale' } },
        }),
      ).toBe('approved');
      dataOf(await client.DELETE('/v1/vaults/{id}/policy', { params: { path: { id: vault.id } } }));
      expect(
        await outcomeOf(client, vault.id, {
          transaction: { amount: '25', merchant: { ...CAFE, name: 'Casino Royale' } },
        }),
      ).toBe('approved');
    });

    it('decides against the live balance and spend, and changes neither', async () => {
      const { client, scope } = await account();
      const vault = await createVault(client, '100');
      const daily = { limits: [{ interval: 'daily', amount: '100' }] };
      dataOf(await setPolicy(client, vault.id, daily));
      await spend(scope, vault.id, '80');
      const decide = (amount: string) =>
        outcomeOf(client, vault.id, { transaction: { amount, merchant: CAFE } });
      expect(await decide('20')).toBe('approved');
      expect(await decide('20.000001')).toBe('authorization_failed:limits[0]');
      // Without the policy, the available 20 still bounds it.
      expect(
        await outcomeOf(client, vault.id, {
          policy: {},
          transaction: { amount: '20.01', merchant: CAFE },
        }),
      ).toBe('insufficient_balance:available_balance');
      const before = dataOf(
        await client.GET('/v1/vaults/{id}', { params: { path: { id: vault.id } } }),
      );
      expect(before.balance).toEqual({ available: '20.00', pending: '80.00', ledger: '100.00' });
      const transactions = async () =>
        dataOf(await client.GET('/v1/transactions', { params: { query: { vaultId: vault.id } } }))
          .data;
      const listed = await transactions();
      // Simulations place no hold and count no spend: the same one approves again and again.
      const repeated = [await decide('20'), await decide('20'), await decide('20')];
      expect(repeated).toEqual(['approved', 'approved', 'approved']);
      expect(
        dataOf(await client.GET('/v1/vaults/{id}', { params: { path: { id: vault.id } } })),
      ).toEqual(before);
      expect(await transactions()).toEqual(listed);
    });

    it('declines as the card network would for a frozen vault, a frozen card and another currency', async () => {
      const { client, scope } = await account();
      const vault = await createVault(client, '100');
      const card = await harness.service.store.createCard(scope, {
        vaultId: vault.id,
        cardholderName: 'Ada Lovelace',
        metadata: {},
      });
      const withCard = dataOf(
        await simulate(client, vault.id, {
          transaction: { amount: '5', merchant: CAFE, cardId: card.id },
        }),
      );
      expect([withCard.approved, withCard.cardId]).toEqual([true, card.id]);
      expect(
        await outcomeOf(client, vault.id, {
          transaction: { amount: '5', currency: 'SOL', merchant: CAFE },
        }),
      ).toBe('card_declined:currency_mismatch');
      await harness.service.store.setCardStatus(scope, card.id, 'frozen');
      expect(
        await outcomeOf(client, vault.id, {
          transaction: { amount: '5', merchant: CAFE, cardId: card.id },
        }),
      ).toBe('card_declined:card_frozen');
      dataOf(
        await client.POST('/v1/vaults/{id}/freeze', {
          params: { path: { id: vault.id } },
          body: {},
        }),
      );
      expect(
        await outcomeOf(client, vault.id, { transaction: { amount: '5', merchant: CAFE } }),
      ).toBe('card_declined:vault_frozen');
    });

    it.each<[string, SimulateBody, number, string, string]>([
      [
        'an amount finer than USDC',
        { transaction: { amount: '1.0000001', merchant: CAFE } },
        400,
        'invalid_amount',
        'transaction.amount',
      ],
      [
        'a negative amount',
        { transaction: { amount: -1, merchant: CAFE } },
        400,
        'invalid_amount',
        'transaction.amount',
      ],
      [
        'an amount above 1,000,000,000,000',
        { transaction: { amount: '1000000000001', merchant: CAFE } },
        400,
        'invalid_amount',
        'transaction.amount',
      ],
      [
        'an unsupported currency',
        { transaction: { amount: '1', currency: 'DOGE', merchant: CAFE } },
        400,
        'invalid_currency',
        'transaction.currency',
      ],
      [
        'a merchant category of two digits',
        { transaction: { amount: '1', merchant: { ...CAFE, mcc: '58' } } },
        400,
        'parameter_invalid',
        'transaction.merchant.mcc',
      ],
      [
        'an unknown country',
        { transaction: { amount: '1', merchant: { ...CAFE, country: 'XX' } } },
        400,
        'parameter_invalid',
        'transaction.merchant.country',
      ],
      [
        'a card that is not the vault’s',
        { transaction: { amount: '1', merchant: CAFE, cardId: `card_${'0'.repeat(32)}` } },
        404,
        'card_not_found',
        'transaction.cardId',
      ],
    ])('refuses %s', async (_title, body, status, code, param) => {
      const { client } = await account();
      const vault = await createVault(client);
      expect(refusalOf(await simulate(client, vault.id, body))).toEqual({
        status,
        type: 'invalid_request_error',
        code,
        param,
      });
    });

    it('refuses an invalid draft with policy_invalid at the fault', async () => {
      const { client } = await account();
      const vault = await createVault(client);
      const refusal = refusalOf(
        await simulate(client, vault.id, {
          // Outside the document's types on purpose: the server, not the client, refuses it.
          policy: { limits: [{ interval: 'hourly', amount: '5' }] } as unknown as PolicyBody,
          transaction: { amount: '1', merchant: CAFE },
        }),
      );
      expect(refusal).toMatchObject({ status: 400, code: 'policy_invalid' });
      expect(refusal.param ?? '').toMatch(/limits\[0\]\.interval$/);
    });
  });

  /** An approved card authorization of `amount` on the vault: spend the policy counts. */
  async function spend(scope: Scope, vaultId: string, amount: string): Promise<void> {
    const held = await authorizeThroughStore(harness.service.store, scope, vaultId, amount);
    expect(held.approved).toBe(true);
  }
});
