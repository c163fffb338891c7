import { loadConfig } from '../config/env.js';
import { createServer } from '../http/server.js';
import type { Store } from '../store/store.js';

/**
 * `spendgate openapi`: the OpenAPI document as the server would serve it, without serving.
 * The document depends on the routes alone, and the routes only keep the store to call it
 * when a request comes, which never happens here: so no database is opened (neither
 * DATABASE_URL nor the embedded one), the command needs no settings, and it answers in the
 * time it takes to load the routes. docs/openapi.json is its output.
 */
export async function openApiDocument(): Promise<unknown> {
  const app = createServer(
    // No Redis: the prefix names nothing.
    { ...loadConfig({}), redisPrefix: 'spendgate-openapi', logLevel: 'silent' },
    { store: storeWithoutDatabase(), redis: null },
  );
  try {
    await app.ready();
    return app.swagger();
  } finally {
    await app.close();
  }
}

/**
 * A store with no database behind it. Registering the routes may subscribe to the store (the
 * server observes authorization batches for its metrics, and unsubscribes on close), so each
 * of its methods does nothing and returns a function that does nothing; no request is served,
 * so no operation that would need a database is ever called.
 */
function storeWithoutDatabase(): Store {
  const nothing = (): (() => void) => () => undefined;
  return new Proxy({} as Store, {
    // Not a promise: `await` and Promise.resolve look for `then`.
    get: (_target, property) => (property === 'then' ? undefined : nothing),
  });
}
