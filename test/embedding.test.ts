import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { authOf } from '../src/http/auth.js';
import { createPgliteClient, createServer, loadConfig, openStore } from '../src/server.js';

/**
 * Embedding the service (`spendgate/server`): a host builds the server from its own store, on
 * the embedded PostgreSQL here, and adds routes of its own behind the same authentication,
 * scopes and error body.
 */
describe('the service entry', () => {
  it('serves the API and a host route behind its authentication, on the embedded database', async () => {
    const store = await openStore({
      client: await createPgliteClient(),
      masterKey: randomBytes(32),
    });
    const app = createServer(
      { ...loadConfig({ LOG_LEVEL: 'silent' }), redisPrefix: `embed-${process.pid}` },
      {
        store,
        redis: null,
        extraRoutes: (api) => {
          api.get('/v1/host/whoami', { config: { requiredScope: 'vaults:read' } }, (request) => ({
            accountId: authOf(request).scope.accountId,
          }));
        },
      },
    );
    try {
      const base = await app.listen({ port: 0, host: '127.0.0.1' });
      const account = await store.findOrCreateAccount('host');
      const { key } = await store.createApiKey({ accountId: account.id, mode: 'test', scopes: [] });
      const { key: narrow } = await store.createApiKey({
        accountId: account.id,
        mode: 'test',
        scopes: ['cards:read'],
      });
      const get = async (path: string, bearer: string) => {
        const response = await fetch(`${base}${path}`, {
          headers: { authorization: `Bearer ${bearer}` },
        });
        return [response.status, await response.json()] as const;
      };
      expect(await get('/v1/host/whoami', key)).toEqual([200, { accountId: account.id }]);
      const [status, body] = await get('/v1/host/whoami', narrow);
      expect([status, (body as { error: { code: string } }).error.code]).toEqual([
        403,
        'insufficient_scope',
      ]);
      const [accountStatus] = await get('/v1/account', key);
      expect(accountStatus).toBe(200);
    } finally {
      await app.close();
      await store.close();
    }
  });
});
