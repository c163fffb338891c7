/**
 * The fleet bench's arithmetic (bench/fleet.bench.ts), apart from the processes so that a test
 * holds it (test/bench-fleet.test.ts): the delivery rate of a burst, CPU per operation, and
 * the line that says what limits scaling, read from the figures rather than written beforehand.
 */

/** CPU seconds one process (or PostgreSQL's backends, or the bench client) used in a run. */
export interface ProcessCpu {
  readonly name: string;
  readonly cpuS: number;
}

/** One configuration's run: its operations (authorizations or deliveries) and their cost. */
export interface FleetRun {
  readonly name: string;
  readonly perSecond: number;
  /** Seconds the CPU readings cover (the workload and the outbox drained after it). */
  readonly measuredS: number;
  readonly cpu: readonly ProcessCpu[];
  /** Busy cores of everything else on the machine meanwhile. */
  readonly otherCores: number;
}

/**
 * Deliveries a second once every worker was ready: the arrivals at or after `fromMs` over the
 * time from `fromMs` to the last of them (the first worker to start delivers alone before
 * `fromMs`, which would credit the fleet with one process's rate). Times are epoch ms.
 */
export function deliveryRate(
  arrivalsMs: readonly number[],
  fromMs: number,
): { readonly counted: number; readonly perSecond: number; readonly spanS: number } {
  let counted = 0;
  let lastMs = fromMs;
  for (const ms of arrivalsMs) {
    if (ms < fromMs) continue;
    counted += 1;
    lastMs = Math.max(lastMs, ms);
  }
  const spanS = (lastMs - fromMs) / 1000;
  return { counted, spanS, perSecond: spanS > 0 ? counted / spanS : Number.NaN };
}

/** Microseconds of CPU per operation, of `cpuS` seconds over `operations`; NaN for none. */
export function cpuPerOperationUs(cpuS: number, operations: number): number {
  return operations > 0 ? (cpuS * 1e6) / operations : Number.NaN;
}

/** Cores a run kept busy: its processes' CPU seconds over the seconds measured, and the rest. */
export function busyCores(run: FleetRun): number {
  const ownS = run.cpu.reduce((sum, process) => sum + process.cpuS, 0);
  return ownS / run.measuredS + run.otherCores;
}

/** The share of the CPU `name` (a prefix: "API" counts every API process) used in a run. */
export function cpuShare(run: FleetRun, name: string): number {
  const ownS = run.cpu.reduce((sum, process) => sum + process.cpuS, 0);
  const namedS = run.cpu
    .filter((process) => process.name.startsWith(name))
    .reduce((sum, process) => sum + process.cpuS, 0);
  return ownS > 0 ? namedS / ownS : Number.NaN;
}

/** At this share of the machine's cores busy, a run is bound by the CPU it could get. */
const SATURATED_SHARE = 0.85;
/** A second process that adds less than this fraction of throughput did not scale. */
const SCALED_RATIO_MIN = 1.3;

/**
 * What limits scaling from `one` process to `two`, said from the figures: the speed-up, how
 * busy the machine's `cores` were, and who used them. Saturated cores with little speed-up:
 * the processes share the cores rather than add to them; otherwise the process that used most.
 */
export function scalingVerdict(what: string, one: FleetRun, two: FleetRun, cores: number): string {
  if (!(cores >= 1) || !(one.perSecond > 0) || !(two.perSecond > 0)) {
    return `${what}: no verdict (a run had no throughput)`;
  }
  const ratio = two.perSecond / one.perSecond;
  const busy = busyCores(two);
  const shares = two.cpu
    .map((process) => ({ name: process.name, share: process.cpuS / (two.measuredS * cores) }))
    .sort((a, b) => b.share - a.share);
  const users = shares
    .map((process) => `${process.name} ${(process.share * 100).toFixed(0)}%`)
    .join(', ');
  const scaled = ratio >= SCALED_RATIO_MIN;
  const saturated = busy >= cores * SATURATED_SHARE;
  const head = `${what}: ${ratio.toFixed(2)}x from ${one.name} to ${two.name}, ${busy.toFixed(2)} of ${cores} cores busy (${users}${two.otherCores > 0.05 ? `, other load ${((two.otherCores / cores) * 100).toFixed(0)}%` : ''})`;
  if (saturated && !scaled) {
    return `${head}: the CPU limits it here; the processes share ${cores} cores rather than add any, so a second process adds work to split, not capacity`;
  }
  if (saturated) {
    return `${head}: it scaled while cores were left, and the cores are now all in use: the CPU is the next limit here`;
  }
  const top = shares[0]?.name ?? 'nothing';
  return scaled
    ? `${head}: it scaled; ${top} used the most`
    : `${head}: not CPU-bound, yet no speed-up: the limit is elsewhere (waits: locks, round trips, the load generator); ${top} used the most CPU`;
}
