import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Store } from '../../store/store.js';
import { authOf } from '../auth.js';
import { accountObject, presentAccount } from './account.js';
import { text, twoFactorHeaders } from '../schemas/common.js';

/** Two-factor enrolment (contract section 2): begin, verify to turn on, turn off with a code. */
const enrolmentObject = z.object({
  object: z.literal('two_factor_enrolment'),
  secret: z.string(),
  otpauthUri: z.string(),
});

export function registerTwoFactorRoutes(app: FastifyInstance, store: Store): void {
  const routes = app.withTypeProvider<ZodTypeProvider>();

  routes.post(
    '/v1/account/two-factor',
    {
      config: { requiredScope: null },
      schema: {
        operationId: 'beginTwoFactor',
        tags: ['account'],
        response: { 200: enrolmentObject },
      },
    },
    async (request, reply) => {
      void reply.header('Cache-Control', 'no-store');
      const enrolment = await store.beginTwoFactor(authOf(request).scope.accountId);
      return { object: 'two_factor_enrolment' as const, ...enrolment };
    },
  );

  routes.post(
    '/v1/account/two-factor/verify',
    {
      config: { requiredScope: null },
      schema: {
        operationId: 'verifyTwoFactor',
        tags: ['account'],
        body: z.strictObject({ code: text(1, 10) }),
        response: { 200: accountObject },
      },
    },
    async (request) => {
      const { scope } = authOf(request);
      await store.verifyTwoFactor(scope.accountId, request.body.code);
      return presentAccount(store, scope);
    },
  );

  routes.delete(
    '/v1/account/two-factor',
    {
      config: { requiredScope: null },
      schema: {
        operationId: 'disableTwoFactor',
        tags: ['account'],
        headers: twoFactorHeaders,
        response: { 200: accountObject },
      },
    },
    async (request) => {
      const { scope } = authOf(request);
      await store.disableTwoFactor(scope.accountId, request.headers['x-two-factor-code']);
      return presentAccount(store, scope);
    },
  );
}
