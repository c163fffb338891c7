import type { Queue } from 'bullmq';
import type { RedisConnection } from '../redis.js';
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { OutboxBacklog, Store } from '../store/store.js';

/*
 * The workers' Prometheus metrics, on a registry of their own (workers and http never import
 * each other; serve.ts serves this registry beside the server's at /metrics). Every label has
 * a bounded set of values. README's Metrics section lists them.
 *
 * Two kinds: counters and histograms the workers move as they work, and gauges read when
 * /metrics is scraped (the outbox's backlog, the queues' counts). A scrape must answer quickly
 * whatever the database and Redis do, and a storm of scrapes must not become a storm of
 * queries: each gauge's reading is kept `sampleFreshMs` and waited for at most
 * SAMPLE_WAIT_MS, with one reading in flight at a time (ScrapeSample). A source that did not
 * answer leaves its gauge without samples (absent, not a stale or made-up 0), beside
 * `spendgate_dependency_up`, which names the dependency down.
 */

export interface WorkerMetrics {
  readonly registry: Registry;
  /**
   * Delivery jobs failed because this database has no such event or endpoint: another
   * installation's jobs on a shared Redis prefix, or lost rows. Anything above 0 needs a look.
   */
  readonly unknownDeliveryJobs: Counter<'missing'>;
  /** Webhook delivery attempts by outcome (WEBHOOK_OUTCOMES). */
  readonly webhookDeliveries: Counter<'outcome'>;
  /** One delivery attempt, from connecting to the answer (or the timeout). */
  readonly webhookAttemptSeconds: Histogram;
  /** The Solana transfer worker's steps by mode and outcome (SOLANA_OUTCOMES). */
  readonly solanaSends: Counter<'mode' | 'outcome'>;
  /** From this process's first send of a transfer to the round that saw it land. */
  readonly solanaConfirmationSeconds: Histogram<'mode'>;
  /** The latest reconciliation of reserves this process ran (workers/reserves.ts). */
  readonly reserveRatio: Gauge<'mode' | 'currency'>;
  readonly reserveShortfall: Gauge<'mode' | 'currency'>;
  readonly reserveRunTime: Gauge<'mode' | 'currency'>;
  /** The latest run's figures in USD at the feed price (reserve-valuation.ts). */
  readonly reserveValueUsd: Gauge<'mode' | 'currency' | 'term'>;
  /** New external transfers kept pending because their (mode, currency) is short. */
  readonly transfersWaitingReserves: Gauge<'mode' | 'currency'>;
  /** Reads the outbox's backlog at scrape time from `store`; returns the stop. */
  watchOutbox(store: Store): () => void;
  /** Reads these queues' counts at scrape time, through `connection`; returns the stop. */
  watchQueues(queues: readonly Queue[], connection: RedisConnection): () => void;
}

export const WEBHOOK_OUTCOMES = [
  /** A 2xx: the job ends. */
  'delivered',
  /** Any other answer, or none; attempts remain, so BullMQ retries on the schedule. */
  'failed_will_retry',
  /** The same on the last attempt: the job ends failed. */
  'failed_final',
  /** A 410: the endpoint is disabled and the job ends. */
  'endpoint_disabled',
] as const;

export type WebhookOutcome = (typeof WEBHOOK_OUTCOMES)[number];

export const SOLANA_OUTCOMES = [
  /** Signed, recorded and sent for the first time. */
  'sent',
  /** Still unknown to the chain with its blockhash valid: the same bytes sent again. */
  'resent',
  /** Its blockhash expired unseen: signed anew, recorded, sent. */
  'resigned',
  /** Landed: the transfer completed. */
  'confirmed',
  /** A definite on-chain error: the transfer failed and its hold was released. */
  'failed',
  /** Never sendable as asked (address, currency, treasury as recipient): failed unsent. */
  'refused',
  /** The chain or the database did not answer; the next round tries the same step. */
  'error',
] as const;

export type SolanaOutcome = (typeof SOLANA_OUTCOMES)[number];

/** The queue states counted; `paused` and `prioritized` are never used by spendgate. */
const QUEUE_STATES = ['waiting', 'active', 'delayed', 'failed'] as const;

/** How long a scrape waits for a reading before answering without it. */
export const SAMPLE_WAIT_MS = 500;
/** How long a reading serves scrapes before the next one reads again. */
export const SAMPLE_FRESH_MS_DEFAULT = 5_000;
/**
 * Unrelayed events counted at most: the count reads the relay's partial index, and a backlog
 * past this is already an outage (the gauge then says "at least").
 */
export const OUTBOX_PENDING_COUNT_MAX = 100_000;

/**
 * A reading for scrapes, bounded three ways: kept `freshMs` after it settles (every scrape in
 * that time gets it without a query), one read in flight at most (a scrape during a slow read
 * waits on that one, never starts another), and each scrape waits at most `waitMs` (then it
 * gets null: the read goes on, and a later scrape may have it). A failed read is null, kept
 * as long as a value would be, so a dependency that is down is asked once per `freshMs`.
 */
