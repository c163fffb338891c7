import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { templateSchema } from '../../src/core/index.js';
import { builtinRuleLibrary } from '../../src/rule-library/load.js';
import { useTestService } from '../support/http.js';

/** List Rule Templates over real HTTP: the rule library (rules/*.json) as a client finds it. */
interface Parameter {
  name: string;
  type: string;
  description: string;
  required: boolean;
  schema: Record<string, unknown>;
}
interface Template {
  object: string;
  name: string;
  description: string;
  parameters: Parameter[];
  example: {
    policy: { templates: { name: string; params?: Record<string, unknown> }[] };
    transaction?: Record<string, unknown>;
    outcome?: string;
  };
}
interface Json {
  id: string;
  object: string;
  data: Template[];
  hasMore: boolean;
  nextCursor: string | null;
  version: number;
  error?: { code: string; param?: string };
}

const library = builtinRuleLibrary();

/** A value of the wrong kind for each parameter type, which its schema must refuse. */
const WRONG: Readonly<Record<string, unknown>> = {
  integer: 2.5,
  amount: true,
  mccList: ['58'],
  countryList: ['XX'],
  stringList: [],
};

describe('GET /v1/rule-templates', () => {
  const harness = useTestService<Json>();
  const { call } = harness;

  const everyPage = async (limit: number): Promise<Json[]> => {
    const pages: Json[] = [];
    let cursor: string | null = null;
    // The library holds at most 200 templates (the loader's bound): 201 pages would be a loop.
    for (let page = 0; page <= 200; page++) {
      const query: string =
        cursor === null ? `?limit=${limit}` : `?limit=${limit}&startingAfter=${cursor}`;
      const answer = await call('GET', `/v1/rule-templates${query}`);
      expect(answer.status).toBe(200);
      pages.push(answer.body);
      cursor = answer.body.nextCursor;
      if (!answer.body.hasMore) break;
    }
    return pages;
  };

  it('lists every template of the library by name, a bounded page at a time', async () => {
    const names = [...library.keys()].sort();
    expect(names.length).toBeGreaterThan(10);
    const first = await call('GET', '/v1/rule-templates');
    expect([first.body.object, first.body.data.length, first.body.hasMore]).toEqual([
      'list',
      10,
      true,
    ]);
    expect(first.body.nextCursor).toBe(first.body.data.at(-1)?.name);
    const pages = await everyPage(4);
    expect(pages.length).toBe(Math.ceil(names.length / 4));
    expect(pages.flatMap((page) => page.data.map((template) => template.name))).toEqual(names);
    expect(pages.at(-1)?.nextCursor).toBeNull();
    expect(pages.slice(0, -1).every((page) => page.data.length === 4 && page.hasMore)).toBe(true);
    const all = await call('GET', '/v1/rule-templates?limit=100');
    expect([all.body.data.length, all.body.hasMore, all.body.nextCursor]).toEqual([
      names.length,
      false,
      null,
    ]);
  });

  it('describes each template and its parameters as the library declares them', async () => {
    const { data } = (await call('GET', '/v1/rule-templates?limit=100')).body;
    for (const template of data) {
      const source = library.get(template.name);
      expect(source, template.name).toBeDefined();
      expect(template.object).toBe('rule_template');
      expect(template.description).toBe(source?.description);
      expect(
        template.parameters.map(({ name, type, description, required }) => ({
          name,
          type,
          description,
          required,
        })),
      ).toEqual(
        Object.entries(source?.params ?? {}).map(([name, param]) => ({
          name,
          type: param.type,
          description: param.description,
          required: param.default === undefined,
        })),
      );
    }
  });

  it("gives each parameter a JSON Schema that takes the example's value and the default, and refuses a wrong one", async () => {
    const { data } = (await call('GET', '/v1/rule-templates?limit=100')).body;
    let checked = 0;
    for (const template of data) {
      const given = template.example.policy.templates[0]?.params ?? {};
      for (const parameter of template.parameters) {
        const label = `${template.name}.${parameter.name}`;
        const schema = z.fromJSONSchema(parameter.schema);
        const values = [given[parameter.name], parameter.schema['default']].filter(
          (value) => value !== undefined,
        );
        expect(values.length, label).toBeGreaterThan(0);
        for (const value of values) expect(schema.safeParse(value).success, label).toBe(true);
        expect(schema.safeParse(WRONG[parameter.type]).success, label).toBe(false);
        const maximum = parameter.schema['maximum'];
        if (typeof maximum === 'number') expect(schema.safeParse(maximum + 1).success).toBe(false);
        checked += 1;
      }
    }
    expect(checked).toBeGreaterThan(10);
  });

  it('gives each template an example policy that Set Policy takes, and a transaction it decides', async () => {
    const { data } = (await call('GET', '/v1/rule-templates?limit=100')).body;
    const vault = await call('POST', '/v1/vaults', {
      name: 'Templates',
      currency: 'USDC',
      network: 'solana',
    });
    expect(vault.status).toBe(201);
    for (const template of data) {
      expect(template.example.policy.templates.map((use) => use.name)).toEqual([template.name]);
      expect(['approve', 'decline'], template.name).toContain(template.example.outcome);
      const transaction = template.example.transaction ?? {};
      expect([typeof transaction['amount'], typeof transaction['mcc']], template.name).toEqual([
        'string',
        'string',
      ]);
      const set = await call('PUT', `/v1/vaults/${vault.body.id}/policy`, template.example.policy);
      expect([template.name, set.status, set.body.error]).toEqual([template.name, 200, undefined]);
    }
  });

  it('answers any key of the account, and no caller without one', async () => {
    const narrow = await harness.service.key({ scopes: ['authorizations:write'] });
    const answer = await call('GET', '/v1/rule-templates?limit=1', undefined, narrow.key);
    expect([answer.status, answer.body.data.length]).toEqual([200, 1]);
    const anonymous = await fetch(`${harness.service.base}/v1/rule-templates`);
    expect(anonymous.status).toBe(401);
  });

  it('refuses a cursor that is no template name and a page above the bound', async () => {
    const cursor = await call('GET', '/v1/rule-templates?startingAfter=Not%20A%20Name');
    expect([cursor.status, cursor.body.error?.code, cursor.body.error?.param]).toEqual([
      400,
      'parameter_invalid',
      'startingAfter',
    ]);
    const limit = await call('GET', '/v1/rule-templates?limit=101');
    expect([limit.status, limit.body.error?.code, limit.body.error?.param]).toEqual([
      400,
      'parameter_invalid',
      'limit',
    ]);
  });
});

