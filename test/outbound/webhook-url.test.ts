import { describe, expect, it } from 'vitest';

import { SpendgateError } from '../../src/core/index.js';
import { checkWebhookUrl, type LookupFn } from '../../src/outbound/index.js';

/** A resolver answering from a table, so that no test needs DNS or the internet. */
function table(entries: Record<string, string[]>): LookupFn & { calls: string[] } {
  const calls: string[] = [];
  const lookup = (hostname: string) => {
    calls.push(hostname);
    const found = entries[hostname];
    if (found === undefined) {
      return Promise.reject(Object.assign(new Error('not found'), { code: 'ENOTFOUND' }));
    }
    return Promise.resolve(
      found.map((address) => ({ address, family: address.includes(':') ? 6 : 4 })),
    );
  };
  return Object.assign(lookup, { calls });
}

const PUBLIC = table({
  'hooks.example.com': ['93.184.216.34', '2606:2800:220:1:248:1893:25c8:1946'],
  'mixed.example.com': ['93.184.216.34', '10.0.0.7'],
  'mapped.example.com': ['::ffff:127.0.0.1'],
  'metadata.example.com': ['169.254.169.254'],
  'empty.example.com': [],
  'loopback.example.com': ['127.0.0.1', '::1'],
  'cgnat.example.com': ['100.64.0.1'],
});

async function refusal(promise: Promise<unknown>): Promise<SpendgateError> {
  const error: unknown = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(SpendgateError);
  const refused = error as SpendgateError;
  expect(refused.code).toBe('parameter_invalid');
  expect(refused.param).toBe('url');
  expect(refused.status).toBe(400);
  return refused;
}

describe('checkWebhookUrl, test mode', () => {
  it.each([
    'http://127.0.0.1:4567/x',
    'http://127.8.9.10/x',
    'http://localhost',
    'http://localhost:3000/hooks?a=1',
    'https://[::1]:8443/',
    'http://93.184.216.34/',
    'http://hooks.example.com/',
    'http://loopback.example.com/',
  ])('accepts %s (http, public and loopback addresses)', async (raw) => {
    const url = await checkWebhookUrl(raw, 'test', { lookup: PUBLIC });
    expect(url.href.startsWith(raw.replace(/\/$/, ''))).toBe(true);
  });

  // Test mode relaxes https and allows loopback, nothing else non-public.
  it.each([
    'http://169.254.169.254/latest/meta-data/',
    'http://10.0.0.1/',
    'http://192.168.0.1/',
    'http://172.16.0.1/',
    'http://100.64.0.1/',
    'http://0.0.0.0/',
    'http://[fd00:ec2::254]/',
    'http://[fe80::1]/',
    'http://[::ffff:10.0.0.1]/',
    'http://[::127.0.0.1]/',
    'http://[64:ff9b::7f00:1]/',
  ])('refuses the non-public address %s', async (raw) => {
    const refused = await refusal(checkWebhookUrl(raw, 'test', { lookup: PUBLIC }));
    expect(refused.message).toMatch(/private, link-local or reserved/);
  });

  it.each([
    'http://mixed.example.com/',
    'http://metadata.example.com/',
    'http://cgnat.example.com/',
  ])('refuses %s, a name that resolves to a non-public address', async (raw) => {
    const refused = await refusal(checkWebhookUrl(raw, 'test', { lookup: PUBLIC }));
    expect(refused.message).toMatch(/resolves to a private, link-local or reserved/);
  });

  it('accepts the IPv4-mapped form of a loopback address', async () => {
    const url = await checkWebhookUrl('http://[::ffff:127.0.0.1]/', 'test');
    expect(url.hostname).toBe('[::ffff:7f00:1]');
  });

  it('resolves names, and refuses one that does not resolve', async () => {
    const lookup = table({});
    await refusal(checkWebhookUrl('http://anything.invalid/', 'test', { lookup }));
    expect(lookup.calls).toEqual(['anything.invalid']);
  });

  it('strips the fragment', async () => {
    const url = await checkWebhookUrl('http://localhost/x?y=1#frag', 'test');
    expect(url.href).toBe('http://localhost/x?y=1');
  });

  it.each([
    ['ftp://example.com/', /http or https/],
    ['file:///etc/passwd', /http or https/],
    ['javascript:alert(1)', /http or https/],
    ['not a url', /valid absolute URL/],
    ['/relative/path', /valid absolute URL/],
    ['', /non-empty/],
    ['http://user:pass@localhost/', /credentials/],
    ['http://user@localhost/', /credentials/],
  ])('refuses %s', async (raw, reason) => {
    const refused = await refusal(checkWebhookUrl(raw, 'test'));
    expect(refused.message).toMatch(reason);
  });
});

