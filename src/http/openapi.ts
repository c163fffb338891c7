import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import { jsonSchemaTransform, jsonSchemaTransformObject } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { ERROR_CATALOGUE, type ErrorCode } from '../core/index.js';
import { packageVersion } from '../package-version.js';
import {
  ERROR_EXAMPLES,
  EXAMPLE_REQUEST_ID,
  OPERATION_DOCS,
  type ErrorExample,
  type OperationDoc,
} from './operation-docs/index.js';
import { POLICY_DOCUMENT_COMPONENT, policyJsonSchemas } from './openapi-policy-schema.js';
import { policyBody } from './schemas/policy.js';

/**
 * The OpenAPI 3.1 document, generated from the routes' zod schemas (the same schemas that
 * validate requests), served at GET /v1/openapi.json without a key. Registered on the root
 * instance, before the routes, with the reference page at /docs: the generator learns routes through an onRoute hook, which an
 * encapsulated plugin would keep from seeing its siblings' routes.
 */
const DOCUMENT_PATH = '/v1/openapi.json';

/**
 * Runs after @fastify/swagger-ui's initializer, which sets window.onload and forces the page's
 * document to its own `./json`: it wraps that onload so SwaggerUIBundle is given this address.
 * A script file, not inline, as the page's CSP allows only its own files.
 */
const DOCUMENT_ADDRESS_JS = `(function () {
  var initialize = window.onload;
  window.onload = function (event) {
    var bundle = window.SwaggerUIBundle;
    window.SwaggerUIBundle = Object.assign(function (config) {
      return bundle(Object.assign({}, config, { url: ${JSON.stringify(DOCUMENT_PATH)} }));
    }, bundle);
    if (typeof initialize === 'function') initialize.call(window, event);
  };
})();
`;

