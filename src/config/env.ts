import { join } from 'node:path';
import { z } from 'zod';

/*
 * Settings from the environment (contract section 15), validated once at start: a missing or
 * malformed setting stops the start with a message naming it. Settings the service does not
 * use yet join this schema with the issue that uses them.
 */

/** Requests per second per API key, by the key's class (contract section 6). */
export interface RateLimitSettings {
  readonly livePerSecond: number;
  readonly testPerSecond: number;
  /** Keys whose only scope is `authorizations:write`: the card network's callbacks. */
  readonly authorizationsPerSecond: number;
}

export const DEFAULT_RATE_LIMITS: RateLimitSettings = {
  livePerSecond: 100,
  testPerSecond: 25,
  authorizationsPerSecond: 10_000,
};

/**
 * The webhook retry schedule of contract section 13: after a failed attempt, wait roughly
 * 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 14 h, 20 h, 24 h; after the last, give up. Ten attempts in
 * all, over about three days. WEBHOOK_RETRY_DELAYS_MS replaces it (tests shorten it).
 */
export const CONTRACT_RETRY_DELAYS_MS: readonly number[] = [
  5_000,
  5 * 60_000,
  30 * 60_000,
  2 * 3_600_000,
  5 * 3_600_000,
  10 * 3_600_000,
  14 * 3_600_000,
  20 * 3_600_000,
  24 * 3_600_000,
];

const base58Address = z
  .string()
  .regex(/^[1-9A-HJ-NP-Za-km-z]{32,44}$/, { error: 'must be a base58 Solana address' });

/** An http(s) URL (a collector's): anything else is named at start, not at the first export. */
const httpUrl = z
  .string()
  .refine((value) => /^https?:\/\/[^\s/]+/.test(value) && URL.canParse(value), {
    error: 'must be an http:// or https:// URL',
  });

/** One node of a Redis Cluster, as REDIS_CLUSTER_NODES names it. */
export interface RedisNode {
  readonly host: string;
  readonly port: number;
}

/**
 * Where Redis is: one server by its URL (REDIS_URL), or a Redis Cluster by some of its nodes
 * (REDIS_CLUSTER_NODES; the client learns the rest, and every move of a slot, from them).
 */
export type RedisTarget =
  | { readonly kind: 'server'; readonly url: string }
  | { readonly kind: 'cluster'; readonly nodes: readonly RedisNode[] };

/** Nodes REDIS_CLUSTER_NODES may name: seeds to find the cluster, not the whole cluster. */
export const REDIS_CLUSTER_NODES_MAX = 64;

/** One server by URL, as a RedisTarget. */
export function redisServer(url: string): RedisTarget {
  return { kind: 'server', url };
}

// host:port, the host a name, an IPv4 address or a bracketed IPv6 one ([::1]:7000).
const CLUSTER_NODE = /^(?:\[([0-9A-Fa-f:.]+)\]|([A-Za-z0-9.-]+)):([0-9]{1,5})$/;

/** REDIS_CLUSTER_NODES: `host:port,host:port,...`, each port 1 to 65535, no node twice. */
const clusterNodes = z.string().transform((value, context): readonly RedisNode[] => {
  const parts = value.split(',').map((part) => part.trim());
  const nodes: RedisNode[] = [];
  for (const part of parts.slice(0, REDIS_CLUSTER_NODES_MAX)) {
    const match = CLUSTER_NODE.exec(part);
    const port = Number(match?.[3]);
    if (match === null || port < 1 || port > 65_535) break;
    nodes.push({ host: match[1] ?? match[2] ?? '', port });
  }
  const distinct = new Set(nodes.map((node) => `${node.host}:${String(node.port)}`));
  if (nodes.length !== parts.length || distinct.size !== nodes.length) {
    context.addIssue({
      code: 'custom',
      message: `must be 1 to ${String(REDIS_CLUSTER_NODES_MAX)} distinct host:port, comma-separated (ports 1 to 65535)`,
    });
    return z.NEVER;
  }
  return nodes;
});

/**
 * Connections a PostgreSQL pool holds by default. Why 20: a process's authorize batches use
 * one or two at a time, and the rest (workers, lists, the API's other routes) a few each; a
 * handful of processes then stay well inside PostgreSQL's default of 100 connections.
 */
export const DATABASE_POOL_MAX_DEFAULT = 20;
/** Write transactions at once: twice this project's 2 cores (store/sql/write-gate.ts). */
export const DATABASE_WRITES_MAX_DEFAULT = 4;

