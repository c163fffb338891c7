import { generateSync } from 'otplib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/http.js';
import { TestClock } from '../support/store.js';

/**
 * Hosted card display (issue 18) over real HTTP on PostgreSQL: the display token (scope,
 * second factor, bound to its card, account and mode, once, 60 seconds), the page it opens
 * (headers, CSP, style parameters checked before the token is spent) and the origins that may
 * frame it; and, over the whole run, a log that holds no card number, CVV or token.
 * The page in a browser: card-display.browser.test.ts.
 */
interface Json {
  id: string;
  object: string;
  token: string;
  url: string;
  cardId: string;
  expiresAt: string;
  origins: string[];
  number: string;
  cvv: string;
  expMonth: number;
  expYear: number;
  last4: string;
  secret: string;
  error?: { code: string; param?: string };
}

interface Page {
  status: number;
  headers: Headers;
  html: string;
}

describe('card display', () => {
  const clock = new TestClock();
  const lines: string[] = [];
  /** Every number, CVV and token the run handled: none may be in the log. */
  const secrets: string[] = [];
  let service: TestService;
  let key: string;

  const call = async (method: string, path: string, body?: unknown, as = key, headers = {}) => {
    const answer = await service.request(as, method, path, body, headers);
    return { ...answer, body: answer.body as Json };
  };
  const page = async (path: string, method = 'GET'): Promise<Page> => {
    const response = await fetch(`${service.base}${path}`, { method });
    return { status: response.status, headers: response.headers, html: await response.text() };
  };
  /** A new card of `as`'s account, with its details (revealed, to compare with the page). */
  const newCard = async (as = key) => {
    const vault = await call(
      'POST',
      '/v1/vaults',
      { name: 'D', currency: 'USDC', network: 'solana', initialDeposit: '5' },
      as,
    );
    const card = await call(
      'POST',
      '/v1/cards',
      { vaultId: vault.body.id, cardholderName: 'Ada' },
      as,
    );
    const details = (await call('POST', `/v1/cards/${card.body.id}/reveal`, undefined, as)).body;
    secrets.push(
      details.number,
      details.number.replace(/(\d{4})(?=\d)/g, '$1 '),
      `"${details.cvv}"`,
    );
    return { ...details, id: card.body.id };
  };
  const newToken = async (cardId: string, as = key) => {
    const answer = await call('POST', `/v1/cards/${cardId}/display-token`, undefined, as);
    expect(answer.status, JSON.stringify(answer.body.error)).toBe(201);
    secrets.push(answer.body.token);
    return answer.body;
  };

  beforeAll(async () => {
    service = await startTestService({
      clock: clock.now,
      log: { level: 'trace', stream: { write: (line) => lines.push(line) } },
    });
    ({ key } = await service.key());
  });

  afterAll(async () => {
    await service.close();
  });

  it('makes a single-use token of 60 seconds, answered once and never cached', async () => {
    const card = await newCard();
    const created = await call('POST', `/v1/cards/${card.id}/display-token`);
    expect(created.status).toBe(201);
    expect(created.headers.get('cache-control')).toBe('no-store');
    expect(created.body).toMatchObject({ object: 'card_display_token', cardId: card.id });
    expect(created.body.token).toMatch(/^cdt_[A-Za-z0-9_-]{43}$/);
    expect(created.body.url).toBe(`/card-display?token=${created.body.token}`);
    expect(Date.parse(created.body.expiresAt) - clock.nowMs).toBe(60_000);
    secrets.push(created.body.token);
    // Only the hash is stored: no column of the table holds the token.
    const { rows } = await service.store.client.query('SELECT * FROM card_display_tokens');
    expect(rows.length).toBeGreaterThan(0);
    expect(JSON.stringify(rows)).not.toContain(created.body.token.slice(4));
  });

  it('shows the number, expiry and CVV once, with no-store, a strict CSP and no asset', async () => {
    const card = await newCard();
    const { url } = await newToken(card.id);
    const shown = await page(url);
    expect(shown.status).toBe(200);
    expect(shown.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(shown.headers.get('cache-control')).toBe('no-store');
    expect(shown.headers.get('referrer-policy')).toBe('no-referrer');
    expect(shown.html).toContain(card.number.replace(/(\d{4})(?=\d)/g, '$1 '));
    expect(shown.html).toContain(`data-copy="${card.number}"`);
    expect(shown.html).toContain(`>${card.cvv}<`);
    const expiry = `${String(card.expMonth).padStart(2, '0')}/${String(card.expYear % 100)}`;
    expect(shown.html).toContain(`>${expiry}<`);
    const csp = shown.headers.get('content-security-policy') ?? '';
    const nonce = /style-src 'nonce-([A-Za-z0-9+/=]+)'/.exec(csp)?.[1] ?? 'none';
    expect(csp).toBe(
      `default-src 'none'; style-src 'nonce-${nonce}'; script-src 'nonce-${nonce}'; ` +
        "base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
    );
    expect(shown.html).toContain(`<style nonce="${nonce}">`);
    expect(shown.html).toContain(`<script nonce="${nonce}">`);
    // Nothing loaded from elsewhere: no link, image, frame or script source.
    expect(shown.html).not.toMatch(/<(link|img|iframe|object)\b|\ssrc=|url\(|@import/i);

    const again = await page(url);
    expect(again.status).toBe(404);
    expect(again.html).toContain('expired or was already used');
    expect(again.html).not.toContain(card.number.slice(-4));
    expect(again.headers.get('cache-control')).toBe('no-store');
  });

  it('shows nothing after 60 seconds, and a HEAD request spends no token', async () => {
    const card = await newCard();
    const headed = await newToken(card.id);
    expect((await page(headed.url, 'HEAD')).status).toBe(404);
    clock.advance(59_999);
    const expiring = await newToken(card.id);
    // One millisecond before its expiry, the token HEAD met still shows the card.
    expect((await page(headed.url)).status).toBe(200);
    clock.advance(60_000);
    const expired = await page(expiring.url);
    expect([expired.status, expired.html.includes(card.number)]).toEqual([404, false]);
  });

  it('of two loads at once, shows the card to exactly one', async () => {
    const card = await newCard();
    const { url } = await newToken(card.id);
    const loads = await Promise.all(Array.from({ length: 6 }, () => page(url)));
    expect(loads.map((load) => load.status).sort()).toEqual([200, 404, 404, 404, 404, 404]);
    expect(loads.filter((load) => load.html.includes(`data-copy="${card.number}"`))).toHaveLength(
      1,
    );
  });

  it('binds the token to its card, account and mode', async () => {
    const first = await newCard();
    const second = await newCard();
    const shown = await page((await newToken(first.id)).url);
    expect(shown.html).toContain(`data-copy="${first.number}"`);
    expect(shown.html).not.toContain(second.number);
    // Another account, and the owner's other mode, cannot make a token of the card.
    const account = (await service.store.getAccount((await service.key()).scope.accountId))?.name;
    const stranger = await service.key();
    const live = await service.key({ mode: 'live', account: account ?? '' });
    for (const as of [stranger.key, live.key]) {
      const refused = await call('POST', `/v1/cards/${first.id}/display-token`, undefined, as);
      expect([refused.status, refused.body.error?.code]).toEqual([404, 'card_not_found']);
    }
    const cancelled = await newCard();
    const token = await newToken(cancelled.id);
    await call('POST', `/v1/cards/${cancelled.id}/cancel`);
    const gone = await page(token.url);
    expect([gone.status, gone.html.includes(cancelled.number)]).toEqual([409, false]);
    const refused = await call('POST', `/v1/cards/${cancelled.id}/display-token`);
    expect([refused.status, refused.body.error?.code]).toEqual([409, 'card_cancelled']);
  });

  it('needs cards:reveal and, with two-factor on, a fresh code, as Reveal does', async () => {
    const own = await service.key();
    const card = await newCard(own.key);
    const name = (await service.store.getAccount(own.scope.accountId))?.name ?? '';
    const reader = await service.key({ account: name, scopes: ['cards:read', 'cards:write'] });
    const path = `/v1/cards/${card.id}/display-token`;
    const noScope = await call('POST', path, undefined, reader.key);
    expect([noScope.status, noScope.body.error?.code]).toEqual([403, 'insufficient_scope']);
    const { secret } = (await call('POST', '/v1/account/two-factor', undefined, own.key)).body;
    const codeAt = () => generateSync({ secret, epoch: Math.floor(clock.nowMs / 1000) });
    const enable = await call('POST', '/v1/account/two-factor/verify', { code: codeAt() }, own.key);
    expect(enable.status).toBe(200);
    const missing = await call('POST', path, undefined, own.key);
    expect([missing.status, missing.body.error?.code]).toEqual([403, 'two_factor_required']);
    const wrong = await call('POST', path, undefined, own.key, { 'x-two-factor-code': '000000' });
    expect([wrong.status, wrong.body.error?.code]).toEqual([403, 'invalid_two_factor_code']);
    clock.advance(30_000);
    const code = codeAt();
    const right = await call('POST', path, undefined, own.key, { 'x-two-factor-code': code });
    expect(right.status).toBe(201);
    secrets.push(right.body.token);
    const reused = await call('POST', path, undefined, own.key, { 'x-two-factor-code': code });
    expect([reused.status, reused.body.error?.code]).toEqual([403, 'invalid_two_factor_code']);
  });

  it('takes a style from the list, and refuses any other before spending the token', async () => {
    const card = await newCard();
    const { url } = await newToken(card.id);
    const refused = [
      'font=comic-sans',
      'color=red',
      'background=%23fff',
      'accent=%23123456%3C%2Fstyle%3E%3Cscript%3Ealert(1)%3C%2Fscript%3E',
      'font=system&font=serif',
      'size=33px',
      'font=%3Cb%3Ebold%3C%2Fb%3E',
    ];
    for (const query of refused) {
      const answer = await page(`${url}&${query}`);
      expect([query, answer.status]).toEqual([query, 400]);
      expect(answer.html).not.toMatch(/<script>|alert\(|comic-sans|<b>|33px/);
      expect(answer.html).not.toContain(card.number);
    }
    const styled = await page(
      `${url}&font=georgia&color=%23102030&background=%23FAFAFA&accent=%23aa0000`,
    );
    expect(styled.status).toBe(200);
    expect(styled.html).toContain('font-family: Georgia, serif;');
    expect(styled.html).toContain('color: #102030;');
    expect(styled.html).toContain('background: #fafafa;');
    expect(styled.html).toContain('background: #aa0000;');
    const noToken = await page('/card-display');
    expect([noToken.status, noToken.html.includes('needs one token')]).toEqual([400, true]);
    expect((await page('/card-display?token=cdt_nope')).status).toBe(404);
  });

  it('registers the origins that may frame the page, checked, and the CSP lists them alone', async () => {
    const own = await service.key();
    const origins = async (body: unknown, as = own.key) =>
      call('PUT', '/v1/account/display-origins', body, as);
    expect((await call('GET', '/v1/account/display-origins', undefined, own.key)).body).toEqual({
      object: 'card_display_origins',
      origins: [],
    });
    const set = await origins({
      origins: ['https://App.Example.com/', 'http://localhost:5173', 'https://app.example.com'],
    });
    expect([set.status, set.body.origins]).toEqual([
      200,
      ['https://app.example.com', 'http://localhost:5173'],
    ]);
    const card = await newCard(own.key);
    const shown = await page((await newToken(card.id, own.key)).url);
    expect(shown.headers.get('content-security-policy')).toMatch(
      /; frame-ancestors https:\/\/app\.example\.com http:\/\/localhost:5173$/,
    );
    const bad = [
      'http://app.example.com',
      'https://app.example.com/path',
      'https://*.example.com',
      'https://user:pw@app.example.com',
      "https://app.example.com 'unsafe-inline'",
      'https://app.example.com?x=1',
      'javascript:alert(1)',
      '*',
    ];
    for (const origin of bad) {
      const answer = await origins({ origins: ['https://ok.example.com', origin] });
      expect([origin, answer.status, answer.body.error?.code, answer.body.error?.param]).toEqual([
        origin,
        400,
        'parameter_invalid',
        'origins[1]',
      ]);
    }
    const tooMany = Array.from({ length: 21 }, (_, index) => `https://a${index}.example.com`);
    expect((await origins({ origins: tooMany })).status).toBe(400);
    // Live mode: https only, loopback http refused.
    const name = (await service.store.getAccount(own.scope.accountId))?.name ?? '';
    const live = await service.key({ mode: 'live', account: name });
    const loopback = await origins({ origins: ['http://127.0.0.1:8080'] }, live.key);
    expect([loopback.status, loopback.body.error?.param]).toEqual([400, 'origins[0]']);
    expect((await origins({ origins: ['https://pay.example.com'] }, live.key)).status).toBe(200);
    // Each mode keeps its own list; an empty list frames nowhere.
    expect(
      (await call('GET', '/v1/account/display-origins', undefined, own.key)).body.origins,
    ).toEqual(['https://app.example.com', 'http://localhost:5173']);
    expect((await origins({ origins: [] })).body.origins).toEqual([]);
    const none = await page((await newToken(card.id, own.key)).url);
    expect(none.headers.get('content-security-policy')).toMatch(/; frame-ancestors 'none'$/);
  });

  it('purges tokens past their expiry in the maintenance run, spent or not', async () => {
    const card = await newCard();
    await newToken(card.id);
    await page((await newToken(card.id)).url);
    const count = async () =>
      Number(
        (
          await service.store.client.query<{ n: string }>(
            'SELECT count(*)::text AS n FROM card_display_tokens WHERE card_id = $1',
            [card.id],
          )
        ).rows[0]?.n,
      );
    expect(await count()).toBe(2);
    expect(await service.store.purgeDisplayTokens(10_000)).toBeGreaterThanOrEqual(0);
    expect(await count()).toBe(2);
    clock.advance(60_000);
    expect(await service.store.purgeDisplayTokens(10_000)).toBeGreaterThanOrEqual(2);
    const { rows } = await service.store.client.query('SELECT 1 FROM card_display_tokens');
    expect(rows).toEqual([]);
  });

  it('never logs a card number, CVV or token (the whole run, at trace level)', () => {
    const log = lines.join('');
    expect(
      lines.filter((line) => line.includes('"/card-display?token=[redacted]')).length,
    ).toBeGreaterThan(5);
    expect(secrets.length).toBeGreaterThan(20);
    for (const secret of secrets)
      expect(log.includes(secret), `the log holds ${secret.slice(0, 6)}...`).toBe(false);
  });
});
