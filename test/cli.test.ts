import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { createServer, type AddressInfo, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readMigrations } from '../src/store/migrations/runner.js';
import { testDatabase } from './support/databases.js';
import { testRedisPrefix } from './support/http.js';

/**
 * The spendgate command as an operator runs it: a real process, its output and exit code.
 * `serve` on the embedded default must need nothing installed and keep its key to itself.
 */
const MAIN = new URL('../src/cli/main.ts', import.meta.url).pathname;
const ROOT = new URL('../', import.meta.url).pathname;

interface Run {
  code: number | null;
  output: string;
}

function run(
  args: string[],
  env: Record<string, string>,
  whileRunning?: (output: () => string) => Promise<void>,
): Promise<Run> {
  return new Promise((resolve, reject) => {
    // One node process, as `npm start` runs it: the tsx binary would put a parent in front that
    // SIGKILLs its child when a relayed signal is not acknowledged within 30 ms (a start busy
    // compiling the embedded database's code), and the exit code tested would be tsx's.
    const child = spawn(process.execPath, ['--import', 'tsx', MAIN, ...args], {
      cwd: ROOT,
      // A Redis prefix of this run's own: its rate-limit counts meet no other run's.
      env: { ...process.env, LOG_LEVEL: 'info', REDIS_PREFIX: testRedisPrefix(), ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('error', reject);
    child.on('exit', (code) => {
      resolve({ code, output });
    });
    if (whileRunning !== undefined) {
      whileRunning(() => output)
        .catch((error: unknown) => {
          output += `\nTEST ERROR: ${String(error)}`;
        })
        .finally(() => child.kill('SIGTERM'));
    }
  });
}

/** The embedded database's first start (PGlite, migrations) takes seconds, more on a busy CI. */
async function listeningUrl(output: () => string): Promise<string> {
  for (let attempt = 0; attempt < 1500; attempt++) {
    const match = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(output());
    if (match?.[1] !== undefined) return match[1];
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`the server did not start:\n${output()}`);
}

/**
 * `spendgate <args>` run by bash's `time`, which reports the CPU the command and its children
 * used; its stdout alone (what `> file` would get).
 */
function cpuTimed(
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number | null; stdout: string; cpuSeconds: number }> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      '/bin/bash',
      [
        '-c',
        'TIMEFORMAT="cpu %U %S"; time "$@"',
        'bash',
        process.execPath,
        '--import',
        'tsx',
        MAIN,
        ...args,
      ],
      { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('exit', (code) => {
      const times = /cpu ([0-9.]+) ([0-9.]+)\s*$/.exec(stderr);
      if (times === null) {
        reject(new Error(`no CPU time in:\n${stderr}`));
        return;
      }
      resolve({ code, stdout, cpuSeconds: Number(times[1]) + Number(times[2]) });
    });
  });
}

describe('spendgate serve (embedded default)', () => {
  it('starts with nothing configured, answers health, keeps a 0600 master key, and stops on SIGTERM', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'spendgate-data-'));
    const env = {
      PORT: '0',
      SPENDGATE_DATA_DIR: dataDir,
      DATABASE_URL: '',
      SPENDGATE_MASTER_KEY: '',
    };
    let health: unknown;
    let account: unknown;
    const first = await run(['serve'], env, async (output) => {
      const url = await listeningUrl(output);
      health = await (await fetch(`${url}/healthz`)).json();
      // The first start of an empty embedded database prints a test key, once, outside the log.
      const key = /\n {2}(sk_test_[A-Za-z0-9_-]+)\n/.exec(output())?.[1] ?? '';
      account = await (
        await fetch(`${url}/v1/account`, { headers: { authorization: `Bearer ${key}` } })
      ).json();
    });
    expect(first.output).not.toContain('TEST ERROR');
    expect(health).toEqual({ status: 'ok' });
    expect(account).toMatchObject({ object: 'account', name: 'default', mode: 'test' });
    const printedKey = /sk_test_[A-Za-z0-9_-]+/.exec(first.output)?.[0] ?? '';
    // Shown on its own line, never inside a JSON log line.
    expect(
      first.output
        .split('\n')
        .filter((line) => line.includes(printedKey))
        .every((line) => !line.startsWith('{')),
    ).toBe(true);
    expect(first.code).toBe(0);
    const keyFile = join(dataDir, 'master.key');
    expect(statSync(keyFile).mode & 0o777).toBe(0o600);
    const key = readFileSync(keyFile, 'utf8');
    expect(first.output).not.toContain(key.trim());
    // A second start reuses the key and the database.
    const second = await run(['serve'], env, async (output) => {
      await listeningUrl(output);
    });
    expect(second.code).toBe(0);
    expect(readFileSync(keyFile, 'utf8')).toBe(key);
    expect(second.output).not.toContain('sk_test_');
  }, 600_000);

  it('stops gracefully on a SIGTERM sent during its start, before it listens', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'spendgate-data-'));
    // Its first words come while the embedded database is still opening: the signal lands in
    // the start, where node's default disposition would kill it (exit 143).
    const early = await run(
      ['serve'],
      { PORT: '0', SPENDGATE_DATA_DIR: dataDir, DATABASE_URL: '', SPENDGATE_MASTER_KEY: '' },
      async (output) => {
        for (let attempt = 0; attempt < 1500 && output() === ''; attempt++) {
          await new Promise((resolve) => setTimeout(resolve, 10));
        }
        expect(output()).not.toMatch(/Server listening/);
      },
    );
    expect(early.output).not.toContain('TEST ERROR');
    expect(early.output).toMatch(/"reason":"SIGTERM".*shutting down/);
    expect(early.code).toBe(0);
  }, 600_000);

  it('serves without Redis, saying so loudly in its log', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'spendgate-data-'));
    let status = 0;
    const result = await run(
      ['serve'],
      {
        PORT: '0',
        SPENDGATE_DATA_DIR: dataDir,
        DATABASE_URL: '',
        REDIS_URL: 'redis://127.0.0.1:1',
      },
      async (output) => {
        const url = await listeningUrl(output);
        const key = /\n {2}(sk_test_[A-Za-z0-9_-]+)\n/.exec(output())?.[1] ?? '';
        status = (await fetch(`${url}/v1/account`, { headers: { authorization: `Bearer ${key}` } }))
          .status;
        for (let attempt = 0; attempt < 50 && !output().includes('Redis is unreachable'); attempt++)
          await new Promise((resolve) => setTimeout(resolve, 100));
      },
    );
    expect(result.output).not.toContain('TEST ERROR');
    expect(status).toBe(200);
    const warning = result.output.split('\n').find((line) => line.includes('Redis is unreachable'));
    expect(JSON.parse(warning ?? '{}')).toMatchObject({ level: 40 });
  }, 300_000);

  it('refuses to start with a malformed setting, naming it and not its value', async () => {
    const result = await run(['serve'], { DATABASE_URL: 'mysql://root:hunter2@db/x' });
    expect(result.code).toBe(1);
    expect(result.output).toContain('DATABASE_URL');
    expect(result.output).not.toContain('hunter2');
  });

  it('refuses a PostgreSQL server without SPENDGATE_MASTER_KEY', async () => {
    const result = await run(['serve'], {
      DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/test',
      SPENDGATE_MASTER_KEY: '',
    });
    expect(result.code).toBe(1);
    expect(result.output).toContain('SPENDGATE_MASTER_KEY');
  });
});

