import { useMemo } from 'preact/hooks';
import uPlot from 'uplot';
import { Chart } from '../components/chart';
import { reasonColour } from '../reason-colour';

/*
 * The last hour's declines by reason, a minute a bar, the reasons of one minute stacked (the
 * most frequent at the bottom, so that it is always seen), each reason in its own colour.
 */

const HOUR_MS = 3_600_000;
const MINUTE_MS = 60_000;
/** Reasons drawn as their own series; the rest are summed as "other". */
const REASONS_DRAWN_MAX = 6;

export interface Decline {
  readonly atMs: number;
  readonly reason: string;
}

/** The reasons by count, most first, ties by name: one order whatever the arrival order. */
export function rankReasons(declines: readonly Decline[]): [string, number][] {
  const totals = new Map<string, number>();
  for (const decline of declines) totals.set(decline.reason, (totals.get(decline.reason) ?? 0) + 1);
  return [...totals.entries()].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
}

/**
 * Per minute, the stack's running totals, bottom reason first: uPlot draws bars over each
 * other, so each series is drawn to its stack's top, tallest first.
 */
function stackedRows(
  declines: readonly Decline[],
  stack: readonly string[],
  startMs: number,
  slots: number,
): number[][] {
  const rows = stack.map(() => Array.from({ length: slots }, () => 0));
  const otherIndex = stack.indexOf('other');
  for (const decline of declines) {
    const slot = Math.floor((decline.atMs - startMs) / MINUTE_MS);
    const index = stack.indexOf(decline.reason);
    const row = rows[index >= 0 ? index : otherIndex];
    if (row !== undefined && slot >= 0 && slot < slots) row[slot] = (row[slot] ?? 0) + 1;
  }
  for (let index = 1; index < rows.length; index += 1) {
    const below = rows[index - 1] ?? [];
    rows[index] = (rows[index] ?? []).map((count, slot) => count + (below[slot] ?? 0));
  }
  return rows;
}

export function DeclineChart({ declines, nowMs }: { declines: readonly Decline[]; nowMs: number }) {
  const ranked = rankReasons(declines);
  const drawn = ranked.slice(0, REASONS_DRAWN_MAX).map(([reason]) => reason);
  const stack = [...drawn, ...(ranked.length > drawn.length ? ['other'] : [])];
  const key = JSON.stringify([stack, declines.map((decline) => decline.atMs), nowMs]);
  const { data, options } = useMemo(() => {
    const startMs = Math.floor((nowMs - HOUR_MS) / MINUTE_MS) * MINUTE_MS;
    const minutes = Array.from({ length: 61 }, (_, index) => (startMs + index * MINUTE_MS) / 1000);
    const rows = stackedRows(declines, stack, startMs, minutes.length);
    const bars = uPlot.paths.bars?.({ size: [0.8, 12] });
    // Tallest first: each later (shorter) series is painted over the one below it.
    const order = stack.map((_, index) => index).reverse();
    const options: Omit<uPlot.Options, 'width' | 'height'> = {
      scales: { x: { time: true }, y: { range: [0, null] } },
      legend: { show: false },
      series: [
        {},
        ...order.map((index) => ({
          label: stack[index] ?? '',
          stroke: reasonColour(stack[index] ?? ''),
          fill: reasonColour(stack[index] ?? ''),
          ...(bars === undefined ? {} : { paths: bars }),
          points: { show: false },
        })),
      ],
    };
    const data = [minutes, ...order.map((index) => rows[index] ?? [])] as uPlot.AlignedData;
    return { data, options };
    // The key sums up the inputs: recomputed only when one of them changes.
  }, [key]);
  const tallest = Math.max(0, ...((data.at(1) as number[] | undefined) ?? []));
  return (
    <section aria-labelledby="reasons-title">
      <h2 id="reasons-title">Declines by reason, last hour</h2>
      <div data-testid="decline-chart" data-stack={stack.join(',')} data-tallest={tallest}>
        <Chart
          label="Declines per minute over the last hour, by reason, stacked"
          options={options}
          data={data}
          height={180}
        />
      </div>
      <table class="reasons" data-testid="decline-reasons">
        <caption class="visually-hidden">Declines in the last hour by reason</caption>
        <tbody>
          {ranked.length === 0 ? (
            <tr>
              <td>No decline in the last hour.</td>
            </tr>
          ) : null}
          {ranked.map(([reason, count]) => {
            const colour = reasonColour(stack.includes(reason) ? reason : 'other');
            return (
              <tr key={reason} data-reason={reason} data-colour={colour}>
                <th scope="row">
                  <span class="swatch" style={{ background: colour }} aria-hidden="true" />
                  <code>{reason}</code>
                </th>
                <td class="amount">{count}</td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </section>
  );
}
