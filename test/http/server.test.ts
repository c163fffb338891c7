import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONTRACT_RETRY_DELAYS_MS, ConfigError, loadConfig } from '../../src/config/env.js';
import { startTestService, type TestService } from '../support/http.js';

/** The HTTP platform over real HTTP on loopback: health, request ids, the common error body. */
let service: TestService;
let base: string;

beforeAll(async () => {
  service = await startTestService({
    // A route that takes a body, so the framework's body errors can be provoked.
    configure: (app) =>
      app.post('/v1/echo', (request, reply) => reply.send({ received: request.body })),
  });
  base = service.base;
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
  ])('answers %s in the common error body', async (_title, body, type, status, code) => {
    const response = await fetch(`${base}/v1/echo`, {
      method: 'POST',
      headers: { 'content-type': type },
      body,
    });
    expect(response.status).toBe(status);
    const error = await errorOf(response);
    expect(error.code).toBe(code);
    expect(JSON.stringify(error)).not.toMatch(/FST_|stack|at \//);
  });
});

describe('configuration', () => {
  it('defaults to 127.0.0.1:3000', () => {
    expect(loadConfig({})).toEqual({
      port: 3000,
      host: '127.0.0.1',
      logLevel: 'info',
      databaseUrl: null,
      dataDir: './data',
      modes: ['test', 'live'],
      redisUrl: 'redis://127.0.0.1:6379',
      redisPrefix: 'spendgate',
      rateLimits: { livePerSecond: 100, testPerSecond: 25, authorizationsPerSecond: 10_000 },
      authorize: { budgetMs: 1500, standIn: 'decline' },
      cardBin: '424242',
      solanaRpcUrl: null,
      solana: {
        testRpcUrl: null,
        treasuryKey: null,
        usdcMint: 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v',
        testUsdcMint: '4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU',
      },
      holdAgeMsMax: 7 * 24 * 3_600_000,
      webhooks: {
        retryDelaysMs: CONTRACT_RETRY_DELAYS_MS,
        concurrency: 128,
        endpointConcurrency: 32,
      },
    });
    expect(CONTRACT_RETRY_DELAYS_MS.map((ms) => ms / 1000)).toEqual([
      5, 300, 1800, 7200, 18000, 36000, 50400, 72000, 86400,
    ]);
    expect(loadConfig({ WEBHOOK_RETRY_DELAYS_MS: '50,100' }).webhooks.retryDelaysMs).toEqual([
      50, 100,
    ]);
    expect(() => loadConfig({ WEBHOOK_RETRY_DELAYS_MS: '5s' })).toThrow(/WEBHOOK_RETRY_DELAYS_MS/);
    expect(() => loadConfig({ STAND_IN: 'maybe' })).toThrow(/STAND_IN/);
    expect(() => loadConfig({ CARD_BIN: '42' })).toThrow(/CARD_BIN/);
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
});