describe('spendgate migrate', () => {
  const database = testDatabase('pg');
  afterAll(async () => {
    await database.close();
  });

  it('applies the schema to a PostgreSQL server once, then has nothing to apply', async () => {
    await database.client();
    const { rows } = await (
      await database.client()
    ).query<{ url: string }>(
      "SELECT 'postgres://postgres@127.0.0.1:5432/' || current_database() AS url",
    );
    const env = { DATABASE_URL: rows[0]?.url ?? '' };
    const migrations = readMigrations();
    expect(migrations.length).toBeGreaterThanOrEqual(3);
    const first = await run(['migrate'], env);
    expect([first.code, first.output.trim()]).toEqual([
      0,
      `applied ${migrations.map((migration) => migration.name).join(', ')} (0 already applied)`,
    ]);
    const second = await run(['migrate'], env);
    expect([second.code, second.output.trim()]).toEqual([
      0,
      `nothing to apply (${migrations.length} already applied)`,
    ]);
  });

  it('creates, lists and revokes API keys, showing a key only at its creation', async () => {
    const { rows } = await (
      await database.client()
    ).query<{ url: string }>(
      "SELECT 'postgres://postgres@127.0.0.1:5432/' || current_database() AS url",
    );
    const env = {
      DATABASE_URL: rows[0]?.url ?? '',
      SPENDGATE_MASTER_KEY: randomBytes(32).toString('base64'),
    };
    // A name that names no account is an error, never a new account (contract v1.1).
    const typo = await run(['keys', 'create', '--account', 'acme', '--mode', 'live'], env);
    expect([typo.code, typo.output]).toEqual([
      1,
      expect.stringContaining('no account named "acme"') as unknown,
    ]);
    const listedNobody = await run(['keys', 'list', '--account', 'acme'], env);
    expect(listedNobody.code).toBe(1);
    const created = await run(
      [
        'keys',
        'create',
        '--account',
        'acme',
        '--mode',
        'live',
        '--scopes',
        'authorizations:write',
        '--create-account',
      ],
      env,
    );
    expect(created.code).toBe(0);
    const second = await run(['keys', 'create', '--account', 'acme', '--mode', 'test'], env);
    expect(second.code).toBe(0);
    const key = /^sk_live_[A-Za-z0-9_-]{32}$/m.exec(created.output)?.[0];
    expect(key).toBeDefined();
    const keyId = /key (key_[0-9a-f]{32})/.exec(created.output)?.[1] ?? '';
    const listed = await run(['keys', 'list', '--account', 'acme'], env);
    expect(listed.output).toContain(keyId);
    expect(listed.output).toContain('active');
    expect(listed.output).not.toContain(key ?? 'no key');
    expect((await run(['keys', 'revoke', keyId], env)).output.trim()).toBe(`revoked ${keyId}`);
    const again = await run(['keys', 'revoke', keyId], env);
    expect([again.code, again.output]).toEqual([
      1,
      expect.stringContaining(`no active key ${keyId}`) as unknown,
    ]);
    expect((await run(['keys', 'list', '--account', 'acme'], env)).output).toContain('revoked');
    const bad = await run(
      ['keys', 'create', '--account', 'acme', '--mode', 'live', '--scopes', 'everything'],
      env,
    );
    expect([bad.code, bad.output]).toEqual([
      2,
      expect.stringContaining('unknown scopes: everything') as unknown,
    ]);
    expect((await run(['keys', 'create', '--acount', 'x'], env)).code).toBe(2);
  }, 600_000);

  it('prints the OpenAPI document without opening any database, in seconds', async () => {
    // A PostgreSQL address that counts connections, and an embedded data folder: neither is used.
    const { server, connections, url } = await countingServer();
    const dataDir = mkdtempSync(join(tmpdir(), 'spendgate-data-'));
    try {
      for (const env of [
        { DATABASE_URL: url },
        { DATABASE_URL: '', SPENDGATE_DATA_DIR: dataDir, SPENDGATE_MASTER_KEY: '' },
      ]) {
        const result = await cpuTimed(['openapi'], env);
        // Its CPU time, which a busy machine stretches less than the time on the clock: loading
        // the routes takes about 2.5 s of it; starting an in-memory database too, as the
        // command did, about 10 s.
        expect(result.cpuSeconds).toBeLessThan(6);
        expect(result.code).toBe(0);
        const document = JSON.parse(result.stdout) as { openapi: string; paths: object };
        expect(document.openapi).toBe('3.1.0');
        expect(Object.keys(document.paths)).toContain('/v1/vaults');
      }
      expect(connections()).toBe(0);
      expect(readdirSync(dataDir)).toEqual([]);
    } finally {
      server.close();
    }
  });

  it('prints its usage for an unknown command or role', async () => {
    const role = await run(['serve', '--role', 'boss'], {});
    expect([role.code, role.output]).toEqual([2, expect.stringContaining('--role api|worker|all')]);
    const result = await run(['launch'], {});
    expect(result.code).toBe(2);
    expect(result.output).toContain(
      'usage: spendgate serve [--role api|worker|all] | spendgate migrate',
    );
    expect(result.output).toContain('spendgate keys create --account NAME');
  });

  it('describes every command with --help and prints its version, exiting 0', async () => {
    const help = await run(['--help'], {});
    expect(help.code).toBe(0);
    for (const command of [
      'serve',
      'migrate',
      'openapi',
      'keys create',
      'keys list',
      'keys revoke',
      'keys rotate-master',
    ]) {
      expect(help.output, command).toContain(`  ${command}`);
    }
    const manifest = JSON.parse(
      readFileSync(new URL('../package.json', import.meta.url), 'utf8'),
    ) as { version: string };
    const printed = await run(['--version'], {});
    expect([printed.code, printed.output.trim()]).toEqual([0, manifest.version]);
  });
});

