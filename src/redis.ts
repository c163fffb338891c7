import { Cluster, Redis, type RedisOptions } from 'ioredis';
import { REDIS_CLUSTER_NODES_MAX, type RedisTarget } from './config/env.js';
import { assert } from './core/index.js';

/** A client of one Redis server or of a Redis Cluster: every caller works with either. */
export type RedisConnection = Redis | Cluster;

const RECONNECT_MS_MAX = 5_000;

function reconnectMs(attempt: number): number {
  return Math.min(attempt * 200, RECONNECT_MS_MAX);
}

/**
 * Every Redis client of the service (rate limits and readiness, queue producers, queue
 * workers) is made here, so all of them ride out a Redis outage the same way: the connection
 * is retried in the background (every 200 ms, backing off to 5 s), and an unreachable Redis is
 * reported by /readyz and the callers' fallbacks, never by a crash on an unhandled error
 * event. `options` says what each kind of client does with commands while Redis is down.
 *
 * On a Redis Cluster (REDIS_CLUSTER_NODES) the client is an ioredis Cluster with the same
 * behaviour: the whole cluster lost is reconnected on the same schedule; a master lost is
 * followed to the replica the cluster promotes (its slots are read again, and a command sent
 * meanwhile is retried every 100 ms, 16 times at most, then fails to its caller, whose own
 * fallback or retry takes over).
 */
export function redisClient(target: RedisTarget, options: RedisOptions): RedisConnection {
  const redis =
    target.kind === 'server'
      ? new Redis(target.url, { retryStrategy: reconnectMs, ...options })
      : clusterClient(target.nodes, options);
  redis.on('error', () => undefined);
  return redis;
}

function clusterClient(
  nodes: Extract<RedisTarget, { kind: 'cluster' }>['nodes'],
  options: RedisOptions,
): Cluster {
  // The offline queue and auto-pipelining are the cluster's; the rest (retries per request,
  // the connection's name) apply to its connection to each node. A node's own reconnection is
  // left to the cluster, which finds the node's slots anew rather than waiting on a dead one.
  assert(
    nodes.length >= 1 && nodes.length <= REDIS_CLUSTER_NODES_MAX,
    'a cluster is named by 1 to REDIS_CLUSTER_NODES_MAX nodes',
  );
  const { enableOfflineQueue, enableAutoPipelining, retryStrategy, ...nodeOptions } = options;
  return new Cluster(
    nodes.map((node) => ({ host: node.host, port: node.port })),
    {
      clusterRetryStrategy: retryStrategy ?? reconnectMs,
      enableOfflineQueue: enableOfflineQueue ?? true,
      enableAutoPipelining: enableAutoPipelining ?? false,
      redisOptions: nodeOptions,
    },
  );
}
