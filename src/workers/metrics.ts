import { Counter, Registry } from 'prom-client';

/**
 * The workers' Prometheus metrics, on a registry of their own (workers and http never import
 * each other; serve.ts serves this registry beside the server's at /metrics). Every label has
 * a bounded set of values.
 */
export interface WorkerMetrics {
  readonly registry: Registry;
  /**
   * Delivery jobs failed because this database has no such event or endpoint: another
   * installation's jobs on a shared Redis prefix, or lost rows. Anything above 0 needs a look.
   */
  readonly unknownDeliveryJobs: Counter<'missing'>;
}

export function createWorkerMetrics(): WorkerMetrics {
  const registry = new Registry();
  return {
    registry,
    unknownDeliveryJobs: new Counter({
      name: 'spendgate_webhook_jobs_unknown_total',
      help: 'Webhook delivery jobs failed because this database has no such event or endpoint.',
      labelNames: ['missing'],
      registers: [registry],
    }),
  };
}
