import { randomBytes } from 'node:crypto';
import { loadConfig } from '../config/env.js';
import { createServer } from '../http/server.js';
import { createPgliteClient } from '../store/sql/pglite-client.js';
import { openStore } from '../store/store.js';

/**
 * `spendgate openapi`: the OpenAPI document as the server would serve it, without serving.
 * The document depends on the routes alone; an in-memory database stands in for the store,
 * so the command needs no settings and touches nothing. docs/openapi.json is its output.
 */
export async function openApiDocument(): Promise<unknown> {
  const store = await openStore({ client: await createPgliteClient(), masterKey: randomBytes(32) });
  const app = createServer(
    // No Redis: the prefix names nothing.
    { ...loadConfig({}), redisPrefix: 'spendgate-openapi', logLevel: 'silent' },
    { store, redis: null },
  );
  try {
    await app.ready();
    return app.swagger();
  } finally {
    await app.close();
    await store.close();
  }
}
