import { randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import jsQRModule from 'jsqr';
import { generateSync } from 'otplib';
import QRCode from 'qrcode';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer } from '../../src/http/server.js';
import { openStore, type OpenedStore as Store } from '../../src/store/store.js';
import { forEachDatabase, testDatabase } from '../support/databases.js';
import { startTestService, testServerConfig, type TestService } from '../support/http.js';
import { TestClock, useTestStore } from '../support/store.js';

// jsqr's types declare an ES default export; its CommonJS build exports the function itself,
// which is what Node's default import of it gives.
const jsQR = jsQRModule as unknown as typeof jsQRModule.default;

/** Two-factor enrolment over real HTTP, with codes from a real TOTP generator (contract section 2). */
interface Json {
  secret: string;
  otpauthUri: string;
  qrCodeSvg?: string;
  twoFactorEnabled: boolean;
  error?: { code: string; message: string };
}

/**
 * The dark modules of an SVG QR code, read from its drawing, after checking that the document
 * is nothing but an <svg> root of two paths: a white square, and the dark modules drawn as
 * horizontal strokes one module high (M and m moves, h lines), the only commands it may use.
 */
function svgModules(svg: string): boolean[][] {
  const root =
    /^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg" viewBox="0 0 (\d+) (\d+)"[^<>]*>((?:<path [^<>]*\/>)*)<\/svg>\n?$/.exec(
      svg,
    );
  if (root === null) throw new Error(`not an SVG of paths: ${svg.slice(0, 120)}`);
  const size = Number(root[1]);
  expect(Number(root[2])).toBe(size);
  const paths = [...(root[3] ?? '').matchAll(/<path ([^<>]*)\/>/g)].map((path) => path[1] ?? '');
  expect(paths).toHaveLength(2);
  expect(paths[0]).toBe(`fill="#ffffff" d="M0 0h${size}v${size}H0z"`);
  const dark = /^stroke="#000000" d="([^"]*)"$/.exec(paths[1] ?? '');
  if (dark === null) throw new Error(`unexpected modules path: ${paths[1]?.slice(0, 120)}`);
  const modules = Array.from({ length: size }, () => new Array<boolean>(size).fill(false));
  let [x, y] = [0, 0];
  for (const [, command, args] of (dark[1] ?? '').matchAll(/([A-Za-z])([^A-Za-z]*)/g)) {
    const numbers = (args ?? '')
      .trim()
      .split(/[\s,]+/)
      .map(Number);
    if (command === 'M' || command === 'm') {
      const [dx = NaN, dy = NaN] = numbers;
      [x, y] = command === 'M' ? [dx, dy] : [x + dx, y + dy];
    } else if (command === 'h') {
      const [length = NaN] = numbers;
      // A stroke one module wide runs along the middle of its row.
      const row = modules[y - 0.5];
      if (row === undefined || !Number.isInteger(x) || !Number.isInteger(length)) {
        throw new Error(`a stroke off the module grid at ${x},${y}`);
      }
      for (let column = x; column < x + length; column++) row[column] = true;
      x += length;
    } else {
      throw new Error(`unexpected path command ${command}`);
    }
  }
  return modules;
}

