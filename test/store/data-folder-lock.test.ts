import { spawn } from 'node:child_process';
import {
  existsSync,
  mkdtempSync,
  readFileSync,
  readlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  DataFolderInUseError,
  LEASE_MS,
  LOCK_FILE,
  lockDataFolder,
  type LockHolder,
} from '../../src/store/data-folder-lock.js';
import { createPgliteClient } from '../../src/store/sql/pglite-client.js';

/**
 * The embedded data folder's lock, in one process: what counts as held and what as
 * stale. The same lock between real processes (a CLI beside a running server, a SIGKILLed
 * server) is tested in test/cli-data-folder-lock.test.ts.
 */
const children: { kill(): void }[] = [];

afterAll(() => {
  for (const child of children) child.kill();
});

function folder(): string {
  return mkdtempSync(join(tmpdir(), 'spendgate-lock-'));
}

/** A lock file as a holder on this host and in this pid namespace writes it, with `holder`'s fields. */
function writeLock(dir: string, holder: Partial<LockHolder>): string {
  const path = join(dir, LOCK_FILE);
  const here: LockHolder = {
    pid: process.pid,
    host: hostname(),
    pidNamespace: readlinkSync('/proc/self/ns/pid'),
    startTime: startTimeOf(process.pid),
    lockedAt: new Date().toISOString(),
  };
  writeFileSync(path, `${JSON.stringify({ ...here, ...holder })}\n`);
  return path;
}

/** A process that ran and exited: its pid names nobody now (until reused). */
async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', '']);
  await new Promise((resolve) => child.on('exit', resolve));
  if (child.pid === undefined) throw new Error('no pid');
  return child.pid;
}

/** A live process of this user's, stopped by afterAll. */
async function livePid(): Promise<number> {
  const child = spawn('/bin/sleep', ['120']);
  children.push(child);
  await new Promise((resolve) => child.on('spawn', resolve));
  if (child.pid === undefined) throw new Error('no pid');
  return child.pid;
}

function startTimeOf(pid: number): string {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? '';
}

describe('the data folder lock', () => {
  it('holds a folder for one client at a time, in this process too, until it is released', async () => {
    const dir = folder();
    const lock = await lockDataFolder(dir);
    const path = join(dir, LOCK_FILE);
    const holder = JSON.parse(readFileSync(path, 'utf8')) as LockHolder;
    expect(holder).toMatchObject({ pid: process.pid, host: hostname() });
    await expect(lockDataFolder(dir)).rejects.toThrow(DataFolderInUseError);
    await expect(lockDataFolder(dir)).rejects.toThrow(
      /is open in process \d+ .*stop that process first.*DATABASE_URL/,
    );
    lock.release();
    expect(existsSync(path)).toBe(false);
    lock.release();
    const again = await lockDataFolder(dir);
    again.release();
  });

  it('refuses a folder whose holder runs, and takes over one whose holder is gone', async () => {
    const live = await livePid();
    const held = folder();
    writeLock(held, { pid: live, startTime: startTimeOf(live) });
    await expect(lockDataFolder(held)).rejects.toThrow(`is open in process ${live}`);

    const stale = folder();
    const path = writeLock(stale, { pid: await deadPid() });
    const lock = await lockDataFolder(stale);
    expect((JSON.parse(readFileSync(path, 'utf8')) as LockHolder).pid).toBe(process.pid);
    lock.release();
  });

  it('takes over a lock whose pid now runs another program, or names this very process', async () => {
    const live = await livePid();
    const reused = folder();
    // The pid runs, but started at another time than the holder did: not the holder.
    writeLock(reused, { pid: live, startTime: '1' });
    (await lockDataFolder(reused)).release();

    // A former life of this process (a container restarted with the same pid).
    const former = folder();
    writeLock(former, { pid: process.pid, startTime: '1' });
    (await lockDataFolder(former)).release();
  });

  it('holds a lock from another host while it is touched, and takes it over after the lease', async () => {
    const dir = folder();
    // A pid that runs here: on another host it means nothing, only the file's age does.
    const path = writeLock(dir, { pid: process.pid, host: 'elsewhere.example' });
    await expect(lockDataFolder(dir)).rejects.toThrow(/on elsewhere\.example/);
    const old = new Date(Date.now() - LEASE_MS - 1_000);
    utimesSync(path, old, old);
    (await lockDataFolder(dir)).release();
  });

  it('judges a damaged lock file by its age alone', async () => {
    const dir = folder();
    const path = join(dir, LOCK_FILE);
    writeFileSync(path, 'not a lock');
    await expect(lockDataFolder(dir)).rejects.toThrow(/is open in another process/);
    const old = new Date(Date.now() - LEASE_MS - 1_000);
    utimesSync(path, old, old);
    (await lockDataFolder(dir)).release();
  });

  it('never removes a lock that is no longer its own', async () => {
    const dir = folder();
    const lock = await lockDataFolder(dir);
    const path = join(dir, LOCK_FILE);
    writeFileSync(path, 'someone else');
    lock.release();
    expect(readFileSync(path, 'utf8')).toBe('someone else');
  });

  it('locks an embedded database for its client, which refuses every statement once the lock is taken over', async () => {
    const dir = folder();
    const client = await createPgliteClient(dir);
    try {
      await expect(createPgliteClient(dir)).rejects.toThrow(DataFolderInUseError);
      expect(existsSync(join(dir, LOCK_FILE))).toBe(true);
      await expect(client.query('SELECT 1 AS one')).resolves.toMatchObject({ rows: [{ one: 1 }] });
      // Another holder's lock where ours was: the next touch (every 5 s) finds it.
      writeFileSync(join(dir, LOCK_FILE), 'taken over');
      await new Promise((resolve) => setTimeout(resolve, 6_000));
      await expect(client.query('SELECT 1')).rejects.toThrow(/taken over/);
    } finally {
      await client.close();
    }
    expect(readFileSync(join(dir, LOCK_FILE), 'utf8')).toBe('taken over');
  }, 60_000);
});
