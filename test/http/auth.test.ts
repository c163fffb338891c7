import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runKeys } from '../../src/cli/keys.js';
import { migrate, readMigrations } from '../../src/store/migrations/runner.js';
import { API_SCOPES, type ApiScope } from '../../src/store/port/index.js';
import { testDatabase } from '../support/databases.js';
import { startTestService, type TestService } from '../support/http.js';

interface ErrorJson {
  error: { code: string };
}

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

  describe('before the body is read', () => {
    const post = (path: string, body: string, authorization?: string) =>
      fetch(`${service.base}${path}`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          ...(authorization === undefined ? {} : { authorization }),
        },
        body,
      });

    it.each([
      ['an empty body', '{}'],
      ['broken JSON', '{"name": '],
      ['nearly 1 MiB of broken JSON', `{"name": "${'x'.repeat(1024 * 1024 - 100)}`],
    ])('refuses no key with 401 whatever the body: %s', async (_title, body) => {
      expect(await errorCode(await post('/v1/vaults', body))).toEqual([401, 'missing_api_key']);
      expect(await errorCode(await post('/v1/vaults', body, 'Bearer sk_test_nope'))).toEqual([
        401,
        'invalid_api_key',
      ]);
    });

    it('refuses a key outside the scope with 403, not the 400 of its body', async () => {
      const reader = await service.key({ scopes: ['vaults:read'] });
      for (const body of ['{}', '{"vaultId": 1', '[]']) {
        expect(await errorCode(await post('/v1/cards', body, `Bearer ${reader.key}`))).toEqual([
          403,
          'insufficient_scope',
        ]);
      }
      // The same body with the scope: now the body is read, and refused.
      const writer = await service.key({ scopes: ['cards:write'] });
      expect(await errorCode(await post('/v1/cards', '{}', `Bearer ${writer.key}`))).toEqual([
        400,
        'parameter_missing',
      ]);
    });
  });

  describe('the scope account:write', () => {
    const twoFactorRoutes = [
      ['POST', '/v1/account/two-factor', undefined],
      ['POST', '/v1/account/two-factor/verify', { code: '123456' }],
      ['DELETE', '/v1/account/two-factor', undefined],
    ] as const;

    it.each([
      ["the card network's key", ['authorizations:write'] as ApiScope[]],
      ['a key of every other scope', API_SCOPES.filter((scope) => scope !== 'account:write')],
    ])('keeps the two-factor routes from %s', async (_title, scopes) => {
      const { key, scope } = await service.key({ scopes });
      for (const [method, path, body] of twoFactorRoutes) {
        const answer = await service.request(key, method, path, body);
        expect([answer.status, (answer.body as ErrorJson).error.code], path).toEqual([
          403,
          'insufficient_scope',
        ]);
      }
      // Nothing was enrolled.
      const { rows } = await service.store.client.query<{ enc: string | null }>(
        'SELECT two_factor_secret_enc AS enc FROM accounts WHERE id = $1',
        [scope.accountId],
      );
      expect(rows[0]?.enc).toBeNull();
    });

    it('lets a key with account:write manage two-factor, and gives it to a key made without scopes', async () => {
      const manager = await service.key({ scopes: ['account:write'] });
      const begun = await service.request(manager.key, 'POST', '/v1/account/two-factor');
      expect(begun.status).toBe(200);
      expect(API_SCOPES).toContain('account:write');
      const all = await service.key();
      const [record] = await service.store.listApiKeys(all.scope.accountId);
      expect(record?.scopes).toContain('account:write');
      expect((await service.request(all.key, 'POST', '/v1/account/two-factor')).status).toBe(200);
    });

    it('is given by the migration to existing keys of all eleven v1.0 scopes, and to no other', async () => {
      const database = testDatabase('pg');
      try {
        const client = await database.client();
        const migrations = readMigrations();
        const ours = migrations.findIndex((migration) =>
          migration.name.endsWith('_two_factor_lockout_and_account_scope.sql'),
        );
        expect(ours).toBeGreaterThan(0);
        await migrate(client, migrations.slice(0, ours));
        const v1 = API_SCOPES.filter((scope) => scope !== 'account:write');
        expect(v1).toHaveLength(11);
        const keys = {
          all: [...v1].reverse(),
          network: ['authorizations:write'],
          allButOne: v1.slice(1),
        };
        await client.query(
          "INSERT INTO accounts (id, name, created_at) VALUES ('acct_m', 'm', now())",
        );
        for (const [id, scopes] of Object.entries(keys)) {
          await client.query(
            `INSERT INTO api_keys (id, account_id, mode, key_hash, key_prefix, scopes, created_at)
             VALUES ($1, 'acct_m', 'test', $1, 'sk_test_', $2, now())`,
            [id, scopes],
          );
        }
        await migrate(client, migrations);
        const { rows } = await client.query<{ id: string; write: boolean; count: number }>(
          `SELECT id, 'account:write' = ANY (scopes) AS write, cardinality(scopes) AS count
             FROM api_keys ORDER BY id`,
        );
        expect(rows).toEqual([
          { id: 'all', write: true, count: 12 },
          { id: 'allButOne', write: false, count: 10 },
          { id: 'network', write: false, count: 1 },
        ]);
      } finally {
        await database.close();
      }
    });

    it('is accepted by keys create --scopes', async () => {
      const lines = await runKeys(service.store, [
        'create',
        '--account',
        'scoped-cli',
        '--mode',
        'test',
        '--scopes',
        'account:write,cards:reveal',
        '--create-account',
      ]);
      expect(lines[0]).toContain('scopes account:write,cards:reveal');
      const everything = await runKeys(service.store, [
        'create',
        '--account',
        'scoped-cli',
        '--mode',
        'test',
      ]);
      expect(everything[0]).toContain(`scopes ${API_SCOPES.join(',')}`);
      await expect(
        runKeys(service.store, [
          'create',
          '--account',
          'x',
          '--mode',
          'test',
          '--scopes',
          'account',
        ]),
      ).rejects.toThrow(/account:write/);
    });
  });

  it('never echoes the key in an error', async () => {
    const secret = 'sk_test_thisisnotarealkeybutasecret00';
    const response = await get(service.base, '/v1/account', `Bearer ${secret}`);
    expect(await response.text()).not.toContain(secret);
  });
});
