import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/http.js';

/**
 * Tenant and mode isolation (contract section 2), table-driven over every route of the OpenAPI
 * document that takes an id: another account's key, and the owner's key of the other mode, get
 * 404 with the id's kind's `*_not_found` and change nothing; so does the owner for an id that
 * names nothing, well formed or not (contract section 3, amendments). A new route with an id
 * must be added to the tables below, or this test fails.
 */
const BODIES: Record<string, unknown> = {
  'PATCH /v1/vaults/{id}': { name: 'taken' },
  'PATCH /v1/cards/{id}': { cardholderName: 'taken' },
  'POST /v1/processors/{id}/rotate': { signingSecret: 'whsec_isolation_taken' },
  'POST /v1/authorizations/{id}/increment': { amount: '1', networkTransactionId: 'ntx_isolation' },
  'POST /v1/vaults/{id}/freeze': { reason: 'taken' },
  'POST /v1/vaults/{id}/close': {
    destination: { address: '9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin' },
  },
  'PUT /v1/vaults/{id}/policy': { limits: [{ interval: 'daily', amount: '1' }] },
  'PUT /v1/cards/{id}/policy': { limits: [{ interval: 'daily', amount: '1' }] },
  'POST /v1/vaults/{id}/policy/simulate': {
    transaction: { amount: '1', merchant: { name: 'm', mcc: '5812', country: 'US' } },
  },
  'POST /v1/vaults/{id}/policy/backtest': {
    policy: {},
    startDate: new Date().toISOString().slice(0, 10),
    endDate: new Date().toISOString().slice(0, 10),
  },
  'POST /v1/cards/{id}/policy/backtest': {
    policy: {},
    startDate: new Date().toISOString().slice(0, 10),
    endDate: new Date().toISOString().slice(0, 10),
  },
};
type Kind =
  | 'vaults'
  | 'transfers'
  | 'transactions'
  | 'cards'
  | 'authorizations'
  | 'webhooks'
  | 'settlements'
  | 'processors';
/** The not-found code of each kind of id, by the path's first segment. */
const NOT_FOUND: Record<Kind, string> = {
  vaults: 'vault_not_found',
  transfers: 'transfer_not_found',
  transactions: 'transaction_not_found',
  cards: 'card_not_found',
  authorizations: 'transaction_not_found',
  webhooks: 'webhook_not_found',
  settlements: 'settlement_not_found',
  processors: 'processor_not_found',
};
/**
 * Ids that name nothing: well formed, of another kind, malformed, NUL (which SQL text cannot
 * carry), over-long, and characters a path must escape. (An escape that is not UTF-8, such as
 * %ED%A0%80, fails the router's decoding before any route: the framework's 400.)
 */
const NAMES_NOTHING = [
  'vlt_0123456789abcdef0123456789abcdef',
  'card_0123456789abcdef0123456789abcdef',
  'vlt_nope',
  'nope',
  'x',
  '%00',
  'vlt_%00',
  '%F0%9F%92%B8',
  // Past find-my-way's default longest parameter (100), which answered 400.
  'a'.repeat(100),
  `vlt_${'a'.repeat(2000)}`,
  '%2F..%2F',
  '__proto__',
  'constructor',
  '%20',
];

