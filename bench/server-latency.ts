/**
 * The service's own view of a workload's latency: its request histogram
 * (spendgate_http_request_duration_seconds, src/http/metrics.ts) for POST /v1/authorizations,
 * read from /metrics before and after the workload. Why: a client's p99 that misses a target
 * is held either inside the service, from the request's parse to its answer's last write (the
 * histogram sees it too), or outside it: the kernel, the scheduler, the client. The share of
 * requests over a bound, measured on both sides, says which. Inside, the event loop's lag (the
 * monitor prom-client's default metrics keep, reset at each read of /metrics, so a reading
 * after a workload covers that workload) tells a main thread held up from a slow transaction;
 * and the full collections of its heap (prom-client's GC histogram, by kind), each of which
 * marks everything live while the requests wait for a core (src/cli/heap-growth.ts).
 */

const HISTOGRAM = 'spendgate_http_request_duration_seconds';
const ROUTE = '/v1/authorizations';
/** Lines of /metrics read at most: the service's registry is a few hundred. */
const LINES_MAX = 100_000;

export interface HistogramCounts {
  /** Requests at or under each bucket's bound, by the bound in milliseconds, all statuses. */
  readonly atOrUnderByMs: ReadonlyMap<number, number>;
  readonly count: number;
}

/** A sample line's value (its last field); NaN for no line or no number. */
function sampleValue(line: string | undefined): number {
  return line === undefined ? Number.NaN : Number(line.slice(line.lastIndexOf(' ') + 1));
}

function labelsOf(line: string): Map<string, string> {
  const labels = new Map<string, string>();
  const inside = line.slice(line.indexOf('{') + 1, line.lastIndexOf('}'));
  for (const match of inside.matchAll(/(\w+)="([^"]*)"/g)) {
    labels.set(match[1] as string, match[2] as string);
  }
  return labels;
}

/** What the bench reads of one /metrics answer (Prometheus' text format), split once. */
export interface ServiceMetrics {
  readonly histogram: HistogramCounts;
  readonly ticksMs: { readonly p50: number; readonly p99: number; readonly max: number } | null;
  readonly fullCollections: FullCollections | null;
}

/** Full (mark-compact) collections of the service's heap since it started, and their time. */
export interface FullCollections {
  readonly count: number;
  readonly ms: number;
}

export function readServiceMetrics(metricsText: string): ServiceMetrics {
  const lines = metricsText.split('\n');
  if (lines.length > LINES_MAX) throw new Error(`/metrics answered ${lines.length} lines`);
  return {
    histogram: authorizeHistogram(lines),
    ticksMs: eventLoopTicksMs(lines),
    fullCollections: fullCollections(lines),
  };
}

/** The authorize route's counts. */
function authorizeHistogram(lines: readonly string[]): HistogramCounts {
  const atOrUnderByMs = new Map<number, number>();
  let count = 0;
  for (const line of lines) {
    const bucket = line.startsWith(`${HISTOGRAM}_bucket{`);
    if (!bucket && !line.startsWith(`${HISTOGRAM}_count{`)) continue;
    const labels = labelsOf(line);
    if (labels.get('method') !== 'POST' || labels.get('route') !== ROUTE) continue;
    const value = sampleValue(line);
    if (!Number.isFinite(value)) throw new Error(`not a count: ${line}`);
    if (!bucket) {
      count += value;
      continue;
    }
    const le = labels.get('le');
    if (le === undefined || le === '+Inf') continue;
    // Bounds are written in seconds; in milliseconds they are exact to well under a microsecond.
    const boundMs = Math.round(Number(le) * 1e6) / 1e3;
    atOrUnderByMs.set(boundMs, (atOrUnderByMs.get(boundMs) ?? 0) + value);
  }
  return { atOrUnderByMs, count };
}

/**
 * The share of the requests between two readings that took longer than `boundMs`, which must
 * be one of the histogram's bounds; null when no request was answered between them.
 */
export function shareOver(
  before: HistogramCounts,
  after: HistogramCounts,
  boundMs: number,
): number | null {
  const requests = after.count - before.count;
  if (requests <= 0) return null;
  const atOrUnder = after.atOrUnderByMs.get(boundMs);
  if (atOrUnder === undefined) throw new Error(`${boundMs} ms is not a bound of ${HISTOGRAM}`);
  return (requests - (atOrUnder - (before.atOrUnderByMs.get(boundMs) ?? 0))) / requests;
}

/**
 * The event loop's monitor since the last read of /metrics: the time between its ticks,
 * milliseconds, at the median, p99 and most (null: not reported). A tick is due every 10 ms
 * (prom-client's default precision), so a median near 10 is a free loop and what p99 and max
 * exceed 10 by is how long the loop was held.
 */
function eventLoopTicksMs(lines: readonly string[]): ServiceMetrics['ticksMs'] {
  const gauge = (name: string): number | null => {
    const seconds = sampleValue(lines.find((text) => text.startsWith(`${name} `)));
    return Number.isFinite(seconds) ? seconds * 1000 : null;
  };
  const p50 = gauge('nodejs_eventloop_lag_p50_seconds');
  const p99 = gauge('nodejs_eventloop_lag_p99_seconds');
  const max = gauge('nodejs_eventloop_lag_max_seconds');
  return p50 === null || p99 === null || max === null ? null : { p50, p99, max };
}

/**
 * prom-client's `nodejs_gc_duration_seconds` for kind="major": its count and sum (the pause of
 * each, not the concurrent marking before it); none yet when the histogram has no such series
 * (prom-client adds a kind at its first collection); null when the histogram is not reported.
 */
function fullCollections(lines: readonly string[]): FullCollections | null {
  if (!lines.includes('# TYPE nodejs_gc_duration_seconds histogram')) return null;
  if (!lines.some((line) => line.includes('kind="major"'))) return { count: 0, ms: 0 };
  const value = (name: string): number =>
    sampleValue(lines.find((text) => text.startsWith(`${name}{`) && text.includes('kind="major"')));
  const count = value('nodejs_gc_duration_seconds_count');
  const seconds = value('nodejs_gc_duration_seconds_sum');
  return Number.isFinite(count) && Number.isFinite(seconds) ? { count, ms: seconds * 1000 } : null;
}
