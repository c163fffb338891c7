import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import pg from 'pg';
import { SERVER_URL } from './databases.js';
import { LOCAL_REDIS_URL, testRedisPrefix } from './http.js';

/**
 * Real processes for the durability tests: the `spendgate serve --role worker` process, a
 * private redis-server, and a PostgreSQL database whose URL a child process can be given.
 * Every process started here is remembered, so `stopAll` ends exactly those (by pid) however
 * a test ended.
 */
const ROOT = new URL('../../', import.meta.url).pathname;
const MAIN = new URL('../../src/cli/main.ts', import.meta.url).pathname;

export interface Child {
  readonly pid: number;
  /** stdout and stderr so far, for failure messages. */
  output(): string;
  /** Resolves when the process has exited, with its code or signal. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Sends `signal` (unless the process has already exited) and waits for the exit. */
  stop(signal: NodeJS.Signals): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

const running = new Set<ChildProcess>();

/** Any program as a process of its own, remembered so that `stopAll` ends it. */
export function startProcess(
  command: string,
  args: readonly string[],
  env: NodeJS.ProcessEnv,
): Child {
  const child = spawn(command, args, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  if (child.pid === undefined) throw new Error(`${command} did not start`);
  const pid = child.pid;
  running.add(child);
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  // 'close', not 'exit': the last words of a dying process (an uncaught error's stack) are
  // still in the pipes when it exits, and a failure message without them names no cause.
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.on('close', (code, signal) => {
      running.delete(child);
      resolve({ code, signal });
    });
  });
  return {
    pid,
    output: () => output,
    exited,
    async stop(signal) {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
}

/** Ends every process these helpers started and that is still running (SIGKILL, by pid). */
export async function stopAll(): Promise<void> {
  await Promise.all([...running].map((child) => startedChildStop(child)));
}

function startedChildStop(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) {
      resolve();
      return;
    }
    child.once('exit', () => {
      resolve();
    });
    child.kill('SIGKILL');
  });
}

/**
 * `spendgate serve --role worker` as a process of its own. Node loads tsx as a loader in the
 * same process (`node --import tsx`), rather than through the tsx command, which runs the
 * program in a child of its own: a SIGKILL to the tsx command would leave that child running.
 */
export function startWorkerProcess(env: Record<string, string>): Child {
  return startProcess(process.execPath, ['--import', 'tsx', MAIN, 'serve', '--role', 'worker'], {
    ...process.env,
    // Its health port: any free one, unless the test names one.
    WORKER_PORT: '0',
    ...env,
  });
}

/**
 * `spendgate serve --role api` as a process of its own (node with tsx as a loader, as above),
 * on the PORT the test gives: a fleet's API process, one of several on one database.
 */
export function startApiProcess(env: Record<string, string> & { readonly PORT: string }): Child {
  return startProcess(process.execPath, ['--import', 'tsx', MAIN, 'serve', '--role', 'api'], {
    ...process.env,
    ...ownJournal(env),
    ...env,
  });
}

/** `spendgate <args>` as a process of its own (node with tsx as a loader, as above). */
export function startCliProcess(args: readonly string[], env: Record<string, string>): Child {
  return startProcess(process.execPath, ['--import', 'tsx', MAIN, ...args], {
    ...process.env,
    ...ownJournal(env),
    ...env,
  });
}

/**
 * A stand-in journal folder of the process's own, unless the test names one or a data folder
 * (whose `stand-in` it then is): the default, `./data/stand-in`, would be shared by every test's
 * processes, and one starting would take over what another test's killed process owed, in
 * another database.
 */
function ownJournal(env: Record<string, string>): Record<string, string> {
  if (env['STAND_IN_JOURNAL_DIR'] !== undefined || env['SPENDGATE_DATA_DIR'] !== undefined) {
    return {};
  }
  return {
    STAND_IN_JOURNAL_DIR: join(tmpdir(), `sg-stand-in-${randomBytes(8).toString('hex')}`),
  };
}

/**
 * Where `freePort` looks: below Linux's ephemeral range (32768-60999), so that no outgoing
 * connection of a parallel test (a pg client, a cluster bus link) is given the port between
 * the asking and the child's bind: CI once lost a Redis cluster node that way, its bus port
 * taken. Only listeners asking here compete, and they pick at random.
 */
const PORT_MIN = 20_000;
const PORT_MAX = 32_767;
/** Ports tried before giving up: a loaded machine has a few hundred listeners, not thousands. */
const PORT_TRIES_MAX = 200;

