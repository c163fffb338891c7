#!/usr/bin/env node
import { packageVersion } from '../package-version.js';
import type { Settings } from '../config/env.js';
import type { Store } from '../store/store.js';
import { stderrProgress } from './progress.js';
import { ROLES, type Role } from './roles.js';
import { unknownWord } from './suggest.js';
import { UsageError } from './usage-error.js';

/*
 * The spendgate command.
 * - `spendgate serve [--role api|worker|all]`: the API on HOST:PORT (default 127.0.0.1:3000),
 *   the workers, or both (see serve.ts).
 * - `spendgate migrate`: applies the schema and prints what it applied.
 * - `spendgate openapi`: prints the OpenAPI document (see openapi.ts).
 * - `spendgate keys ...`: creates, lists and revokes API keys (see keys.ts), and rotates the
 *   master key (see rotate-master.ts).
 * - `spendgate reserves [--run] [--watch]`: the latest reconciliation of reserves (reserves.ts).
 * - `spendgate processors replay stripe|lithic|marqeta FILE --to URL`: sends a processor's messages, signed
 *   (processors-replay.ts).
 * - `spendgate chain send ...`: test mode only, sends a deposit from an outside wallet on the
 *   test cluster (see chain-send.ts).
 *
 * Each command loads only the modules it needs (the database drivers, the workers and the
 * Solana runtime take a second or more to load), so `--help` and `openapi` answer at once:
 * this file imports only modules with no dependencies (the settings too are loaded lazily).
 * Arguments are read and checked before any database is opened or its lock taken; a
 * mistyped command or flag is named, with the nearest known one (suggest.ts).
 * Results go to stdout, what a command is doing and why it failed to stderr (progress.ts).
 */

async function loadConfig(): Promise<Settings> {
  const { loadConfig: load } = await import('../config/env.js');
  return load();
}

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

const USAGE = `usage: spendgate serve [--role api|worker|all] | spendgate migrate | spendgate openapi
       spendgate keys create --account NAME --mode test|live [--scopes a,b] [--create-account]
       spendgate keys list --account NAME | spendgate keys revoke KEY_ID
       spendgate keys rotate-master [--batch-size N]\n       spendgate reserves [--run] [--watch [--every SECONDS]]\n       spendgate chain send --to ADDRESS --amount X --currency USDC|SOL [--rpc URL]\n       spendgate chain price PAIR PRICE [--confidence X] [--rpc URL]\n       spendgate processors replay stripe|lithic|marqeta FILE --to URL [--card ID]\n       spendgate --help | --version`;

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
  chain price PAIR PRICE [--confidence X] [--rpc URL]
                                  test mode only: sets a price feed of the local runtime
                                  (SOL/USD, USDC/USD, EUR/USD, GBP/USD; docs/pricing.md)
  processors replay stripe|lithic|marqeta FILE --to URL [--card ID]
                                  sends a recorded sequence of a processor's messages
                                  (docs/processors/), each signed or authenticated as that
                                  processor does with SPENDGATE_REPLAY_SECRET, and prints
                                  each answer
  --version                       prints the version

