import { mkdirSync } from 'node:fs';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MERCHANT, networkId } from '../support/authorize.js';
import { CHROMIUM, ensureChromium } from '../support/chromium.js';
import { ensureConsoleBuilt } from '../support/console-build.js';
import { startTestService, type TestService } from '../support/http.js';

/**
 * The console's first screen and the balance chart, in Debian's Chromium against a real server
 * and database, at a fixed clock (the store's starts at NOW_MS, the page's Date is held there):
 * the overview's totals per currency, today's approvals and declines with their chart, the top
 * decline reason by its message, a vault near its daily limit; then the balance history of one
 * day, a week and 90 days (snapshots written straight into balance_snapshots: the API makes
 * history only as days pass), each chart's x-axis bounds around its first and last day.
 * No console error or failed request on the way. Screenshots go to artifacts/screenshots/.
 */

const SCREENSHOTS = new URL('../../artifacts/screenshots/', import.meta.url);
const NOW_MS = Date.parse('2026-11-20T14:30:00.000Z');
const DAY_S = 86_400;
const TODAY_S = Date.parse('2026-11-20T00:00:00.000Z') / 1000;
const SCOPES = [
  'vaults:read',
  'vaults:write',
  'policies:write',
  'cards:read',
  'cards:write',
  'transactions:read',
];
const TOO_BIG = 'Declined: over 50 USDC at once';

