import type { FastifyInstance } from 'fastify';
import type { RedisConnection } from '../redis.js';
import { pino } from 'pino';
import { ConfigError, type Config, type Settings } from '../config/env.js';
import { createRedis, redisAnswers } from '../http/health.js';
import { bufferedStdout } from '../http/log-destination.js';
import { createServer } from '../http/server.js';
import { startTracing } from '../http/tracing/provider.js';
import { readInstallationId } from '../store/installation.js';
import { DELIVERY_ATTEMPT_TIMEOUT_MS } from '../outbound/index.js';
import type { OpenedStore, Store } from '../store/store.js';
import { DEFAULT_MAINTENANCE_SETTINGS } from '../workers/maintenance.js';
import {
  claimRedisPrefix,
  defaultRedisPrefix,
  type RedisPrefixClaim,
} from '../workers/prefix-claim.js';
import { DEFAULT_DEPOSIT_SETTINGS } from '../workers/deposit-jobs.js';
import type { BeforeCredit } from '../workers/deposit-watcher.js';
import { startWorkers, type Workers } from '../workers/start.js';
import { setHeapGrowingPercent } from './heap-growth.js';
import { listenAdminSocket } from './admin-socket.js';
import { openConfiguredStore } from './open-store.js';
import { redisWritePositions } from './write-positions.js';
import { loggerProgress, type Progress } from './progress.js';
import type { Role } from './roles.js';
import { openChains, type Chains } from './solana-chains.js';
import {
  MemoryPriceBook,
  priceBoundsOf,
  pricingOf,
  reserveValuationOf,
  startPriceReaders,
} from './price-book.js';

export { ROLES, type Role } from './roles.js';

const SHUTDOWN_MS_MAX = 10_000;
/** How long the start waits for Redis to settle the prefix's claim before going on without. */
const CLAIM_WAIT_MS = 2_000;

/** More routes beside the API's, given the store (bench/http-service.ts: a no-op, batch stats). */
export type ExtraRoutes = (api: FastifyInstance, store: Store) => void;

/**
 * `spendgate serve [--role api|worker|all]` (contract section 15): the HTTP API, the workers
 * (outbox relay and webhook delivery), or both (the default, what `npm start` runs), so that
 * API and workers scale apart. SIGTERM or SIGINT stops gracefully: the server stops taking
 * requests and finishes those in flight, the workers finish or return their jobs, then the
 * store closes and the process exits.
 *
 * The Redis prefix is resolved once, here, after the migrations: REDIS_PREFIX as set by hand,
 * or `spendgate-<installation id>`; and this database claims it (workers/prefix-claim.ts). A
 * prefix another database holds stops the start with a message naming REDIS_PREFIX. With Redis
 * down the service starts anyway (contract section 15), and the claim is made when Redis first
 * answers, before any job is added or taken (start.ts waits for it). Should another database
 * hold the prefix then, or at a later reconnection (a Redis restarted empty, claimed first by
 * the other), this process logs the same message and stops with exit code 1: its workers never
 * touched that database's jobs, and a supervisor that restarts it gets the refusal at once,
 * rather than a process that serves while its events wait unseen in the outbox.
 */
