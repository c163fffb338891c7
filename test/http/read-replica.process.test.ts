import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LOCAL_REDIS_URL } from '../support/http.js';
import { scrape } from '../support/metrics.js';
import { startReplicaPair, type ReplicaPair } from '../support/pg-replica.js';
import {
  callWithKey,
  listeningBase,
  startCliProcess,
  stopAll,
  trackedRedisPrefixes,
  type Child,
} from '../support/processes.js';

/*
 * DATABASE_READ_URL as deployed: two `spendgate serve --role api` processes on a real
 * primary/replica pair, sharing one Redis prefix. A client's write through one process is seen
 * by its next list through the other, at once, while the replica's replay is paused; a list
 * of an account with nothing newer than the replica is served by the replica (it does not show
 * a change made on the primary after the pause), and counted in /metrics.
 */

const START_MS_MAX = 60_000;

describe('two API processes reading from a replica', () => {
  const prefixes = trackedRedisPrefixes();
  let pair: ReplicaPair;
  let env: Record<string, string>;
  let primaryUrl = '';
  const bases: string[] = [];
  const servers: Child[] = [];
  let key = '';

  beforeAll(async () => {
    pair = await startReplicaPair();
    const database = `sg_${randomBytes(4).toString('hex')}`;
    await sql(pair.primaryUrl, `CREATE DATABASE ${database}`);
    const urls = pair.urlsOf(database);
    primaryUrl = urls.primary;
    env = {
      DATABASE_URL: urls.primary,
      DATABASE_READ_URL: urls.replica,
      SPENDGATE_MASTER_KEY: randomBytes(32).toString('base64'),
      REDIS_URL: LOCAL_REDIS_URL,
      REDIS_PREFIX: prefixes.next(),
      SPENDGATE_MODES: 'test',
      LOG_LEVEL: 'info',
      PORT: '0',
    };
    const created = startCliProcess(
      ['keys', 'create', '--account', 'acme', '--mode', 'test', '--create-account'],
      env,
    );
    const { code } = await created.exited;
    expect(code, created.output()).toBe(0);
    key = /^sk_test_[A-Za-z0-9_-]+$/m.exec(created.output())?.[0] ?? '';
    expect(key).not.toBe('');
    for (let index = 0; index < 2; index++) {
      const server = startCliProcess(['serve', '--role', 'api'], env);
      servers.push(server);
      bases.push(await listeningBase(server, START_MS_MAX));
    }
  }, 180_000);

  afterAll(async () => {
    await Promise.all(servers.map((server) => server.stop('SIGTERM')));
    await stopAll();
    await prefixes.forget();
    await pair?.stop();
  }, 60_000);

  const vaultNames = async (base: string): Promise<string[]> => {
    const listed = await callWithKey(base, key, 'GET', '/v1/vaults?limit=100');
    expect(listed.status).toBe(200);
    return (listed.body.data as { name: string }[]).map((vault) => vault.name).sort();
  };
  const createVault = async (base: string, name: string): Promise<string> => {
    const created = await callWithKey(base, key, 'POST', '/v1/vaults', {
      name,
      currency: 'USDC',
      network: 'solana',
    });
    expect(created.status).toBe(201);
    return created.body.id as string;
  };
  const replicaReads = async (base: string): Promise<number> =>
    (await scrape(base))
      .samples('spendgate_replica_reads_total')
      .filter((sample) => sample.labels.served_by === 'replica')
      .reduce((sum, sample) => sum + sample.value, 0);

  it("shows a client's write at once through the other process, and serves older reads from the replica", async () => {
    const [first = '', second = ''] = bases;
    const before = await createVault(first, 'before');
    await pair.waitCaughtUp();
    await pair.pauseReplay();
    // A change on the primary that no process wrote: only the primary shows it.
    await sql(primaryUrl, `UPDATE vaults SET name = 'renamed' WHERE id = '${before}'`);

    const servedBefore = await replicaReads(second);
    expect(await vaultNames(second)).toEqual(['before']);
    expect(await replicaReads(second)).toBe(servedBefore + 1);

    await createVault(first, 'mine');
    expect(await vaultNames(second)).toEqual(['mine', 'renamed']);
    expect(await replicaReads(second)).toBe(servedBefore + 1);

    await pair.resumeReplay();
    await pair.waitCaughtUp();
    expect(await vaultNames(second)).toEqual(['mine', 'renamed']);
    expect(await replicaReads(second)).toBe(servedBefore + 2);
  });
});

async function sql(url: string, text: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end();
  }
}
