import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A stand-in for an OpenTelemetry Collector: an HTTP server on loopback that takes what an
 * OTLP/HTTP exporter posts to /v1/traces in JSON (the `@opentelemetry/exporter-trace-otlp-http`
 * encoding) and keeps every span, flattened. The tests and bench:tracing point the service at
 * it, as an operator points it at a collector.
 */
export interface CollectedSpan {
  readonly traceId: string;
  readonly spanId: string;
  /** '' for a root span. */
  readonly parentSpanId: string;
  readonly name: string;
  readonly kind: number;
  readonly links: readonly { readonly traceId: string; readonly spanId: string }[];
  readonly attributes: Readonly<Record<string, string | number | boolean>>;
  readonly serviceName: string;
}

export interface OtlpCollector {
  /** The traces endpoint: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT. */
  readonly tracesUrl: string;
  /** Its base: OTEL_EXPORTER_OTLP_ENDPOINT. */
  readonly endpoint: string;
  readonly spans: CollectedSpan[];
  /** POSTs received, whatever their path. */
  readonly posts: () => number;
  close(): Promise<void>;
}

interface OtlpValue {
  stringValue?: string;
  intValue?: string | number;
  doubleValue?: number;
  boolValue?: boolean;
}
interface OtlpAttribute {
  key: string;
  value: OtlpValue;
}
interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  links?: { traceId: string; spanId: string }[];
  attributes?: OtlpAttribute[];
}
interface OtlpExport {
  resourceSpans?: {
    resource?: { attributes?: OtlpAttribute[] };
    scopeSpans?: { spans?: OtlpSpan[] }[];
  }[];
}

function attributesOf(
  list: readonly OtlpAttribute[] = [],
): Record<string, string | number | boolean> {
  const out: Record<string, string | number | boolean> = {};
  for (const { key, value } of list) {
    const read =
      value.stringValue ??
      (value.intValue === undefined ? undefined : Number(value.intValue)) ??
      value.doubleValue ??
      value.boolValue;
    if (read !== undefined) out[key] = read;
  }
  return out;
}

function spansOf(body: OtlpExport): CollectedSpan[] {
  const spans: CollectedSpan[] = [];
  for (const resource of body.resourceSpans ?? []) {
    const serviceName = String(attributesOf(resource.resource?.attributes)['service.name'] ?? '');
    for (const scope of resource.scopeSpans ?? []) {
      for (const span of scope.spans ?? []) {
        spans.push({
          traceId: span.traceId,
          spanId: span.spanId,
          parentSpanId: span.parentSpanId ?? '',
          name: span.name,
          kind: span.kind,
          links: (span.links ?? []).map(({ traceId, spanId }) => ({ traceId, spanId })),
          attributes: attributesOf(span.attributes),
          serviceName,
        });
      }
    }
  }
  return spans;
}

export async function startOtlpCollector(): Promise<OtlpCollector> {
  const spans: CollectedSpan[] = [];
  let posts = 0;
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      posts += 1;
      if (request.url === '/v1/traces' && request.headers['content-type'] === 'application/json') {
        spans.push(...spansOf(JSON.parse(Buffer.concat(chunks).toString('utf8')) as OtlpExport));
      }
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const endpoint = `http://127.0.0.1:${String((server.address() as AddressInfo).port)}`;
  return {
    endpoint,
    tracesUrl: `${endpoint}/v1/traces`,
    spans,
    posts: () => posts,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => {
          if (error === undefined) resolve();
          else reject(error);
        });
      }),
  };
}
