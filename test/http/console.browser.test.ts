import { mkdirSync } from 'node:fs';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MERCHANT, networkId } from '../support/authorize.js';
import { CHROMIUM, ensureChromium } from '../support/chromium.js';
import { ensureConsoleBuilt } from '../support/console-build.js';
import { startTestService, type TestService } from '../support/http.js';
import { startReceiver, type Receiver } from '../support/receiver.js';

/**
 * The console (/console) end to end, in Debian's Chromium against a real server and database:
 * sign in with a key, create a vault and a card, watch an authorization (sent by the card
 * network's key through the real Authorize endpoint) appear live, write a policy (a refused
 * draft shows its problem on its line; the right one simulated, backtested and saved), see the
 * next authorization declined with its rule and the facts it saw, the webhooks page's Test
 * Webhook and delivery log, and a card's details through the hosted card display, then the
 * card frozen, unfrozen and cancelled. No console error, CSP refusal or failed request on the way.
 * Each page's screenshot goes to artifacts/screenshots/ (docs/screenshots/ holds a copy).
 */

const SCREENSHOTS = new URL('../../artifacts/screenshots/', import.meta.url);
const ALL_SCOPES = [
  'account:write',
  'vaults:read',
  'vaults:write',
  'policies:write',
  'cards:read',
  'cards:write',
  'cards:reveal',
  'transactions:read',
  'webhooks:write',
] as const;

/**
 * The page's form controls that have no name for a screen reader: no label, no aria-label,
 * and (for a button) no text. Run in the page (a string: this program has no DOM types).
 */
const UNLABELLED_CONTROLS = `[...document.querySelectorAll('input, select, textarea, button')]
  .filter((element) => !(element.labels?.length || element.getAttribute('aria-label') ||
    (element.tagName === 'BUTTON' && element.textContent.trim())))
  .map((element) => element.outerHTML.slice(0, 80))`;

