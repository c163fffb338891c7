import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERROR_CATALOGUE, type ErrorCode } from '../../src/core/index.js';
import { API_SCOPES, type ApiScope } from '../../src/store/port/index.js';
import { startTestService, type TestService } from '../support/http.js';

/**
 * The authorization matrix, generated from the route table the server itself
 * publishes (its OpenAPI document, which test/http/openapi.test.ts keeps equal to Fastify's
 * routes, each operation naming the scope its key needs). For every /v1 route:
 *
 * - no key: 401 `missing_api_key`; a revoked key: 401 `invalid_api_key`; a key of the owner
 *   lacking the route's scope: 403 `insufficient_scope`. Each is sent a body that is not even
 *   JSON, so a refusal that came after parsing (400 `invalid_json`) fails the test.
 * - another account's key, and the owner's key of the other mode: 404 with the kind's code for
 *   a route with an id or naming the owner's object in its body, the caller's own (empty)
 *   list for a list, the caller's own account for the account routes, and the rule library,
 *   the same for every caller, for the list of rule templates.
 *
 * Every refusal is the contract's error body (section 3) with its Request-Id, and afterwards
 * every row of every table is what it was. A new route fails the test until its row in the
 * table below says what a stranger may expect of it.
 */

interface Operation {
  readonly security?: { bearer?: string[] }[];
  readonly requestBody?: unknown;
}
interface Route {
  readonly method: string;
  readonly path: string;
  readonly scope: ApiScope | null;
  readonly hasBody: boolean;
}

const NOT_FOUND_OF_KIND: Readonly<Record<string, ErrorCode>> = {
  vaults: 'vault_not_found',
  cards: 'card_not_found',
  transactions: 'transaction_not_found',
  authorizations: 'transaction_not_found',
  transfers: 'transfer_not_found',
  webhooks: 'webhook_not_found',
  settlements: 'settlement_not_found',
  processors: 'processor_not_found',
};

/** What another account (or the owner's other mode) gets from a route without an id. */
type Stranger =
  /** 404 with this code: the body names one of the owner's objects. */
  | { readonly notFound: ErrorCode }
  /** 200, the caller's own list: empty. */
  | 'emptyList'
  /** 200, the caller's own account (never the owner's in this mode). */
  | 'ownAccount'
  /** Acts on the caller's own account alone (creates its own objects): not sent. */
  | 'own'
  /** A decision for a card the caller cannot see: declined, recording nothing. */
  | 'declined'
  /** 200, the same list for every caller, of no account (the rule library). */
  | 'shared';

const OWNER_OBJECT_ROUTES: Readonly<Record<string, Stranger>> = {
  'GET /v1/account': 'ownAccount',
  'GET /v1/rate-limits': 'own',
  // The caller's own key; and the caller's own events, as a stream (test/http/event-stream.test.ts
  // shows another account's and mode's never reach it).
  'GET /v1/account/key': 'own',
  'GET /v1/events/stream': 'own',
  'POST /v1/account/two-factor': 'own',
  'POST /v1/account/two-factor/verify': 'own',
  'DELETE /v1/account/two-factor': 'own',
  'GET /v1/account/display-origins': 'own',
  'PUT /v1/account/display-origins': 'own',
  'POST /v1/vaults': 'own',
  'POST /v1/webhooks': 'own',
  'POST /v1/processors': 'own',
  'POST /v1/settlements': 'own',
  'GET /v1/vaults': 'emptyList',
  'GET /v1/cards': 'emptyList',
  'GET /v1/transactions': 'emptyList',
  'GET /v1/transfers': 'emptyList',
  'GET /v1/webhooks': 'emptyList',
  'GET /v1/processors': 'emptyList',
  'POST /v1/cards': { notFound: 'vault_not_found' },
  'POST /v1/transfers': { notFound: 'vault_not_found' },
  'POST /v1/transfers/external': { notFound: 'vault_not_found' },
  'POST /v1/simulate/deposits': { notFound: 'vault_not_found' },
  'POST /v1/authorizations': 'declined',
  // Clearing messages name a card: another account's is not found, and nothing is recorded.
  'POST /v1/captures': { notFound: 'card_not_found' },
  'POST /v1/refunds': { notFound: 'card_not_found' },
  // An advice names a card too: another account's is not found, and nothing is recorded.
  'POST /v1/authorizations/advice': { notFound: 'card_not_found' },
  'GET /v1/rule-templates': 'shared',
};

