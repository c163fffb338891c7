import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useTestService } from '../support/http.js';
import { freePort } from '../support/processes.js';
import { resettingPort, startReceiver, type Receiver } from '../support/receiver.js';

/**
 * Webhook endpoints over real HTTP: which addresses each mode may
 * register and reach, what a failed delivery tells its owner (a class, never the socket's
 * error text), and Create Webhook under an Idempotency-Key (one endpoint, the secret shown once).
 */
interface Json {
  id: string;
  secret?: string;
  url: string;
  delivered: boolean;
  statusCode: number | null;
  error: string | null | { code: string; param?: string; message: string };
  data: { id: string; error: string | null; status: string; statusCode: number | null }[];
}

describe('webhook endpoints', () => {
  const harness = useTestService<Json>();
  const { call } = harness;
  const create = (url: string, key?: string) =>
    call('POST', '/v1/webhooks', { url, events: ['*'] }, key);
  const endpointCount = async () =>
    (
      await harness.service.store.client.query<{ n: number }>(
        'SELECT count(*)::int AS n FROM webhook_endpoints',
      )
    ).rows[0]?.n;

  let receiver: Receiver;
  /** Ports on loopback that answer nothing: one closed, one that takes and resets connections. */
  let ports: { closed: number; resetting: number };
  let resetter: Awaited<ReturnType<typeof resettingPort>>;
  beforeAll(async () => {
    receiver = await startReceiver();
    resetter = await resettingPort();
    ports = { closed: await freePort(), resetting: resetter.port };
  });
  afterAll(async () => {
    await receiver.close();
    await resetter.close();
  });

  // Item 8: test mode relaxes https and allows loopback, and nothing else that is not public.
  it('refuses every non-public address but loopback in test mode, as in live mode', async () => {
    const live = await harness.service.key({ mode: 'live' });
    const before = await endpointCount();
    for (const host of [
      '169.254.169.254',
      '10.0.0.1',
      '192.168.0.1',
      '172.16.0.1',
      '100.64.0.1',
      '[fd00:ec2::254]',
      '[fe80::1]',
      '0.0.0.0',
      '[::ffff:10.0.0.1]',
    ]) {
      for (const [mode, key] of [
        ['test', harness.key],
        ['live', live.key],
      ] as const) {
        const scheme = mode === 'test' ? 'http' : 'https';
        const refused = await create(`${scheme}://${host}/latest/meta-data/`, key);
        const error = refused.body.error as { code: string; param?: string };
        expect([mode, host, refused.status, error.code, error.param]).toEqual([
          mode,
          host,
          400,
          'parameter_invalid',
          'url',
        ]);
      }
    }
    expect(await endpointCount()).toBe(before);
    for (const url of [receiver.url, 'http://localhost:9/x', 'http://[::1]:9/x']) {
      expect((await create(url)).status, url).toBe(201);
    }
  });

  it('reports a failed Test Webhook as a class, alike for a refused and a resetting port', async () => {
    const answers: Json[] = [];
    for (const port of [ports.closed, ports.resetting]) {
      const endpoint = await create(`http://127.0.0.1:${port}/hooks`);
      const tested = await call('POST', `/v1/webhooks/${endpoint.body.id}/test`);
      expect(tested.status).toBe(200);
      answers.push(tested.body);
      const listed = await call('GET', `/v1/webhooks/${endpoint.body.id}/deliveries`);
      expect(listed.body.data.map((delivery) => [delivery.status, delivery.error])).toEqual([
        ['failed', 'connection_failed'],
      ]);
    }
    expect(answers.map((answer) => [answer.delivered, answer.statusCode, answer.error])).toEqual([
      [false, null, 'connection_failed'],
      [false, null, 'connection_failed'],
    ]);
    const text = JSON.stringify(answers);
    for (const leak of ['ECONN', 'refused', 'reset', 'socket', '127.0.0.1']) {
      expect(text).not.toContain(leak);
    }
  });

  it('reports a status other than 2xx as http_status, and a delivery as no error', async () => {
    const endpoint = await create(receiver.url);
    receiver.answer = () => 503;
    const failed = await call('POST', `/v1/webhooks/${endpoint.body.id}/test`);
    receiver.answer = () => 200;
    const delivered = await call('POST', `/v1/webhooks/${endpoint.body.id}/test`);
    expect([failed.body.delivered, failed.body.statusCode, failed.body.error]).toEqual([
      false,
      503,
      'http_status',
    ]);
    expect([delivered.body.delivered, delivered.body.statusCode, delivered.body.error]).toEqual([
      true,
      200,
      null,
    ]);
    const listed = await call('GET', `/v1/webhooks/${endpoint.body.id}/deliveries`);
    expect(listed.body.data.map((delivery) => delivery.error).sort()).toEqual([
      'http_status',
      null,
    ]);
  });

  it('refuses to connect to a private address an endpoint already holds (registered before this check)', async () => {
    const accountId = (await call('GET', '/v1/account')).body.id;
    // The store does not check URLs (the edge does): an endpoint as an older version kept it.
    const { endpoint } = await harness.service.store.createWebhookEndpoint(
      { accountId, mode: 'test' },
      { url: 'http://10.0.0.1:9/hooks', events: ['*'], description: null },
    );
    const tested = await call('POST', `/v1/webhooks/${endpoint.id}/test`);
    expect([tested.body.delivered, tested.body.error]).toEqual([false, 'address_forbidden']);
  });

  it('records and shows socket text passed to the store, or recorded before the classes, as the generic class', async () => {
    const endpoint = await create(`http://127.0.0.1:${ports.closed}/hooks`);
    const tested = await call('POST', `/v1/webhooks/${endpoint.body.id}/test`);
    const eventId = (tested.body as unknown as { eventId: string }).eventId;
    const accountId = (await call('GET', '/v1/account')).body.id;
    // An older row, as the sender's text was recorded before.
    await harness.service.store.client.query(
      'UPDATE webhook_deliveries SET error = $2 WHERE endpoint_id = $1',
      [endpoint.body.id, 'connect ECONNREFUSED 127.0.0.1:9'],
    );
    await harness.service.store.recordDeliveryAttempt({
      scope: { accountId, mode: 'test' },
      endpointId: endpoint.body.id,
      eventId,
      eventType: 'webhook.test',
      attempt: 2,
      statusCode: null,
      durationMs: 3,
      error: 'read ECONNRESET',
    });
    const { rows } = await harness.service.store.client.query<{ error: string }>(
      'SELECT error FROM webhook_deliveries WHERE endpoint_id = $1 AND attempt = 2',
      [endpoint.body.id],
    );
    expect(rows.map((row) => row.error)).toEqual(['connection_failed']);
    const listed = await call('GET', `/v1/webhooks/${endpoint.body.id}/deliveries`);
    expect(listed.body.data.map((delivery) => delivery.error)).toEqual([
      'connection_failed',
      'connection_failed',
    ]);
  });

  // Item 11: a retry of Create Webhook creates nothing more, and never shows the secret again.
  it('replays Create Webhook under one Idempotency-Key: one endpoint, the secret shown once', async () => {
    const before = await endpointCount();
    const send = (url: string) =>
      harness.service.request(
        harness.key,
        'POST',
        '/v1/webhooks',
        { url, events: ['vault.created'], description: 'once' },
        { 'idempotency-key': 'create-webhook-once' },
      );
    const first = await send(receiver.url);
    const again = await send(receiver.url);
    const firstBody = first.body as Json;
    const againBody = again.body as Json;
    expect(first.status).toBe(201);
    expect(firstBody.secret).toMatch(/^whsec_/);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    expect([again.status, again.headers.get('idempotent-replayed')]).toEqual([201, 'true']);
    expect(againBody.id).toBe(firstBody.id);
    expect('secret' in againBody).toBe(false);
    expect({ ...againBody, secret: firstBody.secret }).toEqual(firstBody);
    expect(await endpointCount()).toBe((before ?? 0) + 1);
    // The record kept for the replay holds no secret.
    const { rows } = await harness.service.store.client.query<{ body: string }>(
      'SELECT response_body::text AS body FROM idempotency_keys WHERE key = $1',
      ['create-webhook-once'],
    );
    expect(rows).toHaveLength(1);
    expect(rows[0]?.body).not.toContain('whsec_');
    expect(rows[0]?.body).not.toContain(firstBody.secret);
    // The same key for another body is refused, creating nothing.
    const other = await send('http://127.0.0.1:9/other');
    expect([other.status, (other.body as { error: { code: string } }).error.code]).toEqual([
      409,
      'duplicate_idempotency_key',
    ]);
    expect(await endpointCount()).toBe((before ?? 0) + 1);
    // The replayed endpoint is the one that signs: the first secret verifies its deliveries.
    receiver.secret = firstBody.secret ?? '';
    const tested = await call('POST', `/v1/webhooks/${firstBody.id}/test`);
    expect(tested.body.delivered).toBe(true);
    expect(receiver.received.at(-1)?.verified).toBe(true);
  });
});
