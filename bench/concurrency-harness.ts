/**
 * A closed-loop load harness: `concurrency` workers each run `operation` back to back for
 * `durationMs`, and the run reports throughput and latency percentiles. Bounded in time and
 * in samples, so a benchmark always ends.
 */
export interface LoadResult {
  readonly name: string;
  readonly operations: number;
  readonly perSecond: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly errors: number;
}

const SAMPLES_MAX = 2_000_000;

export async function runLoad(
  name: string,
  concurrency: number,
  durationMs: number,
  operation: (worker: number, iteration: number) => Promise<unknown>,
): Promise<LoadResult> {
  const latenciesMs: number[] = [];
  let errors = 0;
  const started = performance.now();
  const deadline = started + durationMs;
  const workers = Array.from({ length: concurrency }, async (_, worker) => {
    for (
      let iteration = 0;
      performance.now() < deadline && latenciesMs.length < SAMPLES_MAX;
      iteration++
    ) {
      const before = performance.now();
      try {
        await operation(worker, iteration);
      } catch {
        errors += 1;
        continue;
      }
      latenciesMs.push(performance.now() - before);
    }
  });
  await Promise.all(workers);
  const elapsedS = (performance.now() - started) / 1000;
  const sorted = latenciesMs.sort((a, b) => a - b);
  const at = (fraction: number) =>
    sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * fraction))] ?? Number.NaN;
  return {
    name,
    operations: sorted.length,
    perSecond: sorted.length / elapsedS,
    p50Ms: at(0.5),
    p99Ms: at(0.99),
    errors,
  };
}

export function printTable(title: string, rows: readonly LoadResult[], baseline: LoadResult): void {
  console.log(`\n${title}\n`);
  console.log('| workload | ops/s | p50 ms | p99 ms | errors | vs baseline (ops/s) |');
  console.log('|---|---:|---:|---:|---:|---:|');
  for (const row of rows) {
    const ratio = row.perSecond / baseline.perSecond;
    console.log(
      `| ${row.name} | ${row.perSecond.toFixed(0)} | ${row.p50Ms.toFixed(2)} | ${row.p99Ms.toFixed(2)} | ${row.errors} | ${ratio.toFixed(2)}x |`,
    );
  }
}