describe('checkWebhookUrl, live mode', () => {
  it('accepts a name that resolves only to public addresses', async () => {
    const url = await checkWebhookUrl('https://hooks.example.com/spendgate', 'live', {
      lookup: PUBLIC,
    });
    expect(url.hostname).toBe('hooks.example.com');
    expect(PUBLIC.calls).toContain('hooks.example.com');
  });

  it('accepts a public IP literal without resolving it', async () => {
    const lookup = table({});
    await checkWebhookUrl('https://93.184.216.34/x', 'live', { lookup });
    await checkWebhookUrl('https://[2606:4700:4700::1111]/x', 'live', { lookup });
    expect(lookup.calls).toEqual([]);
  });

  it.each([
    ['http://hooks.example.com/', /https in live mode/],
    ['http://127.0.0.1:4567/x', /https in live mode/],
    ['https://127.0.0.1/', /loopback, private/],
    ['https://127.1/', /loopback, private/],
    ['https://0x7f000001/', /loopback, private/],
    ['https://2130706433/', /loopback, private/],
    ['https://0/', /loopback, private/],
    ['https://localhost/', /loopback, private/],
    ['https://LOCALHOST./', /loopback, private/],
    ['https://api.localhost/', /loopback, private/],
    ['https://[::1]/', /loopback, private/],
    ['https://[::ffff:127.0.0.1]/', /loopback, private/],
    ['https://[fd00:ec2::254]/', /loopback, private/],
    ['https://169.254.169.254/latest/meta-data/', /loopback, private/],
    ['https://10.1.2.3/', /loopback, private/],
    ['https://192.168.0.1/', /loopback, private/],
    ['https://mixed.example.com/', /resolves to a loopback, private/],
    ['https://mapped.example.com/', /resolves to a loopback, private/],
    ['https://metadata.example.com/', /resolves to a loopback, private/],
    ['https://empty.example.com/', /does not resolve/],
    ['https://unknown.example.com/', /does not resolve/],
    ['https://user:pass@hooks.example.com/', /credentials/],
    ['ftp://hooks.example.com/', /http or https/],
  ])('refuses %s', async (raw, reason) => {
    const refused = await refusal(checkWebhookUrl(raw, 'live', { lookup: PUBLIC }));
    expect(refused.message).toMatch(reason);
  });

  it('refuses an over-long URL and does not echo it', async () => {
    const raw = `https://hooks.example.com/${'a'.repeat(2_100)}`;
    const refused = await refusal(checkWebhookUrl(raw, 'live', { lookup: PUBLIC }));
    expect(refused.message).toMatch(/at most 2048 characters/);
    expect(refused.message.length).toBeLessThan(200);
  });

  it('accepts a URL of exactly 2,048 characters', async () => {
    const prefix = 'https://hooks.example.com/';
    const raw = prefix + 'a'.repeat(2_048 - prefix.length);
    expect(raw.length).toBe(2_048);
    await checkWebhookUrl(raw, 'live', { lookup: PUBLIC });
  });

  it('never echoes credentials, and echoes at most ~100 characters of a host', async () => {
    const secret = await refusal(
      checkWebhookUrl('https://alice:s3cret@hooks.example.com/', 'live'),
    );
    expect(secret.message).not.toContain('s3cret');
    const host = `${'a'.repeat(60)}.${'b'.repeat(60)}.${'c'.repeat(60)}.localhost`;
    const long = await refusal(checkWebhookUrl(`https://${host}/`, 'live'));
    expect(long.message.length).toBeLessThan(250);
  });

  it('refuses a name whose resolver does not answer in time', async () => {
    const never: LookupFn = () => new Promise(() => undefined);
    const started = Date.now();
    const refused = await refusal(
      checkWebhookUrl('https://slow.example.com/', 'live', { lookup: never, lookupTimeoutMs: 50 }),
    );
    expect(refused.message).toMatch(/did not resolve within 50 ms/);
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it('uses the system resolver by default (localhost is refused before it)', async () => {
    await refusal(checkWebhookUrl('https://localhost:8443/', 'live'));
  });
});