export function registerOpenApi(app: FastifyInstance): void {
  void app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'spendgate',
        version: packageVersion(),
        description: API_DESCRIPTION,
      },
      tags: TAGS,
      components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } } },
      security: [{ bearer: [] }],
    },
    transform: withRequiredScope,
    transformObject: (input) =>
      withOperationDocs(withPolicySchema(withErrorResponses(jsonSchemaTransformObject(input)))),
  });
  // The API reference page, from the same document; its assets are served from node_modules,
  // so it works on a machine without internet. A strict CSP: the page loads nothing foreign.
  // BaseLayout, without the standalone top bar: the bar's logo is an SVG with an inline
  // <style>, which the CSP refuses (an error in the console), and its URL box would only load
  // other documents into a page that documents this one.
  void app.register(swaggerUi, {
    routePrefix: '/docs',
    staticCSP: true,
    uiConfig: { deepLinking: true, defaultModelsExpandDepth: 0, layout: 'BaseLayout' },
    // The page reads and links the document at its one address, /v1/openapi.json.
    theme: { js: [{ filename: 'document-address.js', content: DOCUMENT_ADDRESS_JS }] },
    // The plugin's own copy at /docs/json answers with that address, so a link to it still works.
    uiHooks: {
      onRequest: (request, reply, done) => {
        if (request.url.split('?', 1)[0] === '/docs/json') {
          void reply.redirect(DOCUMENT_PATH, 308);
          return;
        }
        done();
      },
    },
  });
  // Outside the /v1 routes' plugin, where the auth hook lives: this route needs no key.
  app.get(DOCUMENT_PATH, { config: { public: true }, schema: { hide: true } }, () => app.swagger());
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
interface OpenApiOperation {
  operationId?: string;
  summary?: string;
  description?: string;
  security?: { bearer?: string[] }[];
  requestBody?: {
    required?: boolean;
    content?: Record<string, { schema?: unknown; example?: unknown }>;
  };
  responses?: Record<string, unknown>;
  parameters?: unknown[];
}
interface OpenApiDocument {
  paths?: Record<string, Record<string, OpenApiOperation>>;
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
        description:
          'Any error not named above, in the same body: `internal_error` (500) for a fault of ' +
          'the server, never with its details.',
        headers: {
          'Request-Id': { schema: { type: 'string' }, description: 'Also in the body.' },
        },
        content: {
          'application/json': {
            schema: { $ref: '#/components/schemas/Error' },
            example: {
              error: {
                type: ERROR_CATALOGUE.internal_error.type,
                code: 'internal_error',
                message: ERROR_EXAMPLES.internal_error.message,
                requestId: EXAMPLE_REQUEST_ID,
              },
            },
          },
        },
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

/** The page's introduction: what a newcomer needs before the first call. */
const API_DESCRIPTION = [
  'Treasury vaults and virtual cards on digital assets (USDC and SOL on Solana): card networks',
  'ask the authorize endpoint to approve or decline a card transaction, and each vault answers',
  'from its authorization policy.',
  '',
  '**Keys.** Send `Authorization: Bearer sk_test_...` (or `sk_live_...`); a key sees its own',
  "account's objects in its own mode only. Each operation names the scope its key needs;",
  '`npx spendgate keys create` makes keys. Without a valid key: 401; outside its scopes: 403.',
  '',
  '**Errors.** Every error has one body, `{ "error": { type, code, message, param, requestId } }`;',
  'branch on `code`. Each operation lists the codes it answers, with an example of each.',
  '',
  '**Retries.** Mutating operations take `Idempotency-Key`: the same key and request within 24',
  'hours answers the stored response with `Idempotent-Replayed: true`.',
  '',
  '**Lists** answer `{ object: "list", data, hasMore, nextCursor }`: pass `nextCursor` as',
  '`startingAfter` for the next page, `limit` 1-100 (default 10).',
  '',
  '**Amounts** are decimal strings (`"125.50"`), never rounded: send a string or a number of at',
  'most 15 significant digits.',
  '',
  '**Policies.** The `PolicyDocument` schema is the format of Set Policy and Simulate Policy;',
  'List Rule Templates shows the templates a policy can use.',
].join('\n');

/** The page's sections, in the order a newcomer meets them. */
const TAGS = [
  { name: 'account', description: 'The key, its account, rate limit and two-factor.' },
  { name: 'vaults', description: 'Vaults of one currency, their balances and history.' },
  {
    name: 'policies',
    description: "A vault's authorization policy, its simulation, and the rule library.",
  },
  { name: 'cards', description: 'Virtual cards that spend from a vault.' },
  {
    name: 'authorizations',
    description: "The card network's callbacks: authorize, capture, reverse, clearing batches.",
  },
  { name: 'transfers', description: 'Money between vaults, and to Solana addresses.' },
  { name: 'transactions', description: "Every movement of the account's vaults." },
  { name: 'webhooks', description: 'Signed event deliveries to your endpoints.' },
  {
    name: 'processors',
    description:
      'Connections of card processors (Stripe Issuing, Lithic, Marqeta) and their secrets.',
  },
  { name: 'events', description: 'The live stream of decisions, as server-sent events.' },
  { name: 'testing', description: 'Test mode only.' },
];

const policyBodyDescription = z.globalRegistry.get(policyBody)?.description;

/**
 * The policy body is an open object in the HTTP schema (the core's compiler is its validator,
 * see openapi-policy-schema.ts); in the document, wherever it stands, it is the policy
 * document's generated schema, and the Policy object carries the document's fields.
 */
function withPolicySchema<T>(generated: T): T {
  const document = generated as OpenApiDocument;
  const components = policyJsonSchemas();
  const schemas: Record<string, unknown> = {
    ...document.components?.['schemas'],
    ...structuredClone(components),
  };
  const policyDocument = components[POLICY_DOCUMENT_COMPONENT] as {
    properties: Record<string, unknown>;
  };
  for (const name of ['Policy', 'PolicyInput']) {
    const policy = schemas[name] as { properties?: Record<string, unknown> } | undefined;
    if (policy?.properties === undefined) continue;
    schemas[name] = {
      ...policy,
      properties: { ...policy.properties, ...structuredClone(policyDocument.properties) },
    };
  }
  document.components = { ...document.components, schemas };
  // The component's own description, which says more than the route's one line.
  const reference = { $ref: `#/components/schemas/${POLICY_DOCUMENT_COMPONENT}` };
  const replace = (node: unknown, depth: number): unknown => {
    // Request schemas are a few levels deep; the bound only keeps a cycle from looping.
    if (depth > 32 || typeof node !== 'object' || node === null) return node;
    const record = node as Record<string, unknown>;
    if (policyBodyDescription !== undefined && record['description'] === policyBodyDescription) {
      return { ...reference };
    }
    for (const [key, value] of Object.entries(record)) record[key] = replace(value, depth + 1);
    return record;
  };
  for (const operation of operationsOf(document)) {
    for (const media of Object.values(operation.requestBody?.content ?? {})) {
      media.schema = replace(media.schema, 0);
    }
  }
  // A document inside an object (a policy version's) is the policy document too.
  for (const [name, schema] of Object.entries(schemas)) {
    if (name !== POLICY_DOCUMENT_COMPONENT) schemas[name] = replace(schema, 0);
  }
  return generated;
}

function operationsOf(document: OpenApiDocument): OpenApiOperation[] {
  return Object.values(document.paths ?? {}).flatMap((operations) =>
    Object.entries(operations)
      .filter(([method]) => HTTP_METHODS.has(method))
      .map(([, operation]) => operation),
  );
}

/** The errors every operation of its kind can answer, as the platform raises them. */
function platformErrors(operation: OpenApiOperation): (ErrorCode | ErrorExample)[] {
  const errors: (ErrorCode | ErrorExample)[] = [];
  // Every documented operation needs a key: the public routes are hidden from the document.
  if (operation.security?.length !== 0) {
    errors.push('missing_api_key', 'invalid_api_key', 'expired_api_key', 'rate_limit_exceeded');
  }
  if ((operation.security?.[0]?.bearer ?? []).length > 0) errors.push('insufficient_scope');
  errors.push(...validationErrors(operation));
  if (operation.requestBody !== undefined) {
    errors.push('invalid_json', 'payload_too_large', 'unsupported_media_type');
  }
  return errors;
}

function acceptsNull(schema: unknown): boolean {
  const anyOf = (schema as { anyOf?: unknown } | undefined)?.anyOf;
  return Array.isArray(anyOf) && anyOf.some((member) => (member as SchemaNode).type === 'null');
}

interface SchemaNode {
  type?: unknown;
  properties?: Record<string, SchemaNode>;
  required?: string[];
  maximum?: number;
}

/**
 * A schema refusal of this operation's own request, worded as validation-errors.ts words it:
 * a required body field left out, and a field of the wrong type. Derived from the operation's
 * schemas, so that an example never names a field the operation does not have.
 */
function validationErrors(operation: OpenApiOperation): ErrorExample[] {
  const body = operation.requestBody?.content?.['application/json']?.schema as
    SchemaNode | undefined;
  const query = (operation.parameters ?? []).filter(
    (parameter): parameter is { in: string; name: string; schema?: SchemaNode } =>
      (parameter as { in?: string }).in === 'query',
  );
  const errors: ErrorExample[] = [];
  const required = body?.required?.[0];
  if (required !== undefined) {
    errors.push({
      code: 'parameter_missing',
      message: `${required} is required.`,
      param: required,
    });
  }
  const [field, schema] = Object.entries(body?.properties ?? {})[0] ?? [];
  if (field !== undefined) {
    const wrong = schema?.type === 'string' ? 'expected string, received number' : 'received null';
    errors.push({
      code: 'parameter_invalid',
      message: `${field}: Invalid input: ${wrong}`,
      param: field,
    });
  } else if (body !== undefined) {
    errors.push({
      code: 'parameter_invalid',
      message: 'The body is invalid: Invalid input: expected object, received array',
    });
  } else if (query[0] !== undefined) {
    const { name, schema: limit } = query[0];
    errors.push({
      code: 'parameter_invalid',
      message:
        limit?.maximum === undefined
          ? `${name}: Invalid input`
          : `${name}: Too big: expected number to be <=${String(limit.maximum)}`,
      param: name,
    });
  }
  return errors;
}

function errorExampleOf(entry: ErrorCode | ErrorExample): ErrorExample {
  return typeof entry === 'string' ? { code: entry, ...ERROR_EXAMPLES[entry] } : entry;
}

/** The named error responses of an operation, one per status, an example of each code. */
function errorResponses(
  doc: OperationDoc | undefined,
  operation: OpenApiOperation,
): Record<string, unknown> {
  const byCode = new Map<ErrorCode, ErrorExample>();
  // The operation's own examples first: they say more than the platform's.
  for (const entry of [...(doc?.errors ?? []), ...platformErrors(operation)]) {
    const example = errorExampleOf(entry);
    if (!byCode.has(example.code)) byCode.set(example.code, example);
  }
  const byStatus = new Map<number, ErrorExample[]>();
  for (const example of byCode.values()) {
    const status = ERROR_CATALOGUE[example.code].status;
    byStatus.set(status, [...(byStatus.get(status) ?? []), example]);
  }
  const responses: Record<string, unknown> = {};
  for (const [status, examples] of [...byStatus].sort(([a], [b]) => a - b)) {
    responses[String(status)] = {
      description: examples
        .map(({ code }) => `\`${code}\`: ${ERROR_CATALOGUE[code].message}`)
        .join('\n\n'),
      headers: {
        'Request-Id': { schema: { type: 'string' }, description: 'Also in the body.' },
        ...(status === 429
          ? {
              'Retry-After': { schema: { type: 'integer' }, description: 'Seconds to wait.' },
            }
          : {}),
      },
      content: {
        'application/json': {
          schema: { $ref: '#/components/schemas/Error' },
          examples: Object.fromEntries(
            examples.map(({ code, message, param }) => [
              code,
              {
                summary: code,
                value: {
                  error: {
                    type: ERROR_CATALOGUE[code].type,
                    code,
                    message,
                    ...(param === undefined ? {} : { param }),
                    requestId: EXAMPLE_REQUEST_ID,
                  },
                },
              },
            ]),
          ),
        },
      },
    };
  }
  return responses;
}

/**
 * Each operation's summary, description, examples and named error responses from the table
 * in operation-docs/ (each resource's `routes/<resource>.docs.ts`). An operation without an entry (a route an embedding service adds)
 * keeps what the generator gave it; the test holds the service's own to the table.
 */
function withOperationDocs<T>(generated: T): T {
  const document = generated as OpenApiDocument;
  for (const operation of operationsOf(document)) {
    const doc =
      operation.operationId === undefined ? undefined : OPERATION_DOCS[operation.operationId];
    const responses = operation.responses ?? {};
    if (doc !== undefined) {
      operation.summary = doc.summary;
      operation.description = doc.description;
      for (const [status, response] of Object.entries(responses)) {
        if (!status.startsWith('2')) continue;
        const success = response as {
          description?: string;
          content?: Record<string, { example?: unknown }>;
        };
        success.description = doc.returns;
        const media = success.content?.['application/json'];
        if (media !== undefined) media.example = doc.example;
      }
      const requestMedia = operation.requestBody?.content?.['application/json'];
      // An operation that takes no body (empty-body.ts) shows the empty one.
      if (requestMedia !== undefined) requestMedia.example = doc.requestExample ?? {};
      // A body that may be null may be left out (freeze's reason, the empty body): say so,
      // so that a typed client does not demand one.
      if (operation.requestBody !== undefined && acceptsNull(requestMedia?.schema)) {
        operation.requestBody.required = false;
      }
    }
    // `default` stays last: the generic answer for what no status above names.
    const { default: fallback, ...rest } = responses;
    operation.responses = { ...rest, ...errorResponses(doc, operation), default: fallback };
  }
  return generated;
}
