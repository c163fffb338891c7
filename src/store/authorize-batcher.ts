import { SpendgateError, type AuthorizationOutcome } from '../core/index.js';
import { AUTHORIZE_BATCH_MAX, type AuthorizeRequest } from './ops/authorize-batch.js';

/**
 * Gathers concurrent authorizations into batches (ops/authorize-batch.ts decides a batch in one
 * database transaction). No timer: a request starts a batch at once while fewer than
 * `batchesMax` run; otherwise it waits in the queue and joins the next batch when one ends.
 * Under light load every batch holds one request and nothing waits; under heavy load batches
 * fill, and the cost of each transaction is shared.
 */
export interface BatcherOptions {
  /** Batches in flight at once; each holds one database connection. */
  readonly batchesMax: number;
  /** Requests waiting at most; past it, a request is refused with service_unavailable. */
  readonly queueMax: number;
}

interface Waiting {
  readonly request: AuthorizeRequest;
  readonly resolve: (outcome: AuthorizationOutcome) => void;
  readonly reject: (error: unknown) => void;
}

export class AuthorizeBatcher {
  readonly #queue: Waiting[] = [];
  #running = 0;
  /**
   * Batches run, and batches that failed and fell back to one request at a time. The fallback
   * keeps every answer right, so only this count shows a batch path that keeps failing (a
   * constraint the in-memory decision missed): tests hold it at zero.
   */
  readonly stats = { batches: 0, fallbacks: 0 };

  constructor(
    private readonly runBatch: (
      requests: readonly AuthorizeRequest[],
    ) => Promise<AuthorizationOutcome[]>,
    private readonly runAlone: (request: AuthorizeRequest) => Promise<AuthorizationOutcome>,
    private readonly options: BatcherOptions,
  ) {}

  submit(request: AuthorizeRequest): Promise<AuthorizationOutcome> {
    return new Promise((resolve, reject) => {
      if (this.#queue.length >= this.options.queueMax) {
        reject(
          new SpendgateError(
            'service_unavailable',
            'Too many authorizations are waiting; retry shortly.',
          ),
        );
        return;
      }
      this.#queue.push({ request, resolve, reject });
      this.#pump();
    });
  }

  #pump(): void {
    while (this.#running < this.options.batchesMax && this.#queue.length > 0) {
      const batch = this.#queue.splice(0, AUTHORIZE_BATCH_MAX);
      this.#running += 1;
      void this.#run(batch).finally(() => {
        this.#running -= 1;
        this.#pump();
      });
    }
  }

  async #run(batch: readonly Waiting[]): Promise<void> {
    this.stats.batches += 1;
    try {
      const outcomes = await this.runBatch(batch.map((waiting) => waiting.request));
      batch.forEach((waiting, index) => {
        const outcome = outcomes[index];
        if (outcome === undefined)
          waiting.reject(new Error('a batch answered fewer outcomes than requests'));
        else waiting.resolve(outcome);
      });
    } catch (error) {
      if (batch.length === 1) {
        batch[0]?.reject(error);
        return;
      }
      // One request's failure (a duplicate that raced another batch, a bug) must not fail the
      // others: each runs again on its own, and only its own failure reaches its caller.
      this.stats.fallbacks += 1;
      await Promise.all(
        batch.map((waiting) =>
          this.runAlone(waiting.request).then(waiting.resolve, waiting.reject),
        ),
      );
    }
  }
}
