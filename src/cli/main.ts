#!/usr/bin/env node
import { ConfigError, loadConfig } from '../config/env.js';
import { createServer } from '../http/server.js';

/**
 * `spendgate serve`: starts the HTTP service on HOST:PORT (default 127.0.0.1:3000) and stops
 * gracefully on SIGTERM or SIGINT (in-flight requests finish, then the process exits).
 */
const SHUTDOWN_MS_MAX = 10_000;

async function serve(): Promise<void> {
  const config = loadConfig();
  const app = createServer(config);
  await app.listen({ port: config.port, host: config.host });
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

const USAGE = 'usage: spendgate serve';

async function main(argv: readonly string[]): Promise<void> {
  const [command] = argv;
  switch (command) {
    case 'serve':
      await serve();
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
