import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONSOLE_CSP, CONSOLE_ROOT, registerConsole } from '../../src/http/console.js';
import { ensureConsoleBuilt } from '../support/console-build.js';

/**
 * /console as the API process serves it, over real HTTP: the built page under its CSP (self
 * only, framed by no one), hashed assets cached for good and the page never, /console sent on
 * to /console/; and a checkout without a build told what to run instead of a bare 404.
 */
describe('serving the console', () => {
  const built = Fastify();
  const unbuilt = Fastify();
  let builtBase: string;
  let unbuiltBase: string;

  beforeAll(async () => {
    ensureConsoleBuilt();
    registerConsole(built);
    registerConsole(unbuilt, join(mkdtempSync(join(tmpdir(), 'spendgate-console-')), 'none'));
    builtBase = await built.listen({ port: 0, host: '127.0.0.1' });
    unbuiltBase = await unbuilt.listen({ port: 0, host: '127.0.0.1' });
  });

  afterAll(async () => {
    await built.close();
    await unbuilt.close();
  });

  it('serves the page and its assets under a strict CSP, with no CDN', async () => {
    const page = await fetch(`${builtBase}/console/`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-security-policy')).toBe(CONSOLE_CSP);
    expect(page.headers.get('cache-control')).toBe('no-cache');
    expect(page.headers.get('x-content-type-options')).toBe('nosniff');
    const html = await page.text();
    const assets = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((match) => match[1] ?? '');
    expect(assets.filter((asset) => !asset.startsWith('data:'))).toEqual([
      expect.stringMatching(/^\/console\/assets\/index-[\w-]+\.js$/) as unknown,
      expect.stringMatching(/^\/console\/assets\/index-[\w-]+\.css$/) as unknown,
    ]);
    expect(html).not.toMatch(/<script>|<style>|https?:\/\//);
    for (const asset of assets.filter((path) => path.startsWith('/console/'))) {
      const response = await fetch(`${builtBase}${asset}`);
      expect([asset, response.status, response.headers.get('cache-control')]).toEqual([
        asset,
        200,
        'public, max-age=31536000, immutable',
      ]);
    }
    const bare = await fetch(`${builtBase}/console`, { redirect: 'manual' });
    expect([bare.status, bare.headers.get('location')]).toEqual([301, '/console/']);
    expect(CONSOLE_CSP).toContain("frame-ancestors 'none'");
    expect(CONSOLE_CSP).not.toMatch(/unsafe|\*|https?:/);
    expect(CONSOLE_ROOT.endsWith('/dist/console/')).toBe(true);
  });

  it('says to build it when dist/console is missing', async () => {
    const response = await fetch(`${unbuiltBase}/console/`);
    expect(response.status).toBe(503);
    const body = (await response.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe('service_unavailable');
    expect(body.error.message).toContain('npm run build');
  });
});
