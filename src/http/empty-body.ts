import type { FastifyInstance } from 'fastify';
import { z } from 'zod';

/** The body of an operation that takes none: absent, null or `{}`. */
export const noBody = z.strictObject({}).nullish();

const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * Gives every route that may carry a body and declares no schema for it the empty one, so
 * that `POST /v1/cards/{id}/freeze {"reason": "x"}` is refused with `parameter_invalid`
 * naming the key rather than accepted and ignored: a client that believes a field did
 * something must hear that it did not. One hook, so a new route cannot forget it.
 * Registered before the OpenAPI generator, whose own onRoute hook then documents the body.
 */
export function refuseBodiesWithoutSchema(app: FastifyInstance): void {
  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    if (!methods.some((method) => BODY_METHODS.has(method))) return;
    const schema = route.schema ?? {};
    if (schema.body !== undefined) return;
    route.schema = { ...schema, body: noBody };
  });
}
