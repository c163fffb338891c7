import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createServer, type AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';

/**
 * The command line read before anything is opened: a mistyped command, flag or value is named
 * (with the nearest known word) and exits 2 without a connection to the database, so a
 * running server's lock on the embedded database never hides it.
 */
const MAIN = new URL('../src/cli/main.ts', import.meta.url).pathname;
const ROOT = new URL('../', import.meta.url).pathname;

function run(
  args: readonly string[],
  env: Record<string, string>,
): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', MAIN, ...args], {
      cwd: ROOT,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('error', reject);
    child.on('exit', (code) => {
      resolve({ code, output });
    });
  });
}

describe('spendgate arguments, checked before the database is opened', () => {
  it('names each wrong word, suggests the nearest, exits 2 and connects to nothing', async () => {
    let connections = 0;
    const server = createServer((socket) => {
      connections += 1;
      socket.destroy();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const env = {
      DATABASE_URL: `postgres://postgres@127.0.0.1:${String(port)}/none`,
      SPENDGATE_MASTER_KEY: randomBytes(32).toString('base64'),
    };
    const cases: [string[], string][] = [
      [['kyes', 'list'], 'unknown command "kyes"; did you mean keys?'],
      [['serve', '--role', 'apii'], 'unknown role "apii"; did you mean api?'],
      [['serve', '--rol', 'api'], 'unknown flag "--rol"; did you mean --role?'],
      [['keys', 'lsit', '--account', 'acme'], 'unknown keys command "lsit"; did you mean list?'],
      [['keys', 'list', '--acount', 'acme'], 'unknown flag "--acount"; did you mean --account?'],
      [['keys', 'list'], '--account NAME is required'],
      [
        ['keys', 'create', '--account', 'acme', '--mode', 'prod'],
        '--mode must be test or live, not "prod"',
      ],
      [['reserves', '--wach'], 'unknown flag "--wach"; did you mean --watch?'],
    ];
    try {
      for (const [args, message] of cases) {
        const result = await run(args, env);
        expect([args, result.code, result.output]).toEqual([
          args,
          2,
          expect.stringContaining(message),
        ]);
        expect(result.output).not.toContain('TypeError');
      }
      expect(connections).toBe(0);
      // The same database, with words it knows: the command does connect (the check above
      // could not pass by never connecting at all).
      const known = await run(['keys', 'list', '--account', 'acme'], env);
      expect(known.code).toBe(1);
      expect(connections).toBeGreaterThan(0);
    } finally {
      server.close();
    }
  }, 120_000);
});