settings (environment): DATABASE_URL (else the embedded database in SPENDGATE_DATA_DIR,
./data by default), DATABASE_READ_URL, SPENDGATE_MASTER_KEY,
SPENDGATE_MASTER_KEY_DECRYPT_ONLY, REDIS_URL (or REDIS_CLUSTER_NODES), REDIS_PREFIX, PORT,
HOST, WORKER_PORT, LOG_LEVEL, SPENDGATE_MODES, AUTHORIZE_BUDGET_MS,
STAND_IN, SOLANA_RPC_URL, SOLANA_TEST_RPC_URL, SOLANA_TREASURY_KEY and the rest listed in
README.md.
exit codes: 0 done, 1 failed (the message says what to check), 2 a usage error.`;

const SERVE_USAGE = 'usage: spendgate serve [--role api|worker|all]';

function roleOf(args: readonly string[]): Role {
  if (args.length === 0) return 'all';
  const [flag, value] = args;
  if (flag !== undefined && flag !== '--role') {
    throw new UsageError(`${unknownWord('flag', flag, ['--role'])}\n${SERVE_USAGE}`);
  }
  const role = ROLES.find((candidate) => candidate === value);
  if (role === undefined && value !== undefined) {
    throw new UsageError(`${unknownWord('role', value, ROLES)}\n${SERVE_USAGE}`);
  }
  if (role === undefined || args.length !== 2) throw new UsageError(SERVE_USAGE);
  return role;
}

/**
 * The store for `keys` and `reserves`: on the embedded database with a server running on it,
 * that server's, through its admin socket (admin-socket.ts); else the database itself.
 */
async function openForCommand(config: Settings): Promise<Store & { close(): Promise<void> }> {
  if (config.databaseUrl === null) {
    const admin = await import('./admin-socket.js');
    if (await admin.adminSocketAnswers(config.dataDir)) return admin.remoteStore(config.dataDir);
  }
  const { openConfiguredStore } = await import('./open-store.js');
  return openConfiguredStore(config, { progress: stderrProgress() });
}

async function runKeysCommand(argv: readonly string[]): Promise<void> {
  if (argv[0] === 'rotate-master') {
    const { runRotateMaster } = await import('./rotate-master.js');
    const result = await runRotateMaster(await loadConfig(), argv.slice(1), stderrProgress());
    for (const line of result.lines) console.log(line);
    process.exitCode = result.exitCode;
    return;
  }
  const { parseKeysArgs, runParsedKeys } = await import('./keys.js');
  const args = parseKeysArgs(argv);
  const store = await openForCommand(await loadConfig());
  try {
    for (const line of await runParsedKeys(store, args)) console.log(line);
  } finally {
    await store.close();
  }
}

async function runReservesCommand(argv: readonly string[]): Promise<void> {
  const reserves = await import('./reserves.js');
  const args = reserves.parseReservesArgs(argv);
  const store = await openForCommand(await loadConfig());
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

/** The commands, one line each: the name and what runs it with the words after the name. */
const COMMANDS: Readonly<Record<string, (args: readonly string[]) => Promise<void>>> = {
  serve: async (args) => {
    const role = roleOf(args);
    const settings = await loadConfig();
    const { serve } = await import('./serve.js');
    await serve(settings, role);
  },
  migrate: async () => runMigrate(await loadConfig()),
  openapi: async () => {
    const { openApiDocument } = await import('./openapi.js');
    process.stdout.write(`${JSON.stringify(await openApiDocument(), null, 2)}\n`);
  },
  keys: runKeysCommand,
  reserves: runReservesCommand,
  chain: async (args) => {
    if (args[0] === 'price') {
      const { runChainPrice } = await import('./chain-price.js');
      for (const line of await runChainPrice(await loadConfig(), args)) console.log(line);
      return;
    }
    const { runChainSend } = await import('./chain-send.js');
    for (const line of await runChainSend(await loadConfig(), args)) console.log(line);
  },
  processors: async (args) => {
    const { runProcessorsReplay } = await import('./processors-replay.js');
    const result = await runProcessorsReplay(args, process.env);
    for (const line of result.lines) console.log(line);
    process.exitCode = result.exitCode;
  },
};

async function main(argv: readonly string[]): Promise<void> {
  const [command] = argv;
  if (command === '--help' || command === '-h' || command === 'help') {
    console.log(HELP);
    return;
  }
  if (command === '--version') {
    console.log(packageVersion());
    return;
  }
  const run = command === undefined ? undefined : COMMANDS[command];
  if (run === undefined || !Object.hasOwn(COMMANDS, command ?? '')) {
    const known = [...Object.keys(COMMANDS), '--help', '--version'];
    console.error(
      command === undefined ? USAGE : `${unknownWord('command', command, known)}\n${USAGE}`,
    );
    process.exitCode = 2;
    return;
  }
  await run(argv.slice(1));
}

main(process.argv.slice(2)).catch((error: unknown) => {
  if (error instanceof UsageError) {
    console.error(error.message);
    process.exit(2);
  }
  // A failure the command can explain (a setting, an unreachable database, a data folder in
  // use, a name that names nothing) is one line; anything else is a bug, shown whole.
  // By name: the classes' modules are loaded only by the commands that throw them.
  const name = error instanceof Error ? error.name : '';
  if (name === 'ConfigError' || name === 'NotFoundError') {
    console.error(`spendgate: ${(error as Error).message}`);
  } else {
    console.error(error);
  }
  process.exit(1);
});
