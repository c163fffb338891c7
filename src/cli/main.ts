#!/usr/bin/env node
import { readFileSync } from 'node:fs';
import { ConfigError, loadConfig, type Settings } from '../config/env.js';
import { KEYS_USAGE, NotFoundError, UsageError } from './keys.js';
import { stderrProgress } from './progress.js';
import { ROLES, type Role } from './roles.js';

/*
 * The spendgate command.
 * - `spendgate serve [--role api|worker|all]`: the API on HOST:PORT (default 127.0.0.1:3000),
 *   the workers, or both (see serve.ts).
 * - `spendgate migrate`: applies the schema and prints what it applied.
 * - `spendgate openapi`: prints the OpenAPI document (see openapi.ts).
 * - `spendgate keys ...`: creates, lists and revokes API keys (see keys.ts), and rotates the
 *   master key (see rotate-master.ts).
 * - `spendgate reserves [--run] [--watch]`: the latest reconciliation of reserves (reserves.ts).
 * - `spendgate processors replay stripe FILE --to URL`: sends a processor's messages, signed
 *   (processors-replay.ts).
 * - `spendgate chain send ...`: test mode only, sends a deposit from an outside wallet on the
 *   test cluster (see chain-send.ts).
 *
 * Each command loads only the modules it needs (the database drivers, the workers and the
 * Solana runtime take a second or more to load), so `--help` and `openapi` answer at once.
 * Results go to stdout, what a command is doing and why it failed to stderr (progress.ts).
 */

async function runMigrate(config: Settings): Promise<void> {
  const [{ openDatabase }, { migrate }] = await Promise.all([
    import('./open-store.js'),
    import('../store/migrations/runner.js'),
  ]);
  const client = await openDatabase(config, stderrProgress());
  try {
    const report = await migrate(client);
    const applied =
      report.applied.length === 0 ? 'nothing to apply' : `applied ${report.applied.join(', ')}`;
    console.log(`${applied} (${report.alreadyApplied} already applied)`);
  } finally {
    await client.close();
  }
}

const USAGE = `usage: spendgate serve [--role api|worker|all] | spendgate migrate | spendgate openapi\n${KEYS_USAGE}\n       spendgate reserves [--run] [--watch [--every SECONDS]]\n       spendgate chain send --to ADDRESS --amount X --currency USDC|SOL [--rpc URL]\n       spendgate processors replay stripe|lithic|marqeta FILE --to URL [--card ID]\n       spendgate --help | --version`;

