import { collectDefaultMetrics, Counter, Histogram, Registry } from 'prom-client';

/**
 * The server's Prometheus metrics, served at /metrics. Each server has a registry of its own,
 * so several can live in one process (tests, embedding services). Every label has a bounded
 * set of values: route patterns (never URLs), decline codes, booleans.
 */
export interface Metrics {
  readonly registry: Registry;
  readonly requestSeconds: Histogram<'method' | 'route' | 'status'>;
  readonly decisions: Counter<'outcome' | 'decline_code' | 'stand_in'>;
}

export function createMetrics(): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
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
  };
}
