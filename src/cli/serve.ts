import type { FastifyInstance } from 'fastify';
import { pino } from 'pino';
import type { Config } from '../config/env.js';
import { createRedis, redisAnswers } from '../http/health.js';
import { createServer } from '../http/server.js';
import type { Store } from '../store/store.js';
import { DEFAULT_MAINTENANCE_SETTINGS } from '../workers/maintenance.js';
import { startWorkers, type Workers } from '../workers/start.js';
import { openConfiguredStore } from './open-store.js';
import { openChains } from './solana-chains.js';

/**
 * `spendgate serve [--role api|worker|all]` (contract section 15): the HTTP API, the workers
 * (outbox relay and webhook delivery), or both (the default, what `npm start` runs), so that
 * API and workers scale apart. SIGTERM or SIGINT stops gracefully: the server stops taking
 * requests and finishes those in flight, the workers finish or return their jobs, then the
 * store closes and the process exits.
 */
export type Role = 'api' | 'worker' | 'all';

export const ROLES: readonly Role[] = ['api', 'worker', 'all'];

const SHUTDOWN_MS_MAX = 10_000;
/** One delivery attempt at most (contract section 13). */
const DELIVERY_TIMEOUT_MS = 15_000;

/** More routes beside the API's, given the store (bench/http-service.ts: a no-op, batch stats). */
export type ExtraRoutes = (api: FastifyInstance, store: Store) => void;

export async function serve(config: Config, role: Role, extraRoutes?: ExtraRoutes): Promise<void> {
  const store = await openConfiguredStore(config);
  if (role !== 'worker') await printFirstKey(config, store);
  const log = pino({
    level: config.logLevel,
    redact: { paths: ['*.secret', '*.headers'], censor: '[redacted]' },
  });
  const redis = createRedis(config.redisUrl);
  const app =
    role === 'worker'
      ? null
      : createServer(config, {
          store,
          redis,
          ...(extraRoutes === undefined
            ? {}
            : {
                extraRoutes: (api) => {
                  extraRoutes(api, store);
                },
              }),
        });
  const chains = role === 'api' ? null : await openChains(config, log);
  const workers: Workers | null =
    chains === null
      ? null
      : startWorkers({
          store,
          redisUrl: config.redisUrl,
          redisPrefix: config.redisPrefix,
          delivery: { ...config.webhooks, timeoutMs: DELIVERY_TIMEOUT_MS },
          maintenance: { ...DEFAULT_MAINTENANCE_SETTINGS, holdAgeMsMax: config.holdAgeMsMax },
          chains: chains.targets,
          log: app?.log ?? log,
        });
  if (app !== null) await app.listen({ port: config.port, host: config.host });
  const logger = app?.log ?? log;
  logger.info(
    {
      role,
      ...(chains?.localRpcUrl == null ? {} : { localSolanaRpc: chains.localRpcUrl }),
      database: config.databaseUrl === null ? `embedded (${config.dataDir})` : 'postgresql',
    },
    'spendgate started',
  );
  if (!(await redisAnswers(redis))) {
    // Loudly (contract section 15): the service serves, but degraded until Redis answers.
    logger.warn(
      'Redis is unreachable: rate limits are counted per process and events wait in the outbox until it answers (see /readyz)',
    );
  }

  const stop = (signal: string) => {
    logger.info({ signal }, 'shutting down');
    const force = setTimeout(() => process.exit(1), SHUTDOWN_MS_MAX);
    force.unref();
    void (async () => {
      await app?.close();
      await workers?.stop();
      await chains?.close();
      redis.disconnect();
      await store.close();
      process.exit(0);
    })();
  };
  process.once('SIGTERM', () => {
    stop('SIGTERM');
  });
  process.once('SIGINT', () => {
    stop('SIGINT');
  });
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
