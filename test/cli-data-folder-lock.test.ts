import { existsSync, mkdtempSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ADMIN_SOCKET } from '../src/cli/admin-socket.js';
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
 * server stopped. With real processes: `migrate` is refused with one line saying what to do
 * and the server serves on; `keys` and `reserves` work beside it through its admin socket,
 * their keys accepted by it at once (issue 40); once the server has stopped, the CLI works on the very database the
 * server runs; a lock left by a SIGKILLed server does not stop the next command.
 */
const START_MS_MAX = 150_000;
const redisPrefix = testRedisPrefix();
// The second test's database: a Redis prefix is claimed by one database.
const workersPrefix = testRedisPrefix();

afterAll(async () => {
  await stopAll();
  await forgetPrefixes([redisPrefix, workersPrefix]);
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

    // `migrate` opens the database itself: refused with one line saying what to do.
    const refused = await cli(['migrate']);
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

    // `keys` and `reserves` ask the running server, through its admin socket (0600).
    expect(statSync(join(dataDir, ADMIN_SOCKET)).mode & 0o777).toBe(0o600);
    const besideServer = await cli(CREATE_KEY);
    expect(besideServer.code).toBe(0);
    const liveKey = /^sk_test_[A-Za-z0-9_-]{32}$/m.exec(besideServer.output)?.[0] ?? '';
    expect(await accountStatus(running.base, liveKey)).toBe(200);
    const listedBeside = await cli(['keys', 'list', '--account', 'acme']);
    expect(listedBeside.code).toBe(0);
    const keyId = /key_[0-9a-f]+/.exec(besideServer.output)?.[0] ?? 'none';
    expect(listedBeside.output).toMatch(new RegExp(`^${keyId} .* active `, 'm'));
    const missing = await cli(['keys', 'list', '--account', 'nobody']);
    expect([missing.code, missing.output]).toEqual([
      1,
      expect.stringContaining('no account named "nobody"'),
    ]);
    const revoked = await cli([
      'keys',
      'revoke',
      /key_[0-9a-f]+/.exec(besideServer.output)?.[0] ?? '',
    ]);
    expect(revoked.code).toBe(0);
    // Refused once the server's cache of accepted keys (5 s, src/http/auth.ts) forgets it.
    let status = 200;
    for (let attempt = 0; attempt < 40 && status === 200; attempt++) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      status = await accountStatus(running.base, liveKey);
    }
    expect(status).toBe(401);
    const reserves = await cli(['reserves']);
    // An api role runs no reconciliation: the answer, read from the server's database.
    expect([reserves.code, reserves.output]).toEqual([
      0,
      expect.stringContaining('no reconciliation of reserves yet'),
    ]);

    // The server serves on, and stops cleanly, taking its lock with it.
    expect(await accountStatus(running.base, firstKey)).toBe(200);
    expect(await running.child.stop('SIGTERM')).toEqual({ code: 0, signal: null });
    expect(existsSync(lockFile)).toBe(false);
    expect(existsSync(join(dataDir, ADMIN_SOCKET))).toBe(false);

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

  it('runs reserves --run and --watch beside a running server with the workers', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'spendgate-data-'));
    const allEnv = { ...env, SPENDGATE_DATA_DIR: folder, REDIS_PREFIX: workersPrefix };
    const running = startCliProcess(['serve'], allEnv);
    await listeningBase(running, START_MS_MAX);
    // --run: the server's worker answers the request the CLI left in the server's database.
    const ran = startCliProcess(['reserves', '--run'], allEnv);
    const { code } = await ran.exited;
    expect([code, ran.output()]).toEqual([0, expect.stringMatching(/^test +USDC +covered/m)]);
    // --watch: redrawn every second until stopped.
    const watching = startCliProcess(['reserves', '--watch', '--every', '1'], allEnv);
    // Each redraw starts with the cursor home and the screen cleared, then the header.
    const tables = (): number => (watching.output().match(/MODE +CURRENCY/g) ?? []).length;
    for (let attempt = 0; attempt < 100 && tables() < 2; attempt++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(tables()).toBeGreaterThanOrEqual(2);
    expect(watching.output()).toContain('\x1b[H\x1b[2J');
    expect((await watching.stop('SIGINT')).code).toBe(0);
    expect(await running.stop('SIGTERM')).toEqual({ code: 0, signal: null });
  }, 600_000);
});
