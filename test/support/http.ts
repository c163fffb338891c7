import { randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll } from 'vitest';
import type { HoldExpirySettings, Pricing, Scope, TemplateLibrary } from '../../src/core/index.js';
import { redisServer, type RateLimitSettings } from '../../src/config/env.js';
import { createRedis } from '../../src/http/health.js';
import type { RedisConnection } from '../../src/redis.js';
import { createServer, type ServerConfig, type ServerDependencies } from '../../src/http/server.js';
import type { Tracing } from '../../src/http/tracing/provider.js';
import type { ProcessorLookupSettings } from '../../src/http/processors/lookups.js';
import type { ApiScope } from '../../src/store/port/index.js';
import { openStore, type OpenedStore as Store } from '../../src/store/store.js';
import { testDatabase, type TestDatabase } from './databases.js';

/** A logger for workers under test that says nothing (their logs are not what is tested). */
export const SILENT_LOG = {
  warn: (): void => undefined,
  info: (): void => undefined,
  error: (): void => undefined,
};

/** The Redis every machine runs (the brief); CI starts it when it is down. */
export const LOCAL_REDIS_URL = 'redis://127.0.0.1:6379';

/**
 * The service over real HTTP on loopback, on a fresh PostgreSQL database of its own: what an
 * outside client sees. `key()` makes an account and an API key for it.
 */
export interface TestService {
  readonly base: string;
  readonly store: Store;
  readonly app: FastifyInstance;
  key(options?: {
    mode?: Scope['mode'];
    scopes?: ApiScope[];
    account?: string;
  }): Promise<{ key: string; scope: Scope }>;
  /** One request with a key (a JSON body and more headers when given); the body, parsed. */
  request(
    key: string,
    method: string,
    path: string,
    body?: unknown,
    headers?: Record<string, string>,
  ): Promise<{ status: number; headers: Headers; body: unknown }>;
  close(): Promise<void>;
}

export interface ServiceHarness<Json> {
  readonly service: TestService;
  readonly key: string;
  /** A request with the first key, or `keyOverride`; the body typed as `Json`. */
  readonly call: (
    method: string,
    path: string,
    body?: unknown,
    keyOverride?: string,
  ) => Promise<{ status: number; headers: Headers; body: Json }>;
}

/**
 * A describe block's service and its first account's key: started before the block's tests,
 * closed after them. `call` answers with the body typed as `Json`, the fields the tests read.
 */
export function useTestService<Json>(
  options: Parameters<typeof startTestService>[0] = {},
): ServiceHarness<Json> {
  let service: TestService | undefined;
  let key: string | undefined;
  beforeAll(async () => {
    service = await startTestService(options);
    ({ key } = await service.key());
  });
  afterAll(async () => {
    await service?.close();
  });
  const started = (): { service: TestService; key: string } => {
    if (service === undefined || key === undefined) throw new Error('used outside a test');
    return { service, key };
  };
  return {
    get service(): TestService {
      return started().service;
    },
    get key(): string {
      return started().key;
    },
    call: async (method, path, body, keyOverride) => {
      const answer = await started().service.request(
        keyOverride ?? started().key,
        method,
        path,
        body,
      );
      return { ...answer, body: answer.body as Json };
    },
  };
}

/** Generous enough that no test but the rate-limit tests ever meets a limit. */
const UNTHROTTLED: RateLimitSettings = {
  livePerSecond: 1_000_000,
  testPerSecond: 1_000_000,
  authorizationsPerSecond: 1_000_000,
};

/** A Redis key prefix of this test run's own: runs sharing one Redis never see each other. */
export function testRedisPrefix(): string {
  return `sgtest-${process.pid}-${randomBytes(4).toString('hex')}`;
}

/** The server settings of a test service, with the rate limits out of the way by default. */
export function testServerConfig(overrides: Partial<ServerConfig> = {}): ServerConfig {
  return {
    logLevel: 'silent',
    modes: ['test', 'live'],
    rateLimits: UNTHROTTLED,
    redisPrefix: testRedisPrefix(),
    authorize: { budgetMs: 1500, standIn: 'decline' },
    cardBin: '424242',
    solanaRpcUrl: null,
    ...overrides,
  };
}

