import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config/env.js';
import { LOCAL_REDIS_URL } from './support/http.js';
import { startCliProcess, stopAll, trackedRedisPrefixes, waitFor } from './support/processes.js';

/**
 * docs/quickstart.md, run as a newcomer runs it: every ```sh block in one bash process, in
 * order, as written, against `spendgate serve` on an embedded data folder of its own (what
 * `npm start` runs). The two blocks the reader runs for themselves (install and start the
 * server; point the shell at it) are marked in the page and replaced here by what they
 * produce: a server, SPENDGATE_URL and the API_KEY its first start prints. A changed command
 * or answer in the page fails this test.
 */
const QUICKSTART_URL = new URL('../docs/quickstart.md', import.meta.url);
const ROOT = new URL('../', import.meta.url).pathname;
/** The page's mark on a block that this test does not run; the comment says why. */
const NOT_RUN_MARK = '<!-- quickstart-test: not run;';
/** What the reader's own blocks hand to the rest of the page, and this test provides. */
const PROVIDED_VARIABLES = ['SPENDGATE_URL', 'API_KEY'];
/** The embedded database's first start (PGlite, migrations) takes a while on a busy machine. */
const START_MS_MAX = 150_000;
/** The page's own waits (the receiver, the worker's delivery) are bounded well below this. */
const RUN_MS_MAX = 180_000;
const BLOCK_MARK = '@@quickstart-block';

interface ShellBlock {
  readonly text: string;
  readonly run: boolean;
  /** Where the block starts in the page. */
  readonly offset: number;
}

function shellBlocks(markdown: string): ShellBlock[] {
  return [...markdown.matchAll(/^```sh\n([\s\S]*?)^```$/gm)].map((match) => {
    const before = markdown.slice(0, match.index).trimEnd();
    const markLine = before.slice(before.lastIndexOf('\n') + 1);
    return { text: match[1] ?? '', run: !markLine.startsWith(NOT_RUN_MARK), offset: match.index };
  });
}

/** A shown line as a pattern: `...` stands for what differs from run to run (an id, a time). */
function shownLine(line: string): RegExp {
  const parts = line.split('...').map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
  return new RegExp(`^${parts.join('.*?')}$`);
}

/** The output the page shows once its commands run: ```text blocks after the first that runs. */
function shownOutputs(markdown: string, blocks: readonly ShellBlock[]): RegExp[][] {
  const firstRun = blocks.find((block) => block.run)?.offset ?? markdown.length;
  return [...markdown.matchAll(/^```text\n([\s\S]*?)^```$/gm)]
    .filter((match) => match.index > firstRun)
    .map((match) => (match[1] ?? '').trimEnd().split('\n').map(shownLine));
}

/**
 * Output with every secret the page handles blanked, so that a failure message or an
 * assertion's diff never shows one: API keys, the webhook secret, the revealed number and CVV.
 */
function redact(text: string): string {
  return text
    .replace(/sk_(test|live)_[A-Za-z0-9_-]+/g, 'sk_$1_<redacted>')
    .replace(/whsec_[A-Za-z0-9+/=]+/g, 'whsec_<redacted>')
    .replace(/"(number|cvv)":"\d+"/g, '"$1":"<redacted>"');
}

