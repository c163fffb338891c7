#!/usr/bin/env node
import { ConfigError, loadConfig, type Settings } from '../config/env.js';
import { migrate } from '../store/migrations/runner.js';
import { KEYS_USAGE, NotFoundError, runKeys, UsageError } from './keys.js';
import { openConfiguredStore, openDatabase } from './open-store.js';
import { ROLES, serve, type Role } from './serve.js';
import { openApiDocument } from './openapi.js';

/**
 * The spendgate command.
 * - `spendgate serve [--role api|worker|all]`: the API on HOST:PORT (default 127.0.0.1:3000),
 *   the workers, or both (see serve.ts).
 * - `spendgate migrate`: applies the schema and prints what it applied.
 * - `spendgate openapi`: prints the OpenAPI document (see openapi.ts).
 * - `spendgate keys ...`: creates, lists and revokes API keys (see keys.ts).
 */
async function runMigrate(config: Settings): Promise<void> {
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

const USAGE = `usage: spendgate serve [--role api|worker|all] | spendgate migrate | spendgate openapi\n${KEYS_USAGE}`;

function roleOf(args: readonly string[]): Role {
  if (args.length === 0) return 'all';
  const [flag, value] = args;
  const role = ROLES.find((candidate) => candidate === value);
  if (flag !== '--role' || role === undefined || args.length !== 2) throw new UsageError(USAGE);
  return role;
}

async function main(argv: readonly string[]): Promise<void> {
  const [command] = argv;
  switch (command) {
    case 'serve':
      await serve(loadConfig(), roleOf(argv.slice(1)));
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
  console.error(
    error instanceof ConfigError || error instanceof NotFoundError ? error.message : error,
  );
  process.exit(1);
});