export async function startTestService(
  options: {
    modes?: ('test' | 'live')[];
    configure?: (app: FastifyInstance) => void;
    /** The store's clock, epoch milliseconds; the real one by default. */
    clock?: () => number;
    /** The store's rule library; the built-in one by default. */
    templates?: TemplateLibrary;
    /** How long the store's holds live (HOLD_EXPIRY_HOURS and _LONG_HOURS); 7 and 31 days. */
    holdExpiry?: HoldExpirySettings;
    /** The store's prices (src/cli/price-book.ts); none: every conversion at a price declines. */
    pricing?: Pricing;
    /** The Redis for rate limits and /readyz; the local one by default, null for none. */
    redis?: RedisConnection | null;
    rateLimits?: RateLimitSettings;
    /** How long the server remembers an accepted key; its default (5 s) unless given. */
    apiKeyCacheMs?: number;
    /** How long the processors' doors keep secrets and card ties; the defaults unless given. */
    processorLookups?: ProcessorLookupSettings;
    /** More server settings: the authorization budget, the card BIN. */
    server?: Partial<ServerConfig>;
    /** Log level and destination, to read what the service logs; silent by default. */
    log?: { level: 'info' | 'debug' | 'trace'; stream: { write(line: string): void } };
    /** OpenTelemetry tracing (src/http/tracing); off by default. */
    tracing?: Tracing | null;
    /** More registries /metrics serves (a price book's, as `serve` passes it). */
    metricsRegistries?: ServerDependencies['metricsRegistries'];
  } = {},
): Promise<TestService> {
  const database: TestDatabase = testDatabase('pg');
  const store = await openStore({
    client: await database.client(),
    masterKey: randomBytes(32),
    ...(options.clock === undefined ? {} : { clock: options.clock }),
    ...(options.templates === undefined ? {} : { templates: options.templates }),
    ...(options.holdExpiry === undefined ? {} : { holdExpiry: options.holdExpiry }),
    ...(options.pricing === undefined ? {} : { pricing: options.pricing }),
  });
  // A client of the harness's own is closed with the service; one passed in is the caller's.
  const ownRedis = options.redis === undefined ? createRedis(redisServer(LOCAL_REDIS_URL)) : null;
  const app = createServer(
    testServerConfig({
      ...(options.modes === undefined ? {} : { modes: options.modes }),
      ...(options.log === undefined ? {} : { logLevel: options.log.level }),
      ...(options.rateLimits === undefined ? {} : { rateLimits: options.rateLimits }),
      ...options.server,
    }),
    {
      store,
      redis: ownRedis ?? options.redis ?? null,
      ...(options.apiKeyCacheMs === undefined ? {} : { apiKeyCacheMs: options.apiKeyCacheMs }),
      ...(options.processorLookups === undefined
        ? {}
        : { processorLookups: options.processorLookups }),
      ...(options.configure === undefined ? {} : { extraRoutes: options.configure }),
      ...(options.log === undefined ? {} : { logStream: options.log.stream }),
      ...(options.tracing === undefined ? {} : { tracing: options.tracing }),
      ...(options.metricsRegistries === undefined
        ? {}
        : { metricsRegistries: options.metricsRegistries }),
    },
  );
  const base = await app.listen({ port: 0, host: '127.0.0.1' });
  let accounts = 0;
  return {
    base,
    store,
    app,
    async key(keyOptions = {}) {
      accounts += 1;
      const account = await store.findOrCreateAccount(
        keyOptions.account ?? `http-${accounts}-${randomBytes(3).toString('hex')}`,
      );
      const mode = keyOptions.mode ?? 'test';
      const { key } = await store.createApiKey({
        accountId: account.id,
        mode,
        scopes: keyOptions.scopes ?? [],
      });
      return { key, scope: { accountId: account.id, mode } };
    },
    async request(key, method, path, body, headers = {}) {
      const response = await fetch(`${base}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${key}`,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
          ...headers,
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      return {
        status: response.status,
        headers: response.headers,
        body: await response.json(),
      };
    },
    async close() {
      await app.close();
      ownRedis?.disconnect();
      await database.close();
    },
  };
}
