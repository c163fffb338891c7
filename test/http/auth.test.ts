import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/http.js';

/** Authentication and scopes over real HTTP (contract section 2). */
describe('authentication', () => {
  let service: TestService;
  let sandbox: TestService;

  beforeAll(async () => {
    service = await startTestService({
      configure: (app) =>
        app.get('/v1/scoped', { config: { requiredScope: 'vaults:write' } }, (_request, reply) =>
          reply.send({ ok: true }),
        ),
    });
    sandbox = await startTestService({ modes: ['test'] });
  });

  afterAll(async () => {
    await service.close();
    await sandbox.close();
  });

  const get = (base: string, path: string, authorization?: string) =>
    fetch(`${base}${path}`, authorization === undefined ? {} : { headers: { authorization } });

  async function errorCode(response: Response): Promise<[number, string]> {
    const body = (await response.json()) as { error: { code: string; type: string } };
    return [response.status, body.error.code];
  }

  it('answers the account of a valid key, in its mode', async () => {
    const { key, scope } = await service.key({ account: 'acme-http' });
    const response = await get(service.base, '/v1/account', `Bearer ${key}`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({
      id: scope.accountId,
      object: 'account',
      name: 'acme-http',
      mode: 'test',
      twoFactorEnabled: false,
    });
    const live = await service.key({ account: 'acme-http', mode: 'live' });
    expect(
      (
        (await (await get(service.base, '/v1/account', `Bearer ${live.key}`)).json()) as {
          mode: string;
        }
      ).mode,
    ).toBe('live');
  });

  it.each([
    ['no header', undefined, 401, 'missing_api_key'],
    ['an empty header', '', 401, 'missing_api_key'],
    ['another scheme', 'Basic dXNlcjpwYXNz', 401, 'invalid_api_key'],
    ['an unknown key', 'Bearer sk_test_unknownunknownunknownunknown00', 401, 'invalid_api_key'],
    ['a key with a space', 'Bearer sk_test_a b', 401, 'invalid_api_key'],
  ])('refuses %s', async (_title, authorization, status, code) => {
    expect(await errorCode(await get(service.base, '/v1/account', authorization))).toEqual([
      status,
      code,
    ]);
  });

  it('refuses a revoked and an expired key', async () => {
    const { key, scope } = await service.key();
    const [record] = await service.store.listApiKeys(scope.accountId);
    await service.store.revokeApiKey(record?.id ?? '');
    expect(await errorCode(await get(service.base, '/v1/account', `Bearer ${key}`))).toEqual([
      401,
      'invalid_api_key',
    ]);
    const account = await service.store.findOrCreateAccount('expiring');
    const expiring = await service.store.createApiKey({
      accountId: account.id,
      mode: 'test',
      scopes: [],
      expiresAtMs: Date.now() - 1,
    });
    expect(
      await errorCode(await get(service.base, '/v1/account', `Bearer ${expiring.key}`)),
    ).toEqual([401, 'expired_api_key']);
  });

  it('forgets an accepted key once its cache time is over, so a revocation takes effect', async () => {
    const cached = await startTestService({ apiKeyCacheMs: 300 });
    try {
      const { key, scope } = await cached.key();
      const account = () => get(cached.base, '/v1/account', `Bearer ${key}`);
      expect((await account()).status).toBe(200);
      const [record] = await cached.store.listApiKeys(scope.accountId);
      await cached.store.revokeApiKey(record?.id ?? '');
      // Remembered for a while (README: a revocation takes up to the cache time)...
      expect((await account()).status).toBe(200);
      await new Promise((resolve) => setTimeout(resolve, 350));
      // ...and then looked up again.
      expect(await errorCode(await account())).toEqual([401, 'invalid_api_key']);
    } finally {
      await cached.close();
    }
  });

  it('refuses a key without the scope a route needs, with permission_error', async () => {
    const narrow = await service.key({ scopes: ['vaults:read'] });
    const response = await get(service.base, '/v1/scoped', `Bearer ${narrow.key}`);
    const body = (await response.json()) as { error: { type: string; code: string } };
    expect([response.status, body.error.type, body.error.code]).toEqual([
      403,
      'permission_error',
      'insufficient_scope',
    ]);
    const wide = await service.key({ scopes: ['vaults:write'] });
    expect((await get(service.base, '/v1/scoped', `Bearer ${wide.key}`)).status).toBe(200);
  });

  it('refuses a live key where only the sandbox is served', async () => {
    const live = await sandbox.key({ mode: 'live' });
    const test = await sandbox.key({ mode: 'test' });
    expect(await errorCode(await get(sandbox.base, '/v1/account', `Bearer ${live.key}`))).toEqual([
      401,
      'invalid_api_key',
    ]);
    expect((await get(sandbox.base, '/v1/account', `Bearer ${test.key}`)).status).toBe(200);
  });

  it('answers an unknown route with 404 before asking for a key, and health with none', async () => {
    expect(await errorCode(await get(service.base, '/v1/nothing'))).toEqual([
      404,
      'route_not_found',
    ]);
    expect((await get(service.base, '/healthz')).status).toBe(200);
  });

  it('never echoes the key in an error', async () => {
    const secret = 'sk_test_thisisnotarealkeybutasecret00';
    const response = await get(service.base, '/v1/account', `Bearer ${secret}`);
    expect(await response.text()).not.toContain(secret);
  });
});
