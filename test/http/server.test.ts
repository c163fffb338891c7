import { maxHeaderSize } from 'node:http';
import { connect } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CONTRACT_RETRY_DELAYS_MS,
  ConfigError,
  loadConfig,
  redisServer,
} from '../../src/config/env.js';
import { JSON_DEPTH_MAX } from '../../src/http/json-body.js';
import { startTestService, type TestService } from '../support/http.js';
import { LOCAL_PRICE_FEEDS } from '../../src/local-chain/index.js';

/** The HTTP platform over real HTTP on loopback: health, request ids, the common error body. */
let service: TestService;
let base: string;
/** A valid key: authentication comes before the body is read, so body errors need one. */
let authorization: string;

beforeAll(async () => {
  service = await startTestService({
    // A route that takes a body, so the framework's body errors can be provoked.
    configure: (app) =>
      app.post('/v1/echo', (request, reply) => reply.send({ received: request.body })),
  });
  base = service.base;
  authorization = `Bearer ${(await service.key()).key}`;
});

afterAll(async () => {
  await service.close();
});

async function errorOf(response: Response): Promise<Record<string, unknown>> {
  const body = (await response.json()) as { error: Record<string, unknown> };
  expect(body.error.requestId).toBe(response.headers.get('request-id'));
  expect(String(body.error.requestId)).toMatch(/^req_[0-9a-f]{32}$/);
  return body.error;
}

describe('HTTP platform', () => {
  it('answers /healthz with a Request-Id', async () => {
    const response = await fetch(`${base}/healthz`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ status: 'ok' });
    expect(response.headers.get('request-id')).toMatch(/^req_/);
  });

  it.each(['/v1/nothing', '/v2/vaults', '/'])(
    'answers %s with 404 route_not_found',
    async (path) => {
      const response = await fetch(`${base}${path}`);
      expect(response.status).toBe(404);
      expect(await errorOf(response)).toMatchObject({
        type: 'invalid_request_error',
        code: 'route_not_found',
      });
    },
  );

  it.each([
    ['invalid JSON', '{"a":', 'application/json', 400, 'invalid_json'],
    [
      'a body over 1 MiB',
      JSON.stringify({ pad: 'x'.repeat(1024 * 1024) }),
      'application/json',
      413,
      'payload_too_large',
    ],
    [
      'another media type',
      'a=1',
      'application/x-www-form-urlencoded',
      415,
      'unsupported_media_type',
    ],
    // Fastify parses text/plain by default: the route's validation then said 400.
    ['plain text', '{"a":1}', 'text/plain', 415, 'unsupported_media_type'],
    [
      'plain text with a charset',
      'hello',
      'text/plain; charset=utf-8',
      415,
      'unsupported_media_type',
    ],
  ])('answers %s in the common error body', async (_title, body, type, status, code) => {
    const response = await fetch(`${base}/v1/echo`, {
      method: 'POST',
      headers: { 'content-type': type, authorization },
      body,
    });
    expect(response.status).toBe(status);
    const error = await errorOf(response);
    expect(error.code).toBe(code);
    expect(JSON.stringify(error)).not.toMatch(/FST_|stack|at \//);
  });
});

/** One request written as raw bytes on a socket, and the whole answer until the server closes. */
async function rawExchange(request: string): Promise<{
  status: number;
  headers: Map<string, string>;
  body: string;
}> {
  const { port, hostname } = new URL(base);
  const text = await new Promise<string>((resolve, reject) => {
    const socket = connect({ port: Number(port), host: hostname });
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
    });
    socket.on('close', () => {
      resolve(Buffer.concat(chunks).toString('utf8'));
    });
    socket.on('error', reject);
    socket.setTimeout(5_000, () => {
      socket.destroy(new Error('no answer'));
    });
    socket.write(request);
  });
  const [head = '', body = ''] = text.split('\r\n\r\n', 2);
  const [statusLine = '', ...headerLines] = head.split('\r\n');
  const headers = new Map(
    headerLines.map((line) => {
      const colon = line.indexOf(':');
      return [line.slice(0, colon).toLowerCase(), line.slice(colon + 1).trim()] as const;
    }),
  );
  return { status: Number(statusLine.split(' ')[1]), headers, body };
}

describe('errors Node raises before Fastify sees a request', () => {
  it.each([
    [
      'headers over Node’s limit',
      `GET /v1/account HTTP/1.1\r\nHost: x\r\nX-Padding: ${'a'.repeat(maxHeaderSize + 1024)}\r\n\r\n`,
    ],
    ['a request line that is not HTTP', 'HELLO THERE\r\n\r\n'],
    ['a malformed header', 'GET /v1/account HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n'],
  ])('answers %s with 400 in the contract body, with its Request-Id', async (_title, request) => {
    const answer = await rawExchange(request);
    expect(answer.status).toBe(400);
    const body = JSON.parse(answer.body) as { error: Record<string, unknown> };
    expect(body.error).toMatchObject({ type: 'invalid_request_error', code: 'parameter_invalid' });
    expect(body.error.requestId).toMatch(/^req_[0-9a-f]{32}$/);
    expect(answer.headers.get('request-id')).toBe(body.error.requestId);
    expect(answer.headers.get('content-type')).toContain('application/json');
  });

  it('still serves the next connection', async () => {
    expect((await fetch(`${base}/healthz`)).status).toBe(200);
  });
});

