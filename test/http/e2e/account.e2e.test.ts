import { generateSync } from 'otplib';
import createClient from 'openapi-fetch';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { paths } from '../../../src/client/api-types.js';
import { dataOf, refusalOf, typedClient } from '../../support/client.js';
import { startTestService, type TestService, useTestService } from '../../support/http.js';
import { TestClock } from '../../support/store.js';

/**
 * The account operations end to end through the typed client, over loopback HTTP: Account
 * (the caller's account in the key's mode, by any key), the two-factor enrolment of contract
 * section 2 with codes from a real TOTP generator on the service's test clock (begin, verify
 * to turn it on, turn it off with a fresh code; a code is good once, and every refusal is
 * answered: two_factor_required, invalid_two_factor_code, parameter_invalid out of order), the
 * authentication refusals every operation can give (missing, invalid, expired and revoked
 * keys), and Rate Limits (section 6): the body agrees with the RateLimit-* headers, each kind
 * of key gets its own limit, and a burst past it is refused with 429, Retry-After and the
 * contract's error body, counted in the real Redis.
 */
describe('account, two-factor and authentication over the typed client', () => {
  const clock = new TestClock();
  // Keys looked up on every request, so a revocation shows at once (the cache: auth.test.ts).
  const harness = useTestService({ clock: clock.now, apiKeyCacheMs: 0 });

  const named = () => `acme-${Math.random().toString(16).slice(2, 10)}`;
  /** A new account of that name, with a typed client for a key of it. */
  const account = async (name = named(), mode: 'test' | 'live' = 'test') => {
    const { key, scope } = await harness.service.key({ account: name, mode });
    return { client: typedClient(harness.service.base, key), scope, name };
  };
  const codeAt = (secret: string, ms: number) =>
    generateSync({ secret, epoch: Math.floor(ms / 1000) });

  describe('Account', () => {
    it('answers the caller’s account in the key’s mode, to a key of any scope', async () => {
      const { client, scope, name } = await account();
      const answer = await client.GET('/v1/account');
      expect(answer.response.status).toBe(200);
      expect(dataOf(answer)).toEqual({
        id: scope.accountId,
        object: 'account',
        name,
        mode: 'test',
        twoFactorEnabled: false,
      });
      expect(scope.accountId).toMatch(/^acct_[0-9a-f]{32}$/);
      const live = await account(name, 'live');
      expect(dataOf(await live.client.GET('/v1/account'))).toEqual({
        id: scope.accountId,
        object: 'account',
        name,
        mode: 'live',
        twoFactorEnabled: false,
      });
      const narrow = await harness.service.key({ account: name, scopes: ['cards:read'] });
      expect(
        dataOf(await typedClient(harness.service.base, narrow.key).GET('/v1/account')).id,
      ).toBe(scope.accountId);
    });

    it('refuses a missing, unknown, expired or revoked key with authentication_error', async () => {
      const { scope } = await account();
      const anonymous = createClient<paths>({ baseUrl: harness.service.base });
      expect(refusalOf(await anonymous.GET('/v1/account'))).toEqual({
        status: 401,
        type: 'authentication_error',
        code: 'missing_api_key',
        param: undefined,
      });
      const unknown = typedClient(harness.service.base, `sk_test_${'x'.repeat(43)}`);
      expect(refusalOf(await unknown.GET('/v1/account'))).toMatchObject({
        status: 401,
        type: 'authentication_error',
        code: 'invalid_api_key',
      });
      const expired = await harness.service.store.createApiKey({
        accountId: scope.accountId,
        mode: 'test',
        scopes: [],
        expiresAtMs: clock.nowMs + 1000,
      });
      const expiring = typedClient(harness.service.base, expired.key);
      expect(dataOf(await expiring.GET('/v1/account')).id).toBe(scope.accountId);
      clock.advance(1000);
      expect(refusalOf(await expiring.GET('/v1/account'))).toMatchObject({
        status: 401,
        type: 'authentication_error',
        code: 'expired_api_key',
      });
      const revoked = await harness.service.store.createApiKey({
        accountId: scope.accountId,
        mode: 'test',
        scopes: [],
      });
      const revokedClient = typedClient(harness.service.base, revoked.key);
      expect(dataOf(await revokedClient.GET('/v1/rate-limits')).object).toBe('rate_limit');
      expect(await harness.service.store.revokeApiKey(revoked.record.id)).toBe(true);
      expect(refusalOf(await revokedClient.GET('/v1/rate-limits'))).toMatchObject({
        status: 401,
        code: 'invalid_api_key',
      });
    });
  });

  describe('two-factor authentication (contract section 2)', () => {
    it('enrols, turns on with a current code, refuses a reused one, and turns off with a fresh one', async () => {
      const { client, name } = await account();
      const begun = await client.POST('/v1/account/two-factor');
      expect(begun.response.status).toBe(200);
      expect(begun.response.headers.get('cache-control')).toBe('no-store');
      const enrolment = dataOf(begun);
      expect(enrolment.object).toBe('two_factor_enrolment');
      expect(enrolment.secret).toMatch(/^[A-Z2-7]{16,}$/);
      const uri = new URL(enrolment.otpauthUri);
      expect([uri.protocol, uri.host]).toEqual(['otpauth:', 'totp']);
      expect(decodeURIComponent(uri.pathname)).toContain(name);
      expect(uri.searchParams.get('secret')).toBe(enrolment.secret);
      expect(uri.searchParams.get('issuer')).toBe('spendgate');
      // Begun is not on: on only after a code is verified.
      expect(dataOf(await client.GET('/v1/account')).twoFactorEnabled).toBe(false);

      const code = codeAt(enrolment.secret, clock.nowMs);
      const wrong = code === '000000' ? '111111' : '000000';
      for (const attempt of [wrong, 'abcdef', codeAt(enrolment.secret, clock.nowMs + 60_000)]) {
        expect(
          refusalOf(
            await client.POST('/v1/account/two-factor/verify', { body: { code: attempt } }),
          ),
        ).toEqual({
          status: 403,
          type: 'permission_error',
          code: 'invalid_two_factor_code',
          param: undefined,
        });
      }
      const on = await client.POST('/v1/account/two-factor/verify', { body: { code } });
      expect(on.response.status).toBe(200);
      expect(dataOf(on)).toMatchObject({ object: 'account', name, twoFactorEnabled: true });
      expect(dataOf(await client.GET('/v1/account')).twoFactorEnabled).toBe(true);

      // On: a new enrolment is refused until it is turned off.
      expect(refusalOf(await client.POST('/v1/account/two-factor'))).toMatchObject({
        status: 400,
        code: 'parameter_invalid',
      });
      expect(refusalOf(await client.DELETE('/v1/account/two-factor'))).toMatchObject({
        status: 403,
        type: 'permission_error',
        code: 'two_factor_required',
      });
      for (const reused of [code, wrong]) {
        expect(
          refusalOf(
            await client.DELETE('/v1/account/two-factor', {
              headers: { 'X-Two-Factor-Code': reused },
            }),
          ),
        ).toMatchObject({ status: 403, code: 'invalid_two_factor_code' });
      }
      expect(dataOf(await client.GET('/v1/account')).twoFactorEnabled).toBe(true);

      // Five wrong codes so far: every check is locked for 15 minutes from the first (v1.1).
      expect(
        refusalOf(
          await client.DELETE('/v1/account/two-factor', {
            headers: { 'X-Two-Factor-Code': codeAt(enrolment.secret, clock.nowMs + 30_000) },
          }),
        ),
      ).toMatchObject({ status: 429, code: 'rate_limit_exceeded' });
      clock.advance(15 * 60_000);
      const off = await client.DELETE('/v1/account/two-factor', {
        headers: { 'X-Two-Factor-Code': codeAt(enrolment.secret, clock.nowMs) },
      });
      expect(off.response.status).toBe(200);
      expect(dataOf(off)).toMatchObject({ object: 'account', twoFactorEnabled: false });
      expect(refusalOf(await client.DELETE('/v1/account/two-factor'))).toMatchObject({
        status: 400,
        code: 'parameter_invalid',
      });
    });

    it('refuses a code before any enrolment, and keeps two-factor per account across modes', async () => {
      const { client, name } = await account();
      expect(
        refusalOf(await client.POST('/v1/account/two-factor/verify', { body: { code: '123456' } })),
      ).toMatchObject({ status: 403, code: 'invalid_two_factor_code' });
      const { secret } = dataOf(await client.POST('/v1/account/two-factor'));
      dataOf(
        await client.POST('/v1/account/two-factor/verify', {
          body: { code: codeAt(secret, clock.nowMs) },
        }),
      );
      const live = await account(name, 'live');
      expect(dataOf(await live.client.GET('/v1/account')).twoFactorEnabled).toBe(true);
      const other = await account();
      expect(dataOf(await other.client.GET('/v1/account')).twoFactorEnabled).toBe(false);
    });

    it('answers a new secret on each enrolment, and only the latest one’s codes turn it on', async () => {
      const { client } = await account();
      const first = dataOf(await client.POST('/v1/account/two-factor')).secret;
      const second = dataOf(await client.POST('/v1/account/two-factor')).secret;
      expect(second).not.toBe(first);
      const stale = codeAt(first, clock.nowMs);
      const fresh = codeAt(second, clock.nowMs);
      if (stale !== fresh) {
        expect(
          refusalOf(await client.POST('/v1/account/two-factor/verify', { body: { code: stale } })),
        ).toMatchObject({ status: 403, code: 'invalid_two_factor_code' });
      }
      expect(
        dataOf(await client.POST('/v1/account/two-factor/verify', { body: { code: fresh } }))
          .twoFactorEnabled,
      ).toBe(true);
    });
  });

  describe('Rate Limits (contract section 6), unthrottled harness', () => {
    it('answers the key’s window, agreeing with the RateLimit-* headers of the same response', async () => {
      const { client } = await account();
      const answer = await client.GET('/v1/rate-limits');
      expect(answer.response.status).toBe(200);
      const state = dataOf(answer);
      expect(state).toMatchObject({ object: 'rate_limit', windowSeconds: 1 });
      expect(answer.response.headers.get('ratelimit-limit')).toBe(String(state.limit));
      expect(answer.response.headers.get('ratelimit-remaining')).toBe(String(state.remaining));
      expect(state.remaining).toBeLessThan(state.limit);
      const reset = Number(answer.response.headers.get('ratelimit-reset'));
      expect(reset >= 0 && reset <= state.windowSeconds).toBe(true);
      const resetAt = Date.parse(state.resetAt);
      expect(new Date(resetAt).toISOString()).toBe(state.resetAt);
      expect(resetAt - Date.now()).toBeLessThanOrEqual(state.windowSeconds * 1000);
    });
  });
});

