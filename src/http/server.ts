import { maxHeaderSize } from 'node:http';
import type { Duplex } from 'node:stream';
import { pino } from 'pino';
import Fastify, {
  LogController,
  type FastifyBaseLogger,
  type FastifyError,
  type FastifyInstance,
  type FastifyReply,
} from 'fastify';
import { ERROR_CATALOGUE, SpendgateError, type ErrorCode } from '../core/index.js';
import type { Config } from '../config/env.js';
import { newId } from '../ids.js';
import type { Store } from '../store/store.js';
import { serializerCompiler, validatorCompiler } from 'fastify-type-provider-zod';
import type { RedisConnection } from '../redis.js';
import { KEY_CACHE_MS_DEFAULT, registerAuth, registerScopeCheck } from './auth.js';
import { registerHealth } from './health.js';
import { errorBody } from './error-body.js';
import { registerJsonBody } from './json-body.js';
import { bufferedStdout } from './log-destination.js';
import { createMetrics, observeReplicaReads, type Metrics } from './metrics.js';
import { registerOpenApi } from './openapi.js';
import { registerAccountRoutes } from './routes/account.js';
import { registerApiKeyRoutes } from './routes/api-key.js';
import { registerConsole } from './console.js';
import { EventHub } from './event-hub.js';
import { registerEventStreamRoutes } from './routes/event-stream.js';
import { registerRateLimits } from './rate-limits.js';
import { refuseBodiesWithoutSchema } from './empty-body.js';
import { registerAuthorizationRoutes } from './routes/authorizations.js';
import type { Tracing } from './tracing/provider.js';
import { registerRequestSpans } from './tracing/request-spans.js';
import { registerClearingRoutes } from './routes/clearing.js';
import { registerCardDisplayRoutes } from './routes/card-display.js';
import { registerCardPolicyRoutes } from './routes/card-policies.js';
import { registerBacktestRoutes } from './routes/backtests.js';
import { registerCardRoutes } from './routes/cards.js';
import { registerPolicyRoutes } from './routes/policies.js';
import { registerProcessorRoutes } from './routes/processors.js';
import { registerProcessorMessageRoutes } from './processors/register.js';
import type { StandInRecords } from './stand-in-records.js';
import { keptStandInRecords } from './stand-in-wiring.js';
import { registerPolicyHistoryRoutes } from './routes/policy-history.js';
import { registerRateLimitRoutes } from './routes/rate-limits.js';
import { registerRuleTemplateRoutes } from './routes/rule-templates.js';
import { registerSettlementRoutes } from './routes/settlements.js';
import { registerSimulateDepositRoutes } from './routes/simulate-deposits.js';
import { registerTransactionRoutes } from './routes/transactions.js';
import { registerTransferRoutes } from './routes/transfers.js';
import { registerTwoFactorRoutes } from './routes/two-factor.js';
import { registerWebhookRoutes } from './routes/webhooks.js';
import { registerVaultBalanceRoutes } from './routes/vault-balances.js';
import { registerVaultDepositRoutes } from './routes/vault-deposits.js';
import { registerVaultRoutes } from './routes/vaults.js';
import { validationError } from './validation-errors.js';

/*
 * The HTTP adapter's platform: request ids, the contract's error body for every error the
 * framework raises, and health. Routes of the REST interface.
 */

/** Between two heartbeat comments of an event stream (proxies close idle connections). */
const EVENT_STREAM_HEARTBEAT_MS = 15_000;

/** Largest request body accepted (contract: 413 `payload_too_large` above it). */
export const BODY_BYTES_MAX = 1024 * 1024;

/** Framework error codes and the catalogue code each becomes. */
const FRAMEWORK_ERRORS: Readonly<Record<string, ErrorCode>> = {
  FST_ERR_CTP_INVALID_JSON_BODY: 'invalid_json',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'invalid_json',
  FST_ERR_CTP_BODY_TOO_LARGE: 'payload_too_large',
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'unsupported_media_type',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'parameter_invalid',
};

/**
 * Any other client error the framework raises (a 4xx FastifyError not named above): the
 * catalogue's code of its status where the contract has one, else the generic 400. Never a
 * 500, which would blame the server for the client's request.
 */
function clientErrorCode(statusCode: number | undefined): ErrorCode | undefined {
  if (statusCode === undefined || statusCode < 400 || statusCode >= 500) return undefined;
  if (statusCode === 413) return 'payload_too_large';
  if (statusCode === 415) return 'unsupported_media_type';
  return 'parameter_invalid';
}

