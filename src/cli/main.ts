#!/usr/bin/env node
import { ConfigError, loadConfig, type Config } from '../config/env.js';
import { createRedis, redisAnswers } from '../http/health.js';
import { createServer } from '../http/server.js';
import { migrate } from '../store/migrations/runner.js';
import { KEYS_USAGE, runKeys, UsageError } from './keys.js';
import { openConfiguredStore, openDatabase } from './open-store.js';
import { openApiDocument } from './openapi.js';

/**
 * The spendgate command.
 * - `spendgate serve`: opens (and migrates) the store, serves HTTP on HOST:PORT (default
 *   127.0.0.1:3000), and stops gracefully on SIGTERM or SIGINT: in-flight requests finish,
 *   then the store closes and the process exits.
 * - `spendgate migrate`: applies the schema and prints what it applied.
 * - `spendgate openapi`: prints the OpenAPI document (see openapi.ts).
 * - `spendgate keys ...`: creates, lists and revokes API keys (see keys.ts).
 */
const SHUTDOWN_MS_MAX = 10_000;

async function serve(config: Config): Promise<void> {
  const store = await openConfiguredStore(config);
  if (config.databaseUrl === null && !(await store.hasAnyApiKey())) {
    // A newcomer's first start: a test key to call the API with at once, shown this once. On
    // stdout, never through the logger, which keeps secrets out of every log.
    const account = await store.findOrCreateAccount('default');
    const { key } = await store.createApiKey({ accountId: account.id, mode: 'test', scopes: [] });
    process.stdout.write(
      `\nspendgate: a first test key for account "default" (shown once; spendgate keys create makes more):\n\n  ${key}\n\n`,
    );
  }
  // Redis carries queues and rate limits; the service starts and serves without it (contract
  // section 15), and /readyz says so.
  const redis = createRedis(config.redisUrl);
  const app = createServer(config, { store, redis });
  app.addHook('onClose', async () => {
    redis.disconnect();
    await store.close();
  });
  await app.listen({ port: config.port, host: config.host });
  app.log.info(
    { database: config.databaseUrl === null ? `embedded (${config.dataDir})` : 'postgresql' },
    'store open',
  );
  if (!(await redisAnswers(redis))) {
    // Loudly (contract section 15): the service serves, but degraded until Redis answers.
    app.log.warn(
      'Redis is unreachable: rate limits are counted per process until it answers (see /readyz)',
    );
  }
  const stop = (signal: string) => {
    app.log.info({ signal }, 'shutting down');
    const force = setTimeout(() => process.exit(1), SHUTDOWN_MS_MAX);
    force.unref();
    void app.close().then(() => process.exit(0));
  };
  process.once('SIGTERM', () => {
    stop('SIGTERM');
  });
  process.once('SIGINT', () => {
    stop('SIGINT');
  });
}

async function runMigrate(config: Config): Promise<void> {
  const client = await openDatabase(config);
  try {
    const report = await migrate(client);
    const applied =
      report.applied.length === 0 ? 'nothing to apply' : `applied ${report.applied.join(', ')}`;
    console.log(`${applied} (${report.alreadyApplied} already applied)`);
  } finally {
    await client.close();
  }
}

const USAGE = `usage: spendgate serve | spendgate migrate | spendgate openapi\n${KEYS_USAGE}`;

async function main(argv: readonly string[]): Promise<void> {
  const [command] = argv;
  switch (command) {
    case 'serve':
      await serve(loadConfig());
      return;
    case 'migrate':
      await runMigrate(loadConfig());
      return;
    case 'openapi':
      process.stdout.write(`${JSON.stringify(await openApiDocument(), null, 2)}\n`);
      return;
    case 'keys': {
      const store = await openConfiguredStore(loadConfig());
      try {
        for (const line of await runKeys(store, argv.slice(1))) console.log(line);
      } finally {
        await store.close();
      }
      return;
    }
    default:
      console.error(USAGE);
      process.exitCode = 2;
  }
}

main(process.argv.slice(2)).catch((error: unknown) => {
  if (error instanceof UsageError) {
    console.error(error.message);
    process.exit(2);
  }
  console.error(error instanceof ConfigError ? error.message : error);
  process.exit(1);
});
