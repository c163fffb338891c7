import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatPath } from '../../src/core/index.js';
import { startTestService, type TestService } from '../support/http.js';

/**
 * Every string a request body carries goes through the one text check: a
 * lone UTF-16 surrogate in any of them, value or key, is a 400 at that field, never a 500 from
 * the database, and changes nothing. Generated from the OpenAPI document: every string field of
 * every request body is tried, and a body's field that the table below does not fill fails the
 * coverage test, so a new field or route is covered as soon as it exists.
 */
const LONE = 'a\ud800';
const MERCHANT = { name: 'Cafe', mcc: '5812', country: 'US', city: 'Austin', id: 'm_1' };
const ADDRESS = '9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin';

/** Bodies with every string field filled; VAULT, CARD and HELD stand for ids of the fixture. */
const BODIES: Record<string, unknown> = {
  'POST /v1/vaults': {
    name: 'n',
    currency: 'USDC',
    network: 'solana',
    initialDeposit: '1',
    metadata: { k: 'v' },
  },
  'PATCH /v1/vaults/{id}': { name: 'n', metadata: { k: 'v' } },
  'POST /v1/vaults/{id}/freeze': { reason: 'r' },
  'POST /v1/vaults/{id}/close': { destination: { vaultId: 'VAULT' } },
  'POST /v1/vaults/{id}/policy/simulate': {
    transaction: { amount: '1', currency: 'USDC', merchant: MERCHANT, cardId: 'CARD' },
  },
  'POST /v1/vaults/{id}/policy/backtest': {
    policy: {},
    startDate: new Date().toISOString().slice(0, 10),
    endDate: new Date().toISOString().slice(0, 10),
  },
  'POST /v1/cards/{id}/policy/backtest': {
    policy: {},
    startDate: new Date().toISOString().slice(0, 10),
    endDate: new Date().toISOString().slice(0, 10),
  },
  'POST /v1/transfers': {
    fromVaultId: 'VAULT',
    toVaultId: 'VAULT',
    amount: '1',
    description: 'd',
    metadata: { k: 'v' },
  },
  'POST /v1/transfers/external': {
    fromVaultId: 'VAULT',
    address: ADDRESS,
    amount: '1',
    memo: 'm',
    metadata: { k: 'v' },
  },
  'POST /v1/simulate/deposits': { vaultId: 'VAULT', amount: '1', metadata: { k: 'v' } },
  'POST /v1/cards': {
    vaultId: 'VAULT',
    cardholderName: 'Ada',
    metadata: { k: 'v' },
    billingCurrency: 'USD',
    processorCard: { connectionId: 'pc_text', cardId: 'ic_text' },
  },
  'PATCH /v1/cards/{id}': {
    cardholderName: 'Ada',
    metadata: { k: 'v' },
    processorCard: { connectionId: 'pc_text', cardId: 'ic_text' },
  },
  'POST /v1/authorizations': {
    cardId: 'CARD',
    amount: '1',
    currency: 'USDC',
    merchant: MERCHANT,
    networkTransactionId: 'ntx_1',
    merchantAmount: '1',
    merchantCurrency: 'USD',
  },
  'POST /v1/authorizations/advice': {
    cardId: 'CARD',
    amount: '1',
    currency: 'USDC',
    merchant: MERCHANT,
    networkTransactionId: 'ntx_advice',
    merchantAmount: '1',
    merchantCurrency: 'USD',
    approved: true,
    reason: 'stand_in',
  },
  'POST /v1/authorizations/{id}/increment': { amount: '1', networkTransactionId: 'ntx_inc' },
  'POST /v1/captures': {
    cardId: 'CARD',
    amount: '1',
    currency: 'USDC',
    merchant: MERCHANT,
    networkTransactionId: 'ntx_force',
  },
  'POST /v1/refunds': {
    cardId: 'CARD',
    amount: '1',
    currency: 'USDC',
    merchant: MERCHANT,
    networkTransactionId: 'ntx_refund',
    transactionId: 'HELD',
  },
  'POST /v1/authorizations/{id}/capture': { amount: '1' },
  'POST /v1/authorizations/{id}/reverse': { amount: '1' },
  'POST /v1/webhooks': { url: 'http://127.0.0.1:9/h', events: ['*'], description: 'd' },
  // Every processor's secrets at once: text is checked before which ones a processor takes.
  'POST /v1/processors': {
    processor: 'stripe',
    mode: 'test',
    signingSecret: 'whsec_text_input',
    realtimeSigningSecret: 'whsec_text_input_realtime',
    asaSecret: 'asa_text_input',
    apiKey: 'api_key_text_input',
    username: 'user_text_input',
    password: 'password_text_input',
  },
  'POST /v1/processors/{id}/rotate': {
    signingSecret: 'whsec_text_input',
    realtimeSigningSecret: 'whsec_text_input_realtime',
    asaSecret: 'asa_text_input',
    apiKey: 'api_key_text_input',
    username: 'user_text_input',
    password: 'password_text_input',
  },
  'POST /v1/settlements': {
    records: [
      { authorizationId: 'HELD', amount: '1' },
      {
        type: 'refund',
        cardId: 'CARD',
        amount: '1',
        currency: 'USDC',
        merchant: MERCHANT,
        networkTransactionId: 'ntx_settled_refund',
        transactionId: 'HELD',
      },
    ],
  },
  'PUT /v1/account/display-origins': { origins: ['https://app.example.com'] },
};

