import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERROR_CATALOGUE, isErrorCode } from '../../src/core/index.js';
import { startTestService, type TestService } from '../support/http.js';

/**
 * Malformed input against every route of the OpenAPI document: bodies (arbitrary JSON, broken
 * JSON, valid bodies with one field replaced, text with lone surrogates), ids, query strings
 * and headers. Never a 5xx; every refusal is a catalogue error in the contract's body, with
 * the response's Request-Id.
 */
describe('malformed requests', () => {
  let service: TestService;
  let key: string;
  let vaultId: string;
  let routes: [string, string][];

  beforeAll(async () => {
    service = await startTestService();
    ({ key } = await service.key());
    const created = await fetch(`${service.base}/v1/vaults`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        name: 'fuzz',
        currency: 'USDC',
        network: 'solana',
        initialDeposit: '100',
      }),
    });
    vaultId = ((await created.json()) as { id: string }).id;
    const document = (await (await fetch(`${service.base}/v1/openapi.json`)).json()) as {
      paths: Record<string, Record<string, unknown>>;
    };
    routes = Object.entries(document.paths).flatMap(([path, methods]) =>
      Object.keys(methods).map((method) => [method.toUpperCase(), path] as [string, string]),
    );
  });

  afterAll(async () => {
    await service.close();
  });

  const oddText = fc.oneof(
    fc.string(),
    fc.string({ unit: 'binary', maxLength: 20 }),
    fc.constantFrom('\ud800', 'a\udc00b', '', ' ', '0', '-1', '1e308', 'NaN'),
  );
  const validBody = {
    name: 'x',
    currency: 'USDC',
    network: 'solana',
    initialDeposit: '1',
    fromVaultId: 'vlt_00000000000000000000000000000000',
    toVaultId: 'vlt_00000000000000000000000000000000',
    amount: '1',
    vaultId: 'vlt_00000000000000000000000000000000',
    metadata: { a: 'b' },
    transaction: { amount: '1', merchant: { name: 'm', mcc: '5812', country: 'US' } },
  };
  const body = fc.oneof(
    fc.jsonValue({ maxDepth: 3 }).map((value) => JSON.stringify(value)),
    fc.string({ maxLength: 40 }),
    fc.constantFrom(
      '{',
      '{"a":}',
      '[1,]',
      '{"__proto__":{"x":1}}',
      '{"a":0.10000000000000001}',
      '{"a":1e999}',
    ),
    fc
      .tuple(
        fc.constantFrom(...Object.keys(validBody)),
        fc.oneof(fc.jsonValue({ maxDepth: 2 }), oddText),
      )
      .map(([field, value]) => JSON.stringify({ ...validBody, [field]: value })),
    fc
      .record({ metadata: fc.dictionary(oddText, oddText, { maxKeys: 3 }) })
      .map((value) => JSON.stringify({ ...validBody, ...value })),
  );
  const request = fc.record({
    route: fc.nat(),
    id: fc.oneof(
      fc.constant('VAULT'),
      fc.constant('vlt_00000000000000000000000000000000'),
      oddText.filter((value) => value.isWellFormed()).map(encodeURIComponent),
      fc.constantFrom('%ff', '%00', '..%2F..', '%E0%A4%A'),
    ),
    body: fc.option(body, { nil: undefined }),
    query: fc.dictionary(
      fc.constantFrom(
        'limit',
        'startingAfter',
        'currency',
        'status',
        'vaultId',
        'minAmount',
        'startDate',
        'x',
      ),
      oddText,
      { maxKeys: 3 },
    ),
    contentType: fc.constantFrom(
      'application/json',
      'application/json; charset=utf-8',
      'text/plain',
      undefined,
    ),
    idempotencyKey: fc.option(
      // Values HTTP lets a client send in a header (visible ASCII, space, tab, obs-text).
      oddText.filter((value) => /^[\t\x20-\x7e\x80-\xff]*$/.test(value)),
      { nil: undefined },
    ),
  });

  it('never answer a 5xx, and always answer refusals in the contract body', async () => {
    await fc.assert(
      fc.asyncProperty(request, async (input) => {
        const [method, template] = routes[input.route % routes.length] as [string, string];
        const path = template.replace('{id}', input.id === 'VAULT' ? vaultId : input.id);
        const query = new URLSearchParams(input.query).toString();
        const headers: Record<string, string> = { authorization: `Bearer ${key}` };
        if (input.contentType !== undefined && input.body !== undefined)
          headers['content-type'] = input.contentType;
        if (input.idempotencyKey !== undefined) headers['idempotency-key'] = input.idempotencyKey;
        const withBody = method !== 'GET' && input.body !== undefined;
        const response = await fetch(`${service.base}${path}${query === '' ? '' : `?${query}`}`, {
          method,
          headers,
          ...(withBody && input.body !== undefined ? { body: input.body } : {}),
        });
        const text = await response.text();
        expect(response.status, `${method} ${path} -> ${text.slice(0, 300)}`).toBeLessThan(500);
        if (response.status >= 400) {
          const parsed = JSON.parse(text) as {
            error: { code: string; type: string; requestId: string };
          };
          expect(isErrorCode(parsed.error.code), parsed.error.code).toBe(true);
          if (isErrorCode(parsed.error.code))
            expect(parsed.error.type).toBe(ERROR_CATALOGUE[parsed.error.code].type);
          expect(parsed.error.requestId).toBe(response.headers.get('request-id'));
        }
      }),
      { numRuns: 500 },
    );
  });
});
