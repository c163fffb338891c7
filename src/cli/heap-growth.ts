import { setFlagsFromString } from 'node:v8';
import { HEAP_GROWING_PERCENT_MAX } from '../config/env.js';
import { assert } from '../core/index.js';

/**
 * How much the serving process's old generation grows between full collections
 * (HEAP_GROWING_PERCENT; 0 leaves it to V8). Why: V8 sizes that step from how fast its marking
 * is against how fast the process promotes, aiming at 97% of the time for the program; for
 * this service (about 50 MB live, 4-5 MB promoted a second at 1,000 authorizations a second)
 * it chose about 1.2x, a full collection every 3-4 seconds. Each one marks the whole live heap:
 * about 50 ms in which the marker's thread takes one of the machine's cores from the requests
 * and PostgreSQL, and 50-80 requests of a paced run at 1,000/s answered in 10-40 ms, most of
 * that run's tail past 10 ms (docs/performance.md, "The paced tail was the full collections").
 * At 4x the collections come every half minute instead, each no dearer (marking costs what is
 * live, not what was freed), for about 150 MB more memory at that rate and 2-10% of the
 * throughput at saturation (measured; likely the scavenges, which treat every old object, dead
 * or not, as live until the next full collection): a card network times out on the slowest
 * answers, and a service runs below saturation, so the default favours the tail.
 *
 * V8 reads the flag each time it sets the next limit (after a full collection), so setting it
 * at the start of `serve` is in time; it is a process-wide setting, so the library leaves it to
 * whoever embeds the store.
 */
export function setHeapGrowingPercent(
  percent: number,
  setFlags: (flags: string) => void = setFlagsFromString,
): void {
  assert(
    Number.isInteger(percent) && percent >= 0 && percent <= HEAP_GROWING_PERCENT_MAX,
    'heap growing percent within 0 and its maximum',
  );
  if (percent === 0) return;
  setFlags(`--heap-growing-percent=${percent}`);
}