describe('media types', () => {
  it('answers a contract route sent text/plain with 415, creating nothing', async () => {
    const send = (type: string) =>
      fetch(`${base}/v1/vaults`, {
        method: 'POST',
        headers: { authorization, 'content-type': type },
        body: JSON.stringify({ name: 'plain', currency: 'USDC', network: 'solana' }),
      });
    for (const type of ['text/plain', 'text/plain; charset=utf-8', 'application/xml']) {
      const response = await send(type);
      expect([response.status, (await errorOf(response)).code], type).toEqual([
        415,
        'unsupported_media_type',
      ]);
    }
    const list = await fetch(`${base}/v1/vaults`, { headers: { authorization } });
    expect(((await list.json()) as { data: unknown[] }).data).toEqual([]);
    // The same body as JSON is served: the media type, not the body, was at fault.
    expect((await send('application/json; charset=utf-8')).status).toBe(201);
  });

  it('refuses a body nested past JSON_DEPTH_MAX before any recursive step reads it', async () => {
    const send = (body: string) =>
      fetch(`${base}/v1/vaults`, {
        method: 'POST',
        headers: {
          authorization,
          'content-type': 'application/json',
          'idempotency-key': body.length.toString(),
        },
        body,
      });
    const deep = `{"name":"deep","currency":"USDC","network":"solana","metadata":{"a":${'['.repeat(JSON_DEPTH_MAX)}${']'.repeat(JSON_DEPTH_MAX)}}}`;
    const refused = await send(deep);
    expect([refused.status, (await errorOf(refused)).code]).toEqual([400, 'invalid_json']);
    // Brackets inside a string are text, not nesting: that body is judged on its fields alone.
    const quoted = await send(`{"name":"${'['.repeat(90)}","currency":"USDC","network":"solana"}`);
    expect(quoted.status).toBe(201);
  });
});

