import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { redisServer } from '../../src/config/env.js';
import { createRedis } from '../../src/http/health.js';
import { createServer } from '../../src/http/server.js';
import { createPgliteClient } from '../../src/store/sql/pglite-client.js';
import { openStore } from '../../src/store/store.js';
import { startTestService, testServerConfig, type TestService } from '../support/http.js';

/** Health, readiness with a real Redis and without one, and the metrics text. */
describe('health and metrics', () => {
  const up = createRedis(redisServer('redis://127.0.0.1:6379'));
  // Nothing listens on port 1: a Redis that is down.
  const down = createRedis(redisServer('redis://127.0.0.1:1'));
  let ready: TestService;
  let degraded: TestService;

  beforeAll(async () => {
    ready = await startTestService({ redis: up });
    degraded = await startTestService({ redis: down });
  });

  afterAll(async () => {
    up.disconnect();
    down.disconnect();
    await ready.close();
    await degraded.close();
  });

  it('answers /readyz 200 while authorizations can be decided, naming Redis down as degraded', async () => {
    const good = await fetch(`${ready.base}/readyz`);
    expect([good.status, await good.json()]).toEqual([
      200,
      { status: 'ready', database: 'up', redis: 'up', degraded: [] },
    ]);
    // Contract v1.1: Redis down is a degraded part, not unready (the load balancer keeps it).
    const bad = await fetch(`${degraded.base}/readyz`);
    expect([bad.status, await bad.json()]).toEqual([
      200,
      { status: 'degraded', database: 'up', redis: 'down', degraded: ['redis'] },
    ]);
    const metrics = await (await fetch(`${degraded.base}/metrics`)).text();
    expect(metrics).toContain('spendgate_dependency_up{dependency="redis"} 0');
    expect(metrics).toContain('spendgate_dependency_up{dependency="database"} 1');
    // Without Redis the API still serves.
    const { key } = await degraded.key();
    expect(
      (await fetch(`${degraded.base}/v1/account`, { headers: { authorization: `Bearer ${key}` } }))
        .status,
    ).toBe(200);
  });

  it('answers /readyz 503 when the database does not answer, whatever Redis does', async () => {
    const store = await openStore({
      client: await createPgliteClient(),
      masterKey: randomBytes(32),
    });
    const app = createServer(testServerConfig(), { store, redis: up });
    try {
      expect((await app.inject({ method: 'GET', url: '/readyz' })).statusCode).toBe(200);
      await store.close();
      const answer = await app.inject({ method: 'GET', url: '/readyz' });
      expect([answer.statusCode, answer.json()]).toEqual([
        503,
        { status: 'not_ready', database: 'down', redis: 'up', degraded: [] },
      ]);
    } finally {
      await app.close();
    }
  });

  it('serves request latency by route pattern, never by URL', async () => {
    const { key } = await ready.key();
    await fetch(`${ready.base}/v1/vaults/vlt_0123456789abcdef0123456789abcdef`, {
      headers: { authorization: `Bearer ${key}` },
    });
    const response = await fetch(`${ready.base}/metrics`);
    const text = await response.text();
    expect(response.headers.get('content-type')).toContain('text/plain');
    expect(text).toContain('spendgate_http_request_duration_seconds_bucket{');
    expect(text).toContain('route="/v1/vaults/:id"');
    expect(text).not.toContain('vlt_0123456789abcdef0123456789abcdef');
    expect(text).toContain('process_cpu_user_seconds_total');
  });

  it('counts authorization decisions by outcome and decline code', async () => {
    const { key } = await ready.key();
    const decline = await fetch(`${ready.base}/v1/authorizations`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        cardId: 'card_0123456789abcdef0123456789abcdef',
        amount: '1',
        currency: 'USDC',
        merchant: { name: 'm', mcc: '5812', country: 'US' },
        networkTransactionId: 'ntx_metrics',
      }),
    });
    expect(decline.status).toBe(200);
    const text = await (await fetch(`${ready.base}/metrics`)).text();
    expect(text).toContain(
      'spendgate_authorization_decisions_total{outcome="declined",decline_code="card_declined",stand_in="false"} 1',
    );
  });
});