/**
 * Bodies that are not on this list's terms: a policy, checked by the core's compiler (its own
 * cases below), and a two-factor code, compared and never stored (routes/two-factor.ts).
 */
const OTHERWISE = new Set([
  'PUT /v1/vaults/{id}/policy',
  'PUT /v1/cards/{id}/policy',
  'POST /v1/account/two-factor/verify',
  // A processor's event: raw bytes under a signature, refused before anything reads its text.
  'POST /v1/processors/stripe/{connectionId}',
  'POST /v1/processors/lithic/{connectionId}',
  'POST /v1/processors/marqeta/{connectionId}',
]);

/** The policy document inside another body (simulate's): its text, too, is the compiler's. */
const POLICY_DOCUMENT_REF = '#/components/schemas/PolicyDocument';

interface SchemaNode {
  $ref?: string;
  type?: string | string[];
  properties?: Record<string, SchemaNode>;
  additionalProperties?: SchemaNode | boolean;
  propertyNames?: SchemaNode;
  items?: SchemaNode;
  anyOf?: SchemaNode[];
  oneOf?: SchemaNode[];
}
interface OpenApi {
  paths: Record<
    string,
    Record<string, { requestBody?: { content: Record<string, { schema: SchemaNode }> } }>
  >;
  components?: { schemas?: Record<string, SchemaNode> };
}

/**
 * Every place a schema takes a string: `a.b`, `a[]` for items, `a{}` and `a{key}` for records.
 * A component met again on its own path (the policy's condition tree refers to itself) is not
 * walked again: its places were named the first time.
 */
function stringPlaces(
  document: OpenApi,
  schema: SchemaNode,
  at: string,
  out: Set<string>,
  refsOnPath: ReadonlySet<string> = new Set(),
): void {
  if (schema.$ref === POLICY_DOCUMENT_REF) return;
  if (schema.$ref !== undefined && refsOnPath.has(schema.$ref)) return;
  const onPath = schema.$ref === undefined ? refsOnPath : new Set([...refsOnPath, schema.$ref]);
  const node =
    schema.$ref === undefined
      ? schema
      : (document.components?.schemas?.[schema.$ref.split('/').pop() ?? ''] ?? {});
  for (const branch of [...(node.anyOf ?? []), ...(node.oneOf ?? [])]) {
    stringPlaces(document, branch, at, out, onPath);
  }
  const types = Array.isArray(node.type) ? node.type : [node.type];
  if (types.includes('string')) out.add(at);
  for (const [name, child] of Object.entries(node.properties ?? {})) {
    stringPlaces(document, child, at === '' ? name : `${at}.${name}`, out, onPath);
  }
  if (node.items !== undefined) stringPlaces(document, node.items, `${at}[]`, out, onPath);
  if (node.propertyNames !== undefined) out.add(`${at}{key}`);
  if (typeof node.additionalProperties === 'object') {
    stringPlaces(document, node.additionalProperties, `${at}{}`, out, onPath);
  }
}

/** The string places a body fills, named as `stringPlaces` names them. */
function filledPlaces(value: unknown, at: string, record: boolean, out: Set<string>): void {
  if (typeof value === 'string') out.add(at);
  else if (Array.isArray(value))
    for (const item of value) filledPlaces(item, `${at}[]`, false, out);
  else if (typeof value === 'object' && value !== null) {
    for (const [key, child] of Object.entries(value)) {
      const isRecord = record || key === 'metadata';
      if (key === 'metadata') {
        out.add(`${at === '' ? key : `${at}.${key}`}{key}`);
        for (const inner of Object.values(child as object)) {
          filledPlaces(inner, `${at === '' ? key : `${at}.${key}`}{}`, false, out);
        }
      } else filledPlaces(child, at === '' ? key : `${at}.${key}`, isRecord, out);
    }
  }
}

