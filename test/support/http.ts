import { randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
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
  /** One request with a key (and a JSON body when given); the body answered, parsed. */
  request(
    key: string,
    method: string,
    path: string,
    body?: unknown,
  ): Promise<{ status: number; headers: Headers; body: unknown }>;
  close(): Promise<void>;
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
    async request(key, method, path, body) {
      const response = await fetch(`${base}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${key}`,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
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
