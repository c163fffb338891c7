import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import {
  presentAccount,
  SpendgateError,
  type AccountRecord,
  type Scope,
} from '../../core/index.js';
import type { Store } from '../../store/store.js';
import { authOf } from '../auth.js';
import type { OperationId } from '../operation-docs/index.js';

export const accountObject = z
  .object({
    id: z.string(),
    object: z.literal('account'),
    name: z.string(),
    mode: z.enum(['test', 'live']),
    twoFactorEnabled: z.boolean(),
  })
  .meta({ id: 'Account' });

/** The caller's account; a key whose account is gone is no longer valid. */
export async function callerAccount(store: Store, scope: Scope): Promise<AccountRecord> {
  const account = await store.getAccount(scope.accountId);
  if (account === null) throw new SpendgateError('invalid_api_key', 'The API key is invalid.');
  return account;
}

/** Account (contract section 7): the caller's account, by any valid key of it. */
export function registerAccountRoutes(app: FastifyInstance, store: Store): void {
  app.withTypeProvider<ZodTypeProvider>().get(
    '/v1/account',
    {
      config: { requiredScope: null },
      schema: {
        operationId: 'retrieveAccount' satisfies OperationId,
        tags: ['account'],
        response: { 200: accountObject },
      },
    },
    async (request) => {
      const { scope } = authOf(request);
      return presentAccount(await callerAccount(store, scope), scope.mode);
    },
  );
}
