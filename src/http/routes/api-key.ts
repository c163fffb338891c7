import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { authOf } from '../auth.js';
import type { OperationId } from '../operation-docs/index.js';

const apiKeyObject = z
  .object({
    id: z.string(),
    object: z.literal('api_key'),
    mode: z.enum(['test', 'live']),
    scopes: z.array(z.string()),
  })
  .meta({ id: 'ApiKey' });

/**
 * Retrieve the API key: the calling key's id, mode and scopes (never the key itself), so that
 * a client such as the console shows only what the key may do. Any valid key may call it.
 */
export function registerApiKeyRoutes(app: FastifyInstance): void {
  app.withTypeProvider<ZodTypeProvider>().get(
    '/v1/account/key',
    {
      config: { requiredScope: null },
      schema: {
        operationId: 'retrieveApiKey' satisfies OperationId,
        tags: ['account'],
        response: { 200: apiKeyObject },
      },
    },
    (request) => {
      const caller = authOf(request);
      return {
        id: caller.keyId,
        object: 'api_key' as const,
        mode: caller.scope.mode,
        scopes: [...caller.scopes].sort(),
      };
    },
  );
}
