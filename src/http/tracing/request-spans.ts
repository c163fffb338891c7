import { ROOT_CONTEXT, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { parseTraceParent } from '@opentelemetry/core';
import {
  ATTR_HTTP_REQUEST_METHOD,
  ATTR_HTTP_RESPONSE_STATUS_CODE,
  ATTR_HTTP_ROUTE,
} from '@opentelemetry/semantic-conventions';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Tracing } from './provider.js';
import { OtelRequestTrace } from './request-trace.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The request's trace, when it is sampled (request-spans.ts); else undefined. */
    requestTrace: OtelRequestTrace | undefined;
  }
}

/**
 * A span per request (kind SERVER, named by method and route), for the requests sampled: the
 * store's spans (the batch, its statements, the decision) hang from it through
 * `request.requestTrace`. Registered only when tracing is on (server.ts): with it off no hook
 * runs. An unsampled request costs a header read and one random draw, and makes no span.
 */
export function registerRequestSpans(app: FastifyInstance, tracing: Tracing): void {
  app.decorateRequest('requestTrace', undefined);
  app.addHook('onRequest', (request, _reply, done) => {
    const header = request.headers.traceparent;
    const parent = typeof header === 'string' ? parseTraceParent(header) : null;
    if (parent !== null || tracing.startsTrace()) startSpan(request, tracing, parent);
    done();
  });
  app.addHook('onResponse', (request, reply, done) => {
    const traced = request.requestTrace;
    if (traced !== undefined) {
      traced.span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, reply.statusCode);
      if (reply.statusCode >= 500) traced.span.setStatus({ code: SpanStatusCode.ERROR });
      traced.span.end();
    }
    done();
  });
  // A client gone before the answer: the span still ends (onResponse will not run).
  app.addHook('onRequestAbort', (request, done) => {
    request.requestTrace?.span.end();
    done();
  });
}

function startSpan(
  request: FastifyRequest,
  tracing: Tracing,
  parent: ReturnType<typeof parseTraceParent>,
): void {
  const route = request.routeOptions.url;
  const span = tracing.tracer.startSpan(
    route === undefined ? request.method : `${request.method} ${route}`,
    {
      kind: SpanKind.SERVER,
      attributes: {
        [ATTR_HTTP_REQUEST_METHOD]: request.method,
        ...(route === undefined ? {} : { [ATTR_HTTP_ROUTE]: route }),
        'spendgate.request_id': request.id,
      },
    },
    parent === null ? ROOT_CONTEXT : trace.setSpanContext(ROOT_CONTEXT, parent),
  );
  // A caller's traceparent that says "not sampled": a span that records nothing; dropped.
  if (span.isRecording()) request.requestTrace = new OtelRequestTrace(tracing.tracer, span);
}
