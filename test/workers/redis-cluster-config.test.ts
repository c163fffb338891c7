import { describe, expect, it } from 'vitest';
import {
  ConfigError,
  loadConfig,
  REDIS_CLUSTER_NODES_MAX,
  redisServer,
} from '../../src/config/env.js';

/**
 * REDIS_CLUSTER_NODES (contract section 15, v1.1): `host:port,host:port,...` of a Redis
 * Cluster; set, it replaces REDIS_URL; malformed, the start stops with a message naming it.
 */
describe('REDIS_CLUSTER_NODES', () => {
  it('names the cluster by its nodes, in place of REDIS_URL', () => {
    expect(
      loadConfig({
        REDIS_URL: 'redis://127.0.0.1:6379',
        REDIS_CLUSTER_NODES: '127.0.0.1:7000, redis-b.internal:7001,[::1]:7002',
      }).redis,
    ).toEqual({
      kind: 'cluster',
      nodes: [
        { host: '127.0.0.1', port: 7000 },
        { host: 'redis-b.internal', port: 7001 },
        { host: '::1', port: 7002 },
      ],
    });
    expect(loadConfig({ REDIS_CLUSTER_NODES: 'localhost:6380' }).redis).toEqual({
      kind: 'cluster',
      nodes: [{ host: 'localhost', port: 6380 }],
    });
  });

  it('leaves REDIS_URL in charge when unset or empty', () => {
    expect(loadConfig({ REDIS_URL: 'redis://10.0.0.5:6379' }).redis).toEqual(
      redisServer('redis://10.0.0.5:6379'),
    );
    expect(loadConfig({ REDIS_CLUSTER_NODES: '' }).redis).toEqual(
      redisServer('redis://127.0.0.1:6379'),
    );
  });

  it.each([
    ['no port', '127.0.0.1'],
    ['a port of 0', '127.0.0.1:0'],
    ['a port past 65535', '127.0.0.1:65536'],
    ['a URL', 'redis://127.0.0.1:7000'],
    ['an empty node', '127.0.0.1:7000,,127.0.0.1:7001'],
    ['a trailing comma', '127.0.0.1:7000,'],
    ['a node twice', '127.0.0.1:7000,127.0.0.1:7000'],
    ['an unbracketed IPv6 address', '::1:7000'],
    ['a space inside a host', 'redis a:7000'],
    [
      'more nodes than the bound',
      Array.from({ length: REDIS_CLUSTER_NODES_MAX + 1 }, (_, index) => `h${index}:7000`).join(','),
    ],
  ])('refuses %s, naming the setting', (_case, value) => {
    expect(() => loadConfig({ REDIS_CLUSTER_NODES: value })).toThrow(ConfigError);
    expect(() => loadConfig({ REDIS_CLUSTER_NODES: value })).toThrow(
      /^invalid configuration: REDIS_CLUSTER_NODES must be/,
    );
  });

  it('takes as many nodes as the bound allows', () => {
    const nodes = Array.from({ length: REDIS_CLUSTER_NODES_MAX }, (_, index) => `h${index}:7000`);
    const target = loadConfig({ REDIS_CLUSTER_NODES: nodes.join(',') }).redis;
    expect(target.kind === 'cluster' ? target.nodes.length : 0).toBe(REDIS_CLUSTER_NODES_MAX);
  });
});
