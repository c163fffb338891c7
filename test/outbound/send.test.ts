import { afterEach, describe, expect, it } from 'vitest';

import { InvariantError } from '../../src/core/index.js';
import {
  checkWebhookUrl,
  RESPONSE_BODY_BYTES_MAX,
  sendWebhook,
  type LookupFn,
  type WebhookRequest,
} from '../../src/outbound/index.js';
import { freePort } from '../support/processes.js';
import { resettingPort, startReceiver, type Receiver } from '../support/receiver.js';

const SIGNATURE = 'v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4=';
const HEADERS = {
  'webhook-id': 'evt_2Vn3fQ4d',
  'webhook-timestamp': '1700000000',
  'webhook-signature': SIGNATURE,
};
const BODY = JSON.stringify({
  id: 'evt_2Vn3fQ4d',
  object: 'event',
  type: 'webhook.test',
  data: { object: { note: 'naïve café ✓' } },
});

function delivery(url: string, overrides: Partial<WebhookRequest> = {}): WebhookRequest {
  return { url, mode: 'test', headers: HEADERS, body: BODY, timeoutMs: 5_000, ...overrides };
}

/** Resolves every name to `address`: what a rebinding DNS server would answer at delivery. */
function resolvesTo(address: string): LookupFn {
  return () => Promise.resolve([{ address, family: address.includes(':') ? 6 : 4 }]);
}

let receiver: Receiver | undefined;
afterEach(async () => {
  await receiver?.close();
  receiver = undefined;
});