export async function serve(
  settings: Settings,
  role: Role,
  extraRoutes?: ExtraRoutes,
): Promise<void> {
  // What the start is doing before the server's own logger exists: JSON lines of the same
  // level, to the same destination, so that the log reads as one.
  const progress = loggerProgress(pino({ level: settings.logLevel }, bufferedStdout()));
  // Heard before anything is awaited: a SIGTERM at any point of the start (a supervisor, a test
  // that stops the server the moment it says it listens) must stop it gracefully, never find
  // node's default disposition and kill it (exit 143) between a log line and a handler.
  const stopRequested = stopSignals();
  setHeapGrowingPercent(settings.heapGrowingPercent);
  // Filled in the background once the chains are known; authorizations read it from memory.
  const prices = new MemoryPriceBook(priceBoundsOf(settings.prices));
  const store = await openConfiguredStore(settings, {
    progress,
    checkKeys: true,
    pricing: pricingOf(settings.prices, prices),
  });
  // The CLI's way to this embedded database while it runs here (admin-socket.ts).
  if (settings.databaseUrl === null) await listenAdminSocket(settings.dataDir, store);
  const { config, installationId, claim, claimed } = await claimPrefix(settings, store);
  if (role !== 'worker') await printFirstKey(config, store);
  const redis = createRedis(config.redis);
  // Read-your-writes across the fleet (DATABASE_READ_URL): every process sees these positions.
  store.keepWritePositions(redisWritePositions(redis, config.redisPrefix));
  const app = createRoleServer(config, role, store, redis, extraRoutes, prices);
  const background =
    role === 'api' ? null : await startBackground(config, app, store, claim, progress);
  if (role !== 'worker') servePrices(config, app, prices, background);
  const port = role === 'worker' ? config.workerPort : config.port;
  try {
    await app.listen({ port, host: config.host });
  } catch (error) {
    throw listenFailure(error, config.host, port, role) ?? error;
  }
  stopGracefully({ app, store, redis, claim, background }, stopRequested);
  app.log.info(
    {
      role,
      ...(background?.chains.localRpcUrl == null
        ? {}
        : { localSolanaRpc: background.chains.localRpcUrl }),
      database: config.databaseUrl === null ? `embedded (${config.dataDir})` : 'postgresql',
      installation: installationId,
      redis: config.redis.kind,
      redisPrefix: config.redisPrefix,
    },
    'spendgate started',
  );
  if (!claimed || !(await redisAnswers(redis))) {
    // Loudly (contract section 15): the service serves, but degraded until Redis answers.
    app.log.warn(
      'Redis is unreachable: rate limits are counted per process and events wait in the outbox until it answers (see /readyz); the workers start once it answers and this database holds its Redis prefix',
    );
  }
}

/**
 * The role's HTTP server. Every role answers /healthz, /readyz and /metrics (contract section
 * 15); only the API roles serve the REST interface.
 */
function createRoleServer(
  config: Config,
  role: Role,
  store: Store,
  redis: RedisConnection,
  extraRoutes: ExtraRoutes | undefined,
  prices: MemoryPriceBook,
): FastifyInstance {
  return createServer(config, {
    store,
    redis,
    healthOnly: role === 'worker',
    // Each feed's age, price and confidence, where the feeds are read (the API roles).
    ...(role === 'worker' ? {} : { metricsRegistries: [prices.registry] }),
    // Off (null) unless TRACING_SAMPLE_RATIO is above 0; a worker serves no request to trace.
    tracing: role === 'worker' ? null : startTracing(config.tracing),
    ...(extraRoutes === undefined || role === 'worker'
      ? {}
      : {
          extraRoutes: (api) => {
            extraRoutes(api, store);
          },
        }),
  });
}

/**
 * The API roles read the price feeds in the background (src/solana/price-feeds.ts): live from
 * SOLANA_RPC_URL, test from SOLANA_TEST_RPC_URL or the local runtime this process started (the
 * `all` role). `--role api` with neither reads no test prices: its SOL conversions in test
 * mode decline `rate_unavailable` (docs/pricing.md). /metrics shows each feed.
 */
function servePrices(
  config: Config,
  app: FastifyInstance,
  prices: MemoryPriceBook,
  background: Background | null,
): void {
  const testRpcUrl = config.solana.testRpcUrl ?? background?.chains.localRpcUrl ?? null;
  const readers = startPriceReaders(config, prices, testRpcUrl);
  app.addHook('onClose', () => {
    for (const reader of readers) reader.stop();
    return Promise.resolve();
  });
}

/**
 * Tests only (SPENDGATE_TEST_DEPOSIT_PAUSE=1, test mode alone): the deposit watcher says it
 * found a transfer, then waits for ever before crediting it, so that a test kills it there.
 */
