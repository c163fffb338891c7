import { Queue, type Worker } from 'bullmq';
import type { RedisConnection } from '../redis.js';
import type { RedisTarget } from '../config/env.js';
import type { Mode } from '../core/index.js';
import type { Store } from '../store/store.js';
import {
  BacktestRelay,
  DEFAULT_BACKTEST_SETTINGS,
  startBacktestWorker,
  type BacktestSettings,
  type BacktestWorker,
} from './backtests.js';
import { DEFAULT_RELAY_OPTIONS, OutboxRelay, type RelayOptions } from './outbox-relay.js';
import {
  DEFAULT_REQUEUE_SETTINGS,
  DeliveryRequeue,
  type RequeueSettings,
} from './delivery-requeue.js';
import {
  BACKTEST_QUEUE,
  closeWorkerWithin,
  confirmReplicated,
  producerConnection,
  queuePrefix,
  WEBHOOK_QUEUE,
  workerConnection,
  type BacktestJob,
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
import {
  DEFAULT_DEPOSIT_SETTINGS,
  startDepositJobs,
  type DepositJobs,
  type DepositSettings,
} from './deposit-jobs.js';
import type { LoopLog } from './polling-loop.js';
import {
  DEFAULT_SOLANA_TRANSFER_OPTIONS,
  SolanaTransferWorker,
  type ChainTarget,
  type SolanaTransferOptions,
} from './solana-transfers.js';
import {
  DEFAULT_RESERVE_SETTINGS,
  ReserveReconciler,
  type ReserveLog,
  type ReserveSettings,
} from './reserves.js';
import type { ReserveValuationSource } from './reserve-valuation.js';
import {
  DEFAULT_SETTLEMENT_OPTIONS,
  SettlementWorker,
  type SettlementOptions,
} from './settlement.js';

export interface Workers {
  readonly relay: OutboxRelay;
  /** Adds again the delivery jobs Redis lost (delivery-requeue.ts). */
  readonly requeue: DeliveryRequeue;
  readonly queue: Queue<WebhookJob>;
  readonly metrics: WorkerMetrics;
  stop(): Promise<void>;
}

export interface WorkerDependencies {
  readonly store: Store;
  readonly redis: RedisTarget;
  readonly redisPrefix: string;
  readonly delivery: DeliverySettings;
  readonly relay?: RelayOptions;
  /** The re-queue loop over what is owed; DEFAULT_REQUEUE_SETTINGS unless given. */
  readonly requeue?: RequeueSettings;
  readonly settlement?: SettlementOptions;
  readonly maintenance?: MaintenanceSettings;
  /** Policy backtests run as jobs (workers/backtests.ts); DEFAULT_BACKTEST_SETTINGS unless given. */
  readonly backtests?: BacktestSettings;
  /** The chains external transfers go to; none: no transfer is sent from this process. */
  readonly chains?: Readonly<Record<Mode, ChainTarget | null>>;
  readonly solana?: SolanaTransferOptions;
  /** The reconciliation of reserves, run with the chains (workers/reserves.ts). */
  readonly reserves?: ReserveSettings;
  /** Where each run reads its currency's USD price (reserve-valuation.ts); none: not valued. */
  readonly reserveValuation?: ReserveValuationSource;
  /** The deposit watcher and sweeper (with `chains`); DEFAULT_DEPOSIT_SETTINGS unless given. */
  readonly deposits?: DepositSettings;
  readonly log: LoopLog & DeliveryLog & ReserveLog;
  /** Resolves when this database holds `redisPrefix` (prefix-claim.ts); default: at once. */
  readonly prefixClaimed?: Promise<void>;
  readonly metrics?: WorkerMetrics;
}

/** What startWorkers made, for the Redis work to start and for stop to close. */
interface Running {
  readonly metrics: WorkerMetrics;
  readonly producer: RedisConnection;
  readonly consumer: RedisConnection;
  readonly queue: Queue<WebhookJob>;
  readonly relay: OutboxRelay;
  readonly requeue: DeliveryRequeue;
  readonly worker: Worker<WebhookJob>;
  readonly backtests: {
    readonly queue: Queue<BacktestJob>;
    readonly relay: BacktestRelay;
    readonly worker: BacktestWorker;
  };
  readonly settlement: SettlementWorker;
  readonly transfers: SolanaTransferWorker | null;
  readonly reserves: ReserveReconciler | null;
  readonly unwatchOutbox: () => void;
}

/** The work on Redis: started once this database holds the prefix, never once stopped. */
interface RedisWork {
  stopped: boolean;
  maintenance: Maintenance | null;
  deposits: DepositJobs | null;
  unwatchQueues: () => void;
}

/**
 * The worker role (`spendgate serve --role worker|all`): the outbox relay, the webhook
 * delivery worker, the settlement worker, the Solana transfer worker, the deposit watcher and
 * sweeper (deposit-jobs.ts, with chains), the reconciliation of reserves (with the chains, on
 * the database alone) and the maintenance schedules (hold expiry, balance snapshots), on Redis
 * connections of their own. `stop` is the graceful shutdown: the relay
 * finishes its round, the worker finishes the deliveries in flight (BullMQ returns a job it
 * could not finish to the queue, where another worker or the next start takes it), and the
 * connections close.
 *
 * The work on Redis (relay, delivery, maintenance) starts once `prefixClaimed` resolves: no job
 * is added to or taken from a prefix before this database holds it (prefix-claim.ts). While
 * Redis is down that waits, and it never starts if another database holds the prefix. The
 * settlement and Solana workers need only the database and start at once.
 */
export function startWorkers(dependencies: WorkerDependencies): Workers {
  const metrics = dependencies.metrics ?? createWorkerMetrics();
  const producer = producerConnection(dependencies.redis);
  const consumer = workerConnection(dependencies.redis);
  const queue = new Queue<WebhookJob>(WEBHOOK_QUEUE, {
    connection: producer,
    prefix: queuePrefix(dependencies.redisPrefix),
    defaultJobOptions: deliveryJobOptions(dependencies.delivery.retryDelaysMs),
  });
  queue.on('error', () => undefined);
  const { relay, requeue } = webhookProducersOf(dependencies, queue, producer);
  const worker = startWebhookWorker({
    store: dependencies.store,
    connection: consumer,
    redisPrefix: dependencies.redisPrefix,
    settings: dependencies.delivery,
    log: dependencies.log,
    metrics,
    autorun: false,
  });
  const backtests = backtestWorkOf(dependencies, producer, consumer);
  const settlement = new SettlementWorker(
    dependencies.store,
    dependencies.log,
    dependencies.settlement ?? DEFAULT_SETTLEMENT_OPTIONS,
  );
  const transfers = transferWorkerOf(dependencies, metrics);
  const reserves = reconcilerOf(dependencies, metrics);
  settlement.start();
  transfers?.start();
  reserves?.start();
  const unwatchOutbox = metrics.watchOutbox(dependencies.store);
  const running: Running = {
    metrics,
    producer,
    consumer,
    queue,
    relay,
    requeue,
    worker,
    backtests,
    settlement,
    transfers,
    reserves,
    unwatchOutbox,
  };
  const redisWork: RedisWork = {
    stopped: false,
    maintenance: null,
    deposits: null,
    unwatchQueues: () => undefined,
  };
  const startRedisWork = (): void => {
    startOnRedis(redisWork, dependencies, running);
  };
  if (dependencies.prefixClaimed === undefined) startRedisWork();
  // Refused: the Redis work never starts (the caller reports the refusal and stops).
  else dependencies.prefixClaimed.then(startRedisWork, () => undefined);
  return {
    relay,
    requeue,
    queue,
    metrics,
    stop: () => stopWorkers(running, redisWork, dependencies.log),
  };
}

/** What adds delivery jobs: the outbox relay, and the re-queue loop over what is owed. */
function webhookProducersOf(
  dependencies: WorkerDependencies,
  queue: Queue<WebhookJob>,
  producer: RedisConnection,
): { relay: OutboxRelay; requeue: DeliveryRequeue } {
  const confirmAdded = () => confirmReplicated(producer, dependencies.redisPrefix);
  return {
    relay: new OutboxRelay(
      dependencies.store,
      queue,
      dependencies.log,
      dependencies.relay ?? DEFAULT_RELAY_OPTIONS,
      confirmAdded,
    ),
    requeue: new DeliveryRequeue(
      dependencies.store,
      queue,
      dependencies.log,
      dependencies.delivery.retryDelaysMs.length + 1,
      dependencies.requeue ?? DEFAULT_REQUEUE_SETTINGS,
      confirmAdded,
    ),
  };
}

/** The backtest queue, its relay and its worker: started with the rest of the Redis work. */
function backtestWorkOf(
  dependencies: WorkerDependencies,
  producer: RedisConnection,
  consumer: RedisConnection,
): Running['backtests'] {
  const settings = dependencies.backtests ?? DEFAULT_BACKTEST_SETTINGS;
  const queue = new Queue<BacktestJob>(BACKTEST_QUEUE, {
    connection: producer,
    prefix: queuePrefix(dependencies.redisPrefix),
  });
  queue.on('error', () => undefined);
  return {
    queue,
    relay: new BacktestRelay(dependencies.store, queue, dependencies.log, settings),
    worker: startBacktestWorker({
      store: dependencies.store,
      connection: consumer,
      redisPrefix: dependencies.redisPrefix,
      settings,
      log: dependencies.log,
      autorun: false,
    }),
  };
}

function transferWorkerOf(
  dependencies: WorkerDependencies,
  metrics: WorkerMetrics,
): SolanaTransferWorker | null {
  return dependencies.chains === undefined
    ? null
    : new SolanaTransferWorker(
        dependencies.store,
        dependencies.chains,
        dependencies.log,
        dependencies.solana ?? DEFAULT_SOLANA_TRANSFER_OPTIONS,
        metrics,
      );
}

function reconcilerOf(
  dependencies: WorkerDependencies,
  metrics: WorkerMetrics,
): ReserveReconciler | null {
  return dependencies.chains === undefined
    ? null
    : new ReserveReconciler(
        dependencies.store,
        dependencies.chains,
        dependencies.log,
        dependencies.reserves ?? DEFAULT_RESERVE_SETTINGS,
        metrics,
        dependencies.reserveValuation ?? null,
      );
}

function startOnRedis(work: RedisWork, dependencies: WorkerDependencies, running: Running): void {
  if (work.stopped) return;
  running.relay.start();
  running.requeue.start();
  // Its own promise, which ends when the worker closes; errors are reported by 'error'.
  void running.worker.run().catch(() => undefined);
  running.backtests.relay.start();
  void running.backtests.worker.worker.run().catch(() => undefined);
  const maintenance = startMaintenance({
    store: dependencies.store,
    producer: running.producer,
    consumer: running.consumer,
    redisPrefix: dependencies.redisPrefix,
    settings: dependencies.maintenance ?? DEFAULT_MAINTENANCE_SETTINGS,
    log: dependencies.log,
  });
  work.maintenance = maintenance;
  work.deposits =
    dependencies.chains === undefined
      ? null
      : startDepositJobs({
          store: dependencies.store,
          chains: dependencies.chains,
          producer: running.producer,
          consumer: running.consumer,
          redisPrefix: dependencies.redisPrefix,
          settings: dependencies.deposits ?? DEFAULT_DEPOSIT_SETTINGS,
          log: dependencies.log,
        });
  // Counted once this database holds the prefix: before, the queues may be another's.
  work.unwatchQueues = running.metrics.watchQueues(
    [
      running.queue,
      maintenance.queue,
      running.backtests.queue,
      ...(work.deposits === null ? [] : [work.deposits.queue]),
    ],
    running.producer,
  );
}

/** Workers.stop: the graceful shutdown described on Workers. */
async function stopWorkers(running: Running, work: RedisWork, log: LoopLog): Promise<void> {
  work.stopped = true;
  running.unwatchOutbox();
  work.unwatchQueues();
  await running.relay.stop();
  await running.requeue.stop();
  await running.settlement.stop();
  await running.transfers?.stop();
  await running.reserves?.stop();
  await running.backtests.relay.stop();
  // The BullMQ workers side by side: each waits for its own job in progress, within its bound
  // (closeWorkerWithin), so together they take the longest one's time, not the sum.
  await Promise.all([
    work.maintenance?.stop(),
    work.deposits?.stop(),
    running.backtests.worker.close().then(() => running.backtests.queue.close()),
    closeWorkerWithin(running.worker, log).then(() => running.queue.close()),
  ]);
  running.producer.disconnect();
  running.consumer.disconnect();
}