describe('sendWebhook, test mode against a loopback receiver', () => {
  it('POSTs the headers and the exact body and returns the status', async () => {
    receiver = await startReceiver();
    const result = await sendWebhook(delivery(receiver.at('/hooks?x=1')));
    expect(result.statusCode).toBe(200);
    expect(result.error).toBeNull();
    expect(result.durationMs).toBeGreaterThanOrEqual(0);
    expect(receiver.received).toHaveLength(1);
    const seen = receiver.received[0];
    expect(seen?.method).toBe('POST');
    expect(seen?.path).toBe('/hooks?x=1');
    expect(seen?.raw).toBe(BODY);
    expect(seen?.headers['content-type']).toBe('application/json');
    expect(seen?.headers['content-length']).toBe(String(Buffer.byteLength(BODY)));
    expect(seen?.headers['webhook-id']).toBe(HEADERS['webhook-id']);
    expect(seen?.headers['webhook-timestamp']).toBe(HEADERS['webhook-timestamp']);
    expect(seen?.headers['webhook-signature']).toBe(SIGNATURE);
  });

  it.each([500, 410, 404, 204, 299])('returns a %i as the status code', async (status) => {
    receiver = await startReceiver({
      routes: {
        '/status': (_req, res) => {
          res.statusCode = status;
          res.end(status === 204 ? undefined : 'nope');
        },
      },
    });
    const result = await sendWebhook(delivery(receiver.at('/status')));
    expect(result.statusCode).toBe(status);
    expect(result.error).toBeNull();
  });

  it('does not follow a redirect', async () => {
    receiver = await startReceiver({
      routes: {
        '/moved': (_req, res) => {
          res.writeHead(302, { location: '/target' }).end();
        },
        '/absolute': (_req, res) => {
          res.writeHead(307, { location: receiver?.at('/target') ?? '' }).end();
        },
      },
    });
    expect((await sendWebhook(delivery(receiver.at('/moved')))).statusCode).toBe(302);
    expect((await sendWebhook(delivery(receiver.at('/absolute')))).statusCode).toBe(307);
    expect(receiver.received.map((r) => r.path)).toEqual(['/moved', '/absolute']);
  });

  it('gives up on a receiver that never answers, after timeoutMs', async () => {
    receiver = await startReceiver({
      routes: {
        '/silent': () => {
          // Never answers.
        },
      },
    });
    const result = await sendWebhook(delivery(receiver.at('/silent'), { timeoutMs: 300 }));
    expect(result.statusCode).toBeNull();
    expect(result.error).toBe('timeout');
    expect(result.durationMs).toBeGreaterThanOrEqual(250);
    expect(result.durationMs).toBeLessThan(3_000);
  });

  it('gives up on a receiver that answers the headers and then stalls', async () => {
    receiver = await startReceiver({
      routes: {
        '/stall': (_req, res) => {
          res.writeHead(200, { 'content-length': '100' });
          res.write('partial');
        },
      },
    });
    const result = await sendWebhook(delivery(receiver.at('/stall'), { timeoutMs: 300 }));
    expect(result.statusCode).toBeNull();
    expect(result.error).toBe('timeout');
  });

  it('reports a receiver that hangs up mid-answer as an error', async () => {
    receiver = await startReceiver({
      routes: {
        '/hangup': (_req, res) => {
          res.writeHead(200, { 'content-length': '100' });
          res.write('partial', () => res.socket?.destroy());
        },
      },
    });
    const result = await sendWebhook(delivery(receiver.at('/hangup')));
    expect(result.statusCode).toBeNull();
    expect(result.error).toBe('connection_failed');
  });

  it('returns a refused connection as an error, without throwing', async () => {
    const result = await sendWebhook(delivery(`http://127.0.0.1:${await freePort()}/x`));
    expect(result).toMatchObject({ statusCode: null, error: 'connection_failed' });
    expect(result.durationMs).toBeGreaterThanOrEqual(0);
  });

  it('stops reading a huge answer after RESPONSE_BODY_BYTES_MAX and hangs up', async () => {
    let bytesWritten = 0;
    let receiverSawClose = false;
    receiver = await startReceiver({
      routes: {
        '/flood': (_req, res) => {
          res.writeHead(200, { 'content-type': 'application/octet-stream' });
          const chunk = Buffer.alloc(16_384, 0x61);
          const pump = (): void => {
            while (!res.destroyed && bytesWritten < 512 * 1_048_576) {
              bytesWritten += chunk.length;
              if (!res.write(chunk)) {
                res.once('drain', pump);
                return;
              }
            }
          };
          res.on('close', () => {
            receiverSawClose = true;
          });
          pump();
        },
      },
    });
    const result = await sendWebhook(delivery(receiver.at('/flood'), { timeoutMs: 10_000 }));
    expect(result).toMatchObject({ statusCode: 200, error: null });
    expect(result.durationMs).toBeLessThan(5_000);
    await expect.poll(() => receiverSawClose).toBe(true);
    expect(bytesWritten).toBeGreaterThan(RESPONSE_BODY_BYTES_MAX);
    // The sender hung up long before the receiver's 512 MiB flood was written.
    expect(bytesWritten).toBeLessThan(64 * 1_048_576);
  });

  it('reuses a kept-alive connection for consecutive deliveries to one receiver', async () => {
    receiver = await startReceiver({ keepAliveTimeoutMs: 5000 });
    for (let i = 0; i < 5; i += 1) {
      expect((await sendWebhook(delivery(receiver.at(`/n${i}`)))).statusCode).toBe(200);
    }
    expect(receiver.received).toHaveLength(5);
    expect(receiver.connections).toBe(1);
  });

  it('connects to the address the lookup answered (test mode allows loopback)', async () => {
    receiver = await startReceiver();
    const result = await sendWebhook(delivery(`http://receiver.example:${receiver.port}/named`), {
      lookup: resolvesTo('127.0.0.1'),
    });
    expect(result.statusCode).toBe(200);
    expect(receiver.received[0]?.headers.host).toBe(`receiver.example:${receiver.port}`);
  });

  it('returns an unresolvable name as an error', async () => {
    const result = await sendWebhook(delivery('http://nowhere.example/'), {
      lookup: () => Promise.reject(Object.assign(new Error('nx'), { code: 'ENOTFOUND' })),
    });
    expect(result).toMatchObject({ statusCode: null, error: 'connection_failed' });
  });

  it('returns an invalid header as an error that does not echo it', async () => {
    receiver = await startReceiver();
    const result = await sendWebhook(
      delivery(receiver.at('/x'), { headers: { 'webhook-signature': `${SIGNATURE}\r\nx: y` } }),
    );
    expect(result.statusCode).toBeNull();
    expect(result.error).toBe('connection_failed');
    expect(receiver.connections).toBe(0);
  });

  it('never puts headers or body in a result', async () => {
    const result = await sendWebhook(delivery('http://127.0.0.1:1/x', { timeoutMs: 300 }));
    const text = JSON.stringify(result);
    expect(text).not.toContain(SIGNATURE);
    expect(text).not.toContain('evt_2Vn3fQ4d');
  });

  it('asserts its bounds (a caller bug, not a delivery failure)', async () => {
    await expect(sendWebhook(delivery('http://127.0.0.1:1/', { timeoutMs: 0 }))).rejects.toThrow(
      InvariantError,
    );
    await expect(
      sendWebhook(delivery('http://127.0.0.1:1/', { timeoutMs: 3_600_000 })),
    ).rejects.toThrow(InvariantError);
    await expect(
      sendWebhook(delivery('http://127.0.0.1:1/', { body: 'x'.repeat(2 * 1_048_576) })),
    ).rejects.toThrow(InvariantError);
  });
});