function pauseBeforeCredit(log: FastifyInstance['log']): BeforeCredit {
  return (found) => {
    log.warn({ signature: found.signature }, 'deposit found; paused before crediting (test)');
    return new Promise<void>(() => undefined);
  };
}

/** What the worker roles run beside the server: the chains and the workers that use them. */
interface Background {
  readonly chains: Chains;
  readonly workers: Workers;
}

/** The chains (a local Solana runtime, in test mode without SOLANA_TEST_RPC_URL) and workers. */
async function startBackground(
  config: Config,
  app: FastifyInstance,
  store: Store,
  claim: RedisPrefixClaim,
  progress: Progress,
): Promise<Background> {
  // Said at once: its start holds the event loop (native code), so no timer could say it late.
  if (config.modes.includes('test') && config.solana.testRpcUrl === null) {
    progress.say(
      'starting the local Solana runtime for test-mode transfers (SOLANA_TEST_RPC_URL is unset)...',
    );
  }
  const chains = await openChains(config, app.log);
  const workers = startWorkers({
    store,
    redis: config.redis,
    redisPrefix: config.redisPrefix,
    delivery: { ...config.webhooks, timeoutMs: DELIVERY_ATTEMPT_TIMEOUT_MS },
    maintenance: { ...DEFAULT_MAINTENANCE_SETTINGS, holdAgeMsMax: config.holdAgeMsMax },
    chains: chains.targets,
    reserveValuation: reserveValuationOf(config.prices, chains.targets),
    ...(config.solana.testDepositPause
      ? { deposits: { ...DEFAULT_DEPOSIT_SETTINGS, beforeCredit: pauseBeforeCredit(app.log) } }
      : {}),
    log: app.log,
    prefixClaimed: claim.held,
  });
  // /metrics is the server's, and workers and http never import each other: the workers'
  // registry is served beside it here, where both meet.
  const workerMetrics = workers.metrics.registry;
  app.addHook('onSend', async (request, _reply, payload) =>
    request.routeOptions.url === '/metrics' && typeof payload === 'string'
      ? `${payload}${await workerMetrics.metrics()}`
      : payload,
  );
  return { chains, workers };
}

/** A stop signal heard, and the start's guard, which a graceful stop replaces with its own. */
interface StopRequest {
  readonly signal: string;
  disarm(): void;
}

/**
 * The first SIGTERM or SIGINT, as its name. Once one is heard the process has SHUTDOWN_MS_MAX
 * to stop, counted from the signal: a start that hangs (a database that never answers) after a
 * stop was asked for still ends, with exit code 1. A started server disarms this guard and
 * arms its own, which names the part that hung (with both armed, the unnamed one fired first).
 */
function stopSignals(): Promise<StopRequest> {
  return new Promise((resolve) => {
    const heard = (signal: string): void => {
      process.off('SIGTERM', onTerm);
      process.off('SIGINT', onInt);
      const guard = setTimeout(() => process.exit(1), SHUTDOWN_MS_MAX);
      guard.unref();
      resolve({
        signal,
        disarm: () => {
          clearTimeout(guard);
        },
      });
    };
    const onTerm = (): void => {
      heard('SIGTERM');
    };
    const onInt = (): void => {
      heard('SIGINT');
    };
    process.once('SIGTERM', onTerm);
    process.once('SIGINT', onInt);
  });
}

/**
 * Stops once, on the signal stopSignals heard (at once if it came during the start) or the loss
 * of the Redis prefix to another database (exit code 1): the server, the workers, the chains,
 * Redis, then the store; SHUTDOWN_MS_MAX at most.
 */
