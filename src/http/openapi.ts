import swagger from '@fastify/swagger';
import type { FastifyInstance } from 'fastify';
import { jsonSchemaTransform, jsonSchemaTransformObject } from 'fastify-type-provider-zod';

/**
 * The OpenAPI 3.1 document, generated from the routes' zod schemas (the same schemas that
 * validate requests), served at GET /v1/openapi.json without a key. Registered on the root
 * instance, before the routes: the generator learns routes through an onRoute hook, which an
 * encapsulated plugin would keep from seeing its siblings' routes.
 */
export function registerOpenApi(app: FastifyInstance): void {
  void app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'spendgate',
        version: '1.0.0',
        description: 'Treasury vaults and virtual cards on digital assets.',
      },
      components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } } },
      security: [{ bearer: [] }],
    },
    transform: jsonSchemaTransform,
    transformObject: jsonSchemaTransformObject,
  });
  // Outside the /v1 routes' plugin, where the auth hook lives: this route needs no key.
  app.get('/v1/openapi.json', { config: { public: true }, schema: { hide: true } }, () =>
    app.swagger(),
  );
}