const HELP = `spendgate: a card authorization engine for treasury vaults on Solana (USDC, SOL).

commands:
  serve [--role api|worker|all]   the REST API on HOST:PORT, the workers (settlement, Solana
                                  transfers, webhooks, maintenance), or both (the default);
                                  the worker role answers /healthz, /readyz, /metrics on
                                  WORKER_PORT
  migrate                         applies the database schema and says what it applied
  openapi                         prints the OpenAPI document (needs no settings, opens no
                                  database)
  keys create --account NAME --mode test|live [--scopes a,b] [--create-account]
                                  prints a new API key once; --create-account makes NAME
  keys list --account NAME        the account's keys (never their secrets)
  keys revoke KEY_ID              revokes a key
  keys rotate-master [--batch-size N]
                                  re-wraps every vault key and secret under the current
                                  master key while servers run (docs/operations.md); on the
                                  embedded database, makes the new key itself
  reserves [--run] [--watch [--every SECONDS]]
                                  the latest reconciliation of the treasury on chain against
                                  what the ledger owes, per mode and currency
                                  (docs/reserves.md); --run asks a worker for one now and
                                  waits for it; --watch redraws it every 5 s (1-60) until
                                  Ctrl-C
  chain send --to ADDRESS --amount X --currency USDC|SOL [--rpc URL]
                                  test mode only: sends a deposit from a new outside wallet
                                  (funded by the test cluster's faucets) to ADDRESS, e.g. a
                                  vault's depositAddress, on SOLANA_TEST_RPC_URL or --rpc
  processors replay stripe FILE --to URL [--card ID]
                                  sends a recorded sequence of Stripe Issuing events
                                  (docs/processors/), each signed as Stripe signs with
                                  SPENDGATE_REPLAY_SECRET, and prints each answer
  --version                       prints the version

settings (environment): DATABASE_URL (else the embedded database in SPENDGATE_DATA_DIR,
./data by default), DATABASE_READ_URL, SPENDGATE_MASTER_KEY,
SPENDGATE_MASTER_KEY_DECRYPT_ONLY, REDIS_URL (or REDIS_CLUSTER_NODES), REDIS_PREFIX, PORT,
HOST, WORKER_PORT, LOG_LEVEL, SPENDGATE_MODES, AUTHORIZE_BUDGET_MS,
STAND_IN, SOLANA_RPC_URL, SOLANA_TEST_RPC_URL, SOLANA_TREASURY_KEY and the rest listed in
README.md.
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

async function runKeysCommand(argv: readonly string[]): Promise<void> {
  if (argv[0] === 'rotate-master') {
    const { runRotateMaster } = await import('./rotate-master.js');
    const result = await runRotateMaster(loadConfig(), argv.slice(1), stderrProgress());
    for (const line of result.lines) console.log(line);
    process.exitCode = result.exitCode;
    return;
  }
  const [{ openConfiguredStore }, { runKeys }] = await Promise.all([
    import('./open-store.js'),
    import('./keys.js'),
  ]);
  const store = await openConfiguredStore(loadConfig(), { progress: stderrProgress() });
  try {
    for (const line of await runKeys(store, argv)) console.log(line);
  } finally {
    await store.close();
  }
}

async function runReservesCommand(argv: readonly string[]): Promise<void> {
  const [{ openConfiguredStore }, reserves] = await Promise.all([
    import('./open-store.js'),
    import('./reserves.js'),
  ]);
  const args = reserves.parseReservesArgs(argv);
  const store = await openConfiguredStore(loadConfig(), { progress: stderrProgress() });
  const stop = new AbortController();
  const onSignal = (): void => {
    stop.abort();
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    process.exitCode = await reserves.runReserves(
      store,
      args,
      {
        // Redrawn in place: the cursor home, the screen cleared, then the table.
        table: (lines, redraw) =>
          process.stdout.write(`${redraw ? '\x1b[H\x1b[2J' : ''}${lines.join('\n')}\n`),
        warn: (message) => {
          console.error(message);
        },
      },
      stop.signal,
    );
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    await store.close();
  }
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
    case 'serve': {
      const role = roleOf(argv.slice(1));
      const settings = loadConfig();
      const { serve } = await import('./serve.js');
      await serve(settings, role);
      return;
    }
    case 'migrate':
      await runMigrate(loadConfig());
      return;
    case 'openapi': {
      const { openApiDocument } = await import('./openapi.js');
      process.stdout.write(`${JSON.stringify(await openApiDocument(), null, 2)}\n`);
      return;
    }
    case 'keys':
      await runKeysCommand(argv.slice(1));
      return;
    case 'reserves':
      await runReservesCommand(argv.slice(1));
      return;
    case 'chain': {
      const { runChainSend } = await import('./chain-send.js');
      for (const line of await runChainSend(loadConfig(), argv.slice(1))) console.log(line);
      return;
    }
    case 'processors': {
      const { runProcessorsReplay } = await import('./processors-replay.js');
      const result = await runProcessorsReplay(argv.slice(1), process.env);
      for (const line of result.lines) console.log(line);
      process.exitCode = result.exitCode;
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
  // A failure the command can explain (a setting, an unreachable database, a data folder in
  // use, a name that names nothing) is one line; anything else is a bug, shown whole.
  if (error instanceof ConfigError || error instanceof NotFoundError) {
    console.error(`spendgate: ${error.message}`);
  } else {
    console.error(error);
  }
  process.exit(1);
});
