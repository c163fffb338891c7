import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { SpendgateError } from '../../core/index.js';
import type { ProcessorConnectionRecord, Store } from '../../store/store.js';
import { authOf } from '../auth.js';
import { respond } from '../idempotency.js';
import type { ProcessorLookups } from '../processors/lookups.js';
import { idParams, listOf } from '../schemas/common.js';
import {
  createProcessorBody,
  deletedProcessorObject,
  processorConnectionObject,
  processorConnectionWithSecretsObject,
  rotateProcessorBody,
} from '../schemas/processor.js';
import type { OperationId } from '../operation-docs/index.js';

/** A rotation's grace when none is given: a day to switch the processor's side over. */
const ROTATION_GRACE_S_DEFAULT = 24 * 3600;

/**
 * Processor connections (contract v1.2, section 17): create, list, retrieve, delete, rotate.
 * The secrets are answered once, at creation and at rotation; the idempotency record keeps the
 * connection without them, as Create Webhook keeps its endpoint without its secret.
 */
/**
 * `lookups`: what the processors' doors keep in memory; a delete or a rotation here forgets
 * the connection's secrets once it has committed (another process's within its bound).
 */
export function registerProcessorRoutes(
  app: FastifyInstance,
  store: Store,
  lookups: ProcessorLookups,
): void {
  const routes = app.withTypeProvider<ZodTypeProvider>();

  routes.post('/v1/processors', createRoute, async (request, reply) => {
    const { scope } = authOf(request);
    const { processor, mode, ...given } = request.body;
    const secrets = definedOf(given);
    checkSecretsOf(processor, secrets);
    if (mode !== scope.mode)
      throw new SpendgateError(
        'parameter_invalid',
        `The API key acts in ${scope.mode} mode; mode must be ${scope.mode}.`,
        'mode',
      );
    return respond(
      store,
      request,
      reply,
      201,
      async (operations) => {
        const created = await operations.createProcessorConnection(scope, { processor, secrets });
        return { ...presentConnection(created), secrets: { ...secrets } };
      },
      { forReplay: (created) => ({ ...created, secrets: undefined }) },
    );
  });

  routes.get('/v1/processors', listRoute, async (request) => {
    const data = await store.listProcessorConnections(authOf(request).scope);
    return {
      object: 'list' as const,
      data: data.map(presentConnection),
      hasMore: false,
      nextCursor: null,
    };
  });

  routes.get('/v1/processors/:id', getRoute, async (request) =>
    presentConnection(await store.getProcessorConnection(authOf(request).scope, request.params.id)),
  );

  routes.delete('/v1/processors/:id', deleteRoute, async (request, reply) => {
    const { scope } = authOf(request);
    const { id } = request.params;
    try {
      return await respond(store, request, reply, 200, async (operations) => {
        await operations.deleteProcessorConnection(scope, id);
        return { object: 'processor_connection' as const, id, deleted: true as const };
      });
    } finally {
      lookups.forget(id);
    }
  });

  registerRotateRoute(app, store, lookups);
}

/** Rotate: the processor's own secrets anew; the current ones verify through the grace. */
function registerRotateRoute(app: FastifyInstance, store: Store, lookups: ProcessorLookups): void {
  const routes = app.withTypeProvider<ZodTypeProvider>();
  routes.post('/v1/processors/:id/rotate', rotateRoute, async (request, reply) => {
    const { scope } = authOf(request);
    const { graceSeconds, ...given } = request.body;
    const secrets = definedOf(given);
    const graceMs = (graceSeconds ?? ROTATION_GRACE_S_DEFAULT) * 1000;
    try {
      return await respond(
        store,
        request,
        reply,
        200,
        async (operations) => {
          const current = await operations.getProcessorConnection(scope, request.params.id);
          checkSecretsOf(current.processor, secrets);
          const rotated = await operations.rotateProcessorSecrets(scope, current.id, {
            secrets,
            graceMs,
          });
          return { ...presentConnection(rotated), secrets: { ...secrets } };
        },
        { forReplay: (rotated) => ({ ...rotated, secrets: undefined }) },
      );
    } finally {
      // After the commit: a message read before it is not kept (lookups.ts, its epoch).
      lookups.forget(request.params.id);
    }
  });
}

