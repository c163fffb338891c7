import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import type { RedisNode, RedisTarget } from '../../src/config/env.js';
import {
  freePort,
  portTaken,
  startProcess,
  startRedisServer,
  waitFor,
  type Child,
} from './processes.js';

/**
 * A real Redis Cluster of the test's own: six `redis-server` processes in cluster mode on free
 * loopback ports (3 masters, 3 replicas, made by `redis-cli --cluster create`), without
 * persistence, with a node timeout of 1 s so that a master killed is failed over in seconds.
 * Every process is started through processes.ts, so `stopAll` ends it too however a test ends.
 */
const NODE_COUNT = 6;
const NODE_TIMEOUT_MS = 1_000;
/** Starts of one node tried on fresh ports when a port was taken meanwhile. */
const NODE_START_TRIES_MAX = 3;
/** How long the cluster may take to form: six starts, the slots assigned, the replicas synced. */
const FORM_MS_MAX = 60_000;
const HOST = '127.0.0.1';
const SLOT_COUNT = 16_384;
/** Keys read from one master by `keys()`, at most: a test's cluster holds a few thousand. */
const SCAN_KEYS_MAX = 100_000;

/** One line of CLUSTER NODES: a node as another node sees it. */
export interface NodeView {
  readonly id: string;
  readonly port: number;
  readonly flags: ReadonlySet<string>;
  /** The master's id, for a replica; null for a master. */
  readonly masterId: string | null;
  /** Slot ranges, both ends included (masters only). */
  readonly slots: readonly (readonly [number, number])[];
}

export interface RedisClusterUnderTest {
  /** Every node, the killed ones included. */
  readonly nodes: readonly RedisNode[];
  /** The setting a `spendgate serve` child is given: every node, comma-separated. */
  readonly setting: string;
  /** The target for clients made in the test process (createRedis, producerConnection...). */
  readonly target: RedisTarget;
  /** The cluster as a live node sees it. */
  view(): Promise<NodeView[]>;
  /** The master serving the slot of `key`. */
  masterOf(key: string): Promise<NodeView>;
  /** SIGKILLs the node on `port` (a master, to fail it over). */
  kill(port: number): Promise<void>;
  /**
   * Waits, up to `timeoutMs`, until every live node reports cluster_state:ok and sees the node
   * on `killedPort` failed, its slots served by the replica promoted in its place.
   */
  waitForFailover(killedPort: number, timeoutMs: number): Promise<NodeView>;
  /** Every key matching `pattern` on every live master. */
  keys(pattern: string): Promise<string[]>;
  /** One command to the node on `port` alone (DEBUG SLEEP, say: its loopback clients may). */
  call(port: number, ...args: string[]): Promise<unknown>;
  /** The slot of `key`, as the cluster computes it. */
  slotOf(key: string): Promise<number>;
  /** Stops every node and removes the cluster's files. */
  stop(): Promise<void>;
}