describe('the console in a browser', () => {
  let service: TestService;
  let receiver: Receiver;
  let browser: Browser;
  let page: Page;
  let consoleKey: string;
  let networkKey: string;
  let vaultId: string;
  let cardId: string;
  /** Everything the page logged as an error, refused or failed to load. */
  const problems: string[] = [];

  const shoot = async (name: string): Promise<void> => {
    await page.screenshot({ path: new URL(`${name}.png`, SCREENSHOTS).pathname, fullPage: true });
  };
  /** One authorization through the real endpoint, as the card network sends it. */
  const authorize = async (amount: string): Promise<{ approved: boolean }> => {
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
    return (await response.json()) as { approved: boolean };
  };

  beforeAll(async () => {
    ensureChromium();
    ensureConsoleBuilt();
    mkdirSync(SCREENSHOTS, { recursive: true });
    service = await startTestService({ redis: null });
    receiver = await startReceiver();
    const account = `console-${String(process.pid)}`;
    consoleKey = (await service.key({ account, scopes: [...ALL_SCOPES] })).key;
    networkKey = (await service.key({ account, scopes: ['authorizations:write'] })).key;
    // No sandbox: CI runs as root, where Chromium's sandbox refuses to start.
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
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
  }, 900_000);

  afterAll(async () => {
    await browser?.close();
    await receiver?.close();
    await service?.close();
  });

  it('is served with a strict CSP, and signs in with a key kept in session storage only', async () => {
    const response = await page.goto(`${service.base}/console/`, { waitUntil: 'networkidle' });
    const csp = response?.headers()['content-security-policy'] ?? '';
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toContain('unsafe');
    await shoot('sign-in');
    // By keyboard alone: the field is the first Tab stop, the form submits with Enter.
    await page.keyboard.press('Tab');
    expect(await page.evaluate<string>('document.activeElement.id')).toBe('api-key');
    await page.keyboard.type(consoleKey);
    await page.keyboard.press('Enter');
    await page.getByRole('navigation', { name: 'Console' }).waitFor();
    // The first screen is the overview; with no vault yet, it says so.
    await page.getByRole('heading', { name: 'Overview' }).waitFor();
    await page.getByText('No vault yet').waitFor();
    expect(await page.evaluate<string>('document.cookie')).toBe('');
    expect(page.url()).not.toContain(consoleKey);
    const stored = await page.evaluate<string[]>('Object.values(sessionStorage)');
    expect(stored).toEqual([consoleKey]);
    expect(await page.evaluate<number>('localStorage.length')).toBe(0);
    expect(problems).toEqual([]);
  });

  it('creates a vault with a test deposit and shows its page with the balance history', async () => {
    await page
      .getByRole('navigation', { name: 'Console' })
      .getByRole('link', { name: 'Vaults' })
      .click();
    await page.getByRole('heading', { name: 'Vaults' }).waitFor();
    await page.getByText('New vault').click();
    await page.getByLabel('Name').fill('Marketing');
    await page.getByLabel('Test deposit (optional)').fill('500');
    await page.getByRole('button', { name: 'Create vault' }).click();
    await page.getByRole('heading', { name: 'Marketing' }).waitFor();
    vaultId = /#\/vaults\/(vlt_[0-9a-f]+)/.exec(page.url())?.[1] ?? '';
    expect(vaultId).toMatch(/^vlt_/);
    await expect(page.getByTestId('available').textContent()).resolves.toBe('500.00 USDC');
    await page.locator('.chart canvas').first().waitFor();
    await page.getByText('Daily balances as a table').click();
    await page.getByRole('cell', { name: 'live' }).waitFor();
    await shoot('vault');
    expect(problems).toEqual([]);
  });

  it('creates a card on the vault', async () => {
    await page.getByRole('link', { name: 'Cards' }).click();
    await page.getByText('New card').click();
    await page.getByLabel('Cardholder name').fill('Ada Lovelace');
    await page.getByRole('button', { name: 'Create card' }).click();
    const row = page.locator('tr[data-card]').filter({ hasText: 'Ada Lovelace' });
    await row.waitFor();
    cardId = (await row.getAttribute('data-card')) ?? '';
    expect(cardId).toMatch(/^card_/);
    await expect(row.textContent()).resolves.toContain('active');
    await shoot('cards');
    expect(problems).toEqual([]);
  });

  it('shows an authorization live as it is decided', async () => {
    await page.getByRole('link', { name: 'Live' }).click();
    await page.getByTestId('stream-state').filter({ hasText: 'open' }).waitFor();
    expect(await authorize('12.50')).toMatchObject({ approved: true });
    const row = page.getByTestId('decisions').locator('tr.approved');
    await row.waitFor();
    await expect(row.textContent()).resolves.toContain('12.50 USDC');
    await expect(page.getByTestId('approved-count').textContent()).resolves.toBe('1');
    expect(problems).toEqual([]);
  });

  it('places a draft policy’s problems on their lines, then simulates, backtests and saves it', async () => {
    await page.goto(`${service.base}/console/#/vaults/${vaultId}/policy`);
    await page.getByRole('heading', { name: 'Policy editor' }).waitFor();
    const editor = page.getByLabel('Policy JSON');
    await editor.fill('{\n  "rules": [\n    { "name": "too-big", "conditionz": {} }\n  ]\n}');
    const problemList = page.getByTestId('problems');
    await problemList
      .getByText(/^Line 3: /)
      .first()
      .waitFor();
    // The API's own words for the first fault, at its param (the validator Set Policy runs).
    await expect(problemList.textContent()).resolves.toContain(
      'rules[0].conditions: conditions is required.',
    );
    // A template from the rule library, added to the draft as its example names it.
    await editor.fill('{}');
    await page.getByLabel('Add a template from the rule library').selectOption('block-gambling');
    await expect(editor.inputValue()).resolves.toContain('"name": "block-gambling"');
    await page.getByText('No problem found.').waitFor();
    // A draft the schema takes and the compiler refuses: the server's `param` placed on its line.
    const unknownFact = {
      rules: [
        {
          name: 'too-big',
          conditions: { all: [{ fact: 'nope', operator: 'greaterThan', value: 50 }] },
        },
      ],
    };
    await editor.fill(JSON.stringify(unknownFact, null, 2));
    await page.getByText('No problem found.').waitFor();
    await page.getByRole('button', { name: 'Simulate with the draft' }).click();
    await problemList.getByText(/^Line 8: .*\(policy_invalid\)$/).waitFor();
    // The refusal is the one failed request so far (Chromium logs a 400 as an error).
    expect(problems.filter((problem) => !problem.startsWith('console:'))).toEqual([
      `400: ${service.base}/v1/vaults/${vaultId}/policy/simulate`,
    ]);
    problems.length = 0;
    const policy = {
      rules: [
        {
          name: 'too-big',
          conditions: { all: [{ fact: 'amount', operator: 'greaterThan', value: 50 }] },
        },
      ],
    };
    await editor.fill(JSON.stringify(policy, null, 2));
    await page.getByText('No problem found.').waitFor();
    await page.getByLabel('Amount').fill('80');
    await page.getByRole('button', { name: 'Simulate with the draft' }).click();
    await expect(page.getByTestId('simulation').textContent()).resolves.toContain(
      'Declined (authorization_failed) by too-big',
    );
    await page.getByRole('button', { name: 'Run backtest' }).click();
    const backtest = page.getByTestId('backtest');
    await backtest.waitFor();
    await expect(backtest.textContent()).resolves.toContain('1 authorizations, 1 replayed');
    await page.getByRole('button', { name: 'Save policy' }).click();
    await page.getByText('Saved as version 1.').waitFor();
    await shoot('policy-editor');
    expect(problems).toEqual([]);
  });

  it('shows the next authorization declined, with the rule and the facts it saw', async () => {
    await page.getByRole('link', { name: 'Live' }).click();
    await page.getByTestId('stream-state').filter({ hasText: 'open' }).waitFor();
    expect(await authorize('75')).toMatchObject({ approved: false });
    const row = page.getByTestId('decisions').locator('tr.declined');
    await row.waitFor();
    await expect(row.textContent()).resolves.toContain('too-big');
    await expect(page.getByTestId('declined-count').textContent()).resolves.toBe('1');
    await expect(page.getByTestId('decline-reasons').textContent()).resolves.toContain('too-big');
    await row.getByRole('button').click();
    const details = page.locator('article.details');
    await expect(details.locator('.decline-rule').textContent()).resolves.toContain('too-big');
    await expect(details.textContent()).resolves.toContain('Cafe Rio (MCC 5812, US, Austin)');
    await expect(details.textContent()).resolves.toContain('authorization_failed');
    await shoot('live');
    expect(problems).toEqual([]);
  });

  it('lists the vault’s transactions with the filters of the API', async () => {
    await page.goto(`${service.base}/console/#/vaults/${vaultId}`);
    const table = page.locator('table.transactions');
    await table.getByText('declined', { exact: true }).waitFor();
    await page.getByText('Filters', { exact: true }).click();
    await page.getByLabel('Status').selectOption('declined');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await table.locator('tbody tr').filter({ hasText: 'deposit' }).waitFor({ state: 'detached' });
    await expect(table.locator('tbody tr').count()).resolves.toBe(1);
    // The reason column: the message written for people, the rule's name on hover.
    const reason = table.locator('tbody tr td[title]');
    await expect(reason.getAttribute('title')).resolves.toBe('too-big');
    await expect(reason.textContent()).resolves.toBe('Declined by rule too-big');
    expect(problems).toEqual([]);
  });

  it('registers a webhook endpoint, tests it and shows the delivery log', async () => {
    await page.getByRole('link', { name: 'Webhooks' }).click();
    await page.getByText('New endpoint').click();
    await page.getByLabel('URL').fill(receiver.url);
    await page.getByRole('button', { name: 'Create endpoint' }).click();
    await page.getByText('Signing secret (shown once)').waitFor();
    await page.getByRole('button', { name: 'Deliveries' }).click();
    await page.getByRole('button', { name: 'Test webhook' }).click();
    await expect(page.getByTestId('webhook-test').textContent()).resolves.toMatch(
      /^Delivered: 200 in \d+ ms\.$/,
    );
    const log = page.getByTestId('deliveries');
    await log.getByText('webhook.test').waitFor();
    await expect(log.textContent()).resolves.toMatch(/succeeded200\d+ ms/);
    expect(receiver.received.map((delivery) => delivery.body.type)).toEqual(['webhook.test']);
    await shoot('webhooks');
    expect(problems).toEqual([]);
  });

  it('reveals a card’s details through the hosted card display, never in the console’s page', async () => {
    await page.getByRole('link', { name: 'Cards' }).click();
    const row = page.locator(`tr[data-card="${cardId}"]`);
    await row.getByRole('button', { name: 'Show details' }).click();
    // The display page may be framed only by origins the account registered: this one first.
    await page.getByRole('button', { name: 'Allow this console to show card details' }).click();
    await page.getByRole('button', { name: 'Reveal card details' }).click();
    const frame = page.frameLocator('iframe.card-frame');
    const number = (await frame.locator('#number').textContent()) ?? '';
    const last4 = /•••• ([0-9]{4})/.exec((await row.textContent()) ?? '')?.[1] ?? '';
    expect(number.replace(/\s/g, '')).toMatch(new RegExp(`^424242[0-9]{6}${last4}$`));
    await expect(frame.locator('#cvv').textContent()).resolves.toMatch(/^[0-9]{3}$/);
    // The number is in the frame alone: the console's own document never held it.
    expect(await page.content()).not.toContain(number.replace(/\s/g, '').slice(6, 12));
    await shoot('card-details');
    expect(problems).toEqual([]);
  });

  it('freezes, unfreezes and cancels a card, asking before the cancel', async () => {
    const row = page.locator(`tr[data-card="${cardId}"]`);
    await row.getByRole('button', { name: 'Freeze' }).click();
    await row.getByRole('cell', { name: 'frozen' }).waitFor();
    await row.getByRole('button', { name: 'Unfreeze' }).click();
    await row.getByRole('cell', { name: 'active' }).waitFor();
    const asked: string[] = [];
    page.once('dialog', (dialog) => {
      asked.push(dialog.message());
      void dialog.accept();
    });
    await row.getByRole('button', { name: 'Cancel' }).click();
    await row.getByRole('cell', { name: 'cancelled' }).waitFor();
    expect(asked).toEqual([expect.stringContaining('Cancel the card ending') as unknown]);
    expect(await row.getByRole('button').count()).toBe(0);
    expect(problems).toEqual([]);
  });

  it('shows a narrower key only what its scopes allow', async () => {
    const account = `console-${String(process.pid)}`;
    const { key } = await service.key({ account, scopes: ['vaults:read', 'transactions:read'] });
    const context = await browser.newContext();
    const reader = await context.newPage();
    await reader.goto(`${service.base}/console/`);
    await reader.getByLabel('API key').fill(key);
    await reader.getByRole('button', { name: 'Sign in' }).click();
    const nav = reader.getByRole('navigation', { name: 'Console' });
    await nav.getByRole('link', { name: 'Vaults' }).waitFor();
    await expect(nav.getByRole('link').allTextContents()).resolves.toEqual([
      'Overview',
      'Vaults',
      'Live',
    ]);
    await reader.getByRole('heading', { name: 'Overview' }).waitFor();
    await nav.getByRole('link', { name: 'Vaults' }).click();
    await reader.getByRole('link', { name: 'Marketing' }).waitFor();
    expect(await reader.getByText('New vault').count()).toBe(0);
    await reader.getByRole('link', { name: 'Marketing' }).click();
    await reader.getByRole('heading', { name: 'Transactions' }).waitFor();
    expect(await reader.getByRole('heading', { name: 'Cards' }).count()).toBe(0);
    await reader.getByRole('button', { name: 'View policy' }).waitFor();
    await context.close();
  });

  it('labels every control, and fits a phone’s width', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    const pages = [
      'overview',
      'vaults',
      `vaults/${vaultId}`,
      `vaults/${vaultId}/policy`,
      'live',
      'cards',
      'webhooks',
    ];
    for (const path of pages) {
      await page.goto(`${service.base}/console/#/${path}`, { waitUntil: 'networkidle' });
      await page.locator('main h1').first().waitFor();
      const unlabelled = await page.evaluate<string[]>(UNLABELLED_CONTROLS);
      expect(unlabelled, path).toEqual([]);
      const overflow = await page.evaluate<number>(
        'document.documentElement.scrollWidth - document.documentElement.clientWidth',
      );
      expect(overflow, path).toBe(0);
    }
    await page.goto(`${service.base}/console/#/vaults/${vaultId}`, { waitUntil: 'networkidle' });
    await shoot('phone-vault');
    expect(problems).toEqual([]);
  });
});