describe('isolation by account and mode', () => {
  let service: TestService;
  let owner: string;
  let ids: Record<Kind, string>;
  let routes: [string, string][];

  const call = async (key: string, method: string, path: string, body?: unknown) => {
    const answer = await service.request(key, method, path, body);
    return {
      ...answer,
      body: answer.body as {
        id?: string;
        status?: string;
        error?: { code: string };
        data?: { id: string }[];
      },
    };
  };

  beforeAll(async () => {
    service = await startTestService();
    ({ key: owner } = await service.key({ account: 'owner' }));
    const vault = async () =>
      (
        await call(owner, 'POST', '/v1/vaults', {
          name: 'v',
          currency: 'USDC',
          network: 'solana',
          initialDeposit: '50',
        })
      ).body.id ?? '';
    const [from, to] = [await vault(), await vault()];
    const transfer =
      (
        await call(owner, 'POST', '/v1/transfers', {
          fromVaultId: from,
          toVaultId: to,
          amount: '5',
        })
      ).body.id ?? '';
    const transactions =
      (await call(owner, 'GET', `/v1/transactions?vaultId=${from}`)).body.data ?? [];
    const card = (await call(owner, 'POST', '/v1/cards', { vaultId: from, cardholderName: 'O' }))
      .body.id;
    const authorization = (
      await call(owner, 'POST', '/v1/authorizations', {
        cardId: card,
        amount: '1',
        currency: 'USDC',
        merchant: { name: 'm', mcc: '5812', country: 'US' },
        networkTransactionId: 'ntx_isolation',
      })
    ).body.id;
    ids = {
      vaults: from,
      transfers: transfer,
      transactions: transactions[0]?.id ?? '',
      cards: card ?? '',
      authorizations: authorization ?? '',
      settlements:
        (
          await call(owner, 'POST', '/v1/settlements', {
            records: [{ authorizationId: authorization ?? '', amount: '0.5' }],
          })
        ).body.id ?? '',
      webhooks:
        (
          await call(owner, 'POST', '/v1/webhooks', {
            url: 'http://127.0.0.1:9/hooks',
            events: ['*'],
          })
        ).body.id ?? '',
      processors:
        (
          await call(owner, 'POST', '/v1/processors', {
            processor: 'stripe',
            mode: 'test',
            signingSecret: 'whsec_isolation_owner',
          })
        ).body.id ?? '',
    };
    const document = (await (await fetch(`${service.base}/v1/openapi.json`)).json()) as {
      paths: Record<string, Record<string, unknown>>;
    };
    routes = Object.entries(document.paths)
      .filter(([path]) => path.includes('{id}'))
      .flatMap(([path, methods]) =>
        Object.keys(methods).map((method) => [method.toUpperCase(), path] as [string, string]),
      );
  });

  afterAll(async () => {
    await service.close();
  });

  it('covers every route with an id', () => {
    expect(routes.length).toBeGreaterThanOrEqual(20);
  });

  it.each([
    ['another account', async () => (await service.key({ account: 'stranger' })).key],
    [
      'the other mode of the owner',
      async () => (await service.key({ account: 'owner', mode: 'live' })).key,
    ],
  ])('answers %s 404 on every route with an id, and changes nothing', async (_who, makeKey) => {
    const intruder = await makeKey();
    const before = await call(owner, 'GET', `/v1/vaults/${ids.vaults}`);
    const cardBefore = await call(owner, 'GET', `/v1/cards/${ids.cards}`);
    const heldBefore = await call(owner, 'GET', `/v1/transactions/${ids.authorizations}`);
    for (const [method, template] of routes) {
      const kind = template.split('/')[2] as keyof typeof ids;
      expect(ids[kind], `no id for ${template}`).toBeDefined();
      const path = template.replace('{id}', ids[kind]);
      const response = await call(intruder, method, path, BODIES[`${method} ${template}`]);
      expect([response.status, response.body.error?.code], `${method} ${template}`).toEqual([
        404,
        NOT_FOUND[kind],
      ]);
    }
    expect((await call(owner, 'GET', `/v1/vaults/${ids.vaults}`)).body).toEqual(before.body);
    expect((await call(owner, 'GET', `/v1/cards/${ids.cards}`)).body).toEqual(cardBefore.body);
    expect((await call(owner, 'GET', `/v1/transactions/${ids.authorizations}`)).body).toEqual(
      heldBefore.body,
    );
    expect(heldBefore.body.status).toBe('pending');
    const endpoints = (await call(owner, 'GET', '/v1/webhooks')).body.data ?? [];
    expect(endpoints.map((endpoint) => endpoint.id)).toEqual([ids.webhooks]);
    expect((await call(owner, 'GET', `/v1/vaults/${ids.vaults}/policy`)).body.error?.code).toBe(
      'policy_not_found',
    );
  });

  it("answers an id that names nothing 404 with its kind's code, well formed or not, on every route with an id", async () => {
    const vaultBefore = await call(owner, 'GET', `/v1/vaults/${ids.vaults}`);
    for (const [method, template] of routes) {
      const kind = template.split('/')[2] as Kind;
      expect(NOT_FOUND[kind], `no not-found code for ${template}`).toBeDefined();
      for (const id of NAMES_NOTHING) {
        const path = template.replace('{id}', id);
        const response = await fetch(`${service.base}${path}`, {
          method,
          headers: {
            authorization: `Bearer ${owner}`,
            ...(BODIES[`${method} ${template}`] === undefined
              ? {}
              : { 'content-type': 'application/json' }),
          },
          ...(BODIES[`${method} ${template}`] === undefined
            ? {}
            : { body: JSON.stringify(BODIES[`${method} ${template}`]) }),
        });
        const body = (await response.json()) as {
          error?: { code: string; param?: string; message: string };
        };
        expect(
          [response.status, body.error?.code, body.error?.param],
          `${method} ${path.slice(0, 80)}`,
        ).toEqual([404, NOT_FOUND[kind], 'id']);
        // The message echoes a bounded part of the id at most.
        expect(body.error?.message.length ?? 0).toBeLessThan(200);
      }
    }
    expect((await call(owner, 'GET', `/v1/vaults/${ids.vaults}`)).body).toEqual(vaultBefore.body);
  });
});
