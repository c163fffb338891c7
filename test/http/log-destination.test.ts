import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { LOG_FLUSH_MS_MAX } from '../../src/http/log-destination.js';

/**
 * The server's default log destination writes stdout in blocks (log-destination.ts). Lines
 * must still show while the process idles, and none may be lost when it exits, also on an
 * uncaught error. Each case runs a real child process writing through the real destination.
 */
const ROOT = new URL('../../', import.meta.url).pathname;

function run(script: string): {
  output: () => string;
  exited: Promise<number | null>;
  kill: () => void;
} {
  const preamble =
    "import { pino } from 'pino';\n" +
    "import { bufferedStdout } from './src/http/log-destination.ts';\n" +
    'const log = pino(bufferedStdout());\n';
  // One node process with tsx's loader, not the tsx binary: the binary runs the script in a
  // child of its own, which a SIGKILL of the binary left running after the test (an orphan
  // idling on its timer after every run).
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', '--input-type=module', '-e', preamble + script],
    {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  return {
    output: () => output,
    exited: new Promise((resolve) => {
      child.on('exit', (code) => {
        resolve(code);
      });
    }),
    kill: () => child.kill('SIGKILL'),
  };
}

const linesOf = (output: string, message: string) =>
  output.split('\n').filter((line) => line.includes(`"msg":"${message}"`)).length;

describe('the buffered stdout log destination', () => {
  it('shows a line of an idle process within the flush interval, though it fills no block', async () => {
    // One short line, then the process idles until killed: only the timer can write it.
    const child = run("log.info('idle line'); setInterval(() => undefined, 1000);");
    try {
      const deadline = Date.now() + 30_000;
      while (linesOf(child.output(), 'idle line') === 0 && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, LOG_FLUSH_MS_MAX));
      }
      expect(linesOf(child.output(), 'idle line')).toBe(1);
    } finally {
      child.kill();
      await child.exited;
    }
  });

  it('writes every buffered line when the process exits', async () => {
    const child = run(
      "for (let i = 0; i < 1000; i++) log.info('line before exit'); process.exit(3);",
    );
    expect(await child.exited).toBe(3);
    expect(linesOf(child.output(), 'line before exit')).toBe(1000);
  });

  it('writes every buffered line when the process dies of an uncaught error', async () => {
    const child = run(
      "for (let i = 0; i < 1000; i++) log.info('line before crash');" +
        "setTimeout(() => { throw new Error('crash'); }, 10);",
    );
    expect(await child.exited).not.toBe(0);
    expect(linesOf(child.output(), 'line before crash')).toBe(1000);
  });
});