describe('the console’s overview and balance chart in a browser', () => {
  let service: TestService;
  let browser: Browser;
  let page: Page;
  let key: string;
  let networkKey: string;
  const problems: string[] = [];
  const histories = new Map<string, string>();

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
  const newVault = async (name: string, deposit?: string): Promise<string> => {
    const vault = (await call('POST', '/v1/vaults', {
      name,
      currency: 'USDC',
      network: 'solana',
    })) as { id: string };
    if (deposit !== undefined) {
      await call('POST', '/v1/simulate/deposits', { vaultId: vault.id, amount: deposit });
    }
    return vault.id;
  };
  const authorize = async (cardId: string, amount: string): Promise<boolean> => {
    const response = await fetch(`${service.base}/v1/authorizations`, {
      method: 'POST',
      headers: { authorization: `Bearer ${networkKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        cardId,
        amount,
        currency: 'USDC',
        merchant: MERCHANT,
        networkTransactionId: networkId(),
      }),
    });
    expect(response.status).toBe(200);
    return ((await response.json()) as { approved: boolean }).approved;
  };
  /** `days` end-of-day snapshots before today, the ledger growing 10 a day. */
  const writeHistory = async (vaultId: string, days: number): Promise<void> => {
    await service.store.client.query(
      `INSERT INTO balance_snapshots (vault_id, day, currency, ledger, pending, available, created_at)
       SELECT $1, ($2::date - d), 'USDC', (1000 - 10 * d)::numeric, 0, (1000 - 10 * d)::numeric, now()
       FROM generate_series(1, $3::int) AS d`,
      [vaultId, '2026-11-20', days],
    );
  };

  beforeAll(async () => {
    ensureChromium();
    ensureConsoleBuilt();
    mkdirSync(SCREENSHOTS, { recursive: true });
    const startedMs = Date.now();
    service = await startTestService({
      redis: null,
      clock: () => NOW_MS + (Date.now() - startedMs),
    });
    const account = `overview-${String(process.pid)}`;
    key = (await service.key({ account, scopes: SCOPES as never })).key;
    networkKey = (await service.key({ account, scopes: ['authorizations:write'] })).key;
    const operations = await newVault('Operations', '1000');
    await newVault('Travel', '250');
    await call('PUT', `/v1/vaults/${operations}/policy`, {
      limits: [{ interval: 'daily', amount: '100' }],
      rules: [
        {
          name: 'too-big',
          message: TOO_BIG,
          conditions: { all: [{ fact: 'amount', operator: 'greaterThan', value: 50 }] },
        },
      ],
    });
    const card = (await call('POST', '/v1/cards', {
      vaultId: operations,
      cardholderName: 'Ada Lovelace',
    })) as { id: string };
    const decided = [];
    // Too big at once twice (within the daily limit), four approved (90 of 100), then over it.
    for (const amount of ['75', '60', '30', '25', '20', '15', '15']) {
      decided.push(await authorize(card.id, amount));
    }
    expect(decided).toEqual([false, false, true, true, true, true, false]);
    for (const [name, days] of [
      ['One day', 1],
      ['One week', 6],
      ['Ninety days', 89],
    ] as const) {
      const id = await newVault(name);
      await writeHistory(id, days);
      histories.set(name, id);
    }
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    await page.clock.setFixedTime(new Date(NOW_MS));
    page.on('console', (message) => {
      if (message.type() === 'error') problems.push(`console: ${message.text()}`);
    });
    page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
    page.on('requestfailed', (request) => {
      problems.push(`failed: ${request.url()} ${request.failure()?.errorText ?? ''}`);
    });
    page.on('response', (response) => {
      if (response.status() >= 400) problems.push(`${response.status()}: ${response.url()}`);
    });
  }, 900_000);

  afterAll(async () => {
    await browser?.close();
    await service?.close();
  });

  it('opens on the overview: totals, today’s decisions, top reasons, vaults to watch', async () => {
    await page.goto(`${service.base}/console/`);
    await page.getByLabel('API key').fill(key);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Overview' }).waitFor();
    const usdc = page.getByTestId('totals').locator('tr[data-currency="USDC"]');
    await usdc.waitFor();
    // 1000 + 250 deposited; 70 held by four approvals (30 + 25 + 20 + 15 = 90).
    await expect(usdc.locator('td').allTextContents()).resolves.toEqual([
      '5',
      '1160.00',
      '90.00',
      '1250.00',
    ]);
    await expect(page.getByTestId('today-approved').textContent()).resolves.toBe('4');
    await expect(page.getByTestId('today-declined').textContent()).resolves.toBe('3');
    const reason = page.getByTestId('top-reasons').locator('tr').first();
    await expect(reason.textContent()).resolves.toBe(`${TOO_BIG}2`);
    await expect(reason.locator('th').getAttribute('title')).resolves.toBe('too-big');
    const second = page.getByTestId('top-reasons').locator('tr').nth(1);
    await expect(second.locator('th').getAttribute('title')).resolves.toBe('limits[0]');
    await expect(second.locator('td').textContent()).resolves.toBe('1');
    const watch = page.getByTestId('watchlist');
    await expect(watch.textContent()).resolves.toContain(
      'Operations: limits[0] (daily): 90.00 of 100.00 USDC used, 10.00 left',
    );
    const chart = page.locator('section[aria-labelledby="today-title"] .chart[data-x-min]');
    await chart.waitFor();
    const xMin = Number(await chart.getAttribute('data-x-min'));
    expect(xMin).toBeGreaterThanOrEqual(TODAY_S);
    expect(Number(await chart.getAttribute('data-x-max'))).toBeLessThan(TODAY_S + DAY_S);
    await page.getByRole('link', { name: 'All vaults' }).waitFor();
    await shoot('overview');
    expect(problems).toEqual([]);
  });

  for (const [name, days, shot] of [
    ['One day', 1, 'history-1-day'],
    ['One week', 6, 'history-week'],
    ['Ninety days', 89, 'history-90-days'],
  ] as const) {
    it(`draws the balance history of ${name.toLowerCase()} across its own days`, async () => {
      await page.goto(`${service.base}/console/#/vaults/${histories.get(name) ?? ''}`);
      await page.getByRole('heading', { name }).waitFor();
      const history = (await call(
        'GET',
        `/v1/vaults/${histories.get(name) ?? ''}/balance/history?limit=90`,
      )) as { data: { date: string }[] };
      const dates = history.data.map((day) => day.date);
      expect(dates[0]).toBe('2026-11-20');
      expect(dates).toContain(new Date((TODAY_S - days * DAY_S) * 1000).toISOString().slice(0, 10));
      const first = Date.parse(`${dates.at(-1) ?? ''}T00:00:00Z`) / 1000;
      // This vault's days, not the page's previous vault's.
      const rows = page.locator('section[aria-labelledby="history-title"] details tbody tr');
      await expect.poll(() => rows.count()).toBe(dates.length);
      const chart = page.locator('section[aria-labelledby="history-title"] .chart[data-x-min]');
      await chart.waitFor();
      const xMin = Number(await chart.getAttribute('data-x-min'));
      const xMax = Number(await chart.getAttribute('data-x-max'));
      const span = TODAY_S - first;
      // Around the first day and today, padded by at most a tenth of the span or a day.
      const padMax = Math.max(span / 10, DAY_S);
      expect(xMin).toBeLessThan(first);
      expect(xMin).toBeGreaterThanOrEqual(first - padMax);
      expect(xMax).toBeGreaterThan(TODAY_S);
      expect(xMax).toBeLessThanOrEqual(TODAY_S + padMax);
      await shoot(shot);
      expect(problems).toEqual([]);
    });
  }
});
