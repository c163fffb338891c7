/*
 * What each setting is, for people: the one source of docs/settings.md (written by
 * `npm run settings-doc`; test/settings-doc.test.ts fails while it is stale, or while a setting
 * the service reads has no row here). Markdown, relative to docs/.
 */

export interface SettingDoc {
  /** The settings the row is about (several when they go together). */
  readonly names: readonly string[];
  readonly default: string;
  readonly meaning: string;
}

export const SETTINGS_DOC: readonly SettingDoc[] = [
  {
    names: ['PORT', 'HOST'],
    default: '`3000`, `127.0.0.1`',
    meaning: 'where to listen',
  },
  {
    names: ['WORKER_PORT'],
    default: '`PORT`',
    meaning:
      'where `serve --role worker` answers `/healthz`, `/readyz` and `/metrics` (every role serves them; only the API roles serve `/v1`)',
  },
  {
    names: ['DATABASE_URL'],
    default: 'unset: embedded',
    meaning: 'a `postgres://` URL of a PostgreSQL 15+ server',
  },
  {
    names: ['DATABASE_READ_URL'],
    default: 'unset: none',
    meaning:
      'a streaming replica of `DATABASE_URL` for the reads that may lag ([operations](operations.md#read-replica))',
  },
  {
    names: ['DATABASE_POOL_MAX'],
    default: '`20`',
    meaning:
      "connections each PostgreSQL pool of a process holds at most (`DATABASE_URL`'s, and `DATABASE_READ_URL`'s); keep the processes' sum under the server's `max_connections`",
  },
  {
    names: ['DATABASE_WRITES_MAX'],
    default: '`4`',
    meaning:
      'write transactions (lifecycle messages, changes through the API) a process keeps in PostgreSQL at once; the rest wait in the process, first come first served ([performance](performance.md)); authorizations batch theirs apart from it',
  },
  {
    names: ['PGCONNECT_TIMEOUT'],
    default: '`10`',
    meaning:
      'seconds the first connection to `DATABASE_URL` may take before the command gives up, saying so',
  },
  {
    names: ['SPENDGATE_MASTER_KEY'],
    default: 'unset: `./data/master.key`',
    meaning: "32 bytes, base64; wraps each vault's data key; required with `DATABASE_URL`",
  },
  {
    names: ['SPENDGATE_MASTER_KEY_DECRYPT_ONLY'],
    default: 'unset',
    meaning:
      'up to 4 more master keys, comma-separated, that decrypt but never encrypt: the old key while `keys rotate-master` runs',
  },
  {
    names: ['SPENDGATE_DATA_DIR'],
    default: '`./data`',
    meaning:
      'where the embedded database and its key live; one process at a time opens it (`pglite/spendgate.lock`)',
  },
  {
    names: ['SPENDGATE_MODES'],
    default: '`test,live`',
    meaning: 'the key modes served (`test` for a sandbox deployment)',
  },
  {
    names: ['REDIS_URL'],
    default: '`redis://127.0.0.1:6379`',
    meaning: 'Redis for queues and rate limits; the service starts and serves without it',
  },
  {
    names: ['REDIS_CLUSTER_NODES'],
    default: 'unset',
    meaning:
      'a Redis Cluster, `host:port,...` of some of its nodes; set, it replaces `REDIS_URL` ([operations](operations.md#redis))',
  },
  {
    names: ['REDIS_PREFIX'],
    default: 'unset: `spendgate-<installation id>`',
    meaning:
      'every key spendgate keeps in Redis; set by hand, it is claimed by one database, and a second refuses to start',
  },
  {
    names: ['LOG_LEVEL'],
    default: '`info`',
    meaning: 'pino level; JSON lines on stdout, written in blocks of 4 KB or every 250 ms',
  },
  {
    names: [
      'RATE_LIMIT_LIVE_PER_SECOND',
      'RATE_LIMIT_TEST_PER_SECOND',
      'RATE_LIMIT_AUTHORIZATIONS_PER_SECOND',
    ],
    default: '`100`, `25`, `10000`',
    meaning:
      "requests per second per key; the last for the card network's callbacks (a key whose only scope is `authorizations:write`, on the authorize, capture and reverse routes)",
  },
  {
    names: ['AUTHORIZE_BUDGET_MS'],
    default: '`1500`',
    meaning: 'the time an authorization may take before the stand-in answer',
  },
  {
    names: ['STAND_IN'],
    default: '`decline`',
    meaning: 'the stand-in answer: `decline` or `approve`',
  },
  {
    names: ['STAND_IN_JOURNAL_DIR'],
    default: '`<SPENDGATE_DATA_DIR>/stand-in`',
    meaning:
      'where stand-in answers wait, on disk, until the ledger records them; one folder per machine and installation',
  },
  {
    names: ['CARD_BIN'],
    default: '`424242`',
    meaning: 'the 6-8 digit BIN new card numbers start with',
  },
  {
    names: ['SOLANA_RPC_URL'],
    default: 'unset',
    meaning: 'the cluster of live external transfers; unset, they are refused with 503',
  },
  {
    names: ['SOLANA_TEST_RPC_URL'],
    default: 'unset: a local Solana runtime in-process',
    meaning: 'the cluster of test-mode external transfers',
  },
  {
    names: ['SOLANA_TREASURY_KEY'],
    default: "unset: the local runtime's treasury",
    meaning:
      "the signer of external transfers: a keypair file's path or a base58 secret key (never logged)",
  },
  {
    names: ['SOLANA_USDC_MINT', 'SOLANA_TEST_USDC_MINT'],
    default: "mainnet's and devnet's USDC",
    meaning:
      'the USDC mint of the live cluster, and of a test cluster named by `SOLANA_TEST_RPC_URL`',
  },
  {
    names: ['SPENDGATE_TEST_DEPOSIT_PAUSE'],
    default: '`0`',
    meaning:
      'tests only (`1`, with `SPENDGATE_MODES=test`): the deposit watcher stops before each credit',
  },
  {
    names: ['WEBHOOK_RETRY_DELAYS_MS'],
    default: '5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 14 h, 20 h, 24 h (then it stops)',
    meaning: 'the waits between delivery attempts, comma-separated milliseconds',
  },
  {
    names: ['WEBHOOK_CONCURRENCY', 'WEBHOOK_ENDPOINT_CONCURRENCY'],
    default: '`128`, `32`',
    meaning:
      "deliveries in flight per worker process, and to one endpoint (which holds at most twice that many of the process's slots)",
  },
  {
    names: ['HOLD_EXPIRY_HOURS'],
    default: '`168` (7 days)',
    meaning: 'card holds not captured within this many hours are released (`expired`)',
  },
  {
    names: ['HOLD_EXPIRY_LONG_HOURS'],
    default: '`744` (31 days)',
    meaning:
      'the same for holds of lodging (MCC 3501-3999, 7011), car rental (3351-3500, 7512) and cruise lines (4411)',
  },
  {
    names: ['PRICE_MAX_AGE_MS', 'PRICE_CONFIDENCE_MAX'],
    default: '`10000`, `0.01`',
    meaning:
      'a feed price older than this, or with a confidence wider than this fraction of it, is unused ([pricing.md](pricing.md))',
  },
  {
    names: ['SOL_HOLD_BUFFER'],
    default: '`0.05`',
    meaning:
      "what a SOL hold adds to the billing amount's worth, against the price moving before capture",
  },
  {
    names: ['PRICE_FEEDS', 'PRICE_TEST_FEEDS'],
    default: "mainnet SOL/USD, USDC/USD; the local runtime's four",
    meaning: 'the Pyth price accounts (`PAIR=address,...`) read on the live and the test cluster',
  },
  {
    names: ['PRICE_ORACLE_PROGRAM', 'PRICE_TEST_ORACLE_PROGRAM'],
    default: "Pyth's mainnet and devnet oracle",
    meaning: 'the program that must own those accounts',
  },
  {
    names: ['PRICE_POLL_MS', 'PRICE_READ_TIMEOUT_MS'],
    default: '`1000`, `2000`',
    meaning: 'how often each feed is read in the background, and how long one read may take',
  },
  {
    names: ['HEAP_GROWING_PERCENT'],
    default: '`300` (4x)',
    meaning:
      "how far `serve`'s heap grows between full collections, in % of what the last left (0-300; 0: V8's own); see [performance.md](performance.md)",
  },
  {
    names: ['TRACING_SAMPLE_RATIO'],
    default: '`0` (off)',
    meaning:
      'the share of requests traced with OpenTelemetry, 0 to 1 (`0.01`: one in a hundred); a request whose `traceparent` says sampled is traced too; 0 makes no span at all ([operations](operations.md#tracing))',
  },
  {
    names: ['OTEL_EXPORTER_OTLP_ENDPOINT', 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT'],
    default: '`http://localhost:4318`, `<endpoint>/v1/traces`',
    meaning:
      'the OpenTelemetry collector spans are posted to (OTLP over HTTP, JSON): its base URL, or the full URL of its traces',
  },
  {
    names: ['OTEL_EXPORTER_OTLP_HEADERS', 'OTEL_EXPORTER_OTLP_TRACES_HEADERS'],
    default: 'unset: none',
    meaning:
      "headers sent with every export (`key=value,...`: a hosted collector's key), read by the OpenTelemetry exporter itself",
  },
  {
    names: ['OTEL_SERVICE_NAME'],
    default: '`spendgate`',
    meaning: 'the `service.name` of every span',
  },
];

/** docs/settings.md as it should read. */
export function settingsDocument(): string {
  const cell = (text: string) => text.replace(/\|/g, '\\|');
  const rows = SETTINGS_DOC.map(
    (row) =>
      `| ${row.names.map((name) => `\`${name}\``).join(', ')} | ${cell(row.default)} | ${cell(row.meaning)} |`,
  );
  return [
    '# Settings',
    '',
    '<!-- Written by `npm run settings-doc` from src/config/settings-doc.ts; edit that file. -->',
    '',
    'spendgate reads its settings from the environment. A missing or malformed setting stops the',
    'start with a message that names it (never its value). Running in production:',
    '[operations.md](operations.md).',
    '',
    '| setting | default | meaning |',
    '| --- | --- | --- |',
    ...rows,
    '',
  ].join('\n');
}
