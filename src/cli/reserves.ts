import { CURRENCIES, CURRENCY_CODES, Decimal, isCurrencyCode } from '../core/index.js';
import type { Store, StoredReserveRun, UnsentTransfers } from '../store/store.js';
import { unknownWord } from './suggest.js';
import { UsageError } from './usage-error.js';

/*
 * `spendgate reserves`: the latest reconciliation of reserves of each mode and currency, as a
 * table (the terms: docs/reserves.md). `--run` asks the workers for a run now and waits for it
 * (a row in reserve_run_requests; a worker role with the chains answers within a second);
 * `--watch` redraws the table every `--every` seconds (1 to 60, default 5) until Ctrl-C.
 */

export const RESERVES_USAGE =
  'usage: spendgate reserves [--run] [--watch] [--every SECONDS (1-60, with --watch)]';

/** How long `--run` waits for a worker to answer. */
export const RUN_WAIT_MS_MAX = 30_000;
const RUN_POLL_MS = 250;
const EVERY_S_DEFAULT = 5;
const EVERY_S_MAX = 60;

export interface ReservesArgs {
  readonly run: boolean;
  readonly watch: boolean;
  readonly everyMs: number;
}

export function parseReservesArgs(argv: readonly string[]): ReservesArgs {
  let run = false;
  let watch = false;
  let everyS: number | null = null;
  for (let index = 0; index < argv.length; index++) {
    const flag = argv[index];
    if (flag === '--run' && !run) run = true;
    else if (flag === '--watch' && !watch) watch = true;
    else if (flag === '--every' && everyS === null) {
      const value = argv[index + 1] ?? '';
      everyS = /^\d{1,2}$/.test(value) ? Number(value) : NaN;
      if (!(everyS >= 1 && everyS <= EVERY_S_MAX)) throw new UsageError(RESERVES_USAGE);
      index += 1;
    } else {
      const word = flag ?? '';
      const known = ['--run', '--watch', '--every'];
      if (known.includes(word)) throw new UsageError(RESERVES_USAGE);
      throw new UsageError(`${unknownWord('flag', word, known)}\n${RESERVES_USAGE}`);
    }
  }
  if (everyS !== null && !watch) throw new UsageError(RESERVES_USAGE);
  return { run, watch, everyMs: (everyS ?? EVERY_S_DEFAULT) * 1000 };
}

/** An amount at its currency's scale (the stored text has nine fraction digits). */
function amount(text: string, currency: string): string {
  const scale = isCurrencyCode(currency) ? CURRENCIES[currency].scale : 9;
  return new Decimal(text).toFixed(scale);
}

function age(ranAtMs: number, nowMs: number): string {
  const seconds = Math.max(0, Math.round((nowMs - ranAtMs) / 1000));
  if (seconds < 120) return `${String(seconds)}s ago`;
  if (seconds < 7_200) return `${String(Math.round(seconds / 60))}m ago`;
  return `${String(Math.round(seconds / 3_600))}h ago`;
}

const HEADER = [
  'MODE',
  'CURRENCY',
  'STATE',
  'RATIO',
  'SHORTFALL',
  'TREASURY',
  'UNSWEPT',
  'OWED',
  'IN FLIGHT',
  'LANDED',
  'WAITING',
  'RAN',
] as const;

/**
 * The table's lines: one per (mode, currency) run, with every term, and the count of new
 * external transfers waiting for that currency to be covered. Pure (tests call it).
 */
export function reservesTable(
  runs: readonly StoredReserveRun[],
  unsent: readonly UnsentTransfers[],
  nowMs: number,
): string[] {
  if (runs.length === 0) {
    return [
      'no reconciliation of reserves yet: a worker role with the chains runs one every minute',
      '(spendgate serve --role worker|all); `spendgate reserves --run` asks for one now',
    ];
  }
  const rows = runs.map((run) => {
    const waiting = run.short
      ? (unsent.find((u) => u.mode === run.mode && u.currency === run.currency)?.count ?? 0)
      : 0;
    return [
      run.mode,
      run.currency,
      run.short ? 'SHORT' : 'covered',
      run.ratio,
      amount(run.shortfall, run.currency),
      amount(run.treasuryBalance, run.currency),
      amount(run.unsweptDeposits, run.currency),
      amount(run.owed, run.currency),
      amount(run.inFlight, run.currency),
      amount(run.inFlightLanded, run.currency),
      String(waiting),
      age(run.ranAtMs, nowMs),
    ];
  });
  const widths = HEADER.map((title, column) =>
    Math.max(title.length, ...rows.map((row) => row[column]?.length ?? 0)),
  );
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, column) =>
        column < 2 ? cell.padEnd(widths[column] ?? 0) : cell.padStart(widths[column] ?? 0),
      )
      .join('  ')
      .trimEnd();
  const lines = [line(HEADER), ...rows.map(line)];
  lines.push(
    'ratio = (treasury + unswept) / (owed - landed); short: new external transfers in that currency wait (docs/reserves.md)',
  );
  if (runs.some((run) => run.short)) {
    lines.push(
      'a run that finds the currency covered sends them: fund the treasury, then `spendgate reserves --run`',
    );
  }
  return lines;
}

async function latestTable(store: Store, nowMs: number): Promise<string[]> {
  const runs = await store.latestReserveRuns(CURRENCY_CODES);
  const unsent = await store.unsentExternalTransfers();
  return reservesTable(runs, unsent, nowMs);
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done);
  });
}

/** Asks for a run and waits for a worker to answer; false (request withdrawn) past the wait. */
async function requestRun(store: Store, signal: AbortSignal): Promise<boolean> {
  const requestId = await store.requestReserveRun();
  for (let waitedMs = 0; waitedMs < RUN_WAIT_MS_MAX && !signal.aborted; waitedMs += RUN_POLL_MS) {
    if (!(await store.reserveRunRequestOpen(requestId))) return true;
    await sleep(RUN_POLL_MS, signal);
  }
  await store.closeReserveRunRequests([requestId]);
  return false;
}

export interface ReservesOutput {
  /** A table, whole (the watch redraws it in place). */
  table(lines: readonly string[], redraw: boolean): void;
  warn(message: string): void;
}

/**
 * Runs the command: returns its exit code (1 when `--run` found no worker to answer). Watching
 * ends when `signal` aborts (Ctrl-C): the loop is bounded by the operator, each wait by
 * `--every`.
 */
export async function runReserves(
  store: Store,
  args: ReservesArgs,
  output: ReservesOutput,
  signal: AbortSignal,
): Promise<number> {
  let exitCode = 0;
  if (args.run && !(await requestRun(store, signal))) {
    output.warn(
      `spendgate: no worker answered within ${String(RUN_WAIT_MS_MAX / 1000)} s (is a worker role with the chains running?); the latest runs are shown`,
    );
    exitCode = 1;
  }
  output.table(await latestTable(store, Date.now()), false);
  while (args.watch && !signal.aborted) {
    await sleep(args.everyMs, signal);
    if (signal.aborted) break;
    output.table(
      [
        ...(await latestTable(store, Date.now())),
        `every ${String(args.everyMs / 1000)} s; Ctrl-C stops`,
      ],
      true,
    );
  }
  return exitCode;
}
