import type { SqlTransaction } from '../sql/client.js';

/*
 * What the authorize engine tells a tracer, in the engine's own words: the store names no
 * tracing library (src/http/tracing implements these over OpenTelemetry). Only a request that
 * is traced carries a RequestTrace, so with tracing off, or for a request the sampler passed
 * over, the engine's whole cost is one field read per request.
 */

/** A traced request, as the engine sees it. */
export interface RequestTrace {
  /**
   * Opens the span of a batch this request leads (the first traced request of the batch).
   * `served`: every traced request of the batch, this one first; `size`: all its requests.
   */
  leadBatch(served: readonly RequestTrace[], size: number): BatchTrace;
  /** Runs this request's decision in a span of its own, under the request's. */
  decision<T>(decide: () => T): T;
}

/** The span of one batch, and of the statements it sends to the database. */
export interface BatchTrace {
  /**
   * One statement, from its send to its answer: `text` holds no values (they go as
   * parameters); `commits` when the COMMIT goes with it. Statements the batch sends together
   * (pipelined: lock-and-read.ts) share one round trip, and their spans overlap.
   */
  statement<T>(text: string, commits: boolean, send: () => Promise<T>): Promise<T>;
  /** How the batch went: 'known state' (one round trip), 'locked' (read first). */
  path(path: 'known state' | 'locked'): void;
  end(error?: unknown): void;
}

/** The batch's trace, led by its first traced request; undefined when none is traced. */
export function batchTraceOf(
  requests: readonly { readonly trace?: RequestTrace }[],
): BatchTrace | undefined {
  let served: RequestTrace[] | undefined;
  for (const request of requests) {
    if (request.trace !== undefined) (served ??= []).push(request.trace);
  }
  return served?.[0]?.leadBatch(served, requests.length);
}

/** `tx` with each statement it sends a span of `trace`. */
export function tracedTransaction(tx: SqlTransaction, trace: BatchTrace): SqlTransaction {
  return {
    query: (text, params) => trace.statement(text, false, () => tx.query(text, params)),
    exec: (text) => trace.statement(text, false, () => tx.exec(text)),
    queryAndCommit: (text, params) =>
      trace.statement(text, true, () => tx.queryAndCommit(text, params)),
  };
}
