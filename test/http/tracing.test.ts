import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTracing, type Tracing } from '../../src/http/tracing/provider.js';
import { SPAN_NAMES } from '../../src/http/tracing/request-trace.js';
import { fundedCard, MERCHANT, networkId } from '../support/authorize.js';
import { startTestService, type TestService } from '../support/http.js';
import {
  startOtlpCollector,
  type CollectedSpan,
  type OtlpCollector,
} from '../support/otlp-collector.js';

/**
 * OpenTelemetry tracing (issue 38, "Seeing it in production"), end to end: the service on real
 * HTTP and PostgreSQL, its spans exported over OTLP/HTTP to a collector on loopback, and the
 * tree read back from what the collector received: a request's span, with its batch (and the
 * batch's statements to the database) and its decision below it; the batch linked to every
 * other request it served, and they to it. Off, nothing is exported.
 */

const REQUEST_SPAN = 'POST /v1/authorizations';

interface Harness {
  collector: OtlpCollector;
  tracing: Tracing;
  service: TestService;
  key: string;
}

async function startTraced(sampleRatio: number): Promise<Harness> {
  const collector = await startOtlpCollector();
  const tracing = startTracing({
    sampleRatio,
    tracesUrl: collector.tracesUrl,
    serviceName: 'spendgate-test',
  });
  if (tracing === null) throw new Error('tracing on made no tracing');
  const service = await startTestService({ tracing });
  const { key } = await service.key();
  return { collector, tracing, service, key };
}

function authorizeBody(cardId: string) {
  return {
    cardId,
    amount: '1',
    currency: 'USDC',
    merchant: MERCHANT,
    networkTransactionId: networkId(),
  };
}

async function cardsOf(harness: Harness, count: number): Promise<string[]> {
  const call = async (method: string, path: string, body?: unknown) => {
    const answer = await harness.service.request(harness.key, method, path, body);
    return { ...answer, body: answer.body as { id: string } };
  };
  const cards: string[] = [];
  for (let index = 0; index < count; index++) {
    const { cardId } = await fundedCard(
      { service: harness.service, key: harness.key, call },
      '100',
    );
    cards.push(cardId);
  }
  return cards;
}

/** The request span of the answer with this Request-Id. */
function requestSpan(spans: readonly CollectedSpan[], requestId: string): CollectedSpan {
  const span = spans.find(
    (candidate) => candidate.attributes['spendgate.request_id'] === requestId,
  );
  if (span === undefined) throw new Error(`no span for request ${requestId}`);
  return span;
}

const childrenOf = (spans: readonly CollectedSpan[], parent: CollectedSpan, name: string) =>
  spans.filter(
    (span) =>
      span.parentSpanId === parent.spanId && span.traceId === parent.traceId && span.name === name,
  );

describe('tracing on (every request sampled)', () => {
  let harness: Harness;
  beforeAll(async () => {
    harness = await startTraced(1);
  });
  afterAll(async () => {
    await harness.service.close();
    await harness.collector.close();
  });

  it('exports a request span with its batch, its statements and the decision below it', async () => {
    const [cardId] = await cardsOf(harness, 1);
    const answer = await harness.service.request(
      harness.key,
      'POST',
      '/v1/authorizations',
      authorizeBody(cardId as string),
    );
    expect(answer.status).toBe(200);
    await harness.tracing.flush();
    const { spans } = harness.collector;
    const request = requestSpan(spans, answer.headers.get('request-id') ?? '');
    expect(request).toMatchObject({
      name: REQUEST_SPAN,
      kind: 2,
      parentSpanId: '',
      serviceName: 'spendgate-test',
    });
    expect(request.attributes['http.response.status_code']).toBe(200);
    expect(request.attributes['http.route']).toBe('/v1/authorizations');

    const [batch, ...otherBatches] = childrenOf(spans, request, SPAN_NAMES.batch);
    expect(batch).toBeDefined();
    expect(otherBatches).toEqual([]);
    expect(batch?.attributes['spendgate.batch.requests']).toBe(1);
    expect(['known state', 'locked']).toContain(batch?.attributes['spendgate.batch.path']);
    const trips = childrenOf(spans, batch as CollectedSpan, SPAN_NAMES.statement);
    expect(trips.length).toBeGreaterThanOrEqual(1);
    for (const trip of trips) {
      expect(trip.attributes['db.system.name']).toBe('postgresql');
      expect(String(trip.attributes['db.query.text']).length).toBeGreaterThan(0);
    }
    // The batch owns its transaction: its last statement goes with the COMMIT.
    expect(trips.filter((trip) => trip.attributes['spendgate.db.commits'] === true)).toHaveLength(
      1,
    );
    expect(childrenOf(spans, request, SPAN_NAMES.decision)).toHaveLength(1);
  });

  it('links a batch to every request it serves, and each of them to the batch', async () => {
    const cards = await cardsOf(harness, 8);
    // Enough at once that most wait for the batch in flight and are decided together.
    const answers = await Promise.all(
      Array.from({ length: 48 }, (_, index) =>
        harness.service.request(
          harness.key,
          'POST',
          '/v1/authorizations',
          authorizeBody(cards[index % cards.length] as string),
        ),
      ),
    );
    expect(answers.every((answer) => answer.status === 200)).toBe(true);
    await harness.tracing.flush();
    const { spans } = harness.collector;
    const requests = answers.map((answer) =>
      requestSpan(spans, answer.headers.get('request-id') ?? ''),
    );
    const byId = new Map(spans.map((span) => [`${span.traceId}/${span.spanId}`, span]));
    const batchOf = new Map<CollectedSpan, CollectedSpan>();
    for (const request of requests) {
      // Two where the batch's known state was stale: decided again once locked and read.
      expect(childrenOf(spans, request, SPAN_NAMES.decision).length).toBeGreaterThanOrEqual(1);
      const led = childrenOf(spans, request, SPAN_NAMES.batch);
      const linked = request.links
        .map((link) => byId.get(`${link.traceId}/${link.spanId}`))
        .filter((span) => span?.name === SPAN_NAMES.batch);
      // Each request leads its batch, or links to the batch another request leads: one of them.
      expect(led.length + linked.length).toBe(1);
      batchOf.set(request, (led[0] ?? linked[0]) as CollectedSpan);
    }
    const shared = [...new Set(batchOf.values())].filter(
      (batch) => Number(batch.attributes['spendgate.batch.requests']) > 1,
    );
    expect(shared.length).toBeGreaterThan(0);
    for (const batch of shared) {
      const served = requests.filter((request) => batchOf.get(request) === batch);
      expect(served).toHaveLength(Number(batch.attributes['spendgate.batch.requests']));
      const leader = served.find((request) => request.spanId === batch.parentSpanId);
      expect(leader).toBeDefined();
      // The batch links to each request it serves but its parent, in those requests' traces.
      const links = batch.links.map((link) => `${link.traceId}/${link.spanId}`).sort();
      const others = served
        .filter((request) => request !== leader)
        .map((request) => `${request.traceId}/${request.spanId}`)
        .sort();
      expect(links).toEqual(others);
      expect(new Set(served.map((request) => request.traceId)).size).toBe(served.length);
    }
  });
});