describe('GET /v1/rule-templates of a store opened with its own library', () => {
  // The templates policies compile against are the store's (StoreOptions.templates): the list
  // must be that library, not the built-in one, or a client would be shown templates its
  // policies cannot name and not shown the ones they can.
  const ownTemplate = {
    name: 'weekend-cap',
    description: 'Declines weekend purchases over amount.',
    params: { amount: { type: 'amount', description: 'Most one weekend purchase may be.' } },
    rules: [
      {
        message: 'Declined: weekend purchase over the cap',
        conditions: {
          all: [
            { fact: 'dayOfWeekUtc', operator: 'greaterThanInclusive', value: 6 },
            { fact: 'amount', operator: 'greaterThan', value: { param: 'amount' } },
          ],
        },
      },
    ],
    examples: [
      {
        expect: 'decline',
        params: { amount: '100' },
        transaction: {
          amount: '150.00',
          mcc: '5812',
          country: 'US',
          merchantName: 'Corner Shop',
          at: '2026-11-21T12:00:00Z',
        },
      },
    ],
  };
  const own = new Map([[ownTemplate.name, templateSchema.parse(ownTemplate)]]);
  const harness = useTestService<Json>({ templates: own });
  const { call } = harness;

  it('lists the store’s templates, which Set Policy takes', async () => {
    const listed = await call('GET', '/v1/rule-templates?limit=100');
    expect(listed.body.data.map((template) => template.name)).toEqual(['weekend-cap']);
    expect(listed.body.data[0]?.example.policy).toEqual({
      templates: [{ name: 'weekend-cap', params: { amount: '100' } }],
    });
    const vault = await call('POST', '/v1/vaults', {
      name: 'Own',
      currency: 'USDC',
      network: 'solana',
    });
    const set = await call(
      'PUT',
      `/v1/vaults/${vault.body.id}/policy`,
      listed.body.data[0]?.example.policy,
    );
    expect(set.status).toBe(200);
    // A built-in template is not this store's.
    const builtin = await call('PUT', `/v1/vaults/${vault.body.id}/policy`, {
      templates: [{ name: [...library.keys()][0] }],
    });
    expect([builtin.status, builtin.body.error?.code]).toEqual([400, 'policy_invalid']);
  });
});