/** The text a QR decoder (jsQR, not the library that drew it) reads from the modules. */
function decodeQr(modules: boolean[][], pixelsPerModule = 4): string | null {
  const width = modules.length * pixelsPerModule;
  const pixels = new Uint8ClampedArray(width * width * 4).fill(255);
  for (let py = 0; py < width; py++) {
    for (let px = 0; px < width; px++) {
      if (modules[Math.floor(py / pixelsPerModule)]?.[Math.floor(px / pixelsPerModule)]) {
        pixels.fill(0, (py * width + px) * 4, (py * width + px) * 4 + 3);
      }
    }
  }
  return jsQR(pixels, width, width)?.data ?? null;
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

  it('answers the otpauth URI as an SVG QR code that a decoder reads back exactly', async () => {
    const begun = await call('POST', '/v1/account/two-factor');
    expect(begun.status).toBe(200);
    const svg = begun.body.qrCodeSvg ?? '';
    // Shown in a page by clients: nothing in it may run or fetch.
    expect(svg).not.toMatch(/<script|<foreignObject|href|\bon[a-z]+=/i);
    const modules = svgModules(svg);
    // A quiet zone of 4 modules on every side, which scanners need.
    for (const row of [...modules.slice(0, 4), ...modules.slice(-4)]) {
      expect(row.some(Boolean)).toBe(false);
    }
    expect(
      modules.some((row) => row.slice(0, 4).some(Boolean) || row.slice(-4).some(Boolean)),
    ).toBe(false);
    expect(decodeQr(modules)).toBe(begun.body.otpauthUri);
    expect(begun.body.otpauthUri).toContain(`secret=${begun.body.secret}`);
    // The code it carries turns two-factor on, as an app that scanned it would.
    const scanned = new URL(decodeQr(modules) ?? '').searchParams.get('secret') ?? '';
    const on = await call('POST', '/v1/account/two-factor/verify', {
      code: codeAt(scanned, clock.nowMs),
    });
    expect([on.status, on.body.twoFactorEnabled]).toEqual([200, true]);
    // While it is on, a new enrolment is refused, with no code or secret in the refusal, and
    // the enrolled secret stays the one in use.
    const again = await call('POST', '/v1/account/two-factor');
    expect([again.status, again.body.error?.code, again.body.qrCodeSvg, again.body.secret]).toEqual(
      [400, 'parameter_invalid', undefined, undefined],
    );
    expect(again.body.error?.message).toMatch(/already on/);
    clock.advance(30_000);
    const off = await call('DELETE', '/v1/account/two-factor', undefined, {
      'x-two-factor-code': codeAt(scanned, clock.nowMs),
    });
    expect([off.status, off.body.twoFactorEnabled]).toEqual([200, false]);
  });

  it('reads what the QR library draws as that text and no other (the check above is not blind)', async () => {
    const drawn = async (text: string) =>
      svgModules(
        await QRCode.toString(text, { type: 'svg', errorCorrectionLevel: 'M', margin: 4 }),
      );
    const uri = 'otpauth://totp/spendgate:a?secret=JBSWY3DPEHPK3PXP&issuer=spendgate';
    const other = uri.replace('JBSW', 'JBSX');
    expect(decodeQr(await drawn(uri))).toBe(uri);
    expect(decodeQr(await drawn(other))).toBe(other);
    expect(decodeQr((await drawn(uri)).map((row) => row.map(() => false)))).toBeNull();
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

/**
 * Contract v1.1, section 2: each code is accepted once, and after 5 wrong
 * codes in 15 minutes an account's two-factor checks answer 429 with Retry-After until the
 * window passes. The count lives in the database: another server on the same database sees it,
 * and it is taken under the account's row lock, so a parallel burst cannot outrun it.
 */
describe('two-factor lockout', () => {
  const clock = new TestClock();
  const lines: string[] = [];
  const database = testDatabase('pg');
  /** Two servers, each with a store of its own on one database: two processes of one deployment. */
  let service: { base: string; app: FastifyInstance; store: Store };
  let other: { base: string; app: FastifyInstance; store: Store };
  let accounts = 0;

  beforeAll(async () => {
    const masterKey = randomBytes(32);
    const start = async (logStream?: { write(line: string): void }) => {
      const store = await openStore({
        client: await database.client(),
        masterKey,
        clock: clock.now,
      });
      const app = createServer(
        testServerConfig(logStream === undefined ? {} : { logLevel: 'info' }),
        { store, redis: null, ...(logStream === undefined ? {} : { logStream }) },
      );
      return { app, store, base: await app.listen({ port: 0, host: '127.0.0.1' }) };
    };
    service = await start({ write: (line) => lines.push(line) });
    other = await start();
  });

  afterAll(async () => {
    await other.app.close();
    await service.app.close();
    await database.close();
  });

  /** A new account and a key of all scopes. */
  const newKey = async (): Promise<{ key: string; accountId: string }> => {
    accounts += 1;
    const account = await service.store.findOrCreateAccount(`lockout-${accounts}`);
    const { key } = await service.store.createApiKey({
      accountId: account.id,
      mode: 'test',
      scopes: [],
    });
    return { key, accountId: account.id };
  };

  interface Answer {
    status: number;
    code: string | undefined;
    retryAfter: string | null;
    requestId: string | null;
  }
  const send = async (
    base: string,
    key: string,
    method: string,
    path: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ): Promise<Answer & { body: Json & { id?: string } }> => {
    const response = await fetch(`${base}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${key}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...headers,
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const json = (await response.json()) as Json & { id?: string; error?: { code: string } };
    return {
      status: response.status,
      code: json.error?.code,
      retryAfter: response.headers.get('retry-after'),
      requestId: response.headers.get('request-id'),
      body: json,
    };
  };
  const codeAt = (secret: string, ms: number) =>
    generateSync({ secret, epoch: Math.floor(ms / 1000) });
  /** A code of this secret that is not the current one, nor the one of the step before. */
  const wrongCode = (secret: string) => {
    const valid = new Set([codeAt(secret, clock.nowMs), codeAt(secret, clock.nowMs - 30_000)]);
    for (let candidate = 0; candidate < 10; candidate += 1) {
      const code = String(100_000 + candidate * 111_111).slice(0, 6);
      if (!valid.has(code)) return code;
    }
    throw new Error('no wrong code found');
  };

  /** An account with two-factor on and a card to reveal: its key, secret and card. */
  async function enrolled(): Promise<{ key: string; secret: string; card: string; id: string }> {
    const { key, accountId } = await newKey();
    const secret = (await send(service.base, key, 'POST', '/v1/account/two-factor')).body.secret;
    const on = await send(service.base, key, 'POST', '/v1/account/two-factor/verify', {
      code: codeAt(secret, clock.nowMs),
    });
    expect(on.status).toBe(200);
    // The next step, so that the enrolment's code is not the one the tests use.
    clock.advance(30_000);
    const vault = await send(service.base, key, 'POST', '/v1/vaults', {
      name: 'v',
      currency: 'USDC',
      network: 'solana',
    });
    const card = await send(service.base, key, 'POST', '/v1/cards', {
      vaultId: vault.body.id,
      cardholderName: 'Ada',
    });
    expect(card.status).toBe(201);
    return { key, secret, card: card.body.id ?? '', id: accountId };
  }

  it('accepts a code once on Reveal: the same code again is invalid_two_factor_code', async () => {
    const { key, secret, card } = await enrolled();
    const code = codeAt(secret, clock.nowMs);
    const reveal = () =>
      send(service.base, key, 'POST', `/v1/cards/${card}/reveal`, undefined, {
        'x-two-factor-code': code,
      });
    expect((await reveal()).status).toBe(200);
    expect(await reveal()).toMatchObject({ status: 403, code: 'invalid_two_factor_code' });
  });

  it('counts wrong codes on Reveal and the two-factor routes, across servers, and locks the checks for the rest of the window', async () => {
    const { key, secret, card, id } = await enrolled();
    const wrong = wrongCode(secret);
    const reveal = (base: string, code: string) =>
      send(base, key, 'POST', `/v1/cards/${card}/reveal`, undefined, { 'x-two-factor-code': code });
    const disable = (base: string, code: string) =>
      send(base, key, 'DELETE', '/v1/account/two-factor', undefined, { 'x-two-factor-code': code });
    const started = clock.nowMs;
    // Five wrong codes, spread over both servers, both routes and 10 minutes: each refused.
    const attempts = [
      () => reveal(service.base, wrong),
      () => disable(other.base, wrong),
      () => reveal(other.base, 'abcdef'),
      () => disable(service.base, wrong),
      () => reveal(service.base, wrong),
    ];
    for (const attempt of attempts) {
      expect(await attempt()).toMatchObject({ status: 403, code: 'invalid_two_factor_code' });
      clock.advance(150_000);
    }
    // The window began with the first wrong code: 15 minutes after it, the checks open again.
    const opensAtMs = started + 15 * 60_000;
    // Now even the right code is refused, on every check, on either server.
    for (const refused of [
      await reveal(service.base, codeAt(secret, clock.nowMs)),
      await disable(other.base, codeAt(secret, clock.nowMs)),
      await send(service.base, key, 'POST', `/v1/cards/${card}/reveal`),
    ]) {
      expect(refused).toMatchObject({ status: 429, code: 'rate_limit_exceeded' });
      expect(Number(refused.retryAfter)).toBe(Math.ceil((opensAtMs - clock.nowMs) / 1000));
      expect(refused.body.error).toMatchObject({ type: 'rate_limit_error' });
      expect(refused.requestId).toBe((refused.body.error as { requestId?: string }).requestId);
    }
    // The lockout was logged once, naming the account, never the code or the secret.
    const lockouts = lines.filter((line) => line.includes(id) && line.includes('locked'));
    expect(lockouts).toHaveLength(1);
    expect(JSON.parse(lockouts[0] ?? '{}')).toMatchObject({ level: 40, accountId: id });
    expect(lockouts[0]).not.toContain(wrong);
    for (const line of lines) {
      expect(line).not.toContain(secret);
      expect(line).not.toContain(`"${wrong}"`);
    }
    // A second before the window passes: still locked, and the code it refused is not spent.
    clock.nowMs = opensAtMs - 1000;
    expect(await reveal(service.base, codeAt(secret, clock.nowMs))).toMatchObject({
      status: 429,
    });
    clock.nowMs = opensAtMs + 1;
    expect((await reveal(other.base, codeAt(secret, clock.nowMs))).status).toBe(200);
  });

  it('counts a parallel burst of guesses exactly: five refused as wrong, the rest locked out', async () => {
    const { key, secret, card } = await enrolled();
    const wrong = wrongCode(secret);
    const answers = await Promise.all(
      Array.from({ length: 12 }, (_, index) =>
        send(
          index % 2 === 0 ? service.base : other.base,
          key,
          'POST',
          `/v1/cards/${card}/reveal`,
          undefined,
          { 'x-two-factor-code': wrong },
        ),
      ),
    );
    const codes = answers.map((answer) => answer.code).sort();
    expect(codes).toEqual([
      ...Array<string>(5).fill('invalid_two_factor_code'),
      ...Array<string>(7).fill('rate_limit_exceeded'),
    ]);
    const { rows } = await service.store.client.query<{ failures: number }>(
      'SELECT cardinality(two_factor_failed_at_ms) AS failures FROM accounts WHERE id = (SELECT account_id FROM cards WHERE id = $1)',
      [card],
    );
    expect(rows[0]?.failures).toBe(5);
  });

  it('counts wrong codes while enrolling too (verify), and a lockout outlasts starting over', async () => {
    const { key } = await newKey();
    const secret = (await send(service.base, key, 'POST', '/v1/account/two-factor')).body.secret;
    for (let attempt = 0; attempt < 5; attempt += 1) {
      expect(
        await send(other.base, key, 'POST', '/v1/account/two-factor/verify', {
          code: wrongCode(secret),
        }),
      ).toMatchObject({ status: 403, code: 'invalid_two_factor_code' });
    }
    // A new secret does not reset the count.
    const again = (await send(service.base, key, 'POST', '/v1/account/two-factor')).body.secret;
    expect(
      await send(service.base, key, 'POST', '/v1/account/two-factor/verify', {
        code: codeAt(again, clock.nowMs),
      }),
    ).toMatchObject({ status: 429, code: 'rate_limit_exceeded' });
  });
});

/** The count at the store, on both databases (the embedded default is PGlite). */
forEachDatabase('two-factor failures in the store', (database) => {
  const testStore = useTestStore(database);

  it('refuses the sixth check within 15 minutes, whatever the code, and opens after', async () => {
    const { store, clock } = testStore;
    const { accountId } = await testStore.scope();
    const { secret } = await store.beginTwoFactor(accountId);
    const code = () => generateSync({ secret, epoch: Math.floor(clock.nowMs / 1000) });
    expect(await store.verifyTwoFactor(accountId, code())).toBeNull();
    clock.advance(30_000);
    const refusals = [];
    for (let attempt = 0; attempt < 5; attempt += 1) {
      refusals.push(await store.requireTwoFactor(accountId, 'wrong!'));
      clock.advance(60_000);
    }
    expect(refusals.map((refusal) => [refusal?.code, refusal?.lockoutStarted])).toEqual([
      ['invalid_two_factor_code', false],
      ['invalid_two_factor_code', false],
      ['invalid_two_factor_code', false],
      ['invalid_two_factor_code', false],
      ['invalid_two_factor_code', true],
    ]);
    // Five minutes after the first wrong code: ten to go.
    expect(await store.requireTwoFactor(accountId, code())).toEqual({
      code: 'rate_limit_exceeded',
      retryAfterS: 600,
      lockoutStarted: false,
    });
    clock.advance(600_000);
    expect(await store.requireTwoFactor(accountId, code())).toBeNull();
  });
});