/**
 * The most the serving process's old generation may grow between two full collections, in
 * percent of what the last one left (src/cli/heap-growth.ts): 300 is V8's own highest factor
 * (4x, `kHighFactor`, for a heap limit of 2 GB and more), the most its heuristic would choose
 * on a server.
 */
export const HEAP_GROWING_PERCENT_MAX = 300;

/**
 * Pyth price accounts (the classic format, docs/pricing.md) on the live cluster: SOL/USD, and
 * USDC/USD to watch the peg. Mainnet addresses; EUR/USD, GBP/USD and others join by setting
 * PRICE_FEEDS.
 */
export const DEFAULT_LIVE_PRICE_FEEDS =
  'SOL/USD=H6ARHf6YXhGYeQfUzQNGk6rDNnLBQKrenN712K4AQJEG,USDC/USD=Gnt27xtC473ZT2Mw5u8wZ68Z3gULkSTb5DuxJy7eJotD';

/**
 * The test cluster's price accounts: where the local Solana runtime (src/local-chain) writes
 * its SOL/USD, USDC/USD, EUR/USD and GBP/USD feeds. A devnet test cluster needs PRICE_TEST_FEEDS.
 */
export const DEFAULT_TEST_PRICE_FEEDS =
  'SOL/USD=4n3uSFvzir3GWugf4JzUqdgrp1H9HpgR4eGQS3WArrR5,USDC/USD=7hRwGAKDCKNRiP28Ef5HL5xwEZSfA8z1GWHLvW8H5fEr,EUR/USD=6hAtg9rmMRbSZk9YoUuzp4m8KLBZetKZDzZv156wJfhg,GBP/USD=9A8roEWk1UivBja5svr35z7ty2HcVDFNqwPxYLDBBYBu';

/** Feeds a deployment reads at most, per cluster: each is one poll in flight. */
export const PRICE_FEEDS_MAX = 16;

/** `PAIR=address,...`: each pair `XXX/USD` (a 3 to 5 letter code), each address base58. */
const priceFeeds = (fallback: string) =>
  z
    .string()
    .default(fallback)
    .transform((value, context): Readonly<Record<string, string>> => {
      const parts = value.split(',').map((part) => part.trim());
      const feeds: Record<string, string> = {};
      for (const part of parts.slice(0, PRICE_FEEDS_MAX)) {
        const match = /^([A-Z]{3,5}\/USD)=([1-9A-HJ-NP-Za-km-z]{32,44})$/.exec(part);
        if (match?.[1] === undefined || match[2] === undefined || match[1] in feeds) break;
        feeds[match[1]] = match[2];
      }
      if (Object.keys(feeds).length !== parts.length) {
        context.addIssue({
          code: 'custom',
          message: `must be up to ${String(PRICE_FEEDS_MAX)} PAIR=address entries, comma-separated, each pair XXX/USD once`,
        });
        return z.NEVER;
      }
      return feeds;
    });

/** A fraction from 0 to 1, at most 6 decimals, kept as its string (exact: decimal.js reads it). */
const fraction = z.string().regex(/^(0(\.[0-9]{1,6})?|1(\.0{1,6})?)$/, {
  error: 'must be a fraction from 0 to 1, like 0.05',
});

function perSecond(fallback: number) {
  return z.coerce.number().int().min(1).max(1_000_000).default(fallback);
}

