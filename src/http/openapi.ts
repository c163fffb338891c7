import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import { jsonSchemaTransform, jsonSchemaTransformObject } from 'fastify-type-provider-zod';
import { ERROR_CATALOGUE, type ErrorCode } from '../core/index.js';

/**
 * The OpenAPI 3.1 document, generated from the routes' zod schemas (the same schemas that
 * validate requests), served at GET /v1/openapi.json without a key. Registered on the root
 * instance, before the routes, with the reference page at /docs: the generator learns routes through an onRoute hook, which an
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
    transform: withRequiredScope,
    transformObject: (input) => withErrorResponses(jsonSchemaTransformObject(input)),
  });
  // The API reference page, from the same document; its assets are served from node_modules,
  // so it works on a machine without internet. A strict CSP: the page loads nothing foreign.
  void app.register(swaggerUi, {
    routePrefix: '/docs',
    staticCSP: true,
    uiConfig: { deepLinking: true, defaultModelsExpandDepth: 0 },
  });
  // Outside the /v1 routes' plugin, where the auth hook lives: this route needs no key.
  app.get('/v1/openapi.json', { config: { public: true }, schema: { hide: true } }, () =>
    app.swagger(),
  );
}

/**
 * Each operation names the scope its key needs (contract section 2) as the role of its bearer
 * requirement, which OpenAPI 3.1 allows for any scheme: clients and tests read the scope of a
 * route from the document. Routes any key may call keep the document's plain requirement.
 */
function withRequiredScope(
  input: Parameters<typeof jsonSchemaTransform>[0],
): ReturnType<typeof jsonSchemaTransform> {
  const output = jsonSchemaTransform(input);
  const scope = input.route.config?.requiredScope;
  if (typeof scope !== 'string') return output;
  return { ...output, schema: { ...output.schema, security: [{ bearer: [scope] }] } };
}

/** The parts of the generated document this module adds to. */
interface OpenApiDocument {
  paths?: Record<
    string,
    Record<string, { responses?: Record<string, unknown>; parameters?: unknown[] }>
  >;
  components?: Record<string, Record<string, unknown>>;
}

const HTTP_METHODS = new Set(['get', 'put', 'post', 'delete', 'patch', 'head', 'options']);
const MUTATING_METHODS = new Set(['put', 'post', 'delete', 'patch']);

const IDEMPOTENCY_KEY_PARAMETER = {
  name: 'Idempotency-Key',
  in: 'header',
  required: false,
  description:
    'Makes the request safe to retry: 24 hours long, the same key with the same request answers the stored response.',
  schema: { type: 'string', minLength: 1, maxLength: 255 },
};

/**
 * Every operation can fail with the contract's error body (section 3), so each gets it as its
 * `default` response, with the code's enumeration taken from the one catalogue: a client
 * generated from the document knows every code, and a test keeps the three in step.
 */
function withErrorResponses<T>(generated: T): T {
  const document = generated as OpenApiDocument;
  const codes = Object.keys(ERROR_CATALOGUE) as ErrorCode[];
  const types = [...new Set(codes.map((code) => ERROR_CATALOGUE[code].type))];
  document.components = {
    ...document.components,
    schemas: {
      ...document.components?.['schemas'],
      Error: {
        type: 'object',
        required: ['error'],
        additionalProperties: false,
        properties: {
          error: {
            type: 'object',
            required: ['type', 'code', 'message', 'requestId'],
            additionalProperties: false,
            properties: {
              type: { type: 'string', enum: types },
              code: { type: 'string', enum: codes },
              message: { type: 'string' },
              param: { type: 'string', description: 'The JSON path of the field at fault.' },
              requestId: { type: 'string' },
            },
          },
        },
      },
    },
    responses: {
      ...document.components?.['responses'],
      Error: {
        description: 'An error, in the body of contract section 3.',
        headers: {
          'Request-Id': { schema: { type: 'string' }, description: 'Also in the body.' },
        },
        content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
      },
    },
  };
  for (const operations of Object.values(document.paths ?? {})) {
    for (const [method, operation] of Object.entries(operations)) {
      if (!HTTP_METHODS.has(method)) continue;
      // Contract section 5: every mutating route takes a key (the authorize callback's is its
      // networkTransactionId, but the header is accepted there too).
      if (MUTATING_METHODS.has(method)) {
        operation.parameters = [...(operation.parameters ?? []), IDEMPOTENCY_KEY_PARAMETER];
      }
      operation.responses = {
        ...operation.responses,
        default: { $ref: '#/components/responses/Error' },
      };
    }
  }
  return generated;
}