describe('sendWebhook, failures reported as classes, never as socket text', () => {
  it('answers a refused port and a port that accepts and resets alike', async () => {
    const closedPort = await freePort();
    // Something listening that is not an HTTP server: it takes the connection and drops it.
    const dropper = await resettingPort();
    try {
      const refused = await sendWebhook(delivery(`http://127.0.0.1:${closedPort}/`));
      const reset = await sendWebhook(delivery(`http://127.0.0.1:${dropper.port}/`));
      expect([refused.error, reset.error]).toEqual(['connection_failed', 'connection_failed']);
    } finally {
      await dropper.close();
    }
  });

  it('reports a TLS handshake that fails as tls_error', async () => {
    receiver = await startReceiver();
    const result = await sendWebhook(delivery(`https://127.0.0.1:${receiver.port}/x`));
    expect(result).toMatchObject({ statusCode: null, error: 'tls_error' });
  });
});

describe('sendWebhook, test mode refuses every non-public address but loopback', () => {
  it.each(['10.0.0.1', '169.254.169.254', '192.168.0.1', '100.64.0.1', '[fd00:ec2::254]'])(
    'refuses http:// to the literal %s without connecting',
    async (host) => {
      const result = await sendWebhook(delivery(`http://${host}:9/x`, { timeoutMs: 2_000 }));
      expect(result).toMatchObject({ statusCode: null, error: 'address_forbidden' });
    },
  );

  it('refuses a name that resolves to a private address at connection time', async () => {
    receiver = await startReceiver();
    for (const address of ['10.0.0.1', '169.254.169.254', 'fd00:ec2::254', '::ffff:10.0.0.1']) {
      const result = await sendWebhook(delivery(`http://receiver.example:${receiver.port}/x`), {
        lookup: resolvesTo(address),
      });
      expect(result).toMatchObject({ statusCode: null, error: 'address_forbidden' });
    }
    expect(receiver.connections).toBe(0);
  });
});

describe('sendWebhook, live mode refuses before connecting', () => {
  it('refuses http://', async () => {
    receiver = await startReceiver();
    const result = await sendWebhook(delivery(receiver.at('/x'), { mode: 'live' }));
    expect(result).toMatchObject({ statusCode: null, error: 'invalid_url' });
    expect(receiver.connections).toBe(0);
  });

  it.each(['127.0.0.1', '[::ffff:127.0.0.1]', '127.1'])(
    'refuses https:// to the literal %s',
    async (host) => {
      receiver = await startReceiver();
      const result = await sendWebhook(
        delivery(`https://${host}:${receiver.port}/x`, { mode: 'live' }),
      );
      expect(result).toMatchObject({ statusCode: null, error: 'address_forbidden' });
      expect(receiver.connections).toBe(0);
    },
  );

  it('refuses https://localhost at connection time (the system resolver answers loopback)', async () => {
    receiver = await startReceiver();
    const result = await sendWebhook(
      delivery(`https://localhost:${receiver.port}/x`, { mode: 'live' }),
    );
    expect(result.statusCode).toBeNull();
    expect(result.error).toBe('address_forbidden');
    expect(receiver.connections).toBe(0);
  });

  it('refuses a name that rebinds to loopback after it passed registration', async () => {
    receiver = await startReceiver();
    const url = `https://receiver.example:${receiver.port}/x`;
    // Registration: the name resolves to a public address and is accepted.
    await checkWebhookUrl(url, 'live', { lookup: resolvesTo('93.184.216.34') });
    // Delivery: the same name now resolves to 127.0.0.1; the connection is never opened.
    for (const address of ['127.0.0.1', '::1', '169.254.169.254', '::ffff:10.0.0.1']) {
      const result = await sendWebhook(delivery(url, { mode: 'live' }), {
        lookup: resolvesTo(address),
      });
      expect(result).toMatchObject({ statusCode: null, error: 'address_forbidden' });
    }
    expect(receiver.connections).toBe(0);
  });

  it('refuses a name with one public and one loopback address', async () => {
    receiver = await startReceiver();
    const result = await sendWebhook(
      delivery(`https://receiver.example:${receiver.port}/x`, { mode: 'live' }),
      {
        lookup: () =>
          Promise.resolve([
            { address: '93.184.216.34', family: 4 },
            { address: '127.0.0.1', family: 4 },
          ]),
      },
    );
    expect(result.error).toBe('address_forbidden');
    expect(receiver.connections).toBe(0);
  });
});
