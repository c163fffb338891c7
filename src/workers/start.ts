import { Queue } from 'bullmq';
import type { Mode } from '../core/index.js';
import type { Store } from '../store/store.js';
import { DEFAULT_RELAY_OPTIONS, OutboxRelay, type RelayOptions } from './outbox-relay.js';
import {
  producerConnection,
  queuePrefix,
  WEBHOOK_QUEUE,
  workerConnection,
  type WebhookJob,
} from './queues.js';
import {
  deliveryJobOptions,
  startWebhookWorker,
  type DeliveryLog,
  type DeliverySettings,
} from './webhook-delivery.js';
import {
  DEFAULT_MAINTENANCE_SETTINGS,
  startMaintenance,
  type Maintenance,
  type MaintenanceSettings,
} from './maintenance.js';
import { createWorkerMetrics, type WorkerMetrics } from './metrics.js';
import type { LoopLog } from './polling-loop.js';
import {
  DEFAULT_SOLANA_TRANSFER_OPTIONS,
  SolanaTransferWorker,
  type ChainTarget,
  type SolanaTransferOptions,
} from './solana-transfers.js';
import {
  DEFAULT_SETTLEMENT_OPTIONS,
  SettlementWorker,
  type SettlementOptions,
} from './settlement.js';

export interface Workers {
  readonly relay: OutboxRelay;
  readonly queue: Queue<WebhookJob>;
  readonly metrics: WorkerMetrics;
  stop(): Promise<void>;
}

/**
 * The worker role (`spendgate serve --role worker|all`): the outbox relay, the webhook
 * delivery worker, the settlement worker, the Solana transfer worker and the maintenance
 * schedules (hold expiry, balance snapshots), on Redis connections of their own. `stop` is the graceful shutdown: the relay
 * finishes its round, the worker finishes the deliveries in flight (BullMQ returns a job it
 * could not finish to the queue, where another worker or the next start takes it), and the
 * connections close.
 *
 * The work on Redis (relay, delivery, maintenance) starts once `prefixClaimed` resolves: no job
 * is added to or taken from a prefix before this database holds it (prefix-claim.ts). While
 * Redis is down that waits, and it never starts if another database holds the prefix. The
 * settlement and Solana workers need only the database and start at once.
 */
export function startWorkers(dependencies: {
  readonly store: Store;
  readonly redisUrl: string;
  readonly redisPrefix: string;
  readonly delivery: DeliverySettings;
  readonly relay?: RelayOptions;
  readonly settlement?: SettlementOptions;
  readonly maintenance?: MaintenanceSettings;
  /** The chains external transfers go to; none: no transfer is sent from this process. */
  readonly chains?: Readonly<Record<Mode, ChainTarget | null>>;
  readonly solana?: SolanaTransferOptions;
  readonly log: LoopLog & DeliveryLog;
  /** Resolves when this database holds `redisPrefix` (prefix-claim.ts); default: at once. */
  readonly prefixClaimed?: Promise<void>;
  readonly metrics?: WorkerMetrics;
}): Workers {
  const metrics = dependencies.metrics ?? createWorkerMetrics();
  const producer = producerConnection(dependencies.redisUrl);
  const consumer = workerConnection(dependencies.redisUrl);
  const queue = new Queue<WebhookJob>(WEBHOOK_QUEUE, {
    connection: producer,
    prefix: queuePrefix(dependencies.redisPrefix),
    defaultJobOptions: deliveryJobOptions(dependencies.delivery.retryDelaysMs),
  });
  queue.on('error', () => undefined);
  const relay = new OutboxRelay(
    dependencies.store,
    queue,
    dependencies.log,
    dependencies.relay ?? DEFAULT_RELAY_OPTIONS,
  );
  const worker = startWebhookWorker({
    store: dependencies.store,
    connection: consumer,
    redisPrefix: dependencies.redisPrefix,
    settings: dependencies.delivery,
    log: dependencies.log,
    metrics,
    autorun: false,
  });
  const settlement = new SettlementWorker(
    dependencies.store,
    dependencies.log,
    dependencies.settlement ?? DEFAULT_SETTLEMENT_OPTIONS,
  );
  const transfers =
    dependencies.chains === undefined
      ? null
      : new SolanaTransferWorker(
          dependencies.store,
          dependencies.chains,
          dependencies.log,
          dependencies.solana ?? DEFAULT_SOLANA_TRANSFER_OPTIONS,
          metrics,
        );
  settlement.start();
  transfers?.start();
  const unwatchOutbox = metrics.watchOutbox(dependencies.store);
  let unwatchQueues = (): void => undefined;
  let stopped = false;
  let maintenance: Maintenance | null = null;
  const startRedisWork = (): void => {
    if (stopped) return;
    relay.start();
    // Its own promise, which ends when the worker closes; errors are reported by 'error'.
    void worker.run().catch(() => undefined);
    maintenance = startMaintenance({
      store: dependencies.store,
      producer,
      consumer,
      redisPrefix: dependencies.redisPrefix,
      settings: dependencies.maintenance ?? DEFAULT_MAINTENANCE_SETTINGS,
    });
    // Counted once this database holds the prefix: before, the queues may be another's.
    unwatchQueues = metrics.watchQueues([queue, maintenance.queue], producer);
  };
  if (dependencies.prefixClaimed === undefined) startRedisWork();
  // Refused: the Redis work never starts (the caller reports the refusal and stops).
  else dependencies.prefixClaimed.then(startRedisWork, () => undefined);
  return {
    relay,
    queue,
    metrics,
    async stop() {
      stopped = true;
      unwatchOutbox();
      unwatchQueues();
      await relay.stop();
      await settlement.stop();
      await transfers?.stop();
      await maintenance?.stop();
      await worker.close();
      await queue.close();
      producer.disconnect();
      consumer.disconnect();
    },
  };
}
