#!/usr/bin/env node
import { readFileSync } from 'node:fs';
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

const USAGE = `usage: spendgate serve [--role api|worker|all] | spendgate migrate | spendgate openapi\n${KEYS_USAGE}\n       spendgate --help | --version`;

const HELP = `spendgate: a card authorization engine for treasury vaults on Solana (USDC, SOL).

commands:
  serve [--role api|worker|all]   the REST API on HOST:PORT, the workers (settlement, Solana
                                  transfers, webhooks, maintenance), or both (the default);
                                  the worker role answers /healthz, /readyz, /metrics on
                                  WORKER_PORT
  migrate                         applies the database schema and says what it applied
  openapi                         prints the OpenAPI document (needs no settings)
  keys create --account NAME --mode test|live [--scopes a,b] [--create-account]
                                  prints a new API key once; --create-account makes NAME
  keys list --account NAME        the account's keys (never their secrets)
  keys revoke KEY_ID              revokes a key
  --version                       prints the version

settings (environment): DATABASE_URL (else the embedded database in SPENDGATE_DATA_DIR,
./data by default), SPENDGATE_MASTER_KEY, REDIS_URL, REDIS_PREFIX, PORT, HOST, WORKER_PORT,
LOG_LEVEL, SPENDGATE_MODES, AUTHORIZE_BUDGET_MS, STAND_IN, SOLANA_RPC_URL,
SOLANA_TEST_RPC_URL, SOLANA_TREASURY_KEY and the rest listed in README.md.
exit codes: 0 done, 1 failed (the message says what to check), 2 a usage error.`;

function version(): string {
  // src/cli and dist/cli both sit two folders below the package's root.
  const manifest = JSON.parse(
    readFileSync(new URL('../../package.json', import.meta.url), 'utf8'),
  ) as { version: string };
  return manifest.version;
}

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
    case '--help':
    case '-h':
    case 'help':
      console.log(HELP);
      return;
    case '--version':
      console.log(version());
      return;
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
