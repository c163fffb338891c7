import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { LatencySamples, Tally } from './http-load.js';
import { RESULT_MARKER, wrkScript, type WrkScriptOptions } from './wrk-script.js';

/**
 * bench:http's C load client: Debian's `wrk`, driven by the script of bench/wrk-script.ts (one
 * connection per thread, each request with its own networkTransactionId, an open loop of
 * exponential gaps or a closed loop), so that the client takes little of the two cores the
 * service shares. Its answers land in the same Tally as the Node clients', so the run's checks
 * (every answer a 200, counts in the database, ids never answered) cover them too.
 */

/** wrk's own timeout for an answer; one unanswered that long is an error that fails the run. */
const TIMEOUT_S = 10;
const OUTPUT_CHARS_MAX = 4000;

/**
 * wrk on the PATH, installed with apt-get when missing (as root, or through sudo without a
 * password); throws saying how to install it when neither can.
 */
export function ensureWrk(): string {
  const found = () => spawnSync('which', ['wrk'], { encoding: 'utf8' });
  let which = found();
  if (which.status === 0) return which.stdout.trim();
  console.log('wrk is not installed: apt-get install -y wrk ...');
  const asRoot = process.getuid?.() === 0;
  const command = asRoot ? 'apt-get' : 'sudo';
  const args = asRoot ? ['install', '-y', 'wrk'] : ['-n', 'apt-get', 'install', '-y', 'wrk'];
  const install = spawnSync(command, args, { encoding: 'utf8', stdio: 'inherit' });
  which = found();
  if (which.status !== 0) {
    throw new Error(
      `bench:http needs wrk (Debian's package) for its C-client workloads, and \`${command} ${args.join(' ')}\` could not install it (${install.error?.message ?? `exit ${String(install.status)}`}). Install it (apt-get install -y wrk) or leave those workloads out with --only.`,
    );
  }
  return which.stdout.trim();
}

/** wrk's version line, for the run's header. */
export function wrkVersion(wrk: string): string {
  const text = spawnSync(wrk, ['--version'], { encoding: 'utf8' });
  return `${text.stdout}${text.stderr}`.split('\n')[0]?.trim() ?? '?';
}

export interface WrkRun {
  readonly elapsedS: number;
  /** Requests scheduled a second (the schedule's own rate), null for a closed loop. */
  readonly offeredPerSecond: number | null;
  readonly achievedPerSecond: number;
  /** Latency from each request's scheduled time: the figure the targets judge. */
  readonly fromSchedule: Percentiles;
  /** wrk's own, from each send (latency:percentile in done()). */
  readonly wrkFromSend: Percentiles;
  /** How late the client sent after the scheduled time (its timers' lag, and waits). */
  readonly lag: Percentiles;
  /** wrk's own CPU seconds, user and system (NaN if they could not be read). */
  readonly cpuS: number;
}

interface Percentiles {
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly p999Ms: number;
}

interface WrkResult {
  readonly durationUs: number;
  readonly requests: number;
  readonly errors: Readonly<Record<'connect' | 'read' | 'write' | 'status' | 'timeout', number>>;
  readonly wrkLatencyUs: { readonly p50: number; readonly p99: number; readonly p999: number };
  readonly ok: number;
  readonly non200: number;
  readonly approved: number;
  readonly declined: number;
  readonly standIn: number;
  readonly noop: number;
  readonly unexpected: number;
  readonly fromSchedule: readonly (readonly [number, number])[];
  readonly fromSend: readonly (readonly [number, number])[];
  readonly lag: readonly (readonly [number, number])[];
  readonly decided: readonly (readonly [number, number])[];
  readonly unanswered: readonly string[];
  readonly samples: readonly string[];
}

/** The percentiles of a histogram of [microseconds, count] buckets (nearest rank). */
export function histogramPercentiles(buckets: readonly (readonly [number, number])[]): Percentiles {
  const sorted = [...buckets].sort((a, b) => a[0] - b[0]);
  const total = sorted.reduce((sum, [, count]) => sum + count, 0);
  const at = (fraction: number) => {
    if (total === 0) return Number.NaN;
    const rank = Math.max(1, Math.ceil(fraction * total));
    let seen = 0;
    for (const [us, count] of sorted) {
      seen += count;
      if (seen >= rank) return us / 1000;
    }
    return Number.NaN;
  };
  return { p50Ms: at(0.5), p99Ms: at(0.99), p999Ms: at(0.999) };
}