const ADDRESS = '9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin';

interface Json {
  id?: string;
  object?: string;
  mode?: string;
  approved?: boolean;
  declineCode?: string;
  data?: unknown[];
  error?: Record<string, unknown>;
}

describe('the authorization matrix', () => {
  let service: TestService;
  let routes: Route[];
  let owner: { key: string; accountId: string };
  let ids: Record<string, string>;
  let keys: {
    revoked: string;
    stranger: string;
    otherMode: string;
    lacking: Map<ApiScope, string>;
  };

  const send = async (
    key: string | null,
    method: string,
    path: string,
    body?: unknown,
  ): Promise<{ status: number; headers: Headers; body: Json }> => {
    const raw = typeof body === 'string';
    const response = await fetch(`${service.base}${path}`, {
      method,
      headers: {
        ...(key === null ? {} : { authorization: `Bearer ${key}` }),
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: raw ? body : JSON.stringify(body) }),
    });
    return {
      status: response.status,
      headers: response.headers,
      body: (await response.json()) as Json,
    };
  };

  const pathOf = (route: Route): string => {
    const kind = route.path.split('/')[2] ?? '';
    return route.path.replace('{id}', ids[kind] ?? `missing-${kind}`);
  };

  /** A valid body of each route that takes one, naming the owner's objects. */
  const bodyOf = (route: Route): unknown => {
    const today = new Date().toISOString().slice(0, 10);
    const backtest = { policy: {}, startDate: today, endDate: today };
    const clearing = () => ({
      cardId: ids['cards'],
      amount: '1',
      currency: 'USDC',
      merchant: { name: 'm', mcc: '5812', country: 'US' },
      networkTransactionId: `ntx_matrix_${Math.random().toString(36).slice(2)}`,
    });
    const bodies: Record<string, unknown> = {
      'POST /v1/vaults': { name: 'x', currency: 'USDC', network: 'solana' },
      'PATCH /v1/vaults/{id}': { name: 'taken' },
      'POST /v1/vaults/{id}/freeze': { reason: 'taken' },
      'POST /v1/vaults/{id}/unfreeze': {},
      'POST /v1/vaults/{id}/close': { destination: { address: ADDRESS } },
      'PUT /v1/vaults/{id}/policy': { limits: [{ interval: 'daily', amount: '1' }] },
      'POST /v1/vaults/{id}/policy/simulate': {
        transaction: { amount: '1', merchant: { name: 'm', mcc: '5812', country: 'US' } },
      },
      'POST /v1/vaults/{id}/policy/backtest': backtest,
      'POST /v1/cards/{id}/policy/backtest': backtest,
      'PUT /v1/cards/{id}/policy': { limits: [{ interval: 'daily', amount: '1' }] },
      'POST /v1/cards': { vaultId: ids['vaults'], cardholderName: 'Mallory' },
      'POST /v1/cards/{id}/reveal': {},
      'POST /v1/cards/{id}/display-token': {},
      'PUT /v1/account/display-origins': { origins: ['https://app.example.com'] },
      'POST /v1/transfers': {
        fromVaultId: ids['vaults'],
        toVaultId: ids['vaults2'],
        amount: '1',
      },
      'POST /v1/transfers/external': { fromVaultId: ids['vaults'], address: ADDRESS, amount: '1' },
      'POST /v1/simulate/deposits': { vaultId: ids['vaults'], amount: '1' },
      'POST /v1/authorizations': {
        cardId: ids['cards'],
        amount: '1',
        currency: 'USDC',
        merchant: { name: 'm', mcc: '5812', country: 'US' },
        networkTransactionId: `ntx_matrix_${Math.random().toString(36).slice(2)}`,
      },
      'POST /v1/authorizations/{id}/capture': { amount: '0.5' },
      'POST /v1/authorizations/{id}/increment': {
        amount: '0.5',
        networkTransactionId: `ntx_matrix_${Math.random().toString(36).slice(2)}`,
      },
      'POST /v1/authorizations/advice': {
        cardId: ids['cards'],
        amount: '1',
        currency: 'USDC',
        merchant: { name: 'm', mcc: '5812', country: 'US' },
        networkTransactionId: `ntx_matrix_${Math.random().toString(36).slice(2)}`,
        approved: true,
        reason: 'stand_in',
      },
      'POST /v1/captures': clearing(),
      'POST /v1/refunds': clearing(),
      'POST /v1/authorizations/{id}/reverse': { amount: '0.5' },
      'POST /v1/webhooks/{id}/test': {},
      'POST /v1/processors/{id}/rotate': { signingSecret: 'whsec_matrix_rotated' },
    };
    return bodies[`${route.method} ${route.path}`] ?? (route.hasBody ? {} : undefined);
  };

  /** Every row of every table, as one digest per table. */
  const databaseState = async (): Promise<Record<string, string>> => {
    const { rows: tables } = await service.store.client.query<{ name: string }>(
      `SELECT table_name AS name FROM information_schema.tables
        WHERE table_schema = 'public' AND table_type = 'BASE TABLE' ORDER BY table_name`,
    );
    expect(tables.length).toBeGreaterThan(10);
    const state: Record<string, string> = {};
    for (const { name } of tables) {
      const { rows } = await service.store.client.query<{ digest: string; count: string }>(
        `SELECT md5(coalesce(string_agg(t::text, '|' ORDER BY t::text), '')) AS digest,
                count(*)::text AS count
           FROM "${name}" AS t`,
      );
      state[name] = `${rows[0]?.count ?? '?'} ${rows[0]?.digest ?? '?'}`;
    }
    return state;
  };

  /** The contract's error body, its Request-Id the header's; the status and code expected. */
  const expectRefusal = (
    answer: { status: number; headers: Headers; body: Json },
    status: number,
    code: ErrorCode,
    label: string,
  ): void => {
    expect([answer.status, answer.body.error?.['code']], label).toEqual([status, code]);
    const error = answer.body.error ?? {};
    expect(Object.keys(answer.body), label).toEqual(['error']);
    expect(error['type'], label).toBe(ERROR_CATALOGUE[code].type);
    expect(typeof error['message'] === 'string' && error['message'] !== '', label).toBe(true);
    expect(error['requestId'], label).toMatch(/^req_[0-9a-f]{32}$/);
    expect(answer.headers.get('request-id'), label).toBe(error['requestId']);
    for (const field of Object.keys(error)) {
      expect(['type', 'code', 'message', 'param', 'requestId'], label).toContain(field);
    }
  };

  beforeAll(async () => {
    // A live cluster configured (nothing listens there, and nothing reaches it): without one,
    // live external transfers answer 503 to every vault alike, before looking for it.
    service = await startTestService({ server: { solanaRpcUrl: 'http://127.0.0.1:9' } });
    const made = await service.key({ account: 'matrix-owner' });
    owner = { key: made.key, accountId: made.scope.accountId };
    const created = async (path: string, body: unknown): Promise<string> => {
      const answer = await send(owner.key, 'POST', path, body);
      expect(answer.status, `${path}: ${JSON.stringify(answer.body)}`).toBeLessThan(300);
      return answer.body.id ?? '';
    };
    const vault = { currency: 'USDC', network: 'solana', initialDeposit: '50' };
    const vaultId = await created('/v1/vaults', { name: 'a', ...vault });
    const vault2 = await created('/v1/vaults', { name: 'b', ...vault });
    const policy = await send(owner.key, 'PUT', `/v1/vaults/${vaultId}/policy`, {
      limits: [{ interval: 'daily', amount: '1000' }],
    });
    expect(policy.status).toBe(200);
    const transfer = await created('/v1/transfers', {
      fromVaultId: vaultId,
      toVaultId: vault2,
      amount: '5',
      metadata: { note: 'matrix' },
    });
    const card = await created('/v1/cards', { vaultId, cardholderName: 'Owner' });
    const authorization = await created('/v1/authorizations', {
      cardId: card,
      amount: '2',
      currency: 'USDC',
      merchant: { name: 'm', mcc: '5812', country: 'US' },
      networkTransactionId: 'ntx_matrix_owner',
    });
    const transactions = await send(
      owner.key,
      'GET',
      `/v1/transactions?vaultId=${vaultId}&limit=100`,
    );
    const transferTransaction = (
      transactions.body.data as { id: string; transferId?: string }[]
    ).find((transaction) => transaction.transferId === transfer);
    ids = {
      vaults: vaultId,
      vaults2: vault2,
      cards: card,
      transfers: transfer,
      transactions: transferTransaction?.id ?? '',
      authorizations: authorization,
      settlements: await created('/v1/settlements', {
        records: [{ authorizationId: authorization, amount: '0.5' }],
      }),
      webhooks: await created('/v1/webhooks', { url: 'http://127.0.0.1:9/hooks', events: ['*'] }),
      processors: await created('/v1/processors', {
        processor: 'stripe',
        mode: 'test',
        signingSecret: 'whsec_matrix_owner',
      }),
    };
    expect(Object.values(ids).every((id) => id !== '')).toBe(true);

    const revoked = await service.key({ account: 'matrix-owner' });
    // The newest key of the account is the one just made (ids are time-ordered).
    const [newest] = await service.store.listApiKeys(owner.accountId);
    expect(newest?.prefix).toBe(revoked.key.slice(0, newest?.prefix.length));
    expect(await service.store.revokeApiKey(newest?.id ?? '')).toBe(true);
    const lacking = new Map<ApiScope, string>();
    for (const scope of API_SCOPES) {
      const others = API_SCOPES.filter((other) => other !== scope);
      lacking.set(scope, (await service.key({ account: 'matrix-owner', scopes: others })).key);
    }
    keys = {
      revoked: revoked.key,
      stranger: (await service.key({ account: 'matrix-stranger' })).key,
      otherMode: (await service.key({ account: 'matrix-owner', mode: 'live' })).key,
      lacking,
    };

    const document = (await (await fetch(`${service.base}/v1/openapi.json`)).json()) as {
      paths: Record<string, Record<string, Operation>>;
    };
    routes = Object.entries(document.paths).flatMap(([path, methods]) =>
      Object.entries(methods)
        // A processor's door takes no key (`security: []`): its signature is the
        // authentication, refused and unchanged as test/http/processors-stripe.test.ts shows.
        .filter(([, operation]) => operation.security?.length !== 0)
        .map(([method, operation]) => {
          const roles = operation.security?.[0]?.bearer ?? [];
          expect(roles.length, `${method} ${path}`).toBeLessThanOrEqual(1);
          const scope = roles[0] ?? null;
          if (scope !== null) expect(API_SCOPES, `${method} ${path}`).toContain(scope);
          return {
            method: method.toUpperCase(),
            path,
            scope: scope as ApiScope | null,
            hasBody: operation.requestBody !== undefined,
          };
        }),
    );
  });

  afterAll(async () => {
    await service.close();
  });

  it('covers every /v1 route, each with its scope or none', () => {
    expect(routes.length).toBeGreaterThanOrEqual(40);
    expect(routes.every((route) => route.path.startsWith('/v1/'))).toBe(true);
    const unscoped = routes.filter((route) => route.scope === null).map((route) => route.path);
    expect(unscoped.sort()).toEqual([
      '/v1/account',
      '/v1/account/display-origins',
      '/v1/account/key',
      '/v1/rate-limits',
      '/v1/rule-templates',
    ]);
    // The two-factor routes need account:write (contract v1.1).
    expect(
      routes.filter((route) => route.path.startsWith('/v1/account/two-factor')).map((r) => r.scope),
    ).toEqual(['account:write', 'account:write', 'account:write']);
    for (const route of routes) {
      if (route.path.includes('{id}')) {
        expect(NOT_FOUND_OF_KIND[route.path.split('/')[2] ?? ''], route.path).toBeDefined();
      } else {
        expect(OWNER_OBJECT_ROUTES[`${route.method} ${route.path}`], route.path).toBeDefined();
      }
    }
  });

  it('refuses no key, a revoked key and a key without the scope before reading the body, and changes nothing', async () => {
    const before = await databaseState();
    // Not JSON at all: a refusal after parsing would be 400 invalid_json.
    const unparsable = '{"this is": not json';
    for (const route of routes) {
      const label = `${route.method} ${route.path}`;
      const body = route.method === 'GET' || route.method === 'DELETE' ? undefined : unparsable;
      const path = pathOf(route);
      expectRefusal(
        await send(null, route.method, path, body),
        401,
        'missing_api_key',
        `${label}, no key`,
      );
      expectRefusal(
        await send(keys.revoked, route.method, path, body),
        401,
        'invalid_api_key',
        `${label}, revoked`,
      );
      if (route.scope !== null) {
        const key = keys.lacking.get(route.scope) ?? '';
        expectRefusal(
          await send(key, route.method, path, body),
          403,
          'insufficient_scope',
          `${label}, without ${route.scope}`,
        );
      }
    }
    expect(await databaseState()).toEqual(before);
  });

  it.each([
    ['another account', () => keys.stranger, 'test'],
    ["the owner's other mode", () => keys.otherMode, 'live'],
  ])('shows %s nothing of the owner, and changes nothing', async (_who, keyOf, mode) => {
    const key = keyOf();
    const before = await databaseState();
    let sent = 0;
    for (const route of routes) {
      const label = `${route.method} ${route.path}`;
      const expected = route.path.includes('{id}') ? 'id' : OWNER_OBJECT_ROUTES[label];
      if (expected === 'own' || expected === undefined) continue;
      const answer = await send(key, route.method, pathOf(route), bodyOf(route));
      if (expected === 'id') {
        const code = NOT_FOUND_OF_KIND[route.path.split('/')[2] ?? ''] ?? 'route_not_found';
        expectRefusal(answer, 404, code, label);
        sent += 1;
        continue;
      }
      sent += 1;
      if (expected === 'emptyList') {
        expect([answer.status, answer.body.data], label).toEqual([200, []]);
      } else if (expected === 'ownAccount') {
        expect(answer.status, label).toBe(200);
        expect(answer.body.mode, label).toBe(mode);
        if (mode === 'test') expect(answer.body.id, label).not.toBe(owner.accountId);
      } else if (expected === 'shared') {
        expect([answer.status, answer.body.object], label).toEqual([200, 'list']);
        expect(answer.body.data?.length, label).toBeGreaterThan(0);
      } else if (expected === 'declined') {
        expect([answer.status, answer.body.approved, answer.body.declineCode], label).toEqual([
          200,
          false,
          'card_declined',
        ]);
      } else if (mode === 'live' && label === 'POST /v1/simulate/deposits') {
        // Live mode has no simulated deposits at all, the owner's vault or another.
        expectRefusal(answer, 400, 'parameter_invalid', label);
      } else {
        expectRefusal(answer, 404, expected.notFound, label);
      }
    }
    expect(sent).toBeGreaterThanOrEqual(35);
    expect(await databaseState()).toEqual(before);
  });
});