/** A TCP server on loopback that counts the connections it gets and closes each at once. */
async function countingServer(): Promise<{
  server: Server;
  connections: () => number;
  url: string;
}> {
  let count = 0;
  const server = createServer((socket) => {
    count += 1;
    socket.destroy();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    server,
    connections: () => count,
    url: `postgres://postgres:hunter2@127.0.0.1:${port}/none`,
  };
}

/** A TCP server on loopback that takes connections and never answers. */
async function silentServer(): Promise<{ server: Server; port: number }> {
  const sockets = new Set<import('node:net').Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  server.on('close', () => {
    for (const socket of sockets) socket.destroy();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as AddressInfo).port };
}

describe('a database or port the command cannot use', () => {
  const unreachable = {
    DATABASE_URL: 'postgres://postgres:hunter2@127.0.0.1:1/test',
    SPENDGATE_MASTER_KEY: randomBytes(32).toString('base64'),
  };
  const lines = (output: string) => output.split('\n').filter((line) => line.trim() !== '');

  it('says in one line, without the password, that PostgreSQL refused the connection, for every command that opens it', async () => {
    for (const args of [
      ['serve'],
      ['serve', '--role', 'worker'],
      ['migrate'],
      ['keys', 'list', '--account', 'acme'],
      ['keys', 'create', '--account', 'acme', '--mode', 'test'],
      ['keys', 'revoke', 'key_x'],
      ['keys', 'rotate-master'],
    ]) {
      const result = await run(args, unreachable);
      expect([args, result.code, lines(result.output)]).toEqual([
        args,
        1,
        [
          'spendgate: cannot connect to PostgreSQL at 127.0.0.1:1 (DATABASE_URL): connection refused — is the server running, and listening on that port?',
        ],
      ]);
      expect(result.output).not.toContain('hunter2');
    }
  }, 300_000);

  it('gives up on a server that never answers after PGCONNECT_TIMEOUT seconds, saying what it waited for', async () => {
    const { server, port } = await silentServer();
    try {
      const started = Date.now();
      const result = await run(['keys', 'list', '--account', 'acme'], {
        ...unreachable,
        DATABASE_URL: `postgres://postgres:hunter2@127.0.0.1:${port}/test`,
        PGCONNECT_TIMEOUT: '1',
      });
      expect(Date.now() - started).toBeLessThan(30_000);
      expect([result.code, lines(result.output)]).toEqual([
        1,
        [
          `spendgate: cannot connect to PostgreSQL at 127.0.0.1:${port} (DATABASE_URL): no answer within 1 s — check the host, the port and any firewall between`,
        ],
      ]);
    } finally {
      server.close();
    }
  });

  it('says which port it cannot listen on, and the settings that choose it', async () => {
    const database = testDatabase('pg');
    const { server, port } = await silentServer();
    try {
      const { rows } = await (
        await database.client()
      ).query<{ url: string }>(
        "SELECT 'postgres://postgres@127.0.0.1:5432/' || current_database() AS url",
      );
      const env = { ...unreachable, DATABASE_URL: rows[0]?.url ?? '', PORT: String(port) };
      const result = await run(['serve', '--role', 'api'], env);
      expect(result.code).toBe(1);
      // The last line (the log may say what the start did before).
      expect(lines(result.output).at(-1)).toBe(
        `spendgate: cannot listen on 127.0.0.1:${port} (HOST, PORT): the port is in use — is another spendgate (or another program) listening there?`,
      );
      expect(result.output).not.toMatch(/\n\s+at /);
    } finally {
      server.close();
      await database.close();
    }
  });

  it('names a database that does not exist, and the way to make it', async () => {
    const result = await run(['migrate'], {
      DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/sg_no_such_database',
    });
    expect([result.code, lines(result.output)]).toEqual([
      1,
      [
        'spendgate: cannot connect to PostgreSQL at 127.0.0.1:5432 (DATABASE_URL): database "sg_no_such_database" does not exist — create it (createdb sg_no_such_database) or correct its name in DATABASE_URL',
      ],
    ]);
  });
});
