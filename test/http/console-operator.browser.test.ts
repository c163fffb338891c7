import { mkdirSync } from 'node:fs';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reasonColour } from '../../console/src/reason-colour.js';
import { Decimal } from '../../src/core/index.js';
import { MERCHANT, networkId } from '../support/authorize.js';
import { CHROMIUM, ensureChromium } from '../support/chromium.js';
import { ensureConsoleBuilt } from '../support/console-build.js';
import { startTestService, type TestService } from '../support/http.js';
import { startReceiver, type Receiver } from '../support/receiver.js';
import { SOL_USD_FEED, solUsdPricing } from '../support/pricing.js';

/**
 * What an operator works with in the console (issue 40), in Debian's Chromium against a real
 * server and database, at a fixed clock (the store's starts at NOW_MS, the page's Date is held
 * there) and in New York's time zone: declines by reason stacked per minute and coloured by
 * name; a reversed hold shown `failed (reversed)`; a vault's deposit address, pending holds
 * captured and reversed, its policy and versions restored; vault names in the cards list and
 * the editor's breadcrumb; the API's own policy messages; a failing webhook endpoint's health
 * and a test's reason; one time format; the live page resumed where the last visit stopped;
 * a SOL vault's transaction timeline with each capture's billing amount and its own rate.
 * No console error or failed request on the way. Screenshots go to artifacts/screenshots/.
 */

const SCREENSHOTS = new URL('../../artifacts/screenshots/', import.meta.url);
const NOW_MS = Date.parse('2026-11-20T14:30:00.000Z');
const SCOPES = [
  'vaults:read',
  'vaults:write',
  'policies:write',
  'cards:read',
  'cards:write',
  'transactions:read',
  'webhooks:write',
  'authorizations:write',
] as const;
const POLICY_V1 = {
  limits: [{ interval: 'daily', amount: '100' }],
  rules: [
    {
      name: 'too-big',
      conditions: { all: [{ fact: 'amount', operator: 'greaterThan', value: 50 }] },
    },
  ],
};
const POLICY_V2 = {
  rules: [
    {
      name: 'too-big',
      conditions: { all: [{ fact: 'amount', operator: 'greaterThan', value: 500 }] },
    },
  ],
};

/** SOL/USD as the store reads it: this price, published at the store's clock. */
let solUsd = new Decimal(100);

