import {
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Context,
  type Link,
  type Span,
  type Tracer,
} from '@opentelemetry/api';
import {
  ATTR_DB_QUERY_TEXT,
  ATTR_DB_SYSTEM_NAME,
  ATTR_ERROR_TYPE,
  DB_SYSTEM_NAME_VALUE_POSTGRESQL,
} from '@opentelemetry/semantic-conventions';
import type { BatchTrace, RequestTrace } from '../../store/store.js';

/**
 * A statement's text in its span, at most: enough to tell which statement it is; the batch's
 * longest run to a few kilobytes, which every export would carry.
 */
const STATEMENT_CHARS_MAX = 400;

/** Span names: what an operator filters on. */
export const SPAN_NAMES = {
  batch: 'authorize batch',
  decision: 'authorize decision',
  statement: 'postgresql statement',
} as const;

/**
 * A sampled request's span, as the store's RequestTrace (store/authorize/trace.ts). The store
 * decides many requests in one batch, and a span has one parent: the batch's span is a child
 * of the first traced request it serves, with a link to each other traced request's span,
 * and each of those links back to the batch. So every traced request's trace shows its
 * decision, and leads (a link) to the batch and its statements to the database.
 */
export class OtelRequestTrace implements RequestTrace {
  readonly #context: Context;

  constructor(
    private readonly tracer: Tracer,
    readonly span: Span,
  ) {
    this.#context = trace.setSpan(ROOT_CONTEXT, span);
  }

  leadBatch(served: readonly RequestTrace[], size: number): BatchTrace {
    const others = served.filter(
      (other): other is OtelRequestTrace => other !== this && other instanceof OtelRequestTrace,
    );
    const links: Link[] = others.map((other) => ({ context: other.span.spanContext() }));
    const span = this.tracer.startSpan(
      SPAN_NAMES.batch,
      {
        kind: SpanKind.INTERNAL,
        links,
        attributes: {
          'spendgate.batch.requests': size,
          'spendgate.batch.traced_requests': served.length,
        },
      },
      this.#context,
    );
    const batch = { context: span.spanContext() };
    for (const other of others) other.span.addLink(batch);
    return new OtelBatchTrace(this.tracer, span);
  }

  decision<T>(decide: () => T): T {
    const span = this.tracer.startSpan(SPAN_NAMES.decision, undefined, this.#context);
    try {
      return decide();
    } catch (error) {
      failed(span, error);
      throw error;
    } finally {
      span.end();
    }
  }
}

class OtelBatchTrace implements BatchTrace {
  readonly #context: Context;

  constructor(
    private readonly tracer: Tracer,
    private readonly span: Span,
  ) {
    this.#context = trace.setSpan(ROOT_CONTEXT, span);
  }

  async statement<T>(text: string, commits: boolean, send: () => Promise<T>): Promise<T> {
    const span = this.tracer.startSpan(
      SPAN_NAMES.statement,
      {
        kind: SpanKind.CLIENT,
        attributes: {
          [ATTR_DB_SYSTEM_NAME]: DB_SYSTEM_NAME_VALUE_POSTGRESQL,
          // A statement's text holds no values (they go as parameters): no secret reaches it.
          [ATTR_DB_QUERY_TEXT]: text.slice(0, STATEMENT_CHARS_MAX),
          'spendgate.db.commits': commits,
        },
      },
      this.#context,
    );
    try {
      return await send();
    } catch (error) {
      failed(span, error);
      throw error;
    } finally {
      span.end();
    }
  }

  path(path: 'known state' | 'locked'): void {
    // The last one stands: a batch whose known state was stale is then locked and read.
    this.span.setAttribute('spendgate.batch.path', path);
    this.span.addEvent(path);
  }

  end(error?: unknown): void {
    if (error !== undefined) failed(this.span, error);
    this.span.end();
  }
}

/** The span's status and error type; never the message, which may quote a value. */
function failed(span: Span, error: unknown): void {
  const type = error instanceof Error ? error.name : 'unknown';
  span.setStatus({ code: SpanStatusCode.ERROR });
  span.setAttribute(ATTR_ERROR_TYPE, type);
}
