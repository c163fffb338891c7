import { appendFileSync, chownSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { freePort, startProcess, waitFor } from './processes.js';

/*
 * A PostgreSQL primary and its streaming replica of the test's own. The machine's server
 * (127.0.0.1:5432) allows no replication and tests must not change it, so the pair is made
 * here: `initdb` a primary in a temporary folder (wal_level replica, trust on loopback,
 * replication included), `pg_basebackup -R` it into a second folder, start that as a hot
 * standby, and wait until the primary shows it streaming. PostgreSQL refuses to run as root,
 * and the tests run as root: every command runs as the `postgres` OS user (`runuser`), in a
 * folder it owns. Unix sockets live in that folder, never in /var/run/postgresql.
 */

const BIN = '/usr/lib/postgresql/15/bin';
const RUNUSER = '/usr/sbin/runuser';
/** initdb, a base backup and a start each take a few seconds on this machine; a bound on each. */
const COMMAND_MS_MAX = 60_000;
const STREAMING_MS_MAX = 30_000;

export interface ReplicaPair {
  /** The `postgres` database of each server, as the superuser (trust). */
  readonly primaryUrl: string;
  readonly replicaUrl: string;
  /** `database` on each server (create it on the primary: the replica follows). */
  urlsOf(database: string): { readonly primary: string; readonly replica: string };
  /** Waits until the replica has replayed everything the primary had written when asked. */
  waitCaughtUp(timeoutMs?: number): Promise<void>;
  /** Stops replaying (the replica keeps receiving WAL and answering reads, frozen in time). */
  pauseReplay(): Promise<void>;
  resumeReplay(): Promise<void>;
  /** Stops the replica alone (immediate): reads of it fail from then on. */
  stopReplica(): Promise<void>;
  /**
   * Crashes the primary (an immediate stop: no checkpoint, as a power cut leaves it), waits
   * `downMs`, and starts it again; it recovers from its WAL.
   */
  restartPrimary(downMs: number): Promise<void>;
  /** Crashes the primary for good and promotes the replica: a failover. */
  promoteReplica(): Promise<void>;
  /** Stops both servers and removes their folders; safe to call more than once. */
  stop(): Promise<void>;
}

/** Runs one command as the `postgres` OS user, and fails with its output unless it exits 0. */
export async function runAsPostgres(command: string, args: readonly string[]): Promise<void> {
  // The tests' own PG* settings (a port, a host) must not reach the servers' tools.
  const env = Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !name.startsWith('PG')),
  );
  const child = startProcess(RUNUSER, ['-u', 'postgres', '--', join(BIN, command), ...args], env);
  let timer: NodeJS.Timeout | undefined;
  const outcome = await Promise.race([
    child.exited,
    new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => {
        resolve('timeout');
      }, COMMAND_MS_MAX);
    }),
  ]).finally(() => {
    clearTimeout(timer);
  });
  if (outcome === 'timeout') {
    await child.stop('SIGKILL');
    throw new Error(`${command} did not finish within ${COMMAND_MS_MAX} ms:\n${child.output()}`);
  }
  if (outcome.code !== 0) {
    throw new Error(
      `${command} ${args.join(' ')} failed (${String(outcome.code)}):\n${child.output()}`,
    );
  }
}

async function sql<Row>(url: string, text: string): Promise<Row[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(text)).rows as Row[];
  } finally {
    await client.end();
  }
}

export function postgresOwner(): { uid: number; gid: number } {
  const line = readFileSync('/etc/passwd', 'utf8')
    .split('\n')
    .find((entry) => entry.startsWith('postgres:'));
  const [, , uid, gid] = line?.split(':') ?? [];
  if (uid === undefined || gid === undefined)
    throw new Error('no postgres OS user on this machine');
  return { uid: Number(uid), gid: Number(gid) };
}

/** A data folder's server, stopped at once (no shutdown checkpoint: the folder is thrown away). */
export async function stopServer(dataDir: string): Promise<void> {
  if (!existsFile(join(dataDir, 'postmaster.pid'))) return;
  await runAsPostgres('pg_ctl', ['-D', dataDir, '-m', 'immediate', '-w', 'stop']);
}

function existsFile(path: string): boolean {
  try {
    statSync(path);
    return true;
  } catch {
    return false;
  }
}

export async function startServer(dataDir: string, root: string, port: number): Promise<void> {
  // Later lines win: the replica's copy of the primary's file gets its own port this way.
  appendFileSync(join(dataDir, 'postgresql.conf'), `port = ${port}\n`);
  await runAsPostgres('pg_ctl', [
    '-D',
    dataDir,
    '-l',
    join(root, `${port}.log`),
    '-w',
    '-t',
    String(COMMAND_MS_MAX / 1000),
    'start',
  ]);
}