/** The secrets a processor's connection keeps: a rotation gives the same ones. */
const SECRET_NAMES: Readonly<Record<ProcessorConnectionRecord['processor'], readonly string[]>> = {
  stripe: ['signingSecret', 'realtimeSigningSecret'],
  lithic: ['asaSecret', 'apiKey'],
  marqeta: ['username', 'password'],
};
const REQUIRED_SECRETS: Readonly<
  Record<ProcessorConnectionRecord['processor'], readonly string[]>
> = {
  stripe: ['signingSecret'],
  lithic: ['asaSecret'],
  marqeta: ['username', 'password'],
};

function checkSecretsOf(
  processor: ProcessorConnectionRecord['processor'],
  secrets: Readonly<Record<string, string | undefined>>,
): void {
  const names = SECRET_NAMES[processor];
  const stranger = Object.keys(secrets).find((name) => !names.includes(name));
  if (stranger !== undefined)
    throw new SpendgateError(
      'parameter_invalid',
      `A ${processor} connection has no secret ${stranger}.`,
      stranger,
    );
  const missing = REQUIRED_SECRETS[processor].find((name) => secrets[name] === undefined);
  if (missing !== undefined)
    throw new SpendgateError('parameter_missing', `${missing} is required.`, missing);
  for (const name of ['signingSecret', 'realtimeSigningSecret']) {
    const signing = secrets[name];
    if (signing !== undefined && !signing.startsWith('whsec_'))
      throw new SpendgateError(
        'parameter_invalid',
        'A Stripe signing secret starts with whsec_.',
        name,
      );
  }
}

/** The secrets given, without the optional ones left out. */
function definedOf(given: Readonly<Record<string, string | undefined>>): Record<string, string> {
  const secrets: Record<string, string> = {};
  for (const [name, value] of Object.entries(given)) if (value !== undefined) secrets[name] = value;
  return secrets;
}

function presentConnection(connection: ProcessorConnectionRecord) {
  const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
  return {
    id: connection.id,
    object: 'processor_connection' as const,
    processor: connection.processor,
    mode: connection.mode,
    url: `/v1/processors/${connection.processor}/${connection.id}`,
    createdAt: new Date(connection.createdAtMs).toISOString(),
    rotatedAt: iso(connection.rotatedAtMs),
    previousSecretsUntil: iso(connection.previousSecretsUntilMs),
  };
}

const writeScope = { config: { requiredScope: 'account:write' as const } };
// Reading a connection needs the scope that makes one: there is no narrower one (section 2).
const readScope = writeScope;

const createRoute = {
  ...writeScope,
  schema: {
    operationId: 'createProcessorConnection' satisfies OperationId,
    tags: ['processors'],
    body: createProcessorBody,
    response: { 201: processorConnectionWithSecretsObject },
  },
} as const;

const listRoute = {
  ...readScope,
  schema: {
    operationId: 'listProcessorConnections' satisfies OperationId,
    tags: ['processors'],
    response: { 200: listOf(processorConnectionObject) },
  },
} as const;

const getRoute = {
  ...readScope,
  schema: {
    operationId: 'getProcessorConnection' satisfies OperationId,
    tags: ['processors'],
    params: idParams,
    response: { 200: processorConnectionObject },
  },
} as const;

const deleteRoute = {
  ...writeScope,
  schema: {
    operationId: 'deleteProcessorConnection' satisfies OperationId,
    tags: ['processors'],
    params: idParams,
    response: { 200: deletedProcessorObject },
  },
} as const;

const rotateRoute = {
  ...writeScope,
  schema: {
    operationId: 'rotateProcessorSecrets' satisfies OperationId,
    tags: ['processors'],
    params: idParams,
    body: rotateProcessorBody,
    response: { 200: processorConnectionWithSecretsObject },
  },
} as const;