describe('configuration', () => {
  it('reads tracing as the OTLP exporter would: off by default, the endpoint and its traces', () => {
    expect(loadConfig({ TRACING_SAMPLE_RATIO: '0.01' }).tracing.sampleRatio).toBe(0.01);
    expect(
      loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/' }).tracing.tracesUrl,
    ).toBe('http://collector:4318/v1/traces');
    expect(
      loadConfig({
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318',
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://traces.example/otlp',
      }).tracing.tracesUrl,
    ).toBe('https://traces.example/otlp');
    expect(() => loadConfig({ TRACING_SAMPLE_RATIO: '1.5' })).toThrow(/TRACING_SAMPLE_RATIO/);
    expect(() => loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' })).toThrow(
      /OTEL_EXPORTER_OTLP_ENDPOINT/,
    );
  });

  it('defaults to 127.0.0.1:3000', () => {
    expect(loadConfig({})).toEqual({
      port: 3000,
      workerPort: 3000,
      host: '127.0.0.1',
      logLevel: 'info',
      databaseUrl: null,
      databaseReadUrl: null,
      databasePoolMax: 20,
      databaseWritesMax: 4,
      dataDir: './data',
      modes: ['test', 'live'],
      redis: redisServer('redis://127.0.0.1:6379'),
      redisPrefix: null,
      rateLimits: { livePerSecond: 100, testPerSecond: 25, authorizationsPerSecond: 10_000 },
      authorize: { budgetMs: 1500, standIn: 'decline', journalDir: join('./data', 'stand-in') },
      cardBin: '424242',
      solanaRpcUrl: null,
      solana: {
        testDepositPause: false,
        testRpcUrl: null,
        treasuryKey: null,
        usdcMint: 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v',
        testUsdcMint: '4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU',
      },
      holdAgeMsMax: 7 * 24 * 3_600_000,
      holdLongAgeMsMax: 31 * 24 * 3_600_000,
      heapGrowingPercent: 300,
      tracing: {
        sampleRatio: 0,
        tracesUrl: 'http://localhost:4318/v1/traces',
        serviceName: 'spendgate',
      },
      webhooks: {
        retryDelaysMs: CONTRACT_RETRY_DELAYS_MS,
        concurrency: 128,
        endpointConcurrency: 32,
      },
      prices: {
        ageMsMax: 10_000,
        confidenceRatioMax: '0.01',
        solHoldBuffer: '0.05',
        pollMs: 1_000,
        readTimeoutMs: 2_000,
        feeds: {
          live: {
            'SOL/USD': 'H6ARHf6YXhGYeQfUzQNGk6rDNnLBQKrenN712K4AQJEG',
            'USDC/USD': 'Gnt27xtC473ZT2Mw5u8wZ68Z3gULkSTb5DuxJy7eJotD',
          },
          test: LOCAL_PRICE_FEEDS,
        },
        oracleProgram: {
          live: 'FsJ3A3u2vn5cTVofAjvy6y5kwABJAqYWpe4975bi2epH',
          test: 'gSbePebfvPy7tRqimPoVecS2UsBvYv46ynrzWocc92s',
        },
      },
    });
    expect(() => loadConfig({ PRICE_FEEDS: 'SOL/USD=nope' })).toThrow(/PRICE_FEEDS/);
    expect(() => loadConfig({ SOL_HOLD_BUFFER: '1.5' })).toThrow(/SOL_HOLD_BUFFER/);
    expect(() => loadConfig({ PRICE_CONFIDENCE_MAX: '-0.1' })).toThrow(/PRICE_CONFIDENCE_MAX/);
    expect(CONTRACT_RETRY_DELAYS_MS.map((ms) => ms / 1000)).toEqual([
      5, 300, 1800, 7200, 18000, 36000, 50400, 72000, 86400,
    ]);
    expect(loadConfig({ WEBHOOK_RETRY_DELAYS_MS: '50,100' }).webhooks.retryDelaysMs).toEqual([
      50, 100,
    ]);
    expect(() => loadConfig({ WEBHOOK_RETRY_DELAYS_MS: '5s' })).toThrow(/WEBHOOK_RETRY_DELAYS_MS/);
    expect(() => loadConfig({ STAND_IN: 'maybe' })).toThrow(/STAND_IN/);
    expect(() => loadConfig({ CARD_BIN: '42' })).toThrow(/CARD_BIN/);
    expect(loadConfig({ HEAP_GROWING_PERCENT: '0' }).heapGrowingPercent).toBe(0);
    expect(() => loadConfig({ HEAP_GROWING_PERCENT: '301' })).toThrow(/HEAP_GROWING_PERCENT/);
    expect(() => loadConfig({ HEAP_GROWING_PERCENT: '1.5' })).toThrow(/HEAP_GROWING_PERCENT/);
    expect(loadConfig({ RATE_LIMIT_TEST_PER_SECOND: '40' }).rateLimits.testPerSecond).toBe(40);
    expect(loadConfig({ SPENDGATE_MODES: 'test' }).modes).toEqual(['test']);
    expect(() => loadConfig({ SPENDGATE_MODES: 'test,prod' })).toThrow(/SPENDGATE_MODES/);
    expect(loadConfig({ DATABASE_URL: '' }).databaseUrl).toBeNull();
  });

  it('refuses a malformed setting, naming it', () => {
    expect(() => loadConfig({ PORT: 'eighty' })).toThrow(ConfigError);
    expect(() => loadConfig({ PORT: '70000' })).toThrow(/PORT/);
    expect(() => loadConfig({ LOG_LEVEL: 'loud' })).toThrow(/LOG_LEVEL/);
    expect(() => loadConfig({ RATE_LIMIT_LIVE_PER_SECOND: '0' })).toThrow(
      /RATE_LIMIT_LIVE_PER_SECOND/,
    );
    const secret = 'mysql://root:hunter2@db/x';
    expect(() => loadConfig({ DATABASE_URL: secret })).toThrow(/DATABASE_URL must be a postgres/);
    expect(() => loadConfig({ DATABASE_URL: secret })).not.toThrow(/hunter2/);
  });

  it('reads DATABASE_READ_URL, a replica of DATABASE_URL, and refuses it malformed or alone', () => {
    const primary = 'postgres://app@db:5432/spendgate';
    const replica = 'postgresql://app:hunter2@db-replica:5432/spendgate';
    const both = loadConfig({ DATABASE_URL: primary, DATABASE_READ_URL: replica });
    expect([both.databaseUrl, both.databaseReadUrl]).toEqual([primary, replica]);
    expect(loadConfig({ DATABASE_URL: primary, DATABASE_READ_URL: '' }).databaseReadUrl).toBeNull();
    const malformed = 'mysql://root:hunter2@replica/x';
    expect(() => loadConfig({ DATABASE_URL: primary, DATABASE_READ_URL: malformed })).toThrow(
      /DATABASE_READ_URL must be a postgres/,
    );
    expect(() => loadConfig({ DATABASE_URL: primary, DATABASE_READ_URL: malformed })).not.toThrow(
      /hunter2/,
    );
    // The embedded database has no replica: the setting alone would be silently unused.
    expect(() => loadConfig({ DATABASE_READ_URL: replica })).toThrow(
      /DATABASE_READ_URL needs DATABASE_URL/,
    );
    expect(() => loadConfig({ DATABASE_READ_URL: replica })).not.toThrow(/hunter2/);
  });
});
