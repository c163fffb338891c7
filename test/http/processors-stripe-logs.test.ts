import Stripe from 'stripe';
import { describe, expect, it } from 'vitest';
import { useTestService } from '../support/http.js';

/**
 * What the Stripe adapter logs of a refused message: its code and event type, never the
 * signature header, the connection's secret or the body.
 */
describe('Stripe adapter logs', () => {
  const lines: string[] = [];
  const harness = useTestService<{ id: string }>({
    log: { level: 'info', stream: { write: (line: string) => lines.push(line) } },
  });
  const SECRET = 'whsec_logs_test_secret_value';

  it('logs a refusal by code, without the signature, the secret or the body', async () => {
    const connection = await harness.call('POST', '/v1/processors', {
      processor: 'stripe',
      mode: 'test',
      signingSecret: SECRET,
    });
    const payload = JSON.stringify({
      id: 'evt_logs_1',
      object: 'event',
      type: 'issuing_authorization.request',
      livemode: false,
      data: { object: { id: 'iauth_logs_body_marker' } },
    });
    const forgedHeader = Stripe.webhooks.generateTestHeaderString({
      payload,
      secret: 'whsec_logs_other_secret',
    });
    const url = `${harness.service.base}/v1/processors/stripe/${connection.body.id}`;
    const forged = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'stripe-signature': forgedHeader },
      body: payload,
    });
    expect(forged.status).toBe(400);
    const header = Stripe.webhooks.generateTestHeaderString({ payload, secret: SECRET });
    const refused = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'stripe-signature': header },
      body: payload,
    });
    expect(((await refused.json()) as { approved: boolean }).approved).toBe(false);
    const text = lines.join('');
    expect(text).toContain('"code":"invalid_signature"');
    expect(text).toContain('processor request declined');
    for (const secretPart of [
      SECRET,
      'logs_test_secret',
      forgedHeader,
      header,
      'iauth_logs_body_marker',
    ]) {
      expect(text).not.toContain(secretPart);
    }
    // The signature itself, without its timestamp: not anywhere either.
    expect(text).not.toContain(header.split('v1=')[1] ?? 'never');
  });
});