/** Makes, starts and returns a primary/replica pair; on any failure, stops what it started. */
export async function startReplicaPair(): Promise<ReplicaPair> {
  const root = mkdtempSync(join(tmpdir(), 'sg-replica-'));
  const owner = postgresOwner();
  chownSync(root, owner.uid, owner.gid);
  const primaryDir = join(root, 'primary');
  const replicaDir = join(root, 'replica');
  let stopped = false;
  const stop = async (): Promise<void> => {
    if (stopped) return;
    stopped = true;
    const failures: unknown[] = [];
    for (const dataDir of [replicaDir, primaryDir]) {
      try {
        await stopServer(dataDir);
      } catch (error) {
        failures.push(error);
      }
    }
    rmSync(root, { recursive: true, force: true });
    if (failures.length > 0) throw failures[0];
  };
  try {
    const [primaryPort, replicaPort] = [await freePort(), await freePort()];
    await runAsPostgres('initdb', [
      '-D',
      primaryDir,
      '-U',
      'postgres',
      '--auth=trust',
      '-E',
      'UTF8',
      '--no-sync',
    ]);
    appendFileSync(
      join(primaryDir, 'postgresql.conf'),
      [
        "listen_addresses = '127.0.0.1'",
        `unix_socket_directories = '${root}'`,
        'wal_level = replica',
        'max_wal_senders = 4',
        'hot_standby = on',
        // A test's pair: its data is thrown away, so nothing need reach the disk.
        'fsync = off',
        'max_connections = 100',
        '',
      ].join('\n'),
    );
    appendFileSync(
      join(primaryDir, 'pg_hba.conf'),
      'host all all 127.0.0.1/32 trust\nhost replication all 127.0.0.1/32 trust\n',
    );
    await startServer(primaryDir, root, primaryPort);
    await runAsPostgres('pg_basebackup', [
      '-h',
      '127.0.0.1',
      '-p',
      String(primaryPort),
      '-U',
      'postgres',
      '-D',
      replicaDir,
      '-R',
      '-X',
      'stream',
      '-c',
      'fast',
      '--no-sync',
    ]);
    await startServer(replicaDir, root, replicaPort);
    const url = (port: number, database: string) =>
      `postgres://postgres@127.0.0.1:${port}/${database}`;
    const primaryUrl = url(primaryPort, 'postgres');
    const replicaUrl = url(replicaPort, 'postgres');
    await waitFor(
      async () =>
        (
          await sql<{ streaming: boolean }>(
            primaryUrl,
            "SELECT count(*) > 0 AS streaming FROM pg_stat_replication WHERE state = 'streaming'",
          )
        )[0]?.streaming === true,
      STREAMING_MS_MAX,
      () =>
        `the replica on port ${replicaPort} is not streaming from the primary on ${primaryPort}`,
    );
    return {
      primaryUrl,
      replicaUrl,
      urlsOf: (database) => ({
        primary: url(primaryPort, database),
        replica: url(replicaPort, database),
      }),
      async waitCaughtUp(timeoutMs = STREAMING_MS_MAX) {
        const [target] = await sql<{ lsn: string }>(
          primaryUrl,
          'SELECT pg_current_wal_insert_lsn()::text AS lsn',
        );
        await waitFor(
          async () =>
            (
              await sql<{ caught_up: boolean }>(
                replicaUrl,
                `SELECT pg_last_wal_replay_lsn() >= '${target?.lsn ?? ''}'::pg_lsn AS caught_up`,
              )
            )[0]?.caught_up === true,
          timeoutMs,
          () => `the replica did not replay up to ${target?.lsn ?? '?'}`,
        );
      },
      async pauseReplay() {
        await sql(replicaUrl, 'SELECT pg_wal_replay_pause()');
        await waitFor(
          async () =>
            (
              await sql<{ state: string }>(
                replicaUrl,
                'SELECT pg_get_wal_replay_pause_state() AS state',
              )
            )[0]?.state === 'paused',
          STREAMING_MS_MAX,
          () => 'the replica did not pause its replay',
        );
      },
      async resumeReplay() {
        await sql(replicaUrl, 'SELECT pg_wal_replay_resume()');
      },
      stopReplica: () => stopServer(replicaDir),
      async restartPrimary(downMs) {
        await stopServer(primaryDir);
        await new Promise((resolve) => setTimeout(resolve, downMs));
        await startServer(primaryDir, root, primaryPort);
      },
      async promoteReplica() {
        await stopServer(primaryDir);
        await runAsPostgres('pg_ctl', ['-D', replicaDir, '-w', 'promote']);
      },
      stop,
    };
  } catch (error) {
    await stop().catch(() => undefined);
    throw error;
  }
}
