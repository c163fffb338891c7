import { pino } from 'pino';

export const LOG_BLOCK_BYTES_MIN = 4096;
export const LOG_FLUSH_MS_MAX = 250;
export const LOG_BUFFER_BYTES_MAX = 16 * 1024 * 1024;

type Destination = ReturnType<typeof pino.destination>;

/** One per process, shared by its servers (tests and embedding services make several). */
let shared: Destination | null = null;

/**
 * Where the server's log lines go when no stream is given: stdout, written in blocks rather
 * than one system call per line. At thousands of requests a second a line per request was one
 * write each (and one wake-up of whatever reads stdout); on this project's machine those
 * writes were 3-4% of the server's CPU under the authorize bench (docs/performance.md).
 *
 * Bounded both ways: a block leaves once it holds LOG_BLOCK_BYTES_MIN, or after
 * LOG_FLUSH_MS_MAX whatever it holds, so an idle server's lines still show within a quarter
 * of a second; a reader that stops reading costs at most LOG_BUFFER_BYTES_MAX of memory, past
 * which lines are dropped (sonic-boom's `maxLength`) rather than the process growing. What is
 * buffered is written at exit (pino flushes its destination when the process exits, also on
 * an uncaught error); a process killed outright loses at most one block of log lines, never
 * data: nothing committed is ever only in a log.
 */
export function bufferedStdout(): Destination {
  shared ??= pino.destination({
    dest: 1,
    sync: false,
    minLength: LOG_BLOCK_BYTES_MIN,
    maxLength: LOG_BUFFER_BYTES_MAX,
    // sonic-boom's own timer, unref'd: it never keeps an otherwise finished process alive.
    periodicFlush: LOG_FLUSH_MS_MAX,
  });
  return shared;
}
