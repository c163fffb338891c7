import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { LOCK_FILE } from '../src/store/data-folder-lock.js';
import { testRedisPrefix } from './support/http.js';
import {
  listeningBase,
  forgetPrefixes,
  startCliProcess,
  stopAll,
  type Child,
} from './support/processes.js';

/**
 * The embedded database opened twice: `spendgate keys create` beside a running
 * `spendgate serve` on the same data folder printed a key the server never saw, lost when the
 * server stopped. With real processes: the CLI is refused with one line saying what to do and
 * the server serves on; once the server has stopped, the CLI works on the very database the
 * server runs; a lock left by a SIGKILLed server does not stop the next command.
 */
const START_MS_MAX = 150_000;
const redisPrefix = testRedisPrefix();

afterAll(async () => {
  await stopAll();
  await forgetPrefixes([redisPrefix]);
});

describe('one process per embedded data folder', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'spendgate-data-'));
  const env = {
    SPENDGATE_DATA_DIR: dataDir,
    DATABASE_URL: '',
    SPENDGATE_MASTER_KEY: '',
    REDIS_PREFIX: redisPrefix,
    PORT: '0',
    LOG_LEVEL: 'info',
  };
  const lockFile = join(dataDir, 'pglite', LOCK_FILE);

  /** `spendgate serve --role api` on the folder, once it listens. */
  async function server(): Promise<{ child: Child; base: string }> {
    const child = startCliProcess(['serve', '--role', 'api'], env);
    return { child, base: await listeningBase(child, START_MS_MAX) };
  }

  async function cli(args: string[]): Promise<{ code: number | null; output: string }> {
    const child = startCliProcess(args, env);
    const { code } = await child.exited;
    return { code, output: child.output() };
  }

  async function accountStatus(base: string, key: string): Promise<number> {
    return (await fetch(`${base}/v1/account`, { headers: { authorization: `Bearer ${key}` } }))
      .status;
  }

  const CREATE_KEY = ['keys', 'create', '--account', 'acme', '--mode', 'test', '--create-account'];

  it('refuses a command beside a running server, and runs it on the same database once the server stops', async () => {
    const running = await server();
    const firstKey = /\n {2}(sk_test_[A-Za-z0-9_-]+)\n/.exec(running.child.output())?.[1] ?? '';
    expect(existsSync(lockFile)).toBe(true);

    const refused = await cli(CREATE_KEY);
    expect(refused.code).toBe(1);
    const lines = refused.output.split('\n').filter((line) => line.trim() !== '');
    expect(lines).toEqual([
      expect.stringMatching(
        new RegExp(
          `^spendgate: the embedded database in .*pglite is open in process ${running.child.pid} .*` +
            'stop that process first and run this again, or use a PostgreSQL server \\(DATABASE_URL\\)',
        ),
      ),
    ]);
    expect(refused.output).not.toContain('sk_test_');
    // `migrate` too: nothing opens a folder another process runs.
    expect((await cli(['migrate'])).code).toBe(1);

    // The server serves on, and stops cleanly, taking its lock with it.
    expect(await accountStatus(running.base, firstKey)).toBe(200);
    expect(await running.child.stop('SIGTERM')).toEqual({ code: 0, signal: null });
    expect(existsSync(lockFile)).toBe(false);

    const created = await cli(CREATE_KEY);
    expect(created.code).toBe(0);
    const key = /^sk_test_[A-Za-z0-9_-]{32}$/m.exec(created.output)?.[0] ?? '';
    expect(key).not.toBe('');

    // The key is in the database the server runs: it is accepted after the next start.
    const again = await server();
    expect(await accountStatus(again.base, key)).toBe(200);

    // Killed, the server leaves its lock behind; the next command takes it over.
    expect(await again.child.stop('SIGKILL')).toEqual({ code: null, signal: 'SIGKILL' });
    expect(existsSync(lockFile)).toBe(true);
    const listed = await cli(['keys', 'list', '--account', 'acme']);
    expect(listed.code).toBe(0);
    expect(listed.output).toContain('active');
    expect(existsSync(lockFile)).toBe(false);
  }, 600_000);
});
