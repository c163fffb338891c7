import { readFileSync } from 'node:fs';
import SwaggerParser from '@apidevtools/swagger-parser';
import openapiTS, { astToString } from 'openapi-typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { compilePolicy, ERROR_CATALOGUE, PolicyInvalidError } from '../../src/core/index.js';
import { OPERATION_DOCS } from '../../src/http/operation-docs/index.js';
import { ID_PREFIXES } from '../../src/ids.js';
import { builtinRuleLibrary } from '../../src/rule-library/load.js';
import { documentedErrors } from '../support/reference-doc.js';
import { startTestService, type TestService } from '../support/http.js';

/**
 * The OpenAPI document: served, valid, complete (every route of the app), in step with the
 * error catalogue and docs/reference.md, and the checked-in copies clients build from
 * (docs/openapi.json and the typed client's types) are current: `npm run openapi` writes them.
 */
interface Media {
  schema?: unknown;
  example?: unknown;
  examples?: Record<string, { value: unknown }>;
}
interface Operation {
  operationId?: string;
  summary?: string;
  description?: string;
  requestBody?: { content: Record<string, Media> };
  responses?: Record<string, { description?: string; content?: Record<string, Media> }>;
}
interface Document {
  openapi: string;
  info: { version: string };
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, unknown> };
}

const operationsOf = (document: Document): [string, Operation][] =>
  Object.entries(document.paths).flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, operation]): [string, Operation] => [
      `${method.toUpperCase()} ${path}`,
      operation,
    ]),
  );

/**
 * A validator of a schema of the document, its references to components resolved: zod's own
 * JSON Schema reader, so the examples are checked by the library the schemas come from.
 */
function validatorOf(document: Document, schema: unknown): z.ZodType {
  type JsonSchema = z.core.JSONSchema.JSONSchema;
  const local = (value: unknown): JsonSchema =>
    JSON.parse(
      JSON.stringify(value).replaceAll('"#/components/schemas/', '"#/$defs/'),
    ) as JsonSchema;
  const defs = local(document.components.schemas) as Record<string, JsonSchema>;
  return z.fromJSONSchema({ ...local(schema), $defs: defs });
}

const repository = (path: string) => new URL(`../../${path}`, import.meta.url);

