import type { Tracer } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  AlwaysOnSampler,
  BatchSpanProcessor,
  ParentBasedSampler,
  TracerProvider,
} from '@opentelemetry/sdk-trace';
import { ATTR_SERVICE_NAME } from '@opentelemetry/semantic-conventions';
import type { TracingSettings } from '../../config/env.js';

/** The tracer's name in every span's instrumentation scope. */
export const TRACER_NAME = 'spendgate';

/** A process's tracing: its tracer, its sampling of requests, and the exporter's lifetime. */
export interface Tracing {
  readonly tracer: Tracer;
  /** Whether a request with no caller's trace starts one: true `sampleRatio` of the time. */
  startsTrace(): boolean;
  /** Sends what is buffered now (tests, and before a stop). */
  flush(): Promise<void>;
  /** Sends what is buffered and stops the exporter. */
  shutdown(): Promise<void>;
}

/**
 * The process's tracing, or null when TRACING_SAMPLE_RATIO is 0: then nothing of
 * OpenTelemetry runs, no hook is registered and no span is made.
 *
 * Spans go to the collector in batches (BatchSpanProcessor: every 5 s, or 512 at a time), as
 * OTLP over HTTP in JSON. Sampling is decided before any span is made: a request without a
 * `traceparent` draws once against the ratio, and one that loses makes no span at all (the
 * SDK's own ratio sampler would decide inside startSpan, after a span object and its ids were
 * made); the SDK's sampler then follows the caller's decision where there is a `traceparent`
 * (parent based) and takes every root that reached it.
 */
export function startTracing(settings: TracingSettings): Tracing | null {
  if (settings.sampleRatio <= 0) return null;
  const provider = new TracerProvider({
    resource: resourceFromAttributes({ [ATTR_SERVICE_NAME]: settings.serviceName }),
    sampler: new ParentBasedSampler({ root: new AlwaysOnSampler() }),
    spanProcessors: [
      new BatchSpanProcessor({ exporter: new OTLPTraceExporter({ url: settings.tracesUrl }) }),
    ],
  });
  const ratio = settings.sampleRatio;
  return {
    tracer: provider.getTracer(TRACER_NAME),
    startsTrace: ratio >= 1 ? () => true : () => Math.random() < ratio,
    flush: () => provider.forceFlush(),
    shutdown: () => provider.shutdown(),
  };
}