export class ScrapeSample<T> {
  #value: T | null = null;
  #settledAtMs = -Infinity;
  #reading: Promise<void> | null = null;

  constructor(
    private readonly read: () => Promise<T>,
    private readonly options: {
      readonly freshMs: number;
      readonly waitMs: number;
      /** Monotonic milliseconds; tests pass a clock they move. */
      readonly nowMs?: () => number;
    },
  ) {}

  async value(): Promise<T | null> {
    const nowMs = this.options.nowMs ?? (() => performance.now());
    if (this.#reading === null && nowMs() - this.#settledAtMs < this.options.freshMs) {
      return this.#value;
    }
    this.#reading ??= this.read().then(
      (value) => {
        this.#settle(value, nowMs());
      },
      () => {
        this.#settle(null, nowMs());
      },
    );
    let timer: NodeJS.Timeout | undefined;
    const settled = await Promise.race([
      this.#reading.then(() => true),
      new Promise<false>((resolve) => {
        timer = setTimeout(() => {
          resolve(false);
        }, this.options.waitMs);
      }),
    ]);
    clearTimeout(timer);
    return settled ? this.#value : null;
  }

  #settle(value: T | null, nowMs: number): void {
    this.#value = value;
    this.#settledAtMs = nowMs;
    this.#reading = null;
  }
}

type QueueCounts = ReadonlyMap<string, Readonly<Record<(typeof QUEUE_STATES)[number], number>>>;

async function readQueues(
  queues: readonly Queue[],
  connection: RedisConnection,
): Promise<QueueCounts> {
  // Not connected: fail now rather than wait in BullMQ for a connection that may not come.
  if (connection.status !== 'ready') throw new Error('Redis is not connected');
  const counts = await Promise.all(
    queues.map(async (queue) => {
      const read = await queue.getJobCounts(...QUEUE_STATES);
      return [
        queue.name,
        {
          waiting: read.waiting ?? 0,
          active: read.active ?? 0,
          delayed: read.delayed ?? 0,
          failed: read.failed ?? 0,
        },
      ] as const;
    }),
  );
  return new Map(counts);
}

/** The readings the scrape-time gauges serve; null until watched, and again once unwatched. */
interface Watched {
  outbox: ScrapeSample<OutboxBacklog> | null;
  queues: ScrapeSample<QueueCounts> | null;
}

export function createWorkerMetrics(
  options: {
    /** How long a scrape-time reading is kept; SAMPLE_FRESH_MS_DEFAULT unless given. */
    readonly sampleFreshMs?: number;
  } = {},
): WorkerMetrics {
  const registry = new Registry();
  const freshMs = options.sampleFreshMs ?? SAMPLE_FRESH_MS_DEFAULT;
  const sampled = { freshMs, waitMs: SAMPLE_WAIT_MS };
  const watched: Watched = { outbox: null, queues: null };

  const { webhookDeliveries, solanaSends } = registerOutcomeCounters(registry);
  registerScrapeGauges(registry, watched);

  return {
    registry,
    unknownDeliveryJobs: new Counter({
      name: 'spendgate_webhook_jobs_unknown_total',
      help: 'Webhook delivery jobs failed because this database has no such event or endpoint.',
      labelNames: ['missing'],
      registers: [registry],
    }),
    webhookDeliveries,
    webhookAttemptSeconds: new Histogram({
      name: 'spendgate_webhook_delivery_duration_seconds',
      help: 'Webhook delivery attempts, from connecting to the answer or the 15 s timeout.',
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 15],
      registers: [registry],
    }),
    solanaSends,
    solanaConfirmationSeconds: new Histogram({
      name: 'spendgate_solana_confirmation_seconds',
      help: "From this process's first send of a Solana transfer to the round that saw it land.",
      labelNames: ['mode'],
      buckets: [0.25, 0.5, 1, 2, 5, 10, 20, 30, 60, 120, 300, 600],
      registers: [registry],
    }),
    ...registerReserveGauges(registry),
    watchOutbox(store) {
      const sample = new ScrapeSample(() => store.outboxBacklog(OUTBOX_PENDING_COUNT_MAX), sampled);
      watched.outbox = sample;
      return () => {
        if (watched.outbox === sample) watched.outbox = null;
      };
    },
    watchQueues(queues, connection) {
      const sample = new ScrapeSample(() => readQueues(queues, connection), sampled);
      watched.queues = sample;
      return () => {
        if (watched.queues === sample) watched.queues = null;
      };
    },
  };
}

/**
 * The reserve gauges, set by each run (no series before the first: absent, not a made-up 0),
 * and the waiting transfers' gauge, set by each round of the transfer worker.
 */
