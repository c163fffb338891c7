const WAIT_MS_MIN = 10;
const WAIT_MS_MAX = 5_000;
/** An endpoint averaging at most this per delivery is fast: its cap lifts. */
const FAST_MS_MAX = 250;
/** Endpoints tracked at most; an idle endpoint's entry is dropped at once. */
const ENDPOINTS_MAX = 100_000;
/**
 * An endpoint's delivery time before any is measured: optimistic for hand-backs, since a job
 * handed back too early only comes round again, while one handed back too late leaves its
 * endpoint idle. (Its cap stays until it has shown it is fast.)
 */
const AVERAGE_MS_INITIAL = 5;
/** Smoothing of the measured delivery time: the last ~5 deliveries weigh most. */
const SMOOTHING = 0.2;

interface Measured {
  averageMs: number;
  /** Deliveries measured, up to the number that proves an endpoint fast. */
  done: number;
}

interface EndpointState extends Measured {
  running: number;
  readonly waiting: (() => void)[];
  /** Jobs handed back whose time to return has not come: they queue behind the others. */
  handedBack: number;
}

/**
 * Per-endpoint fairness for the delivery worker, in one process. The danger is a slow
 * endpoint (up to the 15 s timeout per delivery) filling every slot while the others wait, so:
 *
 * - An endpoint runs at most `endpointConcurrency` deliveries at once until it has shown it is
 *   fast (that many deliveries done, averaging under FAST_MS_MAX); a fast endpoint may run up
 *   to all slots but `endpointConcurrency`, which always stay for the others. An endpoint that
 *   slows down is capped again as its average rises.
 * - As many more as it may run wait here for a turn (cheap: a promise, no Redis).
 * - A job beyond that is handed back to the queue, delayed by about the time the endpoint
 *   needs to work off what is ahead of it (from its measured delivery time), so a fast
 *   endpoint's jobs come back in milliseconds and a slow one's in seconds.
 */
export class EndpointGate {
  readonly #endpoints = new Map<string, EndpointState>();
  /** Measurements outlive their entries, so a returning endpoint starts informed. */
  readonly #measured = new Map<string, Measured>();
  readonly #fastCap: number;

  constructor(
    private readonly endpointConcurrency: number,
    totalConcurrency: number,
  ) {
    this.#fastCap = Math.max(endpointConcurrency, totalConcurrency - endpointConcurrency);
  }

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
      const measured = this.#measured.get(endpointId);
      state = {
        running: 0,
        waiting: [],
        handedBack: 0,
        averageMs: measured?.averageMs ?? AVERAGE_MS_INITIAL,
        done: measured?.done ?? 0,
      };
      this.#endpoints.set(endpointId, state);
    }
    const cap = this.#capOf(state);
    if (state.running >= cap) {
      if (state.waiting.length >= cap) return { retryInMs: this.#handBack(endpointId, state, cap) };
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
        entered.done = Math.min(entered.done + 1, this.endpointConcurrency);
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

  #capOf(state: EndpointState): number {
    const fast = state.done >= this.endpointConcurrency && state.averageMs <= FAST_MS_MAX;
    return fast ? this.#fastCap : this.endpointConcurrency;
  }

  /** Its turn comes after everything this endpoint already has: here, and handed back. */
  #handBack(endpointId: string, state: EndpointState, cap: number): number {
    const ahead = state.running + state.waiting.length + state.handedBack;
    const retryInMs = Math.round(
      Math.min(WAIT_MS_MAX, Math.max(WAIT_MS_MIN, (state.averageMs * ahead) / cap)),
    );
    state.handedBack += 1;
    setTimeout(() => {
      state.handedBack -= 1;
      this.#forgetIfIdle(endpointId, state);
    }, retryInMs).unref();
    return retryInMs;
  }

  #forgetIfIdle(endpointId: string, state: EndpointState): void {
    if (state.running > 0 || state.waiting.length > 0 || state.handedBack > 0) return;
    if (this.#endpoints.get(endpointId) !== state) return;
    this.#endpoints.delete(endpointId);
    if (this.#measured.size >= ENDPOINTS_MAX) this.#measured.clear();
    this.#measured.set(endpointId, { averageMs: state.averageMs, done: state.done });
  }
}
