import { mkdirSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHROMIUM, ensureChromium } from '../support/chromium.js';
import { startTestService, type TestService } from '../support/http.js';

/**
 * The card display page (issue 18) as a cardholder sees it: in Debian's Chromium, headless,
 * framed by a customer's page served on another loopback port. Framed from an origin the
 * account registered, it shows the card's number, expiry and CVV, loads with no console error
 * (a CSP refusal of its own style or script included) and copies the number; framed from an
 * origin not registered, Chromium refuses to render it. Each page is saved as a screenshot
 * under artifacts/screenshots/, which CI keeps.
 */

const SCREENSHOTS = fileURLToPath(new URL('../../artifacts/screenshots/', import.meta.url));

/** A customer's page on a loopback port of its own: its origin, and the page it serves. */
interface Embedder {
  readonly origin: string;
  /** The iframe to serve next: the card display page's URL. */
  frameUrl: string;
  readonly server: Server;
}

async function startEmbedder(): Promise<Embedder> {
  const embedder = { frameUrl: 'about:blank' } as { frameUrl: string; server: Server };
  embedder.server = createServer((_request, response) => {
    response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    response.end(
      '<!doctype html><html><head><title>Customer dashboard</title></head>' +
        '<body style="font-family: sans-serif; background: #eef1f5; padding: 16px">' +
        '<h3>Your virtual card</h3>' +
        `<iframe src="${embedder.frameUrl}" allow="clipboard-write" ` +
        'style="width: 460px; height: 116px; border: 1px solid #ccd"></iframe></body></html>',
    );
  });
  await new Promise<void>((resolve) => embedder.server.listen(0, '127.0.0.1', resolve));
  const { port } = embedder.server.address() as AddressInfo;
  return Object.assign(embedder, { origin: `http://127.0.0.1:${port}` });
}

describe('the card display page in a browser', () => {
  let service: TestService;
  let key: string;
  let cardId: string;
  let number: string;
  let registered: Embedder;
  let stranger: Embedder;
  let browser: Browser;

  const call = async (method: string, path: string, body?: unknown) =>
    (await service.request(key, method, path, body)).body as {
      id: string;
      url: string;
      number: string;
      token: string;
    };

  /** A fresh page in a context of its own; its console errors and failed loads, collected. */
  const open = async (
    origin: string,
  ): Promise<{ page: Page; context: BrowserContext; problems: string[] }> => {
    const context = await browser.newContext({ viewport: { width: 520, height: 210 } });
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin });
    const page = await context.newPage();
    const problems: string[] = [];
    page.on('console', (message) => {
      if (message.type() === 'error') problems.push(`console: ${message.text()}`);
    });
    page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
    return { page, context, problems };
  };

  const frameUrl = async (style = ''): Promise<string> =>
    `${service.base}${(await call('POST', `/v1/cards/${cardId}/display-token`)).url}${style}`;

  beforeAll(async () => {
    ensureChromium();
    mkdirSync(SCREENSHOTS, { recursive: true });
    service = await startTestService({ redis: null });
    ({ key } = await service.key());
    registered = await startEmbedder();
    stranger = await startEmbedder();
    await call('PUT', '/v1/account/display-origins', { origins: [registered.origin] });
    const vault = await call('POST', '/v1/vaults', {
      name: 'B',
      currency: 'USDC',
      network: 'solana',
      initialDeposit: '5',
    });
    cardId = (await call('POST', '/v1/cards', { vaultId: vault.id, cardholderName: 'Ada' })).id;
    number = (await call('POST', `/v1/cards/${cardId}/reveal`)).number;
    // No sandbox: CI runs as root, where Chromium's sandbox refuses to start.
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  }, 900_000);

  afterAll(async () => {
    await browser?.close();
    for (const embedder of [registered, stranger]) {
      await new Promise((resolve) => embedder?.server.close(resolve));
    }
    await service?.close();
  });

  it('shows the number in a page of a registered origin, with no console error, and copies it', async () => {
    registered.frameUrl = await frameUrl();
    const { page, context, problems } = await open(registered.origin);
    await page.goto(registered.origin, { waitUntil: 'load' });
    const frame = page.frameLocator('iframe');
    await expect(frame.locator('#number').textContent()).resolves.toBe(
      number.replace(/(\d{4})(?=\d)/g, '$1 '),
    );
    await expect(frame.locator('#cvv').textContent()).resolves.toMatch(/^[0-9]{3}$/);
    await page.screenshot({ path: `${SCREENSHOTS}card-display.png` });
    await frame.getByRole('button', { name: 'Copy card number' }).click();
    await frame
      .getByRole('button', { name: 'Copy card number' })
      .filter({ hasText: 'Copied' })
      .waitFor();
    await expect(page.evaluate<string>('navigator.clipboard.readText()')).resolves.toBe(number);
    expect(problems).toEqual([]);
    await context.close();
  });

  it('takes the style the embedder sets', async () => {
    registered.frameUrl = await frameUrl(
      '&font=monospace&color=%23f4f4f4&background=%23172033&accent=%2359c3a5',
    );
    const { page, context, problems } = await open(registered.origin);
    await page.goto(registered.origin, { waitUntil: 'load' });
    await page.frameLocator('iframe').locator('#number').waitFor();
    const frame = page.frames().find((candidate) => candidate.url().includes('/card-display'));
    // An expression, evaluated in the frame: the tests' TypeScript has no DOM types.
    const background: unknown = await frame?.evaluate(
      'getComputedStyle(document.body).backgroundColor',
    );
    expect(background).toBe('rgb(23, 32, 51)');
    await page.screenshot({ path: `${SCREENSHOTS}card-display-styled.png` });
    expect(problems).toEqual([]);
    await context.close();
  });

  it('is refused by Chromium in a page of an origin the account did not register', async () => {
    stranger.frameUrl = await frameUrl();
    const { page, context, problems } = await open(stranger.origin);
    await page.goto(stranger.origin, { waitUntil: 'load' });
    await expect
      .poll(() => problems.some((problem) => problem.includes('frame-ancestors')))
      .toBe(true);
    for (const frame of page.frames()) {
      expect(await frame.locator('#number').count()).toBe(0);
      expect(await frame.content()).not.toContain(number.slice(-4));
    }
    await page.screenshot({ path: `${SCREENSHOTS}card-display-refused-origin.png` });
    await context.close();
  });

  it('says so, with no card, for a token already used or a style off the list', async () => {
    const used = await frameUrl();
    expect((await fetch(used)).status).toBe(200);
    for (const [name, url] of [
      ['card-display-used-token', used],
      ['card-display-bad-style', `${await frameUrl()}&font=comic-sans`],
    ] as const) {
      registered.frameUrl = url;
      const { page, context, problems } = await open(registered.origin);
      await page.goto(registered.origin, { waitUntil: 'load' });
      const alert = page.frameLocator('iframe').getByRole('alert');
      await expect(alert.textContent()).resolves.toMatch(/already used|does not take/);
      await page.screenshot({ path: `${SCREENSHOTS}${name}.png` });
      // The 404 or 400 of the frame's own load is the one error the console may show.
      expect(problems.filter((problem) => !/status of 40[04]/.test(problem))).toEqual([]);
      await context.close();
    }
  });
});
