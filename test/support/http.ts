import { randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll } from 'vitest';
import type { Redis } from 'ioredis';
import type { Scope } from '../../src/core/index.js';
import { createServer } from '../../src/http/server.js';
import type { ApiScope } from '../../src/store/ops/accounts.js';
import { openStore, type Store } from '../../src/store/store.js';
import { testDatabase, type TestDatabase } from './databases.js';

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

export async function startTestService(
  options: {
    modes?: ('test' | 'live')[];
    configure?: (app: FastifyInstance) => void;
    /** The store's clock, epoch milliseconds; the real one by default. */
    clock?: () => number;
    /** A Redis client for /readyz; none by default. */
    redis?: Redis;
    /** Log level and destination, to read what the service logs; silent by default. */
    log?: { level: 'info' | 'debug' | 'trace'; stream: { write(line: string): void } };
  } = {},
): Promise<TestService> {
  const database: TestDatabase = testDatabase('pg');
  const store = await openStore({
    client: await database.client(),
    masterKey: randomBytes(32),
    ...(options.clock === undefined ? {} : { clock: options.clock }),
  });
  const app = createServer(
    { logLevel: options.log?.level ?? 'silent', modes: options.modes ?? ['test', 'live'] },
    {
      store,
      ...(options.configure === undefined ? {} : { extraRoutes: options.configure }),
      ...(options.log === undefined ? {} : { logStream: options.log.stream }),
      ...(options.redis === undefined ? {} : { redis: options.redis }),
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
      await database.close();
    },
  };
}