/** A TCP port free on loopback at the time of asking, outside the ephemeral range. */
export async function freePort(): Promise<number> {
  for (let attempt = 0; attempt < PORT_TRIES_MAX; attempt++) {
    const port = PORT_MIN + Math.floor(Math.random() * (PORT_MAX - PORT_MIN + 1));
    if (await listenable(port)) return port;
  }
  throw new Error(`no free port in ${PORT_MIN}-${PORT_MAX} after ${PORT_TRIES_MAX} tries`);
}

/** Whether a listener can bind `port` on loopback now (it is closed again before resolving). */
async function listenable(port: number): Promise<boolean> {
  const server = createServer();
  const bound = await new Promise<boolean>((resolve) => {
    server.once('error', () => {
      resolve(false);
    });
    server.listen(port, '127.0.0.1', () => {
      resolve(true);
    });
  });
  if (!bound) return false;
  await new Promise<void>((resolve) =>
    server.close(() => {
      resolve();
    }),
  );
  return true;
}

/** Whether a redis-server's start failed because one of its ports was taken meanwhile. */
export function portTaken(error: unknown): boolean {
  return error instanceof Error && error.message.includes('Address already in use');
}

/**
 * A redis-server of the test's own on `port`, without persistence (unless asked: `dir` is where
 * SAVE writes and a start reads dump.rdb), with `args` after its own (cluster mode, say);
 * resolves once it is ready.
 */
export async function startRedisServer(
  port: number,
  options: { readonly dir?: string; readonly args?: readonly string[] } = {},
): Promise<Child> {
  const redis = startProcess(
    '/usr/bin/redis-server',
    [
      '--port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--save',
      '',
      '--appendonly',
      'no',
      ...(options.dir === undefined ? [] : ['--dir', options.dir]),
      ...(options.args ?? []),
    ],
    process.env,
  );
  const deadline = Date.now() + 10_000;
  while (!redis.output().includes('Ready to accept connections')) {
    const exited = await Promise.race([redis.exited, sleep(20).then(() => null)]);
    if (exited !== null || Date.now() > deadline) {
      await redis.stop('SIGKILL');
      throw new Error(`redis-server did not start on port ${port}:\n${redis.output()}`);
    }
  }
  return redis;
}

/** A fresh database on the PostgreSQL server, by URL (a child process connects to it too). */
export async function serverDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `sg_test_${process.pid}_${randomBytes(6).toString('hex')}`;
  await admin(`CREATE DATABASE ${name}`);
  const url = new URL(SERVER_URL);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: () => admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`),
  };
}

async function admin(statement: string): Promise<void> {
  const client = new pg.Client({ connectionString: SERVER_URL });
  await client.connect();
  try {
    await client.query(statement);
  } finally {
    await client.end();
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Polls `check` every 25 ms until it is true; throws `describe()` after `timeoutMs`. */
export async function waitFor(
  check: () => boolean | Promise<boolean>,
  timeoutMs: number,
  describe: () => string,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms: ${describe()}`);
    await sleep(25);
  }
}

const LISTENING = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/;

/** The base URL a `spendgate serve` child logs once it listens, waited for up to `timeoutMs`. */
export async function listeningBase(child: Child, timeoutMs: number): Promise<string> {
  let base: string | undefined;
  await waitFor(
    () => {
      base = LISTENING.exec(child.output())?.[1];
      return base !== undefined;
    },
    timeoutMs,
    () => `the server did not start:\n${child.output()}`,
  );
  return base ?? '';
}

/** One JSON request with an API key, answered with its status and parsed body. */
export async function callWithKey(
  base: string,
  key: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`${base}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${key}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

/** The Redis prefixes a suite uses, remembered so that its `afterAll` deletes their keys. */
export function trackedRedisPrefixes(): {
  /** A new prefix of this run's own. */
  readonly next: () => string;
  /** A prefix a process chose itself (a default one), to forget with the rest. */
  readonly add: (...prefixes: string[]) => void;
  readonly forget: () => Promise<void>;
} {
  const prefixes: string[] = [];
  return {
    next: () => {
      const made = testRedisPrefix();
      prefixes.push(made);
      return made;
    },
    add: (...more) => {
      prefixes.push(...more);
    },
    forget: () => forgetPrefixes(prefixes),
  };
}

/** Deletes the keys of the test's Redis prefixes on the shared Redis (nothing else). */
export async function forgetPrefixes(prefixes: readonly string[]): Promise<void> {
  const redis = new Redis(LOCAL_REDIS_URL, { maxRetriesPerRequest: 1 });
  try {
    for (const redisPrefix of prefixes) {
      let cursor = '0';
      do {
        const [next, keys] = await redis.scan(cursor, 'MATCH', `{${redisPrefix}}:*`, 'COUNT', 500);
        if (keys.length > 0) await redis.del(...keys);
        cursor = next;
      } while (cursor !== '0');
    }
  } finally {
    redis.disconnect();
  }
}
