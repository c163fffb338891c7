import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LOCAL_REDIS_URL, testRedisPrefix } from '../support/http.js';
import {
  forgetPrefixes,
  freePort,
  serverDatabase,
  startWorkerProcess,
  stopAll,
  waitFor,
} from '../support/processes.js';

/**
 * `spendgate serve --role worker` answers /healthz, /readyz and /metrics on WORKER_PORT, as
 * every role does (contract section 15), and serves no part of the REST interface.
 */
describe('the worker role', () => {
  let database: Awaited<ReturnType<typeof serverDatabase>>;
  const prefix = testRedisPrefix();

  beforeAll(async () => {
    database = await serverDatabase();
  });
  afterAll(async () => {
    await stopAll();
    await forgetPrefixes([prefix]);
    await database.drop();
  });

  it('serves health, readiness and metrics, and no API', async () => {
    const port = await freePort();
    const worker = startWorkerProcess({
      DATABASE_URL: database.url,
      SPENDGATE_MASTER_KEY: randomBytes(32).toString('base64'),
      REDIS_URL: LOCAL_REDIS_URL,
      REDIS_PREFIX: prefix,
      WORKER_PORT: String(port),
      LOG_LEVEL: 'info',
    });
    const base = `http://127.0.0.1:${String(port)}`;
    await waitFor(
      () => worker.output().includes('spendgate started'),
      60_000,
      () => worker.output(),
    );
    expect(await (await fetch(`${base}/healthz`)).json()).toEqual({ status: 'ok' });
    const ready = await fetch(`${base}/readyz`);
    expect([ready.status, ((await ready.json()) as { status: string }).status]).toEqual([
      200,
      'ready',
    ]);
    const metrics = await (await fetch(`${base}/metrics`)).text();
    expect(metrics).toContain('spendgate_dependency_up{dependency="database"} 1');
    expect(metrics).toContain('process_cpu_user_seconds_total');
    const api = await fetch(`${base}/v1/vaults`, {
      headers: { authorization: 'Bearer sk_test_x' },
    });
    expect(api.status).toBe(404);
    expect(((await api.json()) as { error: { code: string } }).error.code).toBe('route_not_found');
    expect(await worker.stop('SIGTERM')).toEqual({ code: 0, signal: null });
  });
});