export interface ServerDependencies {
  readonly store: Store;
  /** More routes under the same authentication: for services that embed spendgate, and tests. */
  readonly extraRoutes?: (api: FastifyInstance) => void;
  /** Redis (queues and rate limits); null when none is configured. /readyz reports it. */
  readonly redis?: RedisConnection | null;
  /** How long an accepted API key is remembered (auth.ts); 5 s by default, 0 for never. */
  readonly apiKeyCacheMs?: number;
  /**
   * Health, readiness and metrics only, no API (`serve --role worker`): the contract gives
   * every role the three, so that a worker can be probed and scraped like an API process.
   */
  readonly healthOnly?: boolean;
  /** Where log lines go; stdout by default. Tests read it to prove secrets never reach it. */
  readonly logStream?: LogStream;
  /**
   * OpenTelemetry tracing (tracing/provider.ts, startTracing): a span per sampled request;
   * absent or null, off, and no hook of it runs. The server shuts it down when it closes.
   */
  readonly tracing?: Tracing | null;
  /**
   * More registries served on /metrics after the server's own: the price book's (each feed's
   * age, price and confidence: cli/price-book.ts), which the HTTP adapter does not import.
   */
  readonly metricsRegistries?: readonly MetricsSource[];
}

/** What /metrics reads beside the server's registry (a prom-client Registry is one). */
export interface MetricsSource {
  metrics(): Promise<string>;
}

/** Where log lines go: a test's collector, or stdout in blocks (log-destination.ts). */
type LogStream = { write(line: string): void };

/** The settings the HTTP adapter reads (the rest of Config is the CLI's). */
export type ServerConfig = Pick<
  Config,
  'logLevel' | 'modes' | 'rateLimits' | 'redisPrefix' | 'authorize' | 'cardBin' | 'solanaRpcUrl'
>;

// The ids module draws its random bits from a pool: one system call per request was 2% of CPU.
const newRequestId = (): string => newId('request');

/**
 * Errors Node's HTTP parser raises before there is a request for Fastify to answer (headers
 * over Node's limit, a malformed request line, a request that took too long): answered on the
 * socket in the contract's error body with a Request-Id, never Node's or Fastify's own.
 *
 * The statuses Node would use (431, 408) are not in the contract's table (section 3), so each
 * is answered as 400 `parameter_invalid`, the generic client error that 431 and 408 refine
 * (RFC 6585 section 5 allows a server 400 for oversized headers; 413 would name the body,
 * which is not at fault).
 */
const CLIENT_ERROR_MESSAGES: Readonly<Record<string, string>> = {
  HPE_HEADER_OVERFLOW: `The request's headers are larger than the ${String(maxHeaderSize)} bytes the server accepts.`,
  ERR_HTTP_REQUEST_TIMEOUT: 'The request was not received in time.',
};

function answerClientError(
  log: FastifyBaseLogger,
  error: Error & { code?: string },
  socket: Duplex,
): void {
  // A reset connection has no one to answer.
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const requestId = newRequestId();
  log.debug({ code: error.code, requestId }, 'client error');
  // As Node does: never write into a response already under way on this connection.
  const inFlight = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  if (socket.writable && inFlight?.headersSent !== true) {
    const body = JSON.stringify(
      errorBody(
        'parameter_invalid',
        requestId,
        CLIENT_ERROR_MESSAGES[error.code ?? ''] ?? 'The request is not valid HTTP.',
      ),
    );
    socket.write(
      'HTTP/1.1 400 Bad Request\r\n' +
        'Content-Type: application/json; charset=utf-8\r\n' +
        `Content-Length: ${String(Buffer.byteLength(body))}\r\n` +
        `Request-Id: ${requestId}\r\n` +
        'Connection: close\r\n\r\n' +
        body,
    );
  }
  socket.destroy();
}