function stopGracefully(
  parts: {
    app: FastifyInstance;
    store: Store;
    redis: RedisConnection;
    claim: RedisPrefixClaim;
    background: Background | null;
  },
  stopRequested: Promise<StopRequest>,
): void {
  const { app, store, redis, claim, background } = parts;
  const logger = app.log;
  let stopping = false;
  const stop = (reason: string, exitCode = 0) => {
    if (stopping) return;
    stopping = true;
    logger.info({ reason }, 'shutting down');
    // What the stop waits on, named if it outlasts its limit: an operator sees which part hung.
    let waitingOn = 'the HTTP server';
    const force = setTimeout(() => {
      logger.error(
        { waitingOn, limitMs: SHUTDOWN_MS_MAX },
        'shutdown did not finish in time; exiting',
      );
      process.exit(1);
    }, SHUTDOWN_MS_MAX);
    force.unref();
    void (async () => {
      claim.close();
      await app.close();
      waitingOn = 'the workers';
      await background?.workers.stop();
      waitingOn = 'the chains';
      await background?.chains.close();
      redis.disconnect();
      waitingOn = 'the database';
      await store.close();
      process.exit(exitCode);
    })().catch((error: unknown) => {
      // Named, not left to Node's unhandled-rejection exit: which part failed to close is what
      // an operator needs, and what was committed is in PostgreSQL whatever Redis said.
      logger.error({ err: error, waitingOn }, 'shutdown failed; exiting');
      process.exit(1);
    });
  };
  void claim.lost.then((error) => {
    logger.error({ setting: 'REDIS_PREFIX' }, error.message);
    stop('REDIS_PREFIX is claimed by another database', 1);
  });
  void stopRequested.then((request) => {
    request.disarm();
    stop(request.signal);
  });
}

/**
 * The effective settings, with the Redis prefix resolved, and this database's claim on it:
 * `claimed` says whether it held within CLAIM_WAIT_MS (false: Redis did not answer yet). A
 * prefix another database holds throws RedisPrefixClaimedError, with the store closed.
 */
async function claimPrefix(
  settings: Settings,
  store: OpenedStore,
): Promise<{ config: Config; installationId: string; claim: RedisPrefixClaim; claimed: boolean }> {
  let claim: RedisPrefixClaim | null = null;
  try {
    const installationId = await readInstallationId(store.client);
    const config: Config = {
      ...settings,
      redisPrefix: settings.redisPrefix ?? defaultRedisPrefix(installationId),
    };
    claim = claimRedisPrefix({
      redis: config.redis,
      redisPrefix: config.redisPrefix,
      installationId,
    });
    let timer: NodeJS.Timeout | undefined;
    const claimed = await Promise.race([
      claim.held.then(() => true),
      new Promise<false>((resolve) => {
        timer = setTimeout(() => {
          resolve(false);
        }, CLAIM_WAIT_MS);
      }),
    ]).finally(() => {
      clearTimeout(timer);
    });
    return { config, installationId, claim, claimed };
  } catch (error) {
    claim?.close();
    await store.close();
    throw error;
  }
}

/**
 * A newcomer's first start on the embedded database: a test key to call the API with at
 * once, shown this once, on stdout and never through the logger, which keeps secrets out of
 * every log.
 */
async function printFirstKey(config: Config, store: Store): Promise<void> {
  if (config.databaseUrl !== null || (await store.hasAnyApiKey())) return;
  const account = await store.findOrCreateAccount('default');
  const { key } = await store.createApiKey({ accountId: account.id, mode: 'test', scopes: [] });
  process.stdout.write(
    `\nspendgate: a first test key for account "default" (shown once; spendgate keys create makes more):\n\n  ${key}\n\n`,
  );
}

/** The one line of a port this process cannot listen on, naming the settings to change. */
function listenFailure(error: unknown, host: string, port: number, role: Role): Error | null {
  const code = error instanceof Error && 'code' in error ? error.code : undefined;
  const settings = role === 'worker' ? 'HOST, WORKER_PORT' : 'HOST, PORT';
  const reasons: Readonly<Record<string, string>> = {
    EADDRINUSE: 'the port is in use — is another spendgate (or another program) listening there?',
    EACCES: 'permission denied — ports below 1024 need privileges; choose a higher port',
    EADDRNOTAVAIL: 'no such address on this machine — check HOST',
  };
  const reason = typeof code === 'string' ? reasons[code] : undefined;
  return reason === undefined
    ? null
    : new ConfigError(`cannot listen on ${host}:${port} (${settings}): ${reason}`);
}