describe('the OpenAPI document', () => {
  let service: TestService;
  let document: Document;
  beforeAll(async () => {
    service = await startTestService();
    const response = await fetch(`${service.base}/v1/openapi.json`);
    expect(response.status).toBe(200);
    document = (await response.json()) as Document;
  });
  afterAll(async () => {
    await service.close();
  });

  it('is served without a key, as OpenAPI 3.1, with every /v1 route of the app', () => {
    expect(document.openapi).toBe('3.1.0');
    // One version: the package's, as `spendgate --version` prints it.
    const manifest = JSON.parse(readFileSync(repository('package.json'), 'utf8')) as {
      version: string;
    };
    expect(document.info.version).toBe(manifest.version);
    const documented = new Set(
      Object.entries(document.paths).flatMap(([path, methods]) =>
        Object.keys(methods).map((method) => `${method.toUpperCase()} ${path}`),
      ),
    );
    // The app's own routes, read off Fastify's route tree: every one under /v1 must be in the
    // document (but the document itself), and the document must name no other.
    const served = new Set<string>();
    const prefixes: string[] = [];
    for (const line of service.app.printRoutes({ commonPrefix: false }).split('\n')) {
      // A node is its path's part after its parent's, which need not start with a slash
      // (`/policy/backtest` and `/policy/backtests/:id` share `/policy/backtest`).
      const match = /^([│ ├└─]*)(\S+) \(([A-Z, ]+)\)/.exec(line);
      if (match === null) continue;
      const depth = (match[1] ?? '').length / 4;
      prefixes.length = depth;
      prefixes[depth] = (match[2] ?? '').replace(/:(\w+)/g, '{$1}');
      const path = prefixes.join('');
      if (!path.startsWith('/v1/') || path === '/v1/openapi.json') continue;
      for (const method of (match[3] ?? '').split(', '))
        if (method !== 'HEAD') served.add(`${method} ${path}`);
    }
    expect(served.size).toBeGreaterThan(20);
    expect([...documented].sort()).toEqual([...served].sort());
    expect(document.paths['/v1/vaults']?.post?.operationId).toBe('createVault');
  });

  it('validates against the OpenAPI 3.1 schema, and the validator can refuse', async () => {
    await expect(SwaggerParser.validate(structuredClone(document) as never)).resolves.toBeTruthy();
    const broken = structuredClone(document);
    broken.paths['/v1/broken'] = { get: { responses: 'none' as never } };
    await expect(SwaggerParser.validate(broken as never)).rejects.toThrow();
  });

  it('gives every operation the error body, with exactly the codes of the catalogue and the reference page', () => {
    const error = document.components.schemas['Error'] as {
      properties: { error: { properties: { code: { enum: string[] } } } };
    };
    const codes = error.properties.error.properties.code.enum;
    expect([...codes].sort()).toEqual(Object.keys(ERROR_CATALOGUE).sort());
    expect([...codes].sort()).toEqual([...documentedErrors().keys()].sort());
    for (const [path, operations] of Object.entries(document.paths)) {
      for (const [method, operation] of Object.entries(operations)) {
        expect({ path, method, error: operation.responses }).toMatchObject({
          error: { default: { $ref: '#/components/responses/Error' } },
        });
      }
    }
  });

  it("documents each operation from its resource's docs (routes/*.docs.ts), and they name no other", () => {
    const ids = operationsOf(document).map(([, operation]) => operation.operationId);
    expect(ids.every((id) => typeof id === 'string')).toBe(true);
    expect([...ids].sort()).toEqual(Object.keys(OPERATION_DOCS).sort());
    for (const [label, operation] of operationsOf(document)) {
      const doc = OPERATION_DOCS[operation.operationId ?? ''];
      expect({ label, summary: operation.summary }).toEqual({ label, summary: doc?.summary });
      expect(operation.description, label).toBe(doc?.description);
      expect((operation.summary ?? '').length, label).toBeLessThan(60);
      for (const [status, response] of Object.entries(operation.responses ?? {})) {
        if (status === 'default') continue;
        expect(response.description, `${label} ${status}`).toBeTruthy();
        expect(response.description, `${label} ${status}`).not.toBe('Default Response');
      }
    }
  });

  it('names each error an operation answers, under its status, with an example body of its code', () => {
    for (const [label, operation] of operationsOf(document)) {
      const named = new Map<string, string>();
      for (const [status, response] of Object.entries(operation.responses ?? {})) {
        if (!/^[45]\d\d$/.test(status)) continue;
        const examples = response.content?.['application/json']?.examples ?? {};
        expect(Object.keys(examples).length, `${label} ${status}`).toBeGreaterThan(0);
        for (const [code, { value }] of Object.entries(examples)) {
          const entry = ERROR_CATALOGUE[code as keyof typeof ERROR_CATALOGUE];
          expect(entry, `${label}: ${code}`).toBeDefined();
          expect([label, code, status]).toEqual([label, code, String(entry.status)]);
          expect(value).toMatchObject({ error: { code, type: entry.type } });
          named.set(code, status);
        }
      }
      const doc = OPERATION_DOCS[operation.operationId ?? ''];
      for (const entry of doc?.errors ?? []) {
        const code = typeof entry === 'string' ? entry : entry.code;
        expect(named.has(code), `${label} names ${code}`).toBe(true);
      }
      // What every keyed route can answer (a processor's door, `security: []`, takes no key).
      const keyed = (operation as { security?: unknown[] }).security?.length !== 0;
      for (const code of keyed
        ? ['missing_api_key', 'invalid_api_key', 'rate_limit_exceeded']
        : []) {
        expect(named.has(code), `${label} names ${code}`).toBe(true);
      }
      if (operation.requestBody !== undefined) {
        expect(named.has('invalid_json'), `${label} names invalid_json`).toBe(true);
      }
    }
  });

  it('gives every operation examples that fit its schemas, with ids of the form the service gives', () => {
    // Hex after a kind's prefix is an id; other words (card_authorization) are not.
    const idLike = new RegExp(`^(${Object.values(ID_PREFIXES).join('|')})_[0-9a-f]{8,}`);
    const checkIds = (label: string, value: unknown): void => {
      const text = JSON.stringify(value);
      for (const match of text.matchAll(/"([a-z]+_[0-9a-z]+)"/g)) {
        const id = match[1] ?? '';
        if (idLike.test(id)) expect(id, label).toMatch(/^[a-z]+_[0-9a-f]{32}$/);
      }
    };
    let checked = 0;
    for (const [label, operation] of operationsOf(document)) {
      const request = operation.requestBody?.content['application/json'];
      if (request !== undefined) {
        expect(request.example, `${label}: request example`).toBeDefined();
        const result = validatorOf(document, request.schema).safeParse(request.example);
        expect(result.error?.issues, `${label}: request example`).toBeUndefined();
        checkIds(label, request.example);
        checked += 1;
      }
      for (const [status, response] of Object.entries(operation.responses ?? {})) {
        const media = response.content?.['application/json'];
        if (media === undefined) continue;
        const examples =
          media.example === undefined
            ? Object.values(media.examples ?? {}).map(({ value }) => value)
            : [media.example];
        expect(examples.length, `${label} ${status}: an example`).toBeGreaterThan(0);
        const validator = validatorOf(document, media.schema);
        for (const example of examples) {
          const result = validator.safeParse(example);
          expect(result.error?.issues, `${label} ${status}`).toBeUndefined();
          checkIds(label, example);
          checked += 1;
        }
      }
    }
    expect(checked).toBeGreaterThan(200);
    // The validator refuses what does not fit: an example is checked, not waved through.
    const vault = document.paths['/v1/vaults']?.post?.responses?.['201']?.content?.[
      'application/json'
    ] as Media;
    expect(validatorOf(document, vault.schema).safeParse({ id: 'vlt_x' }).success).toBe(false);
  });

  it("publishes the policy document's JSON Schema, generated from the core's, as the body of the policy operations", () => {
    const reference = { $ref: '#/components/schemas/PolicyDocument' };
    const setPolicy = document.paths['/v1/vaults/{id}/policy']?.put;
    expect(setPolicy?.requestBody?.content['application/json']?.schema).toMatchObject(reference);
    const simulate = document.paths['/v1/vaults/{id}/policy/simulate']?.post;
    expect(simulate?.requestBody?.content['application/json']?.schema).toMatchObject({
      properties: { policy: reference },
    });
    expect(document.components.schemas['PolicyDocument']).toMatchObject({
      type: 'object',
      additionalProperties: false,
      properties: {
        limits: { type: 'array', maxItems: 50 },
        rules: {
          items: {
            properties: { conditions: { $ref: '#/components/schemas/PolicyCondition' } },
          },
        },
      },
    });
    // The schema and the compiler agree, on what they accept and on what they refuse.
    const schema = validatorOf(document, reference);
    const accepts = (policy: unknown): boolean => {
      try {
        compilePolicy(policy, { currency: 'USDC', templates: builtinRuleLibrary() });
        return true;
      } catch (error) {
        if (error instanceof PolicyInvalidError) return false;
        throw error;
      }
    };
    const nested = {
      rules: [
        {
          name: 'late-night-travel',
          mode: 'shadow',
          conditions: {
            all: [
              { not: { fact: 'merchantCountry', operator: 'equal', value: 'US' } },
              {
                any: [
                  { fact: 'hourUtc', operator: 'lessThan', value: 6 },
                  { fact: 'amount', operator: 'greaterThan', value: '500' },
                ],
              },
            ],
          },
        },
      ],
    };
    const cases: unknown[] = [
      setPolicy?.requestBody?.content['application/json']?.example,
      nested,
      { limits: [{ interval: 'hourly', amount: '10' }] },
      { merchantCategories: { allow: ['58a2'] } },
      {
        rules: [{ name: 'x', conditions: { all: [{ fact: 'mcc', operator: 'like', value: 1 }] } }],
      },
      { rules: [{ name: 'x', conditions: { not: { any: [{ all: [] }] } } }] },
      { limits: [], extra: true },
    ];
    expect(cases.map((policy) => schema.safeParse(policy).success)).toEqual([
      true,
      true,
      false,
      false,
      false,
      false,
      false,
    ]);
    expect(cases.map(accepts)).toEqual([true, true, false, false, false, false, false]);
  });

  it('is the one checked in at docs/openapi.json, with current client types (npm run openapi)', async () => {
    const checkedIn: unknown = JSON.parse(readFileSync(repository('docs/openapi.json'), 'utf8'));
    expect(checkedIn).toEqual(document);
    const types = readFileSync(repository('src/client/api-types.ts'), 'utf8');
    expect(types.endsWith(astToString(await openapiTS(structuredClone(document) as never)))).toBe(
      true,
    );
  });

  it('serves the API reference page at /docs without a key, with nothing loaded from elsewhere', async () => {
    const page = await fetch(`${service.base}/docs`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toContain('text/html');
    expect(page.headers.get('content-security-policy')).toContain("default-src 'self'");
    const html = await page.text();
    expect(html).toContain('swagger-ui');
    expect(html).not.toMatch(/(src|href)="https?:/);
    const initializer = await fetch(`${service.base}/docs/static/swagger-initializer.js`);
    expect(initializer.status).toBe(200);
    // One address for the document: the page's own copy answers with it.
    const json = await fetch(`${service.base}/docs/json`, { redirect: 'manual' });
    expect([json.status, json.headers.get('location')]).toEqual([308, '/v1/openapi.json']);
  });
});