export async function startRedisCluster(): Promise<RedisClusterUnderTest> {
  const dir = mkdtempSync(join(tmpdir(), 'sg-redis-cluster-'));
  const processes = new Map<number, Child>();
  try {
    for (let index = 0; index < NODE_COUNT; index++) {
      const [port, child] = await startClusterNode(dir);
      processes.set(port, child);
    }
    await createCluster([...processes.keys()]);
    const cluster = clusterOf(dir, processes);
    await waitFor(
      () => formed(cluster, [...processes.keys()]),
      FORM_MS_MAX,
      () => 'cluster formed',
    );
    return cluster;
  } catch (error) {
    await Promise.all([...processes.values()].map((child) => child.stop('SIGKILL')));
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
}

/**
 * One cluster-mode node on free ports. The bus port is named: port + 10,000 (Redis's default)
 * may be past 65,535 or taken. A port taken between the asking and the bind (another test's
 * listener) is retried on fresh ports, a bounded number of times.
 */
async function startClusterNode(dir: string): Promise<[number, Child]> {
  for (let attempt = 1; ; attempt++) {
    const [port, busPort] = [await freePort(), await freePort()];
    try {
      const child = await startRedisServer(port, {
        dir,
        args: [
          '--cluster-enabled',
          'yes',
          '--cluster-port',
          String(busPort),
          '--cluster-config-file',
          join(dir, `nodes-${String(port)}.conf`),
          '--cluster-node-timeout',
          String(NODE_TIMEOUT_MS),
          // A test makes a replica unresponsive for a moment (DEBUG SLEEP), from loopback.
          '--enable-debug-command',
          'local',
        ],
      });
      return [port, child];
    } catch (error) {
      if (!portTaken(error) || attempt >= NODE_START_TRIES_MAX) throw error;
    }
  }
}

/** `redis-cli --cluster create`: the slots split over 3 masters, each with one replica. */
async function createCluster(ports: readonly number[]): Promise<void> {
  const create = startProcess(
    '/usr/bin/redis-cli',
    [
      '--cluster',
      'create',
      ...ports.map((port) => `${HOST}:${String(port)}`),
      '--cluster-replicas',
      '1',
      '--cluster-yes',
    ],
    process.env,
  );
  let timer: NodeJS.Timeout | undefined;
  const exit = await Promise.race([
    create.exited,
    new Promise<null>((resolve) => {
      timer = setTimeout(() => {
        resolve(null);
      }, FORM_MS_MAX);
    }),
  ]).finally(() => {
    clearTimeout(timer);
  });
  if (exit === null) await create.stop('SIGKILL');
  if (exit?.code !== 0) {
    throw new Error(
      `redis-cli --cluster create failed (${JSON.stringify(exit)}):\n${create.output()}`,
    );
  }
}

/** One command to the node on `port`, on a connection of its own that never retries. */
async function ask(port: number, ...args: string[]): Promise<unknown> {
  const redis = new Redis({
    host: HOST,
    port,
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
    connectTimeout: 1_000,
  });
  redis.on('error', () => undefined);
  try {
    await redis.connect();
    const [command = '', ...rest] = args;
    return await redis.call(command, ...rest);
  } finally {
    redis.disconnect();
  }
}

function parseNodes(text: string): NodeView[] {
  const lines = text.split('\n').filter((line) => line.trim() !== '');
  return lines.map((line) => {
    const [id = '', address = '', flags = '', master = '-', , , , , ...slots] = line.split(' ');
    const port = Number(/:(\d+)@/.exec(address)?.[1]);
    return {
      id,
      port,
      flags: new Set(flags.split(',')),
      masterId: master === '-' ? null : master,
      slots: slots
        .filter((slot) => !slot.startsWith('['))
        .map((slot) => {
          const [from = '', to = from] = slot.split('-');
          return [Number(from), Number(to)] as const;
        }),
    };
  });
}

function serves(node: NodeView, slot: number): boolean {
  return node.slots.some(([from, to]) => from <= slot && slot <= to);
}

function isLiveMaster(node: NodeView): boolean {
  return node.flags.has('master') && !node.flags.has('fail') && !node.flags.has('fail?');
}

async function clusterInfo(port: number): Promise<Map<string, string>> {
  const text = String(await ask(port, 'CLUSTER', 'INFO'));
  return new Map(
    text
      .split('\r\n')
      .filter((line) => line.includes(':'))
      .map((line) => line.split(':', 2) as [string, string]),
  );
}

/** Every node ok, knowing all six, every slot served, and every replica synced with its master. */
async function formed(cluster: RedisClusterUnderTest, ports: readonly number[]): Promise<boolean> {
  try {
    for (const port of ports) {
      const info = await clusterInfo(port);
      if (info.get('cluster_state') !== 'ok') return false;
      if (info.get('cluster_known_nodes') !== String(NODE_COUNT)) return false;
      const replication = String(await ask(port, 'INFO', 'replication'));
      if (replication.includes('role:slave') && !replication.includes('master_link_status:up')) {
        return false;
      }
    }
    const masters = (await cluster.view()).filter(isLiveMaster);
    const served = masters.reduce(
      (sum, node) => sum + node.slots.reduce((count, [from, to]) => count + to - from + 1, 0),
      0,
    );
    return masters.length === NODE_COUNT / 2 && served === SLOT_COUNT;
  } catch {
    return false; // a node still starting or electing: the next poll asks again
  }
}

function clusterOf(dir: string, processes: Map<number, Child>): RedisClusterUnderTest {
  const killed = new Set<number>();
  /** A slot each killed master served: the one that serves it after the failover was promoted. */
  const slotsOfKilled = new Map<number, number>();
  const live = (): number[] => [...processes.keys()].filter((port) => !killed.has(port));
  const nodes = [...processes.keys()].map((port) => ({ host: HOST, port }));
  const cluster: RedisClusterUnderTest = {
    nodes,
    setting: nodes.map((node) => `${node.host}:${String(node.port)}`).join(','),
    target: { kind: 'cluster', nodes },
    async view() {
      const [port] = live();
      if (port === undefined) throw new Error('no live node in the cluster');
      return parseNodes(String(await ask(port, 'CLUSTER', 'NODES')));
    },
    call: ask,
    async slotOf(key) {
      const [port] = live();
      if (port === undefined) throw new Error('no live node in the cluster');
      return Number(await ask(port, 'CLUSTER', 'KEYSLOT', key));
    },
    async masterOf(key) {
      const slot = await cluster.slotOf(key);
      const master = (await cluster.view()).find(
        (node) => isLiveMaster(node) && serves(node, slot),
      );
      if (master === undefined) throw new Error(`no live master serves slot ${String(slot)}`);
      return master;
    },
    async kill(port) {
      const child = processes.get(port);
      if (child === undefined) throw new Error(`no node on port ${String(port)}`);
      const slot = (await cluster.view()).find((node) => node.port === port)?.slots[0]?.[0];
      if (slot !== undefined) slotsOfKilled.set(port, slot);
      killed.add(port);
      await child.stop('SIGKILL');
    },
    async waitForFailover(killedPort, timeoutMs) {
      const slot = slotsOfKilled.get(killedPort);
      if (slot === undefined) throw new Error(`no master was killed on port ${String(killedPort)}`);
      let promoted: NodeView | undefined;
      await waitFor(
        async () => {
          try {
            for (const port of live()) {
              if ((await clusterInfo(port)).get('cluster_state') !== 'ok') return false;
            }
            const view = await cluster.view();
            const dead = view.find((node) => node.port === killedPort);
            promoted = view.find(
              (node) => isLiveMaster(node) && node.port !== killedPort && serves(node, slot),
            );
            return (
              dead?.flags.has('fail') === true &&
              dead.slots.length === 0 &&
              promoted !== undefined &&
              view.filter(isLiveMaster).length === NODE_COUNT / 2
            );
          } catch {
            return false;
          }
        },
        timeoutMs,
        () => `the failover of the master on port ${String(killedPort)}`,
      );
      if (promoted === undefined) throw new Error('no promoted master');
      return promoted;
    },
    async keys(pattern) {
      const masters = (await cluster.view()).filter(isLiveMaster);
      const found: string[] = [];
      for (const master of masters) {
        let cursor = '0';
        do {
          const [next, batch] = (await ask(
            master.port,
            'SCAN',
            cursor,
            'MATCH',
            pattern,
            'COUNT',
            '1000',
          )) as [string, string[]];
          found.push(...batch);
          cursor = next;
          if (found.length > SCAN_KEYS_MAX)
            throw new Error(`more than ${String(SCAN_KEYS_MAX)} keys`);
        } while (cursor !== '0');
      }
      return found;
    },
    async stop() {
      await Promise.all([...processes.values()].map((child) => child.stop('SIGKILL')));
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return cluster;
}
