import { randomBytes } from 'node:crypto';
import {
  linkSync,
  mkdirSync,
  readFileSync,
  readlinkSync,
  rmdirSync,
  statSync,
  unlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { hostname } from 'node:os';
import { join, resolve } from 'node:path';
import { ConfigError } from '../config/env.js';
import { assert } from '../core/index.js';

/*
 * One process per embedded data folder. PGlite is PostgreSQL in this process's
 * memory, writing to its folder: a second process that opens the same folder runs its own copy
 * of the database, and each overwrites the other's files (a key created beside a running
 * server was refused by it, then lost). So the first process to open a folder locks it and
 * every other one is refused until it closes.
 *
 * The lock is the file `spendgate.lock` in the folder (as PostgreSQL keeps postmaster.pid in
 * its own), naming its holder. Why this scheme:
 * - It appears whole and atomically: written under a name of its own, then hard-linked to
 *   `spendgate.lock`, which fails if the name exists (O_EXCL's guarantee, NFS included, with
 *   no moment where a reader finds it empty).
 * - A holder on this host and in this pid namespace is alive while its pid runs the same
 *   process (same start time, where /proc tells), so a SIGKILLed holder's lock is taken over
 *   at once, a pid reused by another program is not mistaken for the holder, and a lock naming
 *   this very process's pid (a container restarted with the same pid) is stale, since this
 *   process keeps its own locks in `heldHere`.
 * - A holder elsewhere (another container or machine sharing the folder) cannot be asked: it
 *   touches the file every TOUCH_MS, and a lock untouched for LEASE_MS is stale.
 * - A stale lock is taken over under a guard (mkdir of `spendgate.lock.takeover`, atomic) and
 *   judged again under it, so two processes finding one stale lock never both take it.
 * - The holder checks at each touch that the file still names it. Should it not (a holder
 *   elsewhere frozen for longer than the lease), `lost` turns true and the SQL client refuses
 *   every statement from then on, rather than write beside the new holder.
 * flock(2) would be released by the kernel on death, but Node has no flock, and it is not
 * dependable on network filesystems.
 */

export const LOCK_FILE = 'spendgate.lock';
/** How often a holder touches its lock. */
const TOUCH_MS = 5_000;
/** A lock held from another host or pid namespace and untouched this long is stale. */
export const LEASE_MS = 30_000;
/** A takeover guard this old was left by a process that died during a takeover. */
const GUARD_STALE_MS = 10_000;
const ATTEMPTS_MAX = 20;
const GUARD_WAIT_MS = 50;
const LOCK_BYTES_MAX = 4096;

export interface LockHolder {
  readonly pid: number;
  readonly host: string;
  /** The pid namespace (Linux, `/proc/self/ns/pid`); null where the platform does not tell. */
  readonly pidNamespace: string | null;
  /** The process's start time in clock ticks since boot (Linux); null where unknown. */
  readonly startTime: string | null;
  readonly lockedAt: string;
}

/** A ConfigError, so that the command prints its one line (src/cli/main.ts) and exits 1. */
export class DataFolderInUseError extends ConfigError {
  constructor(
    readonly folder: string,
    readonly holder: LockHolder | null,
  ) {
    const who =
      holder === null
        ? 'another process'
        : `process ${holder.pid}${holder.host === hostname() ? '' : ` on ${holder.host}`}`;
    super(
      `the embedded database in ${folder} is open in ${who} (a running spendgate serve?), and ` +
        'two processes must never run one data folder: stop that process first and run this ' +
        'again, or use a PostgreSQL server (DATABASE_URL), which any number of processes share',
    );
  }
}

export interface DataFolderLock {
  /** True once the lock file no longer names this process: stop writing to the folder. */
  readonly lost: boolean;
  /** Removes the lock if it is still this process's. Idempotent. */
  release(): void;
}

/** Lock files this process holds, by path: a second open in one process is refused too. */
// eslint-disable-next-line no-restricted-syntax -- the process's by nature: what it holds
const heldHere = new Set<string>();

/** Locks `folder` (made if missing) for this process, or throws DataFolderInUseError. */
export async function lockDataFolder(folder: string): Promise<DataFolderLock> {
  const path = join(resolve(folder), LOCK_FILE);
  if (heldHere.has(path)) throw new DataFolderInUseError(folder, currentHolder());
  mkdirSync(folder, { recursive: true, mode: 0o700 });
  const text = `${JSON.stringify(currentHolder())}\n`;
  for (let attempt = 0; attempt < ATTEMPTS_MAX; attempt++) {
    if (createLock(path, text)) return holdLock(path, text);
    const seen = readLock(path);
    if (seen === null) continue; // released meanwhile: try again
    if (!isStale(seen)) throw new DataFolderInUseError(folder, seen.holder);
    if (!takeOverStale(path, seen.text)) await sleep(GUARD_WAIT_MS);
  }
  // Every attempt lost a race to another starting process: it holds the folder now.
  throw new DataFolderInUseError(folder, readLock(path)?.holder ?? null);
}

function currentHolder(): LockHolder {
  return {
    pid: process.pid,
    host: hostname(),
    pidNamespace: pidNamespace(),
    startTime: processStartTime(process.pid),
    lockedAt: new Date().toISOString(),
  };
}

/** Creates the lock file whole, atomically; false if one exists. */
function createLock(path: string, text: string): boolean {
  const staging = `${path}.${process.pid}.${randomBytes(6).toString('hex')}`;
  writeFileSync(staging, text, { mode: 0o600, flag: 'wx' });
  try {
    linkSync(staging, path);
    return true;
  } catch (error) {
    if (errorCode(error) === 'EEXIST') return false;
    throw error;
  } finally {
    unlinkSync(staging);
  }
}

interface SeenLock {
  readonly text: string;
  /** null: not a lock this code wrote (damaged); judged by its age alone. */
  readonly holder: LockHolder | null;
  readonly touchedMs: number;
}

function readLock(path: string): SeenLock | null {
  try {
    const touchedMs = statSync(path).mtimeMs;
    const text = readFileSync(path, 'utf8').slice(0, LOCK_BYTES_MAX);
    return { text, holder: parseHolder(text), touchedMs };
  } catch (error) {
    if (errorCode(error) === 'ENOENT') return null;
    throw error;
  }
}

function parseHolder(text: string): LockHolder | null {
  try {
    const value = JSON.parse(text) as Partial<LockHolder>;
    if (!Number.isSafeInteger(value.pid) || typeof value.host !== 'string') return null;
    return {
      pid: value.pid as number,
      host: value.host,
      pidNamespace: typeof value.pidNamespace === 'string' ? value.pidNamespace : null,
      startTime: typeof value.startTime === 'string' ? value.startTime : null,
      lockedAt: typeof value.lockedAt === 'string' ? value.lockedAt : '',
    };
  } catch {
    return null;
  }
}

/** Whether the lock's holder is gone (see the scheme above). */
function isStale(seen: SeenLock): boolean {
  const holder = seen.holder;
  const askable =
    holder !== null && holder.host === hostname() && holder.pidNamespace === pidNamespace();
  if (!askable) return Date.now() - seen.touchedMs > LEASE_MS;
  // This process holds no lock on this path (heldHere): its own pid in it is a former life's.
  if (holder.pid === process.pid) return true;
  if (!isRunning(holder.pid)) return true;
  const startTime = processStartTime(holder.pid);
  return holder.startTime !== null && startTime !== null && startTime !== holder.startTime;
}

/**
 * Removes the stale lock `staleText`, under the takeover guard, if it is still there and still
 * stale. Returns false when another process holds the guard (the caller waits and retries).
 */
function takeOverStale(path: string, staleText: string): boolean {
  const guard = `${path}.takeover`;
  try {
    mkdirSync(guard, { mode: 0o700 });
  } catch (error) {
    if (errorCode(error) !== 'EEXIST') throw error;
    removeStaleGuard(guard);
    return false;
  }
  try {
    const again = readLock(path);
    if (again !== null && again.text === staleText && isStale(again)) unlinkSync(path);
  } finally {
    rmdirSync(guard);
  }
  return true;
}

function removeStaleGuard(guard: string): void {
  try {
    if (Date.now() - statSync(guard).mtimeMs > GUARD_STALE_MS) rmdirSync(guard);
  } catch (error) {
    if (errorCode(error) !== 'ENOENT') throw error;
  }
}

function holdLock(path: string, text: string): DataFolderLock {
  assert(!heldHere.has(path), 'one lock per folder in a process');
  heldHere.add(path);
  let lost = false;
  let released = false;
  const stillOurs = (): boolean => {
    try {
      return readFileSync(path, 'utf8') === text;
    } catch {
      return false;
    }
  };
  const touch = setInterval(() => {
    if (!stillOurs()) {
      lost = true;
      clearInterval(touch);
      return;
    }
    const now = new Date();
    utimesSync(path, now, now);
  }, TOUCH_MS);
  touch.unref();
  const release = (): void => {
    if (released) return;
    released = true;
    clearInterval(touch);
    process.removeListener('exit', release);
    heldHere.delete(path);
    if (stillOurs()) unlinkSync(path);
  };
  // A process that exits without closing (process.exit, an uncaught error) no longer runs the
  // database: its lock goes with it.
  process.once('exit', release);
  return {
    get lost() {
      return lost;
    },
    release,
  };
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it runs, as another user.
    return errorCode(error) === 'EPERM';
  }
}

function pidNamespace(): string | null {
  try {
    return readlinkSync('/proc/self/ns/pid');
  } catch {
    return null;
  }
}

/** Field 22 of /proc/<pid>/stat (after the command name, which may hold spaces). */
function processStartTime(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? null;
  } catch {
    return null;
  }
}

function errorCode(error: unknown): string | undefined {
  return error instanceof Error && 'code' in error ? String(error.code) : undefined;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
