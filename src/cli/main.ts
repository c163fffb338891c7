#!/usr/bin/env node
import { ConfigError, loadConfig, type Config } from '../config/env.js';
import { createServer } from '../http/server.js';
import { migrate } from '../store/migrations/runner.js';
import { openConfiguredStore, openDatabase } from './open-store.js';

/**
 * The spendgate command.
 * - `spendgate serve`: opens (and migrates) the store, serves HTTP on HOST:PORT (default
 *   127.0.0.1:3000), and stops gracefully on SIGTERM or SIGINT: in-flight requests finish,
 *   then the store closes and the process exits.
 * - `spendgate migrate`: applies the schema and prints what it applied.
 */
const SHUTDOWN_MS_MAX = 10_000;

async function serve(config: Config): Promise<void> {
  const store = await openConfiguredStore(config);
  const app = createServer(config);
  app.addHook('onClose', async () => {
    await store.close();
  });
  await app.listen({ port: config.port, host: config.host });
  app.log.info(
    { database: config.databaseUrl === null ? `embedded (${config.dataDir})` : 'postgresql' },
    'store open',
  );
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

const USAGE = 'usage: spendgate serve | spendgate migrate';

async function main(argv: readonly string[]): Promise<void> {
  const [command] = argv;
  switch (command) {
    case 'serve':
      await serve(loadConfig());
      return;
    case 'migrate':
      await runMigrate(loadConfig());
      return;
    default:
      console.error(USAGE);
      process.exitCode = 2;
  }
}

main(process.argv.slice(2)).catch((error: unknown) => {
  console.error(error instanceof ConfigError ? error.message : error);
  process.exit(1);
});
