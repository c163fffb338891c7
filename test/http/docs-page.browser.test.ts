import { readFileSync } from 'node:fs';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHROMIUM, ensureChromium } from '../support/chromium.js';
import { startTestService, type TestService } from '../support/http.js';

/**
 * The API reference page (/docs) as a reader sees it: in Debian's Chromium, headless, against
 * a real server. It must load without a single console error (a CSP refusal included), list
 * every operation of the document with its summary, and render the policy document's schema.
 */

interface Document {
  paths: Record<string, Record<string, { operationId: string; summary?: string }>>;
}

describe('the API reference page in a browser', () => {
  let service: TestService;
  let browser: Browser;
  let page: Page;
  let document: Document;
  /** Everything the page logged as an error, refused or failed to load. */
  const problems: string[] = [];
  /** The paths of every document the page asked for. */
  const documentsAsked: string[] = [];

  beforeAll(async () => {
    ensureChromium();
    service = await startTestService({ redis: null });
    document = (await (await fetch(`${service.base}/v1/openapi.json`)).json()) as Document;
    // No sandbox: CI runs as root, where Chromium's sandbox refuses to start.
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
    page = await browser.newPage();
    page.on('console', (message) => {
      if (message.type() === 'error') problems.push(`console: ${message.text()}`);
    });
    page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
    page.on('requestfailed', (request) =>
      problems.push(`failed: ${request.url()} ${request.failure()?.errorText ?? ''}`),
    );
    page.on('request', (request) => {
      const path = new URL(request.url()).pathname;
      if (/json$/.test(path)) documentsAsked.push(path);
    });
    page.on('response', (response) => {
      if (response.status() >= 400) problems.push(`${response.status()}: ${response.url()}`);
    });
    await page.goto(`${service.base}/docs`, { waitUntil: 'networkidle' });
    await page.locator('.opblock').first().waitFor();
  }, 900_000);

  afterAll(async () => {
    await browser?.close();
    await service?.close();
  });

  it('loads with no console error, refused content or failed request', async () => {
    expect(await page.title()).toBe('Swagger UI');
    await expect(page.locator('.info .title').textContent()).resolves.toContain('spendgate');
    expect(problems).toEqual([]);
  });

  it('reads and links the document at its one address, with the package version', async () => {
    expect(documentsAsked).toEqual(['/v1/openapi.json']);
    await expect(page.locator('.info .link').first().getAttribute('href')).resolves.toBe(
      '/v1/openapi.json',
    );
    const manifest = JSON.parse(
      readFileSync(new URL('../../package.json', import.meta.url), 'utf8'),
    ) as { version: string };
    const shown = await page.locator('.info .version').first().textContent();
    expect(shown?.trim()).toBe(manifest.version);
  });

  it('lists every operation of the document, each with its summary', async () => {
    const operations = Object.values(document.paths).flatMap((methods) => Object.values(methods));
    expect(operations.length).toBeGreaterThan(40);
    expect(await page.locator('.opblock').count()).toBe(operations.length);
    const summaries = await page.locator('.opblock-summary-description').allTextContents();
    expect(summaries.sort()).toEqual(operations.map((operation) => operation.summary).sort());
  });

  it("renders the policy document's schema as Set Policy's body", async () => {
    const operation = page.locator('#operations-policies-setPolicy');
    await operation.locator('.opblock-summary').click();
    const body = operation.locator('.opblock-section-request-body');
    await body.getByRole('tab', { name: 'Schema' }).click();
    const model = body.locator('.model-box');
    await model.filter({ hasText: 'PolicyDocument' }).waitFor();
    const titles = model.locator('.json-schema-2020-12__title');
    const fields = ['limits', 'merchantCategories', 'merchantCountries', 'templates', 'rules'];
    expect(await titles.allTextContents()).toEqual(['PolicyDocument', ...fields]);
    await expect(model.innerText()).resolves.toContain('Every part is optional');
    // A field opens onto its own structure: a limit's interval, with the field's description.
    const limits = model
      .locator('.json-schema-2020-12-property')
      .filter({ has: page.locator('.json-schema-2020-12__title', { hasText: /^limits$/ }) });
    await limits.locator('.json-schema-2020-12-accordion').first().click();
    await limits.filter({ hasText: 'Spend limits' }).waitFor();
    await limits.locator('.json-schema-2020-12-accordion').nth(1).click();
    await limits.locator('.json-schema-2020-12__title', { hasText: /^interval$/ }).waitFor();
    expect(problems).toEqual([]);
  });
});
