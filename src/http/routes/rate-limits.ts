import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { assert } from '../../core/index.js';
import { RATE_LIMIT_WINDOW_SECONDS } from '../rate-limits.js';
import { timestampOutput } from '../schemas/common.js';
import type { OperationId } from '../operation-docs/index.js';

const rateLimitObject = z
  .object({
    object: z.literal('rate_limit'),
    limit: z.number().int(),
    remaining: z.number().int(),
    resetAt: timestampOutput,
    windowSeconds: z.number().int(),
  })
  .meta({ id: 'RateLimit' });

/**
 * Rate Limits (contract section 6): the caller's key's window as the count left it. This
 * request is counted like any other, so the body agrees with its own RateLimit-* headers.
 */
export function registerRateLimitRoutes(app: FastifyInstance): void {
  app.withTypeProvider<ZodTypeProvider>().get(
    '/v1/rate-limits',
    {
      config: { requiredScope: null },
      schema: {
        operationId: 'retrieveRateLimits' satisfies OperationId,
        tags: ['account'],
        response: { 200: rateLimitObject },
      },
    },
    (request) => {
      const state = request.rateLimit;
      // Only fail-open routes go uncounted, and this is not one.
      assert(state !== null, 'the rate-limit hook counted this request');
      return {
        object: 'rate_limit' as const,
        limit: state.limit,
        remaining: state.remaining,
        // The window runs on the wall clock, as Redis's key expiry does.
        resetAt: new Date(Date.now() + state.resetMs).toISOString(),
        windowSeconds: RATE_LIMIT_WINDOW_SECONDS,
      };
    },
  );
}