describe('rate limits over the typed client, with small limits', () => {
  const LIMITS = { livePerSecond: 4, testPerSecond: 3, authorizationsPerSecond: 50 };
  let service: TestService;

  beforeAll(async () => {
    service = await startTestService({ rateLimits: LIMITS });
  });
  afterAll(async () => {
    await service.close();
  });

  it('gives each kind of key its own limit', async () => {
    const test = await service.key();
    const live = await service.key({ mode: 'live' });
    const network = await service.key({ scopes: ['authorizations:write'] });
    const limitOf = async (key: string) =>
      dataOf(await typedClient(service.base, key).GET('/v1/rate-limits')).limit;
    // The card network's key has its own limit on its callbacks alone (v1.1): elsewhere, its
    // mode's.
    expect([await limitOf(test.key), await limitOf(live.key), await limitOf(network.key)]).toEqual([
      LIMITS.testPerSecond,
      LIMITS.livePerSecond,
      LIMITS.testPerSecond,
    ]);
    const callback = await typedClient(service.base, network.key).POST('/v1/authorizations', {
      body: {
        cardId: `card_${'0'.repeat(32)}`,
        amount: '1',
        currency: 'USDC',
        merchant: { name: 'Shop', mcc: '5411', country: 'US' },
        networkTransactionId: 'ntx_e2e_limit',
      },
    });
    expect(callback.response.headers.get('ratelimit-limit')).toBe(
      String(LIMITS.authorizationsPerSecond),
    );
  });

  it('refuses a burst past the limit with 429 rate_limit_exceeded and Retry-After', async () => {
    const { key } = await service.key();
    const client = typedClient(service.base, key);
    const burst = 12;
    const answers = await Promise.all(
      Array.from({ length: burst }, () => client.GET('/v1/account')),
    );
    const served = answers.filter((answer) => answer.response.status === 200);
    const refused = answers.filter((answer) => answer.response.status === 429);
    // One window admits 3; a burst straddling two windows at most 6.
    expect(served.length).toBeGreaterThanOrEqual(1);
    expect(served.length).toBeLessThanOrEqual(2 * LIMITS.testPerSecond);
    expect(served.length + refused.length).toBe(burst);
    for (const answer of refused) {
      expect(refusalOf(answer)).toEqual({
        status: 429,
        type: 'rate_limit_error',
        code: 'rate_limit_exceeded',
        param: undefined,
      });
      expect(Number(answer.response.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect(answer.response.headers.get('ratelimit-remaining')).toBe('0');
      expect(answer.response.headers.get('ratelimit-limit')).toBe(String(LIMITS.testPerSecond));
    }
  });
});
