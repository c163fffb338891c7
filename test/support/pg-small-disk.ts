import { execFileSync } from 'node:child_process';
import { appendFileSync, chownSync, mkdirSync, mkdtempSync, rmSync, statfsSync } from 'node:fs';
import { open, unlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { postgresOwner, runAsPostgres, startServer, stopServer } from './pg-replica.js';
import { freePort, waitFor } from './processes.js';

/*
 * A PostgreSQL server of the test's own whose data folder is on a small disk of its own: a
 * tmpfs of `sizeMb` mounted for it, which `fill` fills to the last byte and `free` empties
 * again. WAL segments of 1 MB, so a full disk is met by the WAL as by the tables. Mounting
 * needs root, as the tests run (pg-replica.ts runs the server as the `postgres` user).
 */

const READY_MS_MAX = 30_000;
/** The filler is written in chunks of this size until the disk refuses the next. */
const FILL_CHUNK_BYTES = 1 << 20;

export interface SmallDiskPostgres {
  url(database: string): string;
  /** Takes every free byte of the disk. */
  fill(): Promise<void>;
  /** Gives the bytes `fill` took back. */
  free(): Promise<void>;
  /** The free bytes left on the disk. */
  freeBytes(): number;
  /** Starts the server again if it stopped (a PANIC on a full WAL ends it). */
  ensureRunning(): Promise<void>;
  stop(): Promise<void>;
}

export async function startPostgresOnSmallDisk(sizeMb: number): Promise<SmallDiskPostgres> {
  const root = mkdtempSync(join(tmpdir(), 'sg-small-disk-'));
  const mount = join(root, 'disk');
  mkdirSync(mount);
  execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${String(sizeMb)}m`, 'tmpfs', mount]);
  const owner = postgresOwner();
  chownSync(root, owner.uid, owner.gid);
  chownSync(mount, owner.uid, owner.gid);
  const dataDir = join(mount, 'data');
  const filler = join(mount, 'filler');
  const port = await freePort();
  const adminUrl = `postgres://postgres@127.0.0.1:${String(port)}/postgres`;
  const answers = async () => {
    const client = new pg.Client({ connectionString: adminUrl, connectionTimeoutMillis: 1_000 });
    try {
      await client.connect();
      await client.query('SELECT 1');
      return true;
    } catch {
      return false;
    } finally {
      await client.end().catch(() => undefined);
    }
  };
  const stop = async () => {
    await stopServer(dataDir).catch(() => undefined);
    execFileSync('umount', ['-l', mount]);
    rmSync(root, { recursive: true, force: true });
  };
  try {
    await runAsPostgres('initdb', [
      '-D',
      dataDir,
      '-U',
      'postgres',
      '--auth=trust',
      '-E',
      'UTF8',
      '--no-sync',
      '--wal-segsize=1',
    ]);
    appendFileSync(
      join(dataDir, 'postgresql.conf'),
      [
        "listen_addresses = '127.0.0.1'",
        `unix_socket_directories = '${root}'`,
        'min_wal_size = 2MB',
        'max_wal_size = 8MB',
        'shared_buffers = 16MB',
        // A restarted postmaster after a PANIC, not an exit: as a service manager would.
        'restart_after_crash = on',
        'max_connections = 60',
        '',
      ].join('\n'),
    );
    await startServer(dataDir, root, port);
  } catch (error) {
    await stop().catch(() => undefined);
    throw error;
  }
  return {
    url: (database) => `postgres://postgres@127.0.0.1:${String(port)}/${database}`,
    async fill() {
      const handle = await open(filler, 'a');
      try {
        const chunk = Buffer.alloc(FILL_CHUNK_BYTES, 1);
        for (;;) {
          const free = statfsSync(mount).bavail * statfsSync(mount).bsize;
          if (free <= 0) break;
          try {
            await handle.write(chunk.subarray(0, Math.min(FILL_CHUNK_BYTES, free)));
          } catch {
            break; // ENOSPC: full.
          }
        }
      } finally {
        await handle.close();
      }
    },
    async free() {
      await unlink(filler).catch(() => undefined);
    },
    freeBytes: () => statfsSync(mount).bavail * statfsSync(mount).bsize,
    async ensureRunning() {
      if (await answers()) return;
      await waitFor(answers, 5_000, () => 'the server answers').catch(async () => {
        await stopServer(dataDir).catch(() => undefined);
        await startServer(dataDir, root, port);
      });
      await waitFor(answers, READY_MS_MAX, () => `the server on port ${String(port)} answers`);
    },
    stop,
  };
}