function registerReserveGauges(
  registry: Registry,
): Pick<
  WorkerMetrics,
  | 'reserveRatio'
  | 'reserveShortfall'
  | 'reserveRunTime'
  | 'reserveValueUsd'
  | 'transfersWaitingReserves'
> {
  const labelNames = ['mode', 'currency'] as const;
  return {
    reserveRatio: new Gauge({
      name: 'spendgate_reserve_ratio',
      help: 'Reserves (treasury on chain + unswept deposits) over liabilities (owed to vaults - in-flight transfers landed), by mode and currency, rounded down to 9 places; 1 when nothing is owed; below 1: short (docs/reserves.md).',
      labelNames,
      registers: [registry],
    }),
    reserveShortfall: new Gauge({
      name: 'spendgate_reserve_shortfall',
      help: 'What the reserves lack to cover the liabilities, in the currency (0 when covered), by mode and currency.',
      labelNames,
      registers: [registry],
    }),
    reserveRunTime: new Gauge({
      name: 'spendgate_reserve_run_timestamp_seconds',
      help: 'When this process last reconciled the reserves of a mode and currency (Unix seconds).',
      labelNames,
      registers: [registry],
    }),
    reserveValueUsd: new Gauge({
      name: 'spendgate_reserve_value_usd',
      help: 'The latest reconciliation valued in USD at the feed price (SOL/USD, USDC/USD), by mode, currency and term (reserves, liabilities, shortfall); absent without a usable price (docs/pricing.md).',
      labelNames: ['mode', 'currency', 'term'],
      registers: [registry],
    }),
    transfersWaitingReserves: new Gauge({
      name: 'spendgate_transfers_waiting_reserves',
      help: 'New external transfers kept pending because the latest reconciliation of their mode and currency is short.',
      labelNames,
      registers: [registry],
    }),
  };
}

/** The counters by outcome, each series there from the start. */
function registerOutcomeCounters(
  registry: Registry,
): Pick<WorkerMetrics, 'webhookDeliveries' | 'solanaSends'> {
  const webhookDeliveries = new Counter({
    name: 'spendgate_webhook_deliveries_total',
    help: 'Webhook delivery attempts by outcome: delivered (2xx), failed_will_retry, failed_final (the last attempt), endpoint_disabled (410).',
    labelNames: ['outcome'],
    registers: [registry],
  });
  const solanaSends = new Counter({
    name: 'spendgate_solana_sends_total',
    help: 'Solana transfer steps by mode and outcome: sent, resent, resigned, confirmed, failed (on chain), refused (unsendable), error (retried next round).',
    labelNames: ['mode', 'outcome'],
    registers: [registry],
  });
  // Every series from the start, so that rates read 0 rather than no data.
  for (const outcome of WEBHOOK_OUTCOMES) webhookDeliveries.inc({ outcome }, 0);
  for (const mode of ['test', 'live']) {
    for (const outcome of SOLANA_OUTCOMES) solanaSends.inc({ mode, outcome }, 0);
  }
  return { webhookDeliveries, solanaSends };
}

/** The gauges read at scrape time, from what is `watched` then. */
function registerScrapeGauges(registry: Registry, watched: Watched): void {
  registerOutboxGauge(
    registry,
    watched,
    'spendgate_outbox_lag_seconds',
    'Age of the oldest outbox event not yet relayed to the queue (0: none waiting); absent while the database does not answer.',
    (backlog) => backlog.lagSeconds,
  );
  registerOutboxGauge(
    registry,
    watched,
    'spendgate_outbox_pending_events',
    `Outbox events not yet relayed to the queue, counted up to ${String(OUTBOX_PENDING_COUNT_MAX)}; absent while the database does not answer.`,
    (backlog) => backlog.pending,
  );
  const queueJobs = new Gauge({
    name: 'spendgate_queue_jobs',
    help: 'BullMQ jobs by queue and state (waiting, active, delayed, failed); absent while Redis does not answer.',
    labelNames: ['queue', 'state'],
    registers: [registry],
    async collect() {
      const counts = await watched.queues?.value();
      queueJobs.reset();
      if (counts == null) return;
      for (const [queue, states] of counts) {
        for (const state of QUEUE_STATES) queueJobs.set({ queue, state }, states[state]);
      }
    },
  });
}

/** An outbox gauge. Both read the same sample: one statement per reading, joined or cached. */
function registerOutboxGauge(
  registry: Registry,
  watched: Watched,
  name: string,
  help: string,
  pick: (backlog: OutboxBacklog) => number,
): void {
  const gauge: Gauge = new Gauge({
    name,
    help,
    registers: [registry],
    async collect() {
      const backlog = await watched.outbox?.value();
      // A gauge without labels reads 0 after reset; removed, it has no sample at all.
      gauge.reset();
      if (backlog == null) gauge.remove();
      else gauge.set(pick(backlog));
    },
  });
}
