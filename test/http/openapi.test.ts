import { readFileSync } from 'node:fs';
import SwaggerParser from '@apidevtools/swagger-parser';
import openapiTS, { astToString } from 'openapi-typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERROR_CATALOGUE } from '../../src/core/index.js';
import { documentedErrors } from '../support/reference-doc.js';
import { startTestService, type TestService } from '../support/http.js';

/**
 * The OpenAPI document: served, valid, complete (every route of the app), in step with the
 * error catalogue and docs/reference.md, and the checked-in copies clients build from
 * (docs/openapi.json and the typed client's types) are current: `npm run openapi` writes them.
 */
interface Document {
  openapi: string;
  paths: Record<string, Record<string, { operationId?: string; responses?: object }>>;
  components: { schemas: Record<string, unknown> };
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
      const match = /^([│ ├└─]*)(\/\S*) \(([A-Z, ]+)\)/.exec(line);
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

  it('is the one checked in at docs/openapi.json, with current client types (npm run openapi)', async () => {
    const checkedIn: unknown = JSON.parse(readFileSync(repository('docs/openapi.json'), 'utf8'));
    expect(checkedIn).toEqual(document);
    const types = readFileSync(repository('test/support/api-types.d.ts'), 'utf8');
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
    const json = await fetch(`${service.base}/docs/json`);
    expect(((await json.json()) as Document).paths).toEqual(document.paths);
  });
});