describe("a sampling ratio, and the caller's traceparent", () => {
  let harness: Harness;
  beforeAll(async () => {
    // So small that no request here draws a trace of its own.
    harness = await startTraced(1e-9);
  });
  afterAll(async () => {
    await harness.service.close();
    await harness.collector.close();
  });

  it("traces a request whose traceparent says sampled, under the caller's span, and no other", async () => {
    const [cardId] = await cardsOf(harness, 1);
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const parentId = '00f067aa0ba902b7';
    const sampled = await harness.service.request(
      harness.key,
      'POST',
      '/v1/authorizations',
      authorizeBody(cardId as string),
      {
        traceparent: `00-${traceId}-${parentId}-01`,
      },
    );
    const unsampled = await harness.service.request(
      harness.key,
      'POST',
      '/v1/authorizations',
      authorizeBody(cardId as string),
      {
        traceparent: `00-${'1'.repeat(32)}-${parentId}-00`,
      },
    );
    const plain = await harness.service.request(
      harness.key,
      'POST',
      '/v1/authorizations',
      authorizeBody(cardId as string),
    );
    expect([sampled.status, unsampled.status, plain.status]).toEqual([200, 200, 200]);
    await harness.tracing.flush();
    const { spans } = harness.collector;
    const request = requestSpan(spans, sampled.headers.get('request-id') ?? '');
    expect(request).toMatchObject({ traceId, parentSpanId: parentId, name: REQUEST_SPAN });
    expect(childrenOf(spans, request, SPAN_NAMES.decision)).toHaveLength(1);
    // Only that request's trace: the setup's calls, and the other two, drew none.
    expect(new Set(spans.map((span) => span.traceId))).toEqual(new Set([traceId]));
  });
});

describe('tracing off (the default)', () => {
  it('makes no tracing at all, and exports nothing', async () => {
    const collector = await startOtlpCollector();
    try {
      const tracing = startTracing({
        sampleRatio: 0,
        tracesUrl: collector.tracesUrl,
        serviceName: 'x',
      });
      expect(tracing).toBeNull();
      const service = await startTestService({ tracing });
      try {
        const { key } = await service.key();
        const harness = { collector, tracing: null as unknown as Tracing, service, key };
        const [cardId] = await cardsOf(harness, 1);
        const answer = await service.request(
          key,
          'POST',
          '/v1/authorizations',
          authorizeBody(cardId as string),
          {
            traceparent: `00-${'2'.repeat(32)}-${'3'.repeat(16)}-01`,
          },
        );
        expect(answer.status).toBe(200);
        // No hook of tracing was registered: the request carries no trace.
        expect(service.app.hasRequestDecorator('requestTrace')).toBe(false);
      } finally {
        await service.close();
      }
      expect(collector.posts()).toBe(0);
    } finally {
      await collector.close();
    }
  });
});