/** The JSON objects the page printed, one per line (curl's answers, each on a line of its own). */
function printedObjects(output: string): Record<string, unknown>[] {
  return output
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

/** Whether `value` has `fields`: nested objects in part, anything else equal. */
function hasFields(value: unknown, fields: Record<string, unknown>): boolean {
  if (typeof value !== 'object' || value === null) return false;
  return Object.entries(fields).every(([key, wanted]) => {
    const actual = (value as Record<string, unknown>)[key];
    return typeof wanted === 'object' && wanted !== null && !Array.isArray(wanted)
      ? hasFields(actual, wanted as Record<string, unknown>)
      : isDeepStrictEqual(actual, wanted);
  });
}

interface BashRun {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * Runs `script` in bash with only `env`. In a process group of its own, so that a receiver the
 * page left running (it stops its own in its last block) is ended with it, by that group's id.
 */
function runBash(script: string, env: Record<string, string>): Promise<BashRun> {
  return new Promise((resolve, reject) => {
    const bash = spawn('bash', ['-c', script], {
      cwd: ROOT,
      env,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const group = bash.pid;
    if (group === undefined) {
      reject(new Error('bash did not start'));
      return;
    }
    const endGroup = (): void => {
      try {
        process.kill(-group, 'SIGKILL');
      } catch {
        // Nothing left in the group: the page stopped everything it started.
      }
    };
    let stdout = '';
    let stderr = '';
    bash.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    bash.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(endGroup, RUN_MS_MAX);
    let code: number | null = null;
    // 'exit' first: a background process still holding the pipes would delay 'close' forever.
    bash.on('exit', (exitCode) => {
      code = exitCode;
      clearTimeout(timer);
      endGroup();
    });
    bash.on('close', () => {
      resolve({ code, stdout, stderr });
    });
    bash.on('error', reject);
  });
}

const prefixes = trackedRedisPrefixes();
/** The server's data folder and the page's TMPDIR, removed however the run ended. */
const folders: string[] = [];

afterAll(async () => {
  await stopAll();
  await prefixes.forget();
  for (const folder of folders) rmSync(folder, { recursive: true, force: true });
});

describe('docs/quickstart.md', () => {
  const markdown = readFileSync(QUICKSTART_URL, 'utf8');
  const blocks = shellBlocks(markdown);

  it('leaves to the reader only starting the server and setting SPENDGATE_URL and API_KEY', () => {
    const notRun = blocks.filter((block) => !block.run);
    expect(notRun).toHaveLength(2);
    expect(notRun[0]?.text).toMatch(/^npm start$/m);
    const exported = notRun.flatMap((block) =>
      [...block.text.matchAll(/^export ([A-Z_]+)=(\S*)/gm)].map((match) => match.slice(1)),
    );
    expect(exported.map(([name]) => name)).toEqual(PROVIDED_VARIABLES);
    // The address the page gives is where `npm start` serves by default.
    const defaults = loadConfig({});
    expect(exported[0]?.[1]).toBe(`http://${defaults.host}:${defaults.port}`);
    expect(blocks.filter((block) => block.run).length).toBeGreaterThan(15);
    expect(shownOutputs(markdown, blocks).length).toBeGreaterThan(4);
  });

  it(
    'runs as written: approval, decline with its reason, capture, reverse, list, verified webhooks',
    async () => {
      const dataDir = mkdtempSync(join(tmpdir(), 'spendgate-quickstart-data-'));
      // The page's scratch folder (mktemp) goes here, so a run that fails before the page's own
      // clean-up leaves nothing behind.
      const scratchDir = mkdtempSync(join(tmpdir(), 'spendgate-quickstart-tmp-'));
      folders.push(dataDir, scratchDir);
      // What `npm start` runs, on the embedded database as the page has it; the test-mode chain
      // is an address never called (the page makes no external transfer), so that no local
      // Solana runtime takes the machine's cores while the page runs.
      const server = startCliProcess(['serve'], {
        PORT: '0',
        LOG_LEVEL: 'info',
        DATABASE_URL: '',
        SPENDGATE_MASTER_KEY: '',
        SPENDGATE_DATA_DIR: dataDir,
        REDIS_URL: LOCAL_REDIS_URL,
        REDIS_PREFIX: prefixes.next(),
        SOLANA_TEST_RPC_URL: 'http://127.0.0.1:9',
      });
      const listening = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/;
      await Promise.race([
        waitFor(
          () => listening.test(server.output()),
          START_MS_MAX,
          () => redact(server.output()),
        ),
        server.exited.then(() => {
          throw new Error(`the server stopped:\n${redact(server.output())}`);
        }),
      ]);
      const spendgateUrl = listening.exec(server.output())?.[1] ?? '';
      // The page quotes the first start's announcement; the key follows on a line of its own.
      const announcement = /^```text\n(.+)\n/m.exec(markdown)?.[1] ?? 'no text block';
      expect(redact(server.output())).toContain(announcement);
      const apiKey = /\n {2}(sk_test_[A-Za-z0-9_-]+)\n/.exec(server.output())?.[1] ?? '';
      expect(apiKey).not.toBe('');

      const script = [
        'set -euo pipefail',
        ...blocks.flatMap((block, index) =>
          block.run ? [`printf '\\n${BLOCK_MARK} ${index}\\n'`, block.text] : [],
        ),
        `printf '\\n${BLOCK_MARK} end\\n'`,
      ].join('\n');
      const run = await runBash(script, {
        PATH: process.env.PATH ?? '/usr/bin:/bin',
        HOME: process.env.HOME ?? ROOT,
        TMPDIR: scratchDir,
        SPENDGATE_URL: spendgateUrl,
        API_KEY: apiKey,
      });
      const stdout = redact(run.stdout);
      const failure = `exit ${String(run.code)}\n--- stdout\n${stdout}\n--- stderr\n${redact(run.stderr)}`;
      expect(run.code, failure).toBe(0);
      expect(stdout, failure).toContain(`${BLOCK_MARK} end`);
      // Reveal shows a test card's number (the BIN) and CVV: checked here, never printed.
      expect(
        /"object":"card_details"[^}]*"number":"424242\d{10}","cvv":"\d{3}"/.test(run.stdout),
      ).toBe(true);
      expect(run.stdout.includes(apiKey)).toBe(false);

      const printed = printedObjects(stdout);
      const find = (fields: Record<string, unknown>) =>
        printed.filter((object) => hasFields(object, fields));
      expect(find({ object: 'account', name: 'default', mode: 'test' })).toHaveLength(1);
      expect(
        find({
          object: 'vault',
          name: 'Marketing',
          balance: { available: '1000.00', pending: '0.00', ledger: '1000.00' },
        }),
      ).toHaveLength(1);

      // The deposit sent twice under one Idempotency-Key: one transaction, the second a replay.
      const deposits = find({ object: 'transaction', type: 'deposit', amount: '250.50' });
      expect(deposits).toHaveLength(2);
      expect(deposits[1]?.id).toBe(deposits[0]?.id);
      expect(stdout.match(/^idempotent-replayed: true\r?$/gim)).toHaveLength(1);
      expect(
        find({ object: 'balance' }).map(({ available, pending, ledger }) => ({
          available,
          pending,
          ledger,
        })),
      ).toEqual([
        { available: '1250.50', pending: '0.00', ledger: '1250.50' },
        { available: '1220.50', pending: '0.00', ledger: '1220.50' },
      ]);
      expect(find({ object: 'policy', version: 1 })).toHaveLength(1);
      expect(
        find({ object: 'card', status: 'active', cardholderName: 'Ada Lovelace' }),
      ).toHaveLength(1);

      // The authorize callbacks: one approval, a decline by the policy, one by the frozen card.
      expect(
        find({ object: 'authorization', approved: true, status: 'pending', amount: '42.50' }),
      ).toHaveLength(1);
      expect(
        find({
          object: 'authorization',
          approved: false,
          status: 'declined',
          amount: '150.00',
          declineCode: 'authorization_failed',
          declineReason: { rule: 'max-per-transaction' },
        }),
      ).toHaveLength(1);
      expect(stdout).toMatch(/^declined: authorization_failed by max-per-transaction$/m);
      expect(
        find({
          object: 'authorization',
          approved: false,
          amount: '9.99',
          declineCode: 'card_declined',
          declineReason: { rule: 'card_frozen' },
        }),
      ).toHaveLength(1);

      // Capture of part of the hold, and the reverse of another.
      expect(
        find({
          object: 'transaction',
          type: 'card_authorization',
          status: 'completed',
          amount: '42.50',
          capturedAmount: '30.00',
        }),
      ).toHaveLength(1);
      expect(
        find({
          object: 'transaction',
          type: 'card_authorization',
          status: 'failed',
          amount: '18.25',
          failureReason: 'reversed',
        }),
      ).toHaveLength(1);

      // List Transactions, newest first, two pages of three.
      const lines = stdout.split('\n').map((line) => line.trim());
      const listed = [
        'card_authorization failed 18.25 captured 0.00 reversed',
        'card_authorization declined 150.00 captured 0.00 authorization_failed',
        'card_authorization completed 42.50 captured 30.00',
        'hasMore true',
        'deposit completed 250.50 captured 0.00',
        'deposit completed 1000.00 captured 0.00',
        'hasMore false',
      ];
      const first = lines.indexOf(listed[0] ?? '');
      expect(lines.slice(first, first + listed.length)).toEqual(listed);

      // What the page shows it prints, it prints: each shown block in order, its lines together.
      let from = 0;
      for (const shown of shownOutputs(markdown, blocks)) {
        const at = lines.findIndex(
          (_, start) =>
            start >= from &&
            shown.every((pattern, line) => pattern.test(lines[start + line] ?? '')),
        );
        expect(at, `not printed after line ${from}: ${shown.join('\n')}\n${stdout}`).not.toBe(-1);
        from = at + shown.length;
      }

      // The webhook: registered on the page's loopback receiver, a test delivery, and a worker's
      // delivery of a real event, each signature verified with standardwebhooks.
      expect(
        find({
          object: 'webhook_endpoint',
          status: 'enabled',
          events: ['*'],
          secret: 'whsec_<redacted>',
        }),
      ).toHaveLength(1);
      expect(
        find({ object: 'webhook_test', delivered: true, statusCode: 200, error: null }),
      ).toHaveLength(1);
      expect(stdout).toMatch(/^signature valid: webhook\.test evt_[0-9a-f]{32}$/m);
      expect(stdout).toMatch(/^signature valid: authorization\.declined evt_[0-9a-f]{32}$/m);
      expect(find({ object: 'card', status: 'frozen' })).toHaveLength(1);

      expect(await server.stop('SIGTERM')).toEqual({ code: 0, signal: null });
    },
    START_MS_MAX + RUN_MS_MAX + 30_000,
  );
});