export function createServer(
  config: ServerConfig,
  dependencies: ServerDependencies,
): FastifyInstance {
  const logStream = dependencies.logStream ?? bufferedStdout();
  const app = Fastify({
    bodyLimit: BODY_BYTES_MAX,
    // A path id of any length Node accepts names nothing rather than being malformed (contract
    // v1.1: 404 of its kind, well formed or not); the router's own limit (100) answered 400.
    routerOptions: { maxParamLength: maxHeaderSize },
    genReqId: newRequestId,
    // One line per request (onResponse, below) instead of Fastify's two: at thousands of
    // authorizations a second, each line is a serialisation, a redaction pass and a write.
    logController: new LogController({ disableRequestLogging: true }),
    clientErrorHandler(this: FastifyInstance, error, socket) {
      answerClientError(this.log, error, socket);
    },
    // Errors the router raises before any hook runs (a URL with a malformed escape, such as
    // %ff): the contract's body too, never Fastify's own.
    frameworkErrors: (error, request, reply) => {
      answerFrameworkError(error, request.id, reply);
    },
    logger: loggerOptions(config, logStream),
  });

  registerRequestLog(app, config, logStream);
  const tracing = dependencies.tracing ?? null;
  if (tracing !== null) {
    registerRequestSpans(app, tracing);
    app.addHook('onClose', () => tracing.shutdown());
  }

  const metrics = createMetrics();
  registerHealth(app, {
    store: dependencies.store,
    redis: dependencies.redis ?? null,
    metrics,
    more: dependencies.metricsRegistries ?? [],
  });
  const unobserveReplica = observeReplicaReads(dependencies.store, metrics);
  app.addHook('onClose', (_instance, done) => {
    unobserveReplica();
    done();
  });

  if (dependencies.healthOnly !== true) {
    // One record of what this process told the network in stand-in, whichever door answered:
    // the authorize route and the processors' adapters (one journal file per process).
    const standIn = keptStandInRecords(app, dependencies.store, config.authorize);
    registerApi(app, config, dependencies, metrics, standIn);
    // Beside the API, outside its key plugin: a processor's signature is its authentication.
    registerProcessorMessageRoutes(app, dependencies.store, config.authorize, metrics, standIn);
  }

  registerErrorAnswers(app);
  return app;
}

/** An error the router raised: 400 in the contract's body, with the router's reason, cut short. */
function answerFrameworkError(error: Error, requestId: string, reply: FastifyReply): void {
  void reply
    .code(400)
    .header('Request-Id', requestId)
    .send(
      errorBody(
        'parameter_invalid',
        requestId,
        `The request is malformed: ${error.message.slice(0, 120)}`,
      ),
    );
}

/** The log's level and destination, and the fields it must never hold. */
function loggerOptions(config: ServerConfig, stream: LogStream) {
  return {
    level: config.logLevel,
    stream,
    // Never log credentials, card data or secrets, whatever a later route puts in a log line.
    redact: {
      paths: [
        'req.headers.authorization',
        'req.headers["x-two-factor-code"]',
        'headers.authorization',
        'headers["x-two-factor-code"]',
        '*.headers.authorization',
        '*.headers["x-two-factor-code"]',
        // A processor's signature and a connection's secrets (contract section 17).
        'req.headers["stripe-signature"]',
        '*.headers["stripe-signature"]',
        'req.headers["webhook-signature"]',
        '*.headers["webhook-signature"]',
        '*.signingSecret',
        '*.realtimeSigningSecret',
        '*.asaSecret',
        '*.password',
        '*.secrets',
        '*.number',
        '*.cvv',
        '*.secret',
        '*.token',
      ],
      censor: '[redacted]',
    },
  };
}

/**
 * A URL as the log may keep it: the value of a `token` query parameter (the card display
 * page's, a card's single-use authority) is replaced, whatever the route.
 */
