/**
 * The service's own view of a workload's latency: its request histogram
 * (spendgate_http_request_duration_seconds, src/http/metrics.ts) for POST /v1/authorizations,
 * read from /metrics before and after the workload. Why: a client's p99 that misses a target
 * is held either inside the service, from the request's parse to its answer's last write (the
 * histogram sees it too), or outside it: the kernel, the scheduler, the client. The share of
 * requests over a bound, measured on both sides, says which.
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

function labelsOf(line: string): Map<string, string> {
  const labels = new Map<string, string>();
  const inside = line.slice(line.indexOf('{') + 1, line.lastIndexOf('}'));
  for (const match of inside.matchAll(/(\w+)="([^"]*)"/g)) {
    labels.set(match[1] as string, match[2] as string);
  }
  return labels;
}

/** The authorize route's counts in a /metrics text (Prometheus' text format). */
export function authorizeHistogram(metricsText: string): HistogramCounts {
  const atOrUnderByMs = new Map<number, number>();
  let count = 0;
  const lines = metricsText.split('\n');
  if (lines.length > LINES_MAX) throw new Error(`/metrics answered ${lines.length} lines`);
  for (const line of lines) {
    const bucket = line.startsWith(`${HISTOGRAM}_bucket{`);
    if (!bucket && !line.startsWith(`${HISTOGRAM}_count{`)) continue;
    const labels = labelsOf(line);
    if (labels.get('method') !== 'POST' || labels.get('route') !== ROUTE) continue;
    const value = Number(line.slice(line.lastIndexOf(' ') + 1));
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