describe('the console an operator works in (issue 40)', () => {
  let service: TestService;
  let receiver: Receiver;
  let browser: Browser;
  let page: Page;
  let key: string;
  let networkKey: string;
  let vaultId: string;
  let cardId: string;
  let endpointId: string;
  const holds: string[] = [];
  const problems: string[] = [];

  const shoot = async (name: string): Promise<void> => {
    await page.screenshot({ path: new URL(`${name}.png`, SCREENSHOTS).pathname, fullPage: true });
  };
  const call = async (method: string, path: string, body?: unknown): Promise<unknown> => {
    const answer = await service.request(key, method, path, body, {
      'idempotency-key': crypto.randomUUID(),
    });
    expect(answer.status, `${method} ${path} ${JSON.stringify(answer.body)}`).toBeLessThan(300);
    return answer.body;
  };
  const authorize = async (
    amount: string,
    on: { cardId: string; currency: string } = { cardId, currency: 'USDC' },
  ): Promise<{ approved: boolean; id: string }> => {
    const response = await fetch(`${service.base}/v1/authorizations`, {
      method: 'POST',
      headers: { authorization: `Bearer ${networkKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        cardId: on.cardId,
        amount,
        currency: on.currency,
        merchant: MERCHANT,
        networkTransactionId: networkId(),
      }),
    });
    expect(response.status).toBe(200);
    const answer = (await response.json()) as { approved: boolean; id: string | null };
    return { approved: answer.approved, id: answer.id ?? '' };
  };

  beforeAll(async () => {
    ensureChromium();
    ensureConsoleBuilt();
    mkdirSync(SCREENSHOTS, { recursive: true });
    const startedMs = Date.now();
    const clock = () => NOW_MS + (Date.now() - startedMs);
    service = await startTestService({
      redis: null,
      clock,
      pricing: solUsdPricing(clock, () => solUsd),
    });
    receiver = await startReceiver();
    const account = `operator-${String(process.pid)}`;
    key = (await service.key({ account, scopes: [...SCOPES] })).key;
    networkKey = (await service.key({ account, scopes: ['authorizations:write'] })).key;
    const vault = (await call('POST', '/v1/vaults', {
      name: 'Operations',
      currency: 'USDC',
      network: 'solana',
    })) as { id: string };
    vaultId = vault.id;
    await call('POST', '/v1/simulate/deposits', { vaultId, amount: '1000' });
    await call('POST', '/v1/vaults', { name: 'Travel', currency: 'USDC', network: 'solana' });
    await call('PUT', `/v1/vaults/${vaultId}/policy`, POLICY_V1);
    const card = (await call('POST', '/v1/cards', {
      vaultId,
      cardholderName: 'Ada Lovelace',
    })) as { id: string };
    cardId = card.id;
    // In one minute: too-big three times, three holds (30 + 40 + 20: 90 of 100), then the
    // daily limit twice: the top reason (3) and the next (2) share the minute's bar.
    const decided = [];
    for (const amount of ['75', '60', '80', '30', '40', '20', '15', '12']) {
      const decision = await authorize(amount);
      decided.push(decision.approved);
      if (decision.approved) holds.push(decision.id);
    }
    expect(decided).toEqual([false, false, false, true, true, true, false, false]);
    await call('PUT', `/v1/vaults/${vaultId}/policy`, POLICY_V2);
    // An endpoint that answers 500 to everything: two tests, both failed.
    const endpoint = (await call('POST', '/v1/webhooks', {
      url: receiver.url,
      events: ['*'],
    })) as { id: string; secret: string };
    endpointId = endpoint.id;
    receiver.secret = endpoint.secret;
    receiver.answer = () => 500;
    for (let attempt = 0; attempt < 2; attempt += 1) {
      const test = (await call('POST', `/v1/webhooks/${endpointId}/test`)) as {
        delivered: boolean;
      };
      expect(test.delivered).toBe(false);
    }
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
    const context = await browser.newContext({
      viewport: { width: 1280, height: 900 },
      timezoneId: 'America/New_York',
      locale: 'en-US',
    });
    page = await context.newPage();
    await page.clock.setFixedTime(new Date(NOW_MS));
    page.on('console', (message) => {
      if (message.type() === 'error') problems.push(`console: ${message.text()}`);
    });
    page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
    page.on('requestfailed', (request) => {
      // The live stream is aborted by design when its page is left.
      if (!request.url().endsWith('/v1/events/stream')) {
        problems.push(`failed: ${request.url()} ${request.failure()?.errorText ?? ''}`);
      }
    });
    page.on('response', (response) => {
      if (response.status() >= 400) problems.push(`${response.status()}: ${response.url()}`);
    });
    await page.goto(`${service.base}/console/`);
    await page.getByLabel('API key').fill(key);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Overview' }).waitFor();
  }, 900_000);

  afterAll(async () => {
    await browser?.close();
    await receiver?.close();
    await service?.close();
  });

  it('stacks the declines of a minute, the top reason first, each reason in its own colour', async () => {
    await page.goto(`${service.base}/console/#/live`);
    await page.getByTestId('stream-state').filter({ hasText: 'open' }).waitFor();
    const chart = page.getByTestId('decline-chart');
    // The last hour's decisions, read as the page opens: nothing starts from zero.
    await expect.poll(() => page.getByTestId('declined-count').textContent()).toBe('5');
    await expect(page.getByTestId('approved-count').textContent()).resolves.toBe('3');
    // Both reasons drawn, the top one first; one minute's bar is 3 + 2 high, not 3 over 2.
    await expect(chart.getAttribute('data-stack')).resolves.toBe('too-big,limits[0]');
    await expect(chart.getAttribute('data-tallest')).resolves.toBe('5');
    // Drawn so: the y-axis reaches the stack's top (bars over each other stopped at 3).
    const drawn = chart.locator('.chart[data-y-max]');
    await drawn.waitFor();
    expect(Number(await drawn.getAttribute('data-y-max'))).toBeGreaterThanOrEqual(5);
    const reasons = page.getByTestId('decline-reasons');
    const colours = async (): Promise<Record<string, string>> => {
      const found: Record<string, string> = {};
      for (const row of await reasons.locator('tr[data-reason]').all()) {
        found[(await row.getAttribute('data-reason')) ?? ''] =
          (await row.getAttribute('data-colour')) ?? '';
      }
      return found;
    };
    const first = await colours();
    // By name, not by rank: what any visit, with any other reasons, gives these two.
    expect(first).toEqual({
      'too-big': reasonColour('too-big'),
      'limits[0]': reasonColour('limits[0]'),
    });
    expect(first['too-big']).not.toBe(first['limits[0]']);
    await shoot('live-declines-stacked');
    await page.goto(`${service.base}/console/#/overview`);
    await page.goto(`${service.base}/console/#/live`);
    await expect.poll(() => page.getByTestId('declined-count').textContent()).toBe('5');
    expect(await colours()).toEqual(first);
    expect(problems).toEqual([]);
  });

  it('resumes the live page with Last-Event-ID, each decision once', async () => {
    await page.goto(`${service.base}/console/#/live`);
    await page.getByTestId('stream-state').filter({ hasText: 'open' }).waitFor();
    await expect.poll(() => page.getByTestId('declined-count').textContent()).toBe('5');
    // Read live: the tab keeps its id.
    const seen = await authorize('1');
    await page.locator(`tr[data-transaction="${seen.id}"]`).waitFor();
    await page.goto(`${service.base}/console/#/overview`);
    await page.getByRole('heading', { name: 'Overview' }).waitFor();
    // Decided while the page was away.
    const missed = await authorize('2');
    const streams: (string | undefined)[] = [];
    page.on('request', (request) => {
      if (request.url().endsWith('/v1/events/stream')) {
        streams.push(request.headers()['last-event-id']);
      }
    });
    await page.goto(`${service.base}/console/#/live`);
    await page.locator(`tr[data-transaction="${missed.id}"]`).waitFor();
    expect(streams[0]).toMatch(/^evt_/);
    await expect.poll(() => page.getByTestId('approved-count').textContent()).toBe('5');
    await expect(page.getByTestId('declined-count').textContent()).resolves.toBe('5');
    await expect(page.locator(`tr[data-transaction="${missed.id}"]`).count()).resolves.toBe(1);
    await expect(page.locator(`tr[data-transaction="${seen.id}"]`).count()).resolves.toBe(1);
    await shoot('live-resumed');
    expect(problems).toEqual([]);
  });

  it('shows a vault’s deposit address, and captures and reverses its pending holds', async () => {
    await page.goto(`${service.base}/console/#/vaults/${vaultId}`);
    await page.getByRole('heading', { name: 'Operations' }).waitFor();
    const vault = (await call('GET', `/v1/vaults/${vaultId}`)) as { depositAddress: string };
    expect(vault.depositAddress).toMatch(/^[1-9A-HJ-NP-Za-km-z]{32,44}$/);
    await expect(page.getByTestId('deposit-address').textContent()).resolves.toBe(
      vault.depositAddress,
    );
    const held = page.getByTestId('holds');
    const [reversed, captured] = holds;
    await held
      .locator(`tr[data-hold="${reversed ?? ''}"]`)
      .getByRole('button', { name: 'Reverse' })
      .click();
    await held.locator(`tr[data-hold="${reversed ?? ''}"]`).waitFor({ state: 'detached' });
    const capture = held.locator(`tr[data-hold="${captured ?? ''}"]`);
    await capture.getByLabel(/Amount to capture/).fill('35');
    await capture.getByRole('button', { name: 'Capture' }).click();
    await capture.waitFor({ state: 'detached' });
    expect(await call('GET', `/v1/transactions/${captured ?? ''}`)).toMatchObject({
      status: 'completed',
      capturedAmount: '35.00',
    });
    // The reversed purchase: failed, and why, in the list and in its details.
    const row = page.locator('table.transactions tbody tr').filter({ hasText: '30.00 USDC' });
    await row.getByText('failed (reversed)').waitFor();
    await expect(row.locator('td').last().textContent()).resolves.toBe('reversed');
    await row.getByRole('button').first().click();
    await expect(page.getByTestId('details-status').textContent()).resolves.toBe(
      'failed (reversed)',
    );
    await expect(page.locator('article.details').textContent()).resolves.toContain(
      'Failure reasonreversed',
    );
    await shoot('vault-holds');
    expect(problems).toEqual([]);
  });

  it('shows one time format: local time, UTC on hover', async () => {
    const times = page.locator('table.transactions time');
    await times.first().waitFor();
    const all = [];
    for (const element of await times.all()) {
      all.push({
        text: await element.textContent(),
        title: await element.getAttribute('title'),
        at: await element.getAttribute('datetime'),
      });
    }
    expect(all.length).toBeGreaterThan(5);
    for (const time of all) {
      // New York is five hours behind UTC in November.
      const at = Date.parse(time.at ?? '');
      expect(time.title).toBe(`${new Date(at).toISOString().replace('T', ' ').slice(0, 19)} UTC`);
      const local = new Date(at - 5 * 3_600_000).toISOString();
      const hour = Number(local.slice(11, 13));
      const clock = `${String(hour % 12 === 0 ? 12 : hour % 12).padStart(2, '0')}:${local.slice(14, 19)} ${hour < 12 ? 'AM' : 'PM'}`;
      expect(time.text).toBe(`Nov 20, 2026, ${clock}`);
    }
    // No raw ISO string left anywhere on the page.
    expect(await page.locator('main').textContent()).not.toMatch(/\d{4}-\d\d-\d\dT\d\d:/);
    expect(problems).toEqual([]);
  });

  it('shows the vault’s policy and its versions, and restores an earlier one', async () => {
    await expect(page.getByTestId('policy-document').textContent()).resolves.toContain(
      '"value": 500',
    );
    await page.getByText('Version history').click();
    const versions = page.getByTestId('policy-versions');
    await expect(versions.locator('tbody tr').count()).resolves.toBe(2);
    await page.getByRole('button', { name: 'Show version 1' }).click();
    await expect(page.getByTestId('policy-version-document').textContent()).resolves.toContain(
      '"interval": "daily"',
    );
    page.once('dialog', (dialog) => void dialog.accept());
    await page.getByRole('button', { name: 'Restore version 1' }).click();
    await page.getByText('Version 1 restored as version 3.').waitFor();
    // The versions are read again after the restore's answer.
    await versions.locator('tbody tr[data-version="3"]').waitFor();
    await expect(versions.locator('tbody tr').first().textContent()).resolves.toContain(
      'restored from version 1',
    );
    await expect(page.getByTestId('policy-document').textContent()).resolves.toContain(
      '"interval": "daily"',
    );
    await shoot('vault-policy-versions');
    expect(problems).toEqual([]);
  });

  it('names the vault in the cards list and the policy editor’s breadcrumb', async () => {
    await page.goto(`${service.base}/console/#/cards`);
    const row = page.locator(`tr[data-card="${cardId}"]`);
    // The row's link names the vault once the vaults are read (never the word "vault").
    await row.getByRole('link', { name: 'Operations', exact: true }).waitFor();
    await expect(row.getByRole('link').count()).resolves.toBe(1);
    await page.goto(`${service.base}/console/#/vaults/${vaultId}/policy`);
    const crumbs = page.getByRole('navigation', { name: 'Breadcrumb' });
    await crumbs.getByRole('link', { name: 'Operations' }).waitFor();
    expect(await crumbs.getByText('Vault', { exact: true }).count()).toBe(0);
    expect(problems).toEqual([]);
  });

  it('reports a draft policy’s fault in the API’s words, at its line', async () => {
    const editor = page.getByLabel('Policy JSON');
    await editor.fill('{\n  "limits": [\n    { "interval": "hourly", "amount": "5" }\n  ]\n}');
    const list = page.getByTestId('problems');
    await list.getByText(/^Line 3: /).waitFor();
    const refused = await service.request(key, 'PUT', `/v1/vaults/${vaultId}/policy`, {
      limits: [{ interval: 'hourly', amount: '5' }],
    });
    const error = (refused.body as { error: { param: string; message: string } }).error;
    // Word for word what Set Policy answers.
    await expect(list.textContent()).resolves.toBe(`Line 3: ${error.param}: ${error.message}`);
    expect(error.message).toContain('interval must be one of "perTransaction", "daily"');
    expect(await list.textContent()).not.toMatch(/Instance|schema/);
    await shoot('policy-editor-api-message');
    expect(problems).toEqual([]);
  });

  it('shows a failing webhook endpoint as failing, and why a test was not delivered', async () => {
    await page.goto(`${service.base}/console/#/webhooks`);
    const endpoint = page.locator(`article[data-endpoint="${endpointId}"]`);
    const health = endpoint.getByTestId('endpoint-health');
    await expect(health.textContent()).resolves.toBe(
      'failing: all 2 deliveries failed, last error http_status (HTTP 500)',
    );
    await endpoint.getByRole('button', { name: 'Deliveries' }).click();
    await endpoint.getByRole('button', { name: 'Test webhook' }).click();
    await expect(page.getByTestId('webhook-test').textContent()).resolves.toMatch(
      /^Not delivered: http_status \(HTTP 500\) after \d+ ms\.$/,
    );
    await health.getByText('failing: all 3 deliveries failed').waitFor();
    await shoot('webhooks-failing');
    expect(problems).toEqual([]);
  });

  it("shows each capture's billing amount and its own rate on a SOL vault's timeline", async () => {
    // Made last, so that no page shown before has the vault.
    const vault = (await call('POST', '/v1/vaults', {
      name: 'Treasury SOL',
      currency: 'SOL',
      network: 'solana',
    })) as { id: string };
    await call('POST', '/v1/simulate/deposits', { vaultId: vault.id, amount: '5' });
    const card = (await call('POST', '/v1/cards', {
      vaultId: vault.id,
      cardholderName: 'Ada Lovelace',
      billingCurrency: 'USD',
    })) as { id: string };
    solUsd = new Decimal(100);
    const held = await authorize('30.00', { cardId: card.id, currency: 'USD' });
    expect(held.approved).toBe(true);
    // Split shipment: 10 USD at 125, then 20 USD at 80, each at its own price.
    solUsd = new Decimal(125);
    await call('POST', `/v1/authorizations/${held.id}/capture`, { amount: '10.00', final: false });
    solUsd = new Decimal(80);
    await call('POST', `/v1/authorizations/${held.id}/capture`, { amount: '20.00' });
    const recorded = (await call('GET', `/v1/transactions/${held.id}/timeline`)) as {
      messages: { kind: string; rate: { at: string } | null }[];
    };
    const [, firstAt = '', secondAt = ''] = recorded.messages.map(
      (message) => message.rate?.at ?? '',
    );
    await page.goto(`${service.base}/console/#/vaults/${vault.id}`);
    await page.getByRole('heading', { name: 'Treasury SOL' }).waitFor();
    const row = page
      .locator('table.transactions tbody tr')
      .filter({ hasText: 'card_authorization' });
    await row.getByRole('button').first().click();
    const timeline = page.getByTestId('timeline');
    await timeline.waitFor();
    const converted = timeline.locator('td.converted');
    await expect(converted.count()).resolves.toBe(3);
    // The authorization converted at the transaction's rate: nothing of its own here.
    await expect(converted.allTextContents()).resolves.toEqual([
      '',
      `10.00 USD at 125 USD/SOL (pyth:${SOL_USD_FEED}, ${await localTime(firstAt)})`,
      `20.00 USD at 80 USD/SOL (pyth:${SOL_USD_FEED}, ${await localTime(secondAt)})`,
    ]);
    // Each rate's moment: local time shown, the UTC instant on hover and for machines.
    const times = converted.locator('time');
    await expect(times.nth(1).getAttribute('datetime')).resolves.toBe(secondAt);
    await expect(times.nth(1).getAttribute('title')).resolves.toBe(
      `${secondAt.replace('T', ' ').slice(0, 19)} UTC`,
    );
    await expect(converted.nth(1).locator('data').getAttribute('value')).resolves.toBe('125');
    await expect(timeline.locator('tbody tr').first().getAttribute('data-kind')).resolves.toBe(
      'authorization',
    );
    await shoot('vault-timeline-capture-rates');
    expect(problems).toEqual([]);
  });

  /** `at` as the page's Time shows it (New York, en-US). */
  async function localTime(at: string): Promise<string> {
    return page.evaluate(
      (iso) =>
        new Intl.DateTimeFormat(undefined, {
          year: 'numeric',
          month: 'short',
          day: 'numeric',
          hour: '2-digit',
          minute: '2-digit',
          second: '2-digit',
        }).format(Date.parse(iso)),
      at,
    );
  }
});