export function loggableUrl(url: string): string {
  return url.replace(/([?&]token=)[^&#]*/gi, '$1[redacted]');
}

/**
 * The Request-Id header on every answer, and the one log line per request.
 *
 * The line goes through a logger of its own, without the redaction pass: every field of it is
 * named here (method, a loggable URL, status, time), none can hold a secret, and the pass,
 * whose wildcard paths walk the whole line, was 3% of the server's busy time at thousands of
 * authorizations a second (docs/performance.md). Every other line keeps the redaction.
 */
function registerRequestLog(app: FastifyInstance, config: ServerConfig, stream: LogStream): void {
  const requestLine = pino({ level: config.logLevel }, stream);
  app.addHook('onRequest', async (request, reply) => {
    reply.header('Request-Id', request.id);
  });
  app.addHook('onResponse', async (request, reply) => {
    requestLine.info(
      {
        reqId: request.id,
        req: { method: request.method, url: loggableUrl(request.url) },
        res: { statusCode: reply.statusCode },
        responseTimeMs: Math.round(reply.elapsedTime * 1000) / 1000,
      },
      'request completed',
    );
  });
}

/** The contract's error body for an unknown route and for every error a handler throws. */
function registerErrorAnswers(app: FastifyInstance): void {
  app.setNotFoundHandler(async (request, reply) => {
    const message = `No route ${request.method} ${request.url.split('?')[0] ?? ''}.`;
    return reply.code(404).send(errorBody('route_not_found', request.id, message.slice(0, 200)));
  });

  app.setErrorHandler(async (error: FastifyError, request, reply) => {
    if (error.validation !== undefined) {
      const refusal = validationError(error, request);
      return reply
        .code(refusal.status)
        .send(errorBody(refusal.code, request.id, refusal.message, refusal.param));
    }
    if (error instanceof SpendgateError) {
      return reply
        .code(error.status)
        .send(errorBody(error.code, request.id, error.message, error.param));
    }
    const code = FRAMEWORK_ERRORS[error.code] ?? clientErrorCode(error.statusCode);
    if (code !== undefined) {
      return reply.code(ERROR_CATALOGUE[code].status).send(errorBody(code, request.id));
    }
    // Anything else is a bug: log it in full, answer without internals.
    request.log.error({ err: error }, 'unhandled error');
    return reply.code(500).send(errorBody('internal_error', request.id));
  });
}

/** The REST interface: the JSON body, the OpenAPI document, authentication and every route. */
/**
 * The authorize batches' sizes, in the server's metrics. Removed on close: a store outlives its
 * servers (tests, embedding services), and must not keep feeding a closed server's registry.
 */
function observeBatchSizes(app: FastifyInstance, store: Store, metrics: Metrics): void {
  const unobserve = store.observeAuthorizeBatches((size) => {
    metrics.authorizeBatchRequests.observe(size);
  });
  app.addHook('onClose', (_instance, done) => {
    unobserve();
    done();
  });
}

function registerApi(
  app: FastifyInstance,
  config: ServerConfig,
  dependencies: ServerDependencies,
  metrics: Metrics,
  standIn: StandInRecords,
): void {
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  observeBatchSizes(app, dependencies.store, metrics);
  registerJsonBody(app);
  refuseBodiesWithoutSchema(app);
  // The document must see every route, so it is registered before them.
  registerOpenApi(app);
  // The console's static page (outside /v1: it needs no key; it asks for one in the page).
  registerConsole(app);
  void app.register((api, _options, done) => {
    registerAuth(api, {
      store: dependencies.store,
      modes: new Set(config.modes),
      keyCacheMs: dependencies.apiKeyCacheMs ?? KEY_CACHE_MS_DEFAULT,
    });
    // Authentication, the rate limit and the scope check run in onRequest, in this order,
    // before the body is read: the count is per key, and counts scope refusals too.
    registerRateLimits(api, {
      redis: dependencies.redis ?? null,
      redisPrefix: config.redisPrefix,
      settings: config.rateLimits,
      refusals: metrics.rateLimitRefusals,
    });
    registerScopeCheck(api);
    registerRateLimitRoutes(api);
    registerAccountRoutes(api, dependencies.store);
    registerApiKeyRoutes(api);
    registerVaultRoutes(api, dependencies.store, { solanaRpcUrl: config.solanaRpcUrl });
    registerVaultBalanceRoutes(api, dependencies.store);
    registerVaultDepositRoutes(api, dependencies.store);
    registerPolicyRoutes(api, dependencies.store);
    registerPolicyHistoryRoutes(api, dependencies.store, 'vault');
    registerBacktestRoutes(api, dependencies.store);
    // The store's library: the templates its policies may name, the built-in ones by default.
    registerRuleTemplateRoutes(api, () => dependencies.store.ruleTemplates());
    registerTransferRoutes(api, dependencies.store, { solanaRpcUrl: config.solanaRpcUrl });
    registerTransactionRoutes(api, dependencies.store);
    registerSimulateDepositRoutes(api, dependencies.store);
    registerCardRoutes(api, dependencies.store, { cardBin: config.cardBin });
    registerCardDisplayRoutes(api, dependencies.store);
    registerCardPolicyRoutes(api, dependencies.store);
    registerPolicyHistoryRoutes(api, dependencies.store, 'card');
    registerAuthorizationRoutes(api, dependencies.store, config.authorize, metrics, standIn);
    registerClearingRoutes(api, dependencies.store);
    registerWebhookRoutes(api, dependencies.store);
    registerProcessorRoutes(api, dependencies.store);
    registerSettlementRoutes(api, dependencies.store);
    registerTwoFactorRoutes(api, dependencies.store);
    registerEventStreamRoutes(api, {
      hub: new EventHub(dependencies.store),
      heartbeatMs: EVENT_STREAM_HEARTBEAT_MS,
      store: dependencies.store,
    });
    dependencies.extraRoutes?.(api);
    done();
  });
}
