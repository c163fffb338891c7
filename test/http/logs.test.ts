import { generateSync } from 'otplib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/http.js';

/**
 * Secrets never reach a log: a run of requests at the most verbose level, including failing
 * ones, and then every line the service logged is searched for every secret that passed
 * through it (API keys, a bearer token of a wrong key, the two-factor secret and codes, an
 * idempotency key's body, metadata values, card numbers and CVVs).
 */
describe('logs', () => {
  const lines: string[] = [];
  let service: TestService;

  beforeAll(async () => {
    service = await startTestService({
      log: { level: 'trace', stream: { write: (line) => lines.push(line) } },
    });
  });

  afterAll(async () => {
    await service.close();
  });

  it('hold none of the secrets that passed through the service', async () => {
    const { key } = await service.key();
    const wrongKey = 'sk_test_thisIsNotAKeyButItIsSecret000000';
    const send = (
      method: string,
      path: string,
      body?: unknown,
      headers: Record<string, string> = {},
      bearer = key,
    ) =>
      fetch(`${service.base}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${bearer}`,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
          ...headers,
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
    const vault = (await (
      await send(
        'POST',
        '/v1/vaults',
        {
          name: 'L',
          currency: 'USDC',
          network: 'solana',
          initialDeposit: '9',
          metadata: { secretNote: 'hunter2-metadata' },
        },
        { 'idempotency-key': 'log-key-1' },
      )
    ).json()) as { id: string };
    await send('GET', `/v1/vaults/${vault.id}`);
    await send('GET', '/v1/account', undefined, {}, wrongKey);
    await send('POST', '/v1/transfers', {
      fromVaultId: vault.id,
      toVaultId: vault.id,
      amount: '1',
      metadata: { ref: 'hunter2-transfer' },
    });
    // Cards: created, revealed (each PAN and CVV passes through the service), and spent.
    const cards: { number: string; cvv: string }[] = [];
    for (let index = 0; index < 5; index++) {
      const card = (await (
        await send('POST', '/v1/cards', { vaultId: vault.id, cardholderName: 'Log Test' })
      ).json()) as { id: string };
      const details = (await (await send('POST', `/v1/cards/${card.id}/reveal`)).json()) as {
        number: string;
        cvv: string;
      };
      cards.push(details);
      await send('POST', '/v1/authorizations', {
        cardId: card.id,
        amount: '0.5',
        currency: 'USDC',
        merchant: { name: 'Shop', mcc: '5411', country: 'US' },
        networkTransactionId: `log-${card.id}`,
      });
    }
    expect(cards.every((card) => /^[0-9]{16}$/.test(card.number))).toBe(true);

    const enrolment = (await (await send('POST', '/v1/account/two-factor')).json()) as {
      secret: string;
      otpauthUri: string;
      qrCodeSvg: string;
    };
    expect(enrolment.qrCodeSvg).toMatch(/^<svg /);
    const code = generateSync({ secret: enrolment.secret });
    await send('POST', '/v1/account/two-factor/verify', { code });
    await send('DELETE', '/v1/account/two-factor', undefined, { 'x-two-factor-code': '123456' });

    const log = lines.join('');
    expect(lines.length).toBeGreaterThan(10);
    // One line per request, with what an access log needs.
    const completed = lines.filter((line) => line.includes('"request completed"'));
    expect(completed.length).toBeGreaterThan(10);
    expect(log).not.toContain('incoming request');
    expect(JSON.parse(completed[0] as string)).toMatchObject({
      reqId: expect.stringMatching(/^req_/) as unknown,
      req: {
        method: expect.any(String) as unknown,
        url: expect.stringMatching(/^\/v1\//) as unknown,
      },
      res: { statusCode: expect.any(Number) as unknown },
      responseTimeMs: expect.any(Number) as unknown,
    });
    for (const secret of [
      key,
      wrongKey,
      enrolment.secret,
      // The secret's other forms: the URI, and the QR code drawn of it.
      enrolment.otpauthUri,
      enrolment.qrCodeSvg,
      'hunter2-metadata',
      'hunter2-transfer',
      '123456',
      ...cards.map((card) => card.number),
      // A CVV is three digits, as parts of many numbers are: searched as a string value.
      ...cards.map((card) => `"${card.cvv}"`),
    ]) {
      expect(log.includes(secret), `the log holds ${secret.slice(0, 12)}...`).toBe(false);
    }
  });
});
