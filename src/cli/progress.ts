/**
 * What a command is doing while it takes a while (the embedded database takes seconds to open,
 * longer on its first start). One-shot commands say it on stderr, as `spendgate: ...` lines,
 * so their stdout stays the result alone (`spendgate openapi > file`); `serve` says it through
 * its logger, as JSON lines among the rest of its log.
 *
 * A step is announced only once it has run `afterMs` (`slow`): a step that fails at once (a
 * data folder another process holds, a refused connection) leaves its one line of failure
 * alone, and a fast PostgreSQL start stays quiet.
 */
export interface Progress {
  say(message: string): void;
  /** Runs `work`, saying `message` if it has not settled after `afterMs`. */
  slow<T>(message: string, work: () => Promise<T>, afterMs: number): Promise<T>;
}

export function progressTo(write: (message: string) => void): Progress {
  return {
    say: write,
    async slow(message, work, afterMs) {
      const timer = setTimeout(() => {
        write(message);
      }, afterMs);
      try {
        return await work();
      } finally {
        clearTimeout(timer);
      }
    },
  };
}

/** `spendgate: <message>` lines on stderr. */
export function stderrProgress(): Progress {
  return progressTo((message) => {
    process.stderr.write(`spendgate: ${message}\n`);
  });
}

/** Info lines of a logger (pino's `info(message)`). */
export function loggerProgress(logger: { info(message: string): void }): Progress {
  return progressTo((message) => {
    logger.info(message);
  });
}

export const SILENT: Progress = progressTo(() => undefined);