/** Each way to put the lone surrogate in a body: at a value, or as a key; the expected param. */
function* withLoneSurrogate(
  body: unknown,
  path: (string | number)[] = [],
): Generator<{ body: unknown; param: string }> {
  if (typeof body === 'string') {
    yield { body: LONE, param: formatPath(path) };
    return;
  }
  if (Array.isArray(body)) {
    for (const [index, item] of body.entries()) {
      for (const variant of withLoneSurrogate(item, [...path, index])) {
        yield {
          body: (body as unknown[]).map((old, at) => (at === index ? variant.body : old)),
          param: variant.param,
        };
      }
    }
    return;
  }
  if (typeof body === 'object' && body !== null) {
    const entries = Object.entries(body);
    for (const [key, value] of entries) {
      for (const variant of withLoneSurrogate(value, [...path, key])) {
        yield { body: { ...body, [key]: variant.body }, param: variant.param };
      }
      if (path.at(-1) === 'metadata') {
        // A key of a record: refused at its entry, `metadata["..."]`.
        yield {
          body: Object.fromEntries(entries.map(([k, v]) => [k === key ? LONE : k, v])),
          param: `${formatPath(path)}[`,
        };
      }
    }
  }
}

describe('text a request body carries', () => {
  let service: TestService;
  let key: string;
  let document: OpenApi;
  const fixture = { VAULT: '', CARD: '', HELD: '' };

  const send = async (method: string, path: string, body: unknown) => {
    const answer = await service.request(key, method, path, body);
    return {
      status: answer.status,
      error: (answer.body as { error?: { code: string; param?: string } }).error,
    };
  };
  const digest = async (): Promise<string> => {
    const { rows } = await service.store.client.query<{ d: string }>(
      `SELECT md5(string_agg(t, '|' ORDER BY t)) AS d FROM (
         SELECT v::text AS t FROM vaults v UNION ALL SELECT c::text FROM cards c
         UNION ALL SELECT x::text FROM transactions x UNION ALL SELECT p::text FROM policies p
         UNION ALL SELECT w::text FROM webhook_endpoints w UNION ALL SELECT s::text FROM settlements s
         UNION ALL SELECT o::text FROM outbox_events o) rows`,
    );
    return rows[0]?.d ?? '';
  };

  beforeAll(async () => {
    service = await startTestService();
    ({ key } = await service.key());
    const vault = await service.request(key, 'POST', '/v1/vaults', {
      name: 'text',
      currency: 'USDC',
      network: 'solana',
      initialDeposit: '100',
    });
    fixture.VAULT = (vault.body as { id: string }).id;
    const card = await service.request(key, 'POST', '/v1/cards', {
      vaultId: fixture.VAULT,
      cardholderName: 'Ada',
    });
    fixture.CARD = (card.body as { id: string }).id;
    const held = await service.request(key, 'POST', '/v1/authorizations', {
      cardId: fixture.CARD,
      amount: '5',
      currency: 'USDC',
      merchant: MERCHANT,
      networkTransactionId: 'ntx_text',
    });
    fixture.HELD = (held.body as { id: string }).id;
    document = (await (await fetch(`${service.base}/v1/openapi.json`)).json()) as OpenApi;
  });

  afterAll(async () => {
    await service.close();
  });

  const withIds = (value: unknown): unknown =>
    JSON.parse(
      JSON.stringify(value).replace(/"(VAULT|CARD|HELD)"/g, (_all, name: keyof typeof fixture) =>
        JSON.stringify(fixture[name]),
      ),
    );
  const pathOf = (template: string): string =>
    template.replace(
      '{id}',
      template.startsWith('/v1/authorizations') ? fixture.HELD : fixture.VAULT,
    );

  it("fills every string field of every route's body (so the test below tries each)", () => {
    for (const [path, methods] of Object.entries(document.paths)) {
      for (const [method, operation] of Object.entries(methods)) {
        const schema = operation.requestBody?.content['application/json']?.schema;
        const route = `${method.toUpperCase()} ${path}`;
        if (schema === undefined || OTHERWISE.has(route)) continue;
        const wanted = new Set<string>();
        stringPlaces(document, schema, '', wanted);
        // The empty body of an operation that takes none has no text to carry.
        if (wanted.size === 0) continue;
        const body = BODIES[route];
        expect(body, `no body for ${route}`).toBeDefined();
        const filled = new Set<string>();
        filledPlaces(body, '', false, filled);
        // A union (close's destination) is filled by one of its branches.
        const missing = [...wanted].filter(
          (place) => !filled.has(place) && place !== 'destination.address',
        );
        expect(missing, route).toEqual([]);
      }
    }
  });

  it('refuses a lone surrogate in any string field with 400 at that field, changing nothing', async () => {
    const before = await digest();
    let tried = 0;
    for (const [route, body] of Object.entries(BODIES)) {
      const [method = '', template = ''] = route.split(' ');
      for (const variant of withLoneSurrogate(withIds(body))) {
        const answer = await send(method, pathOf(template), variant.body);
        const param = answer.error?.param ?? '';
        const atKey = variant.param.endsWith('[');
        expect(
          [route, answer.status, atKey ? param.startsWith(variant.param) : param],
          JSON.stringify(answer.error),
        ).toEqual([route, 400, atKey ? true : variant.param]);
        tried += 1;
      }
    }
    expect(tried).toBeGreaterThan(40);
    // The close destination's other branch, and the freeze reason (a POST without a body).
    const address = await send('POST', `/v1/vaults/${fixture.VAULT}/close`, {
      destination: { address: LONE },
    });
    expect([address.status, address.error?.param]).toEqual([400, 'destination.address']);
    expect(await digest()).toBe(before);
  });

  it('refuses a lone surrogate in updated metadata with 400, not the 500 it was', async () => {
    const updated = await send('PATCH', `/v1/vaults/${fixture.VAULT}`, {
      metadata: { costCenter: LONE },
    });
    expect([updated.status, updated.error?.code, updated.error?.param]).toEqual([
      400,
      'parameter_invalid',
      'metadata.costCenter',
    ]);
    const removed = await send('PATCH', `/v1/vaults/${fixture.VAULT}`, { metadata: { k: null } });
    expect(removed.status).toBe(200);
  });

  /** Policy strings: checked by the compiler, the same for Set Policy and Simulate Policy. */
  const POLICIES: [string, unknown, string][] = [
    [
      "a rule's message",
      {
        rules: [
          {
            name: 'r',
            message: LONE,
            conditions: { all: [{ fact: 'amount', operator: 'greaterThan', value: 1 }] },
          },
        ],
      },
      'rules[0].message',
    ],
    [
      'a string condition value',
      {
        rules: [
          {
            name: 'r',
            conditions: { any: [{ fact: 'merchantName', operator: 'equal', value: LONE }] },
          },
        ],
      },
      'rules[0].conditions.any[0].value',
    ],
    [
      'a string in an `in` list',
      {
        rules: [
          {
            name: 'r',
            conditions: {
              all: [{ fact: 'merchantId', operator: 'in', value: ['Austin', LONE] }],
            },
          },
        ],
      },
      'rules[0].conditions.all[0].value[1]',
    ],
    [
      "a template's string parameter",
      { templates: [{ name: 'block-merchants', params: { merchantIds: ['m_1', LONE] } }] },
      'templates[0].params.merchantIds[1]',
    ],
    [
      "a template parameter's name",
      { templates: [{ name: 'block-merchants', params: { [LONE]: ['m_1'] } }] },
      'templates[0].params',
    ],
  ];

  it.each(POLICIES)(
    'refuses %s in a policy: Set Policy and Simulate Policy alike, 400 policy_invalid at the fault',
    async (_what, policy, param) => {
      const before = await digest();
      const set = await send('PUT', `/v1/vaults/${fixture.VAULT}/policy`, policy);
      expect([set.status, set.error?.code, set.error?.param]).toEqual([
        400,
        'policy_invalid',
        param,
      ]);
      const simulated = await send('POST', `/v1/vaults/${fixture.VAULT}/policy/simulate`, {
        policy,
        transaction: { amount: '1', merchant: MERCHANT },
      });
      expect([simulated.status, simulated.error?.code, simulated.error?.param]).toEqual([
        400,
        'policy_invalid',
        `policy.${param}`,
      ]);
      expect(await digest()).toBe(before);
    },
  );

  it('accepts the same policies with well-formed text, in both', async () => {
    for (const [what, policy] of POLICIES) {
      // A parameter of another name is refused for its name, whatever its text.
      if (what.endsWith('name')) continue;
      const fixed = JSON.parse(JSON.stringify(policy).replaceAll('\\ud800', 'b')) as unknown;
      const set = await send('PUT', `/v1/vaults/${fixture.VAULT}/policy`, fixed);
      expect([what, set.status, set.error]).toEqual([what, 200, undefined]);
      const simulated = await send('POST', `/v1/vaults/${fixture.VAULT}/policy/simulate`, {
        policy: fixed,
        transaction: { amount: '1', merchant: MERCHANT },
      });
      expect(simulated.status).toBe(200);
    }
  });
});
