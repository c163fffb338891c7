import { spawn, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import net from 'node:net';
import { fileURLToPath } from 'node:url';

/**
 * The benches' child processes (a service started as users run it, a bare Fastify) and the
 * small HTTP reads they are polled with: shared by bench:http and bench:fleet.
 */

const REPOSITORY = fileURLToPath(new URL('..', import.meta.url));
const STOP_MS_MAX = 20_000;
const POLL_MS = 100;
/** The last lines of a child's stderr kept, to show why it failed to start. */
const STDERR_LINES_MAX = 40;

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => {
        if (typeof address === 'object' && address !== null) resolve(address.port);
        else reject(new Error('no port'));
      });
    });
  });
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

export function httpStatus(
  url: string,
  headers: Record<string, string> = {},
): Promise<number | null> {
  return new Promise((resolve) => {
    const request = http.get(url, { headers, timeout: 1000 }, (response) => {
      response.resume();
      resolve(response.statusCode ?? null);
    });
    request.on('timeout', () => request.destroy());
    request.on('error', () => {
      resolve(null);
    });
  });
}

export async function httpJson(url: string, headers: Record<string, string>): Promise<unknown> {
  return JSON.parse(await httpText(url, headers));
}

export function httpText(url: string, headers: Record<string, string>): Promise<string> {
  return new Promise((resolve, reject) => {
    const request = http.get(url, { headers, timeout: 5000 }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => {
        resolve(Buffer.concat(chunks).toString());
      });
    });
    request.on('timeout', () => request.destroy(new Error(`${url} timed out`)));
    request.on('error', reject);
  });
}

/** A child node process running a bench/ entry through tsx, its stderr's last lines kept. */
export class Child {
  readonly process: ChildProcess;
  readonly #stderrLines: string[] = [];
  exited = false;

  constructor(entry: string, env: Record<string, string>, nodeFlags: readonly string[] = []) {
    this.process = spawn(process.execPath, [...nodeFlags, '--import', 'tsx', entry], {
      cwd: REPOSITORY,
      env: { PATH: process.env.PATH ?? '', ...env },
      // Logs to /dev/null: the service formats them as in production, nobody reads them.
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    this.process.stderr?.setEncoding('utf8');
    this.process.stderr?.on('data', (text: string) => {
      this.#stderrLines.push(...text.split('\n').filter((line) => line.length > 0));
      this.#stderrLines.splice(0, Math.max(0, this.#stderrLines.length - STDERR_LINES_MAX));
    });
    this.process.once('exit', () => {
      this.exited = true;
    });
  }

  get pid(): number {
    return this.process.pid ?? -1;
  }

  stderr(): string {
    return this.#stderrLines.join('\n');
  }

  /** Polls `url` until `ready(status)`; throws if the process exits first or after `ms`. */
  async waitUntil(url: string, ready: (status: number) => boolean, ms: number): Promise<void> {
    const deadline = Date.now() + ms;
    for (;;) {
      if (this.exited) throw new Error(`the process exited while starting:\n${this.stderr()}`);
      const status = await httpStatus(url);
      if (status !== null && ready(status)) return;
      if (Date.now() > deadline) throw new Error(`not ready within ${ms} ms:\n${this.stderr()}`);
      await sleep(POLL_MS);
    }
  }

  /** SIGTERM, then SIGKILL if it has not exited within STOP_MS_MAX. */
  async stop(): Promise<void> {
    if (this.exited) return;
    const exited = new Promise((resolve) => this.process.once('exit', resolve));
    this.process.kill('SIGTERM');
    const timer = setTimeout(() => this.process.kill('SIGKILL'), STOP_MS_MAX);
    await exited;
    clearTimeout(timer);
  }
}