function recordAll(into: LatencySamples, buckets: readonly (readonly [number, number])[]): void {
  for (const [us, count] of buckets) for (let n = 0; n < count; n += 1) into.record(us / 1000);
}

/** One workload: wrk for `durationS` on `connections` connections (a thread each). */
export async function runWrk(
  wrk: string,
  url: string,
  options: {
    readonly script: WrkScriptOptions;
    readonly connections: number;
    readonly durationS: number;
    readonly tally: Tally;
  },
): Promise<WrkRun> {
  const directory = mkdtempSync(join(tmpdir(), 'sg-wrk-'));
  try {
    const scriptPath = join(directory, 'authorize.lua');
    writeFileSync(scriptPath, wrkScript(options.script));
    const args = [
      `-t${options.connections}`,
      `-c${options.connections}`,
      `-d${options.durationS}s`,
      `--timeout`,
      `${TIMEOUT_S}s`,
      '-s',
      scriptPath,
      url,
    ];
    const started = performance.now();
    const { output, errors, cpuS } = await run(wrk, args);
    const elapsedS = (performance.now() - started) / 1000;
    const line = output.split('\n').find((candidate) => candidate.startsWith(RESULT_MARKER));
    if (line === undefined) {
      throw new Error(`wrk printed no result: ${(output + errors).slice(-OUTPUT_CHARS_MAX)}`);
    }
    const result = JSON.parse(line.slice(RESULT_MARKER.length)) as WrkResult;
    tallyResult(options.tally, result);
    const durationS = result.durationUs / 1e6;
    const answered = result.ok + result.non200;
    const { meanGapUs } = options.script;
    return {
      elapsedS: durationS > 0 ? durationS : elapsedS,
      offeredPerSecond: meanGapUs > 0 ? (options.connections * 1e6) / meanGapUs : null,
      achievedPerSecond: answered / durationS,
      fromSchedule: histogramPercentiles(result.fromSchedule),
      wrkFromSend: {
        p50Ms: result.wrkLatencyUs.p50 / 1000,
        p99Ms: result.wrkLatencyUs.p99 / 1000,
        p999Ms: result.wrkLatencyUs.p999 / 1000,
      },
      lag: histogramPercentiles(result.lag),
      cpuS,
    };
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
}

/** wrk's answers into the run's Tally, as the Node clients' would have gone. */
function tallyResult(tally: Tally, result: WrkResult): void {
  recordAll(tally.latencies, result.fromSchedule);
  recordAll(tally.decidedMs, result.decided);
  tally.ok += result.ok;
  tally.non200 += result.non200;
  tally.approved += result.approved;
  tally.declined += result.declined;
  tally.standIn += result.standIn;
  tally.noop += result.noop;
  tally.unexpected += result.unexpected;
  // wrk's status errors are its count of answers over 399, already among non200.
  const { connect, read, write, timeout } = result.errors;
  tally.errors += connect + read + write + timeout;
  for (const id of result.unanswered) tally.inFlight.add(id);
  for (const sample of result.samples) if (tally.samples.length < 5) tally.samples.push(sample);
}

/**
 * Runs wrk under bash, whose `times` then prints the CPU its children used (wrk's, read after it
 * exits, when /proc no longer has it).
 */
function run(
  command: string,
  args: readonly string[],
): Promise<{ output: string; errors: string; cpuS: number }> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      'bash',
      [
        '-c',
        'wrk="$1"; shift; "$wrk" "$@"; status=$?; times >&2; exit $status',
        'bash',
        command,
        ...args,
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let output = '';
    let errors = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (errors += chunk.toString('utf8')));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code === 0) resolve({ output, errors, cpuS: childrenCpuS(errors) });
      else
        reject(
          new Error(`wrk exited ${String(code)}: ${(output + errors).slice(-OUTPUT_CHARS_MAX)}`),
        );
    });
  });
}

/** The children's user and system seconds from bash's `times` (its last line: `0m1.5s 0m0.2s`). */
export function childrenCpuS(text: string): number {
  const lines = text.trim().split('\n');
  const match = /^(\d+)m([\d.]+)s (\d+)m([\d.]+)s$/.exec(lines[lines.length - 1]?.trim() ?? '');
  if (match === null) return Number.NaN;
  const [, userM, userS, systemM, systemS] = match.map(Number) as [
    number,
    number,
    number,
    number,
    number,
  ];
  return userM * 60 + userS + systemM * 60 + systemS;
}
