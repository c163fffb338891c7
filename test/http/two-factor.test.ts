import { generateSync } from 'otplib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/http.js';
import { TestClock } from '../support/store.js';

/** Two-factor enrolment over real HTTP, with codes from a real TOTP generator (contract section 2). */
interface Json {
  secret: string;
  otpauthUri: string;
  twoFactorEnabled: boolean;
  error?: { code: string };
}

describe('two-factor authentication', () => {
  const clock = new TestClock();
  let service: TestService;
  let key: string;

  beforeAll(async () => {
    service = await startTestService({ clock: clock.now });
    ({ key } = await service.key({ account: 'twofa' }));
  });

  afterAll(async () => {
    await service.close();
  });

  const call = async (
    method: string,
    path: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ) => {
    const answer = await service.request(key, method, path, body, headers);
    return { ...answer, body: answer.body as Json };
  };
  const codeAt = (secret: string, ms: number) =>
    generateSync({ secret, epoch: Math.floor(ms / 1000) });

  it('enrols, turns on with a code, refuses a wrong or reused code, and turns off with a fresh one', async () => {
    const begun = await call('POST', '/v1/account/two-factor');
    expect(begun.status).toBe(200);
    expect(begun.headers.get('cache-control')).toBe('no-store');
    expect(begun.body.otpauthUri).toMatch(/^otpauth:\/\/totp\/.*secret=/);
    const secret = begun.body.secret;
    expect(
      (await call('POST', '/v1/account/two-factor/verify', { code: '000000' })).body.error?.code,
    ).toBe('invalid_two_factor_code');
    const code = codeAt(secret, clock.nowMs);
    const on = await call('POST', '/v1/account/two-factor/verify', { code });
    expect([on.status, on.body.twoFactorEnabled]).toEqual([200, true]);
    expect((await call('GET', '/v1/account')).body.twoFactorEnabled).toBe(true);
    // The same code again: refused, although it is still within its 30 seconds.
    const reused = await call('DELETE', '/v1/account/two-factor', undefined, {
      'x-two-factor-code': code,
    });
    expect([reused.status, reused.body.error?.code]).toEqual([403, 'invalid_two_factor_code']);
    expect((await call('DELETE', '/v1/account/two-factor')).body.error?.code).toBe(
      'two_factor_required',
    );
    expect((await call('POST', '/v1/account/two-factor')).status).toBe(400);
    clock.advance(30_000);
    const off = await call('DELETE', '/v1/account/two-factor', undefined, {
      'x-two-factor-code': codeAt(secret, clock.nowMs),
    });
    expect([off.status, off.body.twoFactorEnabled]).toEqual([200, false]);
  });

  it('accepts a code of the step just past, and refuses one from the future', async () => {
    const secret = (await call('POST', '/v1/account/two-factor')).body.secret;
    const future = codeAt(secret, clock.nowMs + 60_000);
    expect(
      (await call('POST', '/v1/account/two-factor/verify', { code: future })).body.error?.code,
    ).toBe('invalid_two_factor_code');
    const justPast = codeAt(secret, clock.nowMs - 30_000);
    expect(
      (await call('POST', '/v1/account/two-factor/verify', { code: justPast })).body
        .twoFactorEnabled,
    ).toBe(true);
  });

  it('keeps the secret encrypted at rest', async () => {
    const { rows } = await service.store.client.query<{ two_factor_secret_enc: string }>(
      "SELECT two_factor_secret_enc FROM accounts WHERE name = 'twofa'",
    );
    expect(rows[0]?.two_factor_secret_enc).toMatch(/^v1\./);
  });
});
