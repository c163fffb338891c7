export interface LoopLog {
  warn(object: object, message: string): void;
  info(message: string): void;
}

const FAILURE_WAIT_MS_MAX = 5_000;

/**
 * A loop of rounds for a worker that polls the database (the outbox relay, the settlement
 * worker): the next round at once after a full one, after `idleMs` otherwise, and after a
 * growing wait (up to 5 s) while rounds fail, logged once per outage rather than per round.
 * `stop` lets the round in progress finish.
 */
export class PollingLoop {
  #stopping = false;
  #running: Promise<void> | null = null;
  #wake: (() => void) | null = null;
  failedRounds = 0;

  /** `round` answers whether it found a full batch (so the next may start at once). */
  constructor(
    private readonly name: string,
    private readonly round: () => Promise<boolean>,
    private readonly idleMs: number,
    private readonly log: LoopLog,
  ) {}

  start(): void {
    if (this.#running === null) this.#running = this.#loop();
  }

  async stop(): Promise<void> {
    this.#stopping = true;
    this.#wake?.();
    await this.#running;
    this.#running = null;
  }

  async #loop(): Promise<void> {
    let failures = 0;
    while (!this.#stopping) {
      let waitMs: number;
      try {
        const full = await this.round();
        if (failures > 0) this.log.info(`${this.name}: working again`);
        failures = 0;
        waitMs = full ? 0 : this.idleMs;
      } catch (error) {
        this.failedRounds += 1;
        failures += 1;
        // Loud once, then quiet while it lasts: the work waits safely in the database.
        if (failures === 1) this.log.warn({ err: error }, `${this.name}: a round failed; retrying`);
        waitMs = Math.min(this.idleMs * 2 ** Math.min(failures, 16), FAILURE_WAIT_MS_MAX);
      }
      if (waitMs > 0 && !this.#stopping) await this.#sleep(waitMs);
    }
  }

  #sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.#wake = null;
        resolve();
      }, ms);
      this.#wake = () => {
        clearTimeout(timer);
        this.#wake = null;
        resolve();
      };
    });
  }
}
