/**
 * Per-endpoint fairness for the delivery worker, in one process: at most `concurrency`
 * deliveries to one endpoint run at once, and at most as many more wait here for a turn
 * (cheap: a promise, no Redis). A job beyond that is handed back to the queue, delayed by
 * about the time the endpoint needs to work off what it already has here (from its measured
 * delivery time), so that a fast endpoint's jobs come back in milliseconds and a slow one's in
 * seconds: one endpoint holds at most 2 x `concurrency` of the worker's slots, and handing
 * back costs little even when one endpoint has the whole queue to itself.
 */
const WAIT_MS_MIN = 10;
const WAIT_MS_MAX = 5_000;
/** Endpoints tracked at most; an idle endpoint's entry is dropped at once. */
const ENDPOINTS_MAX = 100_000;
/**
 * An endpoint's delivery time before any is measured: optimistic, since a job handed back too
 * early only comes round again, while one handed back too late leaves its endpoint idle.
 */
const AVERAGE_MS_INITIAL = 5;
/** Smoothing of the measured delivery time: the last ~5 deliveries weigh most. */
const SMOOTHING = 0.2;

interface EndpointState {
  running: number;
  readonly waiting: (() => void)[];
  /** Jobs handed back whose time to return has not come: they queue behind the others. */
  handedBack: number;
  averageMs: number;
}

export class EndpointGate {
  readonly #endpoints = new Map<string, EndpointState>();
  /** Average delivery times outlive their entries, so a returning endpoint starts informed. */
  readonly #averageMs = new Map<string, number>();

  constructor(private readonly concurrency: number) {}

  /**
   * A turn for a delivery to `endpointId`: resolves with a release function once it may run,
   * or with `{ retryInMs }` when it should go back to the queue for that long.
   */
  async enter(
    endpointId: string,
  ): Promise<{ release: (durationMs: number) => void } | { retryInMs: number }> {
    let state = this.#endpoints.get(endpointId);
    if (state === undefined) {
      if (this.#endpoints.size >= ENDPOINTS_MAX) return { retryInMs: WAIT_MS_MAX };
      state = {
        running: 0,
        waiting: [],
        handedBack: 0,
        averageMs: this.#averageMs.get(endpointId) ?? AVERAGE_MS_INITIAL,
      };
      this.#endpoints.set(endpointId, state);
    }
    if (state.running >= this.concurrency) {
      if (state.waiting.length >= this.concurrency) {
        // Its turn comes after everything this endpoint already has: here, and handed back.
        const ahead = state.running + state.waiting.length + state.handedBack;
        const retryInMs = Math.round(
          Math.min(
            WAIT_MS_MAX,
            Math.max(WAIT_MS_MIN, (state.averageMs * ahead) / this.concurrency),
          ),
        );
        const current = state;
        current.handedBack += 1;
        setTimeout(() => {
          current.handedBack -= 1;
          this.#forgetIfIdle(endpointId, current);
        }, retryInMs).unref();
        return { retryInMs };
      }
      const current = state;
      // A release hands its running slot straight to the first waiter (running unchanged), so
      // no newcomer can slip in between and run one too many.
      await new Promise<void>((resolve) => current.waiting.push(resolve));
    } else {
      state.running += 1;
    }
    const entered = state;
    return {
      release: (durationMs: number) => {
        entered.averageMs = entered.averageMs * (1 - SMOOTHING) + durationMs * SMOOTHING;
        const next = entered.waiting.shift();
        if (next !== undefined) {
          next();
          return;
        }
        entered.running -= 1;
        this.#forgetIfIdle(endpointId, entered);
      },
    };
  }

  #forgetIfIdle(endpointId: string, state: EndpointState): void {
    if (state.running > 0 || state.waiting.length > 0 || state.handedBack > 0) return;
    if (this.#endpoints.get(endpointId) !== state) return;
    this.#endpoints.delete(endpointId);
    if (this.#averageMs.size >= ENDPOINTS_MAX) this.#averageMs.clear();
    this.#averageMs.set(endpointId, state.averageMs);
  }
}
