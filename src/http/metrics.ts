import { collectDefaultMetrics, Counter, Histogram, Registry } from 'prom-client';
import { AUTHORIZE_BATCH_MAX, type ReplicaEvent, type Store } from '../store/store.js';

/*
 * The server's Prometheus metrics, served at /metrics. Each server has a registry of its own,
 * so several can live in one process (tests, embedding services). Every label has a bounded
 * set of values: route patterns (never URLs), decline codes, booleans, key classes. The
 * workers' metrics are in src/workers/metrics.ts; README's Metrics section lists both, and
 * docs/grafana/spendgate-dashboard.json reads them.
 */

export interface Metrics {
  readonly registry: Registry;
  readonly requestSeconds: Histogram<'method' | 'route' | 'status'>;
  /** `stand_in` is "true" for a stand-in decision (past the budget, or the store failed). */
  readonly decisions: Counter<'outcome' | 'decline_code' | 'stand_in'>;
  /** Declines for want of a usable price (rule `rate_unavailable`, docs/pricing.md). */
  readonly rateUnavailableDeclines: Counter;
  /** Authorizations per database batch (store/authorize/lanes.ts). */
  readonly authorizeBatchRequests: Histogram;
  readonly rateLimitRefusals: Counter<'key_class'>;
  /** Reads that may lag, by where they were served and why (DATABASE_READ_URL). */
  readonly replicaReads: Counter<'served_by' | 'reason'>;
  /** Write positions that could not be kept (read-your-writes at risk until they expire). */
  readonly writePositionsLost: Counter;
  /**
   * Processor messages (contract section 17) by processor, event type (`unknown` for one not
   * taken) and outcome: ok, replayed, approved, declined, or the refusal's error code.
   */
  readonly processorMessages: Counter<'processor' | 'event' | 'outcome'>;
}

/** The `key_class` label of each rate-limit class (config RateLimitSettings). */
export const RATE_LIMIT_KEY_CLASSES = {
  livePerSecond: 'live',
  testPerSecond: 'test',
  authorizationsPerSecond: 'card_network',
} as const;

/** Powers of two up to the batch bound, and the bound: a full batch shows as one. */
function batchBuckets(max: number): number[] {
  const buckets: number[] = [];
  for (let size = 1; size < max; size *= 2) buckets.push(size);
  return [...buckets, max];
}

export function createMetrics(): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const rateLimitRefusals = new Counter({
    name: 'spendgate_rate_limit_refusals_total',
    help: 'Requests refused with 429 by the rate limits, by key class (live, test, card_network).',
    labelNames: ['key_class'],
    registers: [registry],
  });
  // Every class from the start: a refusal rate reads 0 rather than no data.
  for (const keyClass of Object.values(RATE_LIMIT_KEY_CLASSES)) {
    rateLimitRefusals.inc({ key_class: keyClass }, 0);
  }
  return {
    registry,
    requestSeconds: new Histogram({
      name: 'spendgate_http_request_duration_seconds',
      help: 'HTTP request latency by method, route and status.',
      labelNames: ['method', 'route', 'status'],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      registers: [registry],
    }),
    decisions: new Counter({
      name: 'spendgate_authorization_decisions_total',
      help: 'Authorization decisions answered, by outcome, decline code and stand-in.',
      labelNames: ['outcome', 'decline_code', 'stand_in'],
      registers: [registry],
    }),
    rateUnavailableDeclines: new Counter({
      name: 'spendgate_rate_unavailable_declines_total',
      help: 'Authorizations declined card_declined, rule rate_unavailable: no usable feed price converted the billing currency.',
      registers: [registry],
    }),
    authorizeBatchRequests: new Histogram({
      name: 'spendgate_authorize_batch_requests',
      help: 'Authorizations decided per database batch (one transaction each).',
      buckets: batchBuckets(AUTHORIZE_BATCH_MAX),
      registers: [registry],
    }),
    rateLimitRefusals,
    replicaReads: new Counter({
      name: 'spendgate_replica_reads_total',
      help: 'Reads that may lag (lists, histories, deliveries, backtests) with a replica set: served_by replica, or primary with the reason.',
      labelNames: ['served_by', 'reason'],
      registers: [registry],
    }),
    writePositionsLost: new Counter({
      name: 'spendgate_write_positions_lost_total',
      help: 'Commits whose write position could not be kept in Redis (read-your-writes of that account at risk).',
      registers: [registry],
    }),
    processorMessages: new Counter({
      name: 'spendgate_processor_messages_total',
      help: 'Processor messages (Stripe, Lithic, Marqeta) by event type and outcome: ok, replayed, approved, declined, or the error code refused with.',
      labelNames: ['processor', 'event', 'outcome'],
      registers: [registry],
    }),
  };
}

/**
 * Counts the store's replica reads into `metrics` (every role: the worker's backtests read
 * too); returns the removal, for the server's close, since a store outlives its servers.
 */
export function observeReplicaReads(store: Store, metrics: Metrics): () => void {
  return store.observeReplicaReads((event: ReplicaEvent) => {
    if (event.kind === 'position_not_kept') metrics.writePositionsLost.inc();
    else metrics.replicaReads.inc({ served_by: event.servedBy, reason: event.reason });
  });
}