const configSchema = z.object({
  PORT: z.coerce.number().int().min(0).max(65_535).default(3000),
  // The worker role's health and metrics port; PORT when unset (one role per host).
  WORKER_PORT: z.coerce.number().int().min(0).max(65_535).optional(),
  HOST: z.string().min(1).default('127.0.0.1'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  // A PostgreSQL server; without it, the embedded PostgreSQL (PGlite) keeps its files in the data folder.
  DATABASE_URL: z
    .url({ protocol: /^postgres(ql)?$/, error: 'must be a postgres:// or postgresql:// URL' })
    .optional(),
  // A streaming replica of DATABASE_URL for the reads that may lag (docs/operations.md).
  DATABASE_READ_URL: z
    .url({ protocol: /^postgres(ql)?$/, error: 'must be a postgres:// or postgresql:// URL' })
    .optional(),
  // Connections each pool of this process holds at most (DATABASE_URL's, and DATABASE_READ_URL's).
  DATABASE_POOL_MAX: z.coerce.number().int().min(1).max(1000).default(DATABASE_POOL_MAX_DEFAULT),
  DATABASE_WRITES_MAX: z.coerce
    .number()
    .int()
    .min(1)
    .max(1000)
    .default(DATABASE_WRITES_MAX_DEFAULT),
  SPENDGATE_DATA_DIR: z.string().min(1).default('./data'),
  REDIS_URL: z
    .url({ protocol: /^rediss?$/, error: 'must be a redis:// or rediss:// URL' })
    .default('redis://127.0.0.1:6379'),
  // A Redis Cluster, by some of its nodes (contract section 15, v1.1); set, it replaces REDIS_URL.
  REDIS_CLUSTER_NODES: clusterNodes.optional(),
  // Every queue and rate-limit key lives under it, so two deployments can share one Redis.
  // Unset: `spendgate-<installation id>`, resolved at start from the database (serve.ts); set
  // by hand, it is claimed in Redis by this database, and a second database refuses it.
  REDIS_PREFIX: z
    .string()
    .regex(/^[A-Za-z0-9_-]{1,40}$/, { error: 'must be 1 to 40 letters, digits, _ or -' })
    .optional(),
  // Requests per second per key (contract section 6); the card network's keys are the last.
  RATE_LIMIT_LIVE_PER_SECOND: perSecond(DEFAULT_RATE_LIMITS.livePerSecond),
  RATE_LIMIT_TEST_PER_SECOND: perSecond(DEFAULT_RATE_LIMITS.testPerSecond),
  RATE_LIMIT_AUTHORIZATIONS_PER_SECOND: perSecond(DEFAULT_RATE_LIMITS.authorizationsPerSecond),
  // The authorization time budget and the answer past it (contract section 10).
  AUTHORIZE_BUDGET_MS: z.coerce.number().int().min(1).max(10_000).default(1500),
  STAND_IN: z.enum(['decline', 'approve']).default('decline'),
  // Where stand-in answers are kept until the ledger records them; default <data dir>/stand-in.
  STAND_IN_JOURNAL_DIR: z.string().min(1).optional(),
  // The issuer BIN new card numbers start with.
  CARD_BIN: z
    .string()
    .regex(/^[0-9]{6,8}$/, { error: 'must be 6 to 8 digits' })
    .default('424242'),
  // The Solana cluster live-mode external transfers go to; unset, they are refused (503).
  SOLANA_RPC_URL: z
    .url({ protocol: /^https?$/, error: 'must be an http:// or https:// URL' })
    .optional(),
  // Webhook delivery (contract section 13): the waits between attempts, and concurrency.
  WEBHOOK_RETRY_DELAYS_MS: z
    .string()
    .regex(/^[0-9]{1,9}(,[0-9]{1,9}){0,19}$/, {
      error: 'must be 1 to 20 comma-separated whole milliseconds',
    })
    .optional()
    .transform((value) =>
      value === undefined ? CONTRACT_RETRY_DELAYS_MS : value.split(',').map(Number),
    ),
  WEBHOOK_CONCURRENCY: z.coerce.number().int().min(1).max(1000).default(128),
  WEBHOOK_ENDPOINT_CONCURRENCY: z.coerce.number().int().min(1).max(1000).default(32),
  // Card holds not captured within this many hours are released (7 days by default).
  HOLD_EXPIRY_HOURS: z.coerce.number().int().min(1).max(8760).default(168),
  // Holds of lodging, car rental and cruise lines (contract section 16) live this long (31 days).
  HOLD_EXPIRY_LONG_HOURS: z.coerce.number().int().min(1).max(8760).default(744),
  // How far the serving process's heap grows between full collections (src/cli/heap-growth.ts).
  HEAP_GROWING_PERCENT: z.coerce.number().int().min(0).max(HEAP_GROWING_PERCENT_MAX).default(300),
  // Test-mode external transfers: a cluster; unset, a local Solana runtime in-process.
  SOLANA_TEST_RPC_URL: z
    .url({ protocol: /^https?$/, error: 'must be an http:// or https:// URL' })
    .optional(),
  // The treasury that signs external transfers: a keypair file's path or a base58 secret key.
  // Never logged; a malformed one is named, never shown.
  SOLANA_TREASURY_KEY: z.string().min(1).max(4096).optional(),
  // The USDC mint on the live cluster, and on a test cluster given by SOLANA_TEST_RPC_URL.
  SOLANA_USDC_MINT: base58Address.default('EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v'),
  SOLANA_TEST_USDC_MINT: base58Address.default('4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU'),
  // Price feeds (contract v1.2, section 16; docs/pricing.md): a reading older than this, or
  // with a confidence interval wider than this fraction of the price, is not used.
  PRICE_MAX_AGE_MS: z.coerce.number().int().min(100).max(3_600_000).default(10_000),
  PRICE_CONFIDENCE_MAX: fraction.default('0.01'),
  // What a SOL hold adds to what the request is worth, against the price moving before capture.
  SOL_HOLD_BUFFER: fraction.default('0.05'),
  // How often each feed is read in the background, and how long one read may take.
  PRICE_POLL_MS: z.coerce.number().int().min(100).max(60_000).default(1_000),
  PRICE_READ_TIMEOUT_MS: z.coerce.number().int().min(100).max(60_000).default(2_000),
  // The Pyth price accounts read on the live cluster (SOLANA_RPC_URL) and on the test one.
  PRICE_FEEDS: priceFeeds(DEFAULT_LIVE_PRICE_FEEDS),
  PRICE_TEST_FEEDS: priceFeeds(DEFAULT_TEST_PRICE_FEEDS),
  // The program that must own them (the Pyth oracle: mainnet's; devnet's, which the local runtime uses).
  PRICE_ORACLE_PROGRAM: base58Address.default('FsJ3A3u2vn5cTVofAjvy6y5kwABJAqYWpe4975bi2epH'),
  PRICE_TEST_ORACLE_PROGRAM: base58Address.default('gSbePebfvPy7tRqimPoVecS2UsBvYv46ynrzWocc92s'),
  // OpenTelemetry tracing (docs/operations.md, "Tracing"): the share of requests traced, 0 for
  // none (the default: no span is made); where the spans go (OTLP over HTTP, JSON); the name.
  TRACING_SAMPLE_RATIO: z.coerce.number().min(0).max(1).default(0),
  OTEL_EXPORTER_OTLP_ENDPOINT: httpUrl.optional(),
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: httpUrl.optional(),
  OTEL_SERVICE_NAME: z.string().min(1).max(200).default('spendgate'),
  // Tests only: the deposit watcher stops between finding a transfer and crediting it, so a
  // test can kill the process there. Refused unless SPENDGATE_MODES is test alone.
  SPENDGATE_TEST_DEPOSIT_PAUSE: z.enum(['0', '1']).default('0'),
  // Which key modes this deployment answers (contract section 2): a sandbox serves only test.
  SPENDGATE_MODES: z
    .string()
    .default('test,live')
    .transform((value) => value.split(',').map((mode) => mode.trim()))
    .pipe(
      z
        .array(z.enum(['test', 'live'], { error: 'must be test, live or both, comma-separated' }))
        .min(1),
    ),
});

/** The names of every setting read from the environment (README.md documents each). */
export const SETTING_NAMES: readonly string[] = Object.keys(configSchema.shape);

export interface Config {
  readonly port: number;
  /** Where `serve --role worker` answers /healthz, /readyz and /metrics. */
  readonly workerPort: number;
  readonly host: string;
  readonly logLevel: z.infer<typeof configSchema>['LOG_LEVEL'];
  /** null: the embedded PostgreSQL in `dataDir`. */
  readonly databaseUrl: string | null;
  /** A streaming replica of `databaseUrl` for the reads that may lag; null: none. */
  readonly databaseReadUrl: string | null;
  /** Connections each PostgreSQL pool holds at most (DATABASE_POOL_MAX). */
  readonly databasePoolMax: number;
  /** Write transactions of a process in PostgreSQL at once (DATABASE_WRITES_MAX). */
  readonly databaseWritesMax: number;
  /** Where the embedded database and its master key live. */
  readonly dataDir: string;
  /** The key modes served. */
  readonly modes: readonly ('test' | 'live')[];
  /** REDIS_CLUSTER_NODES when set, else REDIS_URL. */
  readonly redis: RedisTarget;
  /**
   * The effective prefix of every key spendgate keeps in Redis: REDIS_PREFIX as set by hand,
   * or `spendgate-<installation id>`. Resolved once at start (see `Settings`).
   */
  readonly redisPrefix: string;
  readonly rateLimits: RateLimitSettings;
  readonly authorize: AuthorizeSettings;
  readonly cardBin: string;
  readonly webhooks: WebhookSettings;
  /** Card holds older than this are expired by the maintenance job. */
  readonly holdAgeMsMax: number;
  /**
   * The life of a lodging, car rental or cruise line hold (core/holds/hold-expiry.ts, `longMs`;
   * `holdAgeMsMax` is its `defaultMs`).
   */
  readonly holdLongAgeMsMax: number;
  /** The old generation's growth between full collections, in percent; 0: V8's own. */
  readonly heapGrowingPercent: number;
  readonly tracing: TracingSettings;
  /** null: live external transfers are refused until a cluster is configured. */
  readonly solanaRpcUrl: string | null;
  readonly solana: SolanaSettings;
  readonly prices: PriceSettings;
}

/** The price feeds (contract v1.2, section 16; docs/pricing.md). */
export interface PriceSettings {
  readonly ageMsMax: number;
  /** PRICE_CONFIDENCE_MAX: a fraction of the price, as written (decimal.js reads it exactly). */
  readonly confidenceRatioMax: string;
  /** SOL_HOLD_BUFFER, as written. */
  readonly solHoldBuffer: string;
  readonly pollMs: number;
  readonly readTimeoutMs: number;
  /** Pair (`SOL/USD`) to price account, per mode's cluster. */
  readonly feeds: Readonly<Record<'live' | 'test', Readonly<Record<string, string>>>>;
  /** The program each mode's price accounts must be owned by. */
  readonly oracleProgram: Readonly<Record<'live' | 'test', string>>;
}

/** The chains external transfers go to (contract section 12). */
export interface SolanaSettings {
  /** null: the local Solana runtime, started in-process, for test mode. */
  readonly testRpcUrl: string | null;
  /** A keypair file's path or a base58 secret; null: the local runtime's own treasury. */
  readonly treasuryKey: string | null;
  readonly usdcMint: string;
  readonly testUsdcMint: string;
  /** Tests only (SPENDGATE_TEST_DEPOSIT_PAUSE): the watcher waits before each credit. */
  readonly testDepositPause: boolean;
}

/** Webhook delivery (contract section 13). */
export interface WebhookSettings {
  /** The waits between attempts: attempts are one more. */
  readonly retryDelaysMs: readonly number[];
  readonly concurrency: number;
  readonly endpointConcurrency: number;
}

/** OpenTelemetry tracing (src/http/tracing): off while `sampleRatio` is 0. */
export interface TracingSettings {
  /** The share of requests that start a trace (0 to 1); a caller's sampled traceparent too. */
  readonly sampleRatio: number;
  /** Where spans are posted (OTLP over HTTP, JSON): the full URL, `/v1/traces` included. */
  readonly tracesUrl: string;
  readonly serviceName: string;
}

/** The OTLP default: a collector on this host. */
export const OTLP_DEFAULT_ENDPOINT = 'http://localhost:4318';

/** Contract section 10: how long a decision may take, and what is answered past it. */
export interface AuthorizeSettings {
  readonly budgetMs: number;
  readonly standIn: 'decline' | 'approve';
  /**
   * The folder of the stand-in journal (http/stand-in-journal.ts); absent: stand-in answers are
   * owed in memory only (an embedding, a test), and a crash before the database is back loses
   * their record.
   */
  readonly journalDir?: string | undefined;
}

/**
 * The settings as read from the environment, before the start resolves what depends on the
 * database: `redisPrefix` is REDIS_PREFIX as set by hand, or null when it is not set (the
 * default, `spendgate-<installation id>`, needs the database's installation id; serve.ts).
 */
export interface Settings extends Omit<Config, 'redisPrefix'> {
  readonly redisPrefix: string | null;
}

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

function priceSettingsOf(data: z.infer<typeof configSchema>): PriceSettings {
  return {
    ageMsMax: data.PRICE_MAX_AGE_MS,
    confidenceRatioMax: data.PRICE_CONFIDENCE_MAX,
    solHoldBuffer: data.SOL_HOLD_BUFFER,
    pollMs: data.PRICE_POLL_MS,
    readTimeoutMs: data.PRICE_READ_TIMEOUT_MS,
    feeds: { live: data.PRICE_FEEDS, test: data.PRICE_TEST_FEEDS },
    oracleProgram: { live: data.PRICE_ORACLE_PROGRAM, test: data.PRICE_TEST_ORACLE_PROGRAM },
  };
}

/** As the OTLP exporter reads them: the traces endpoint as is, or `/v1/traces` of the base. */
function tracingSettingsOf(data: z.infer<typeof configSchema>): TracingSettings {
  const base = (data.OTEL_EXPORTER_OTLP_ENDPOINT ?? OTLP_DEFAULT_ENDPOINT).replace(/\/+$/, '');
  return {
    sampleRatio: data.TRACING_SAMPLE_RATIO,
    tracesUrl: data.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ?? `${base}/v1/traces`,
    serviceName: data.OTEL_SERVICE_NAME,
  };
}

export function loadConfig(
  env: Readonly<Record<string, string | undefined>> = process.env,
): Settings {
  // An empty variable is an unset one: `DATABASE_URL= npm start` means the embedded default.
  const present = Object.fromEntries(Object.entries(env).filter(([, value]) => value !== ''));
  const result = configSchema.safeParse(present);
  if (!result.success) {
    // Names and reasons only: a setting's value may be a secret (a password in DATABASE_URL).
    const problems = result.error.issues.map((issue) => `${issue.path.join('.')} ${issue.message}`);
    throw new ConfigError(`invalid configuration: ${problems.join('; ')}`);
  }
  const testDepositPause = result.data.SPENDGATE_TEST_DEPOSIT_PAUSE === '1';
  if (testDepositPause && result.data.SPENDGATE_MODES.includes('live')) {
    throw new ConfigError(
      'invalid configuration: SPENDGATE_TEST_DEPOSIT_PAUSE needs SPENDGATE_MODES=test',
    );
  }
  if (result.data.DATABASE_READ_URL !== undefined && result.data.DATABASE_URL === undefined) {
    // A replica of the embedded database cannot exist: the setting would be silently unused.
    throw new ConfigError('invalid configuration: DATABASE_READ_URL needs DATABASE_URL');
  }
  return {
    port: result.data.PORT,
    workerPort: result.data.WORKER_PORT ?? result.data.PORT,
    host: result.data.HOST,
    logLevel: result.data.LOG_LEVEL,
    databaseUrl: result.data.DATABASE_URL ?? null,
    databaseReadUrl: result.data.DATABASE_READ_URL ?? null,
    databasePoolMax: result.data.DATABASE_POOL_MAX,
    databaseWritesMax: result.data.DATABASE_WRITES_MAX,
    dataDir: result.data.SPENDGATE_DATA_DIR,
    modes: [...new Set(result.data.SPENDGATE_MODES)],
    redis:
      result.data.REDIS_CLUSTER_NODES === undefined
        ? redisServer(result.data.REDIS_URL)
        : { kind: 'cluster', nodes: result.data.REDIS_CLUSTER_NODES },
    redisPrefix: result.data.REDIS_PREFIX ?? null,
    rateLimits: {
      livePerSecond: result.data.RATE_LIMIT_LIVE_PER_SECOND,
      testPerSecond: result.data.RATE_LIMIT_TEST_PER_SECOND,
      authorizationsPerSecond: result.data.RATE_LIMIT_AUTHORIZATIONS_PER_SECOND,
    },
    authorize: {
      budgetMs: result.data.AUTHORIZE_BUDGET_MS,
      standIn: result.data.STAND_IN,
      journalDir:
        result.data.STAND_IN_JOURNAL_DIR ?? join(result.data.SPENDGATE_DATA_DIR, 'stand-in'),
    },
    cardBin: result.data.CARD_BIN,
    solanaRpcUrl: result.data.SOLANA_RPC_URL ?? null,
    solana: {
      testRpcUrl: result.data.SOLANA_TEST_RPC_URL ?? null,
      treasuryKey: result.data.SOLANA_TREASURY_KEY ?? null,
      usdcMint: result.data.SOLANA_USDC_MINT,
      testUsdcMint: result.data.SOLANA_TEST_USDC_MINT,
      testDepositPause,
    },
    prices: priceSettingsOf(result.data),
    holdAgeMsMax: result.data.HOLD_EXPIRY_HOURS * 3_600_000,
    holdLongAgeMsMax: result.data.HOLD_EXPIRY_LONG_HOURS * 3_600_000,
    heapGrowingPercent: result.data.HEAP_GROWING_PERCENT,
    tracing: tracingSettingsOf(result.data),
    webhooks: {
      retryDelaysMs: result.data.WEBHOOK_RETRY_DELAYS_MS,
      concurrency: result.data.WEBHOOK_CONCURRENCY,
      endpointConcurrency: result.data.WEBHOOK_ENDPOINT_CONCURRENCY,
    },
  };
}
