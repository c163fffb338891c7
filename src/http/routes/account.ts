import type { FastifyInstance } from 'fastify';
import { SpendgateError } from '../../core/index.js';
import type { Store } from '../../store/store.js';
import { authOf } from '../auth.js';

/** Account (contract section 7): the caller's account, by any valid key of it. */
export function registerAccountRoutes(app: FastifyInstance, store: Store): void {
  app.get('/v1/account', { config: { requiredScope: null } }, async (request) => {
    const { scope } = authOf(request);
    const account = await store.getAccount(scope.accountId);
    if (account === null) throw new SpendgateError('invalid_api_key', 'The API key is invalid.');
    return {
      id: account.id,
      object: 'account' as const,
      name: account.name,
      mode: scope.mode,
      twoFactorEnabled: account.twoFactorEnabled,
    };
  });
}
