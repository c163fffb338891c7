import { generateSync } from 'otplib';
import { describe, expect, it } from 'vitest';
import { isLuhnValid } from '../../src/store/ops/cards.js';
import { useTestService } from '../support/http.js';
import { TestClock } from '../support/store.js';

/**
 * Cards over real HTTP on PostgreSQL: create under the configured BIN, list with filters,
 * retrieve, reveal (scope, second factor, no caching), and every transition of contract
 * section 9, including the cards a vault's closing cancels.
 */
interface Json {
  id: string;
  object: string;
  status: string;
  vaultId: string;
  last4: string;
  expMonth: number;
  expYear: number;
  cardholderName: string;
  billingCurrency: string;
  metadata: Record<string, string>;
  cancelledAt: string | null;
  number: string;
  cvv: string;
  cardId: string;
  secret: string;
  data: { id: string; status: string }[];
  hasMore: boolean;
  nextCursor: string | null;
  error?: { code: string; param?: string; type: string };
}

const BIN = '51234567';

describe('card routes', () => {
  const clock = new TestClock();
  const harness = useTestService<Json>({ clock: clock.now, server: { cardBin: BIN } });
  const codeAt = (secret: string) =>
    generateSync({ secret, epoch: Math.floor(clock.nowMs / 1000) });
  const { call } = harness;
  const vault = async (as = harness.key) =>
    (
      await call(
        'POST',
        '/v1/vaults',
        { name: 'C', currency: 'USDC', network: 'solana', initialDeposit: '50' },
        as,
      )
    ).body;
  const card = async (vaultId: string, as = harness.key) =>
    call(
      'POST',
      '/v1/cards',
      { vaultId, cardholderName: 'Ada Lovelace', metadata: { team: 'ops' } },
      as,
    );

  it('creates a card under the BIN, shows only its last four, and reveals it with no caching', async () => {
    const { id: vaultId } = await vault();
    const created = await card(vaultId);
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      object: 'card',
      vaultId,
      status: 'active',
      cardholderName: 'Ada Lovelace',
      metadata: { team: 'ops' },
      cancelledAt: null,
    });
    expect(JSON.stringify(created.body)).not.toMatch(/"number"|"cvv"/);
    const now = new Date(clock.nowMs);
    expect([created.body.expMonth, created.body.expYear]).toEqual([
      now.getUTCMonth() + 1,
      now.getUTCFullYear() + 3,
    ]);
    const revealed = await call('POST', `/v1/cards/${created.body.id}/reveal`);
    expect(revealed.status).toBe(200);
    expect(revealed.headers.get('cache-control')).toBe('no-store');
    expect(revealed.body).toMatchObject({ object: 'card_details', cardId: created.body.id });
    expect(revealed.body.number).toMatch(/^[0-9]{16}$/);
    expect(revealed.body.number.startsWith(BIN)).toBe(true);
    expect(isLuhnValid(revealed.body.number)).toBe(true);
    expect(revealed.body.number.slice(-4)).toBe(created.body.last4);
    expect(revealed.body.cvv).toMatch(/^[0-9]{3}$/);
    const retrieved = await call('GET', `/v1/cards/${created.body.id}`);
    expect(retrieved.body).toEqual(created.body);
  });

  it('lists cards newest first, by vault and status, a page at a time', async () => {
    const own = await harness.service.key();
    const [first, second] = [await vault(own.key), await vault(own.key)];
    const a = (await card(first.id, own.key)).body;
    const b = (await card(first.id, own.key)).body;
    const c = (await card(second.id, own.key)).body;
    await call('POST', `/v1/cards/${b.id}/freeze`, undefined, own.key);
    const all = await call('GET', '/v1/cards', undefined, own.key);
    expect(all.body.data.map((x) => x.id)).toEqual([c.id, b.id, a.id]);
    const byVault = await call('GET', `/v1/cards?vaultId=${first.id}`, undefined, own.key);
    expect(byVault.body.data.map((x) => x.id)).toEqual([b.id, a.id]);
    const frozen = await call('GET', '/v1/cards?status=frozen', undefined, own.key);
    expect(frozen.body.data.map((x) => x.id)).toEqual([b.id]);
    const page = await call('GET', '/v1/cards?limit=2', undefined, own.key);
    expect([page.body.hasMore, page.body.nextCursor]).toEqual([true, b.id]);
    const next = await call('GET', `/v1/cards?limit=2&startingAfter=${b.id}`, undefined, own.key);
    expect([next.body.data.map((x) => x.id), next.body.hasMore]).toEqual([[a.id], false]);
    const badCursor = await call('GET', `/v1/cards?startingAfter=${first.id}`, undefined, own.key);
    expect([badCursor.status, badCursor.body.error?.param]).toEqual([400, 'startingAfter']);
  });

  it('freezes, unfreezes and cancels by the table of section 9', async () => {
    const { id: vaultId } = await vault();
    const { id } = (await card(vaultId)).body;
    const step = async (action: string) => {
      const answer = await call('POST', `/v1/cards/${id}/${action}`);
      return [answer.status, answer.body.status ?? answer.body.error?.code];
    };
    expect(await step('unfreeze')).toEqual([200, 'active']);
    expect(await step('freeze')).toEqual([200, 'frozen']);
    expect(await step('freeze')).toEqual([200, 'frozen']);
    expect(await step('unfreeze')).toEqual([200, 'active']);
    expect(await step('freeze')).toEqual([200, 'frozen']);
    expect(await step('cancel')).toEqual([200, 'cancelled']);
    expect(await step('cancel')).toEqual([200, 'cancelled']);
    expect(await step('freeze')).toEqual([409, 'card_cancelled']);
    expect(await step('unfreeze')).toEqual([409, 'card_cancelled']);
    expect((await call('GET', `/v1/cards/${id}`)).body.cancelledAt).not.toBeNull();
    // A cancelled card's number is never shown again.
    const reveal = await call('POST', `/v1/cards/${id}/reveal`);
    expect([reveal.status, reveal.body.error?.code]).toEqual([409, 'card_cancelled']);
  });

  it('updates the cardholder name and metadata, sending card.updated; a cancelled card stays as it is', async () => {
    const { id: vaultId } = await vault();
    const { id } = (await card(vaultId)).body;
    const renamed = await call('PATCH', `/v1/cards/${id}`, {
      cardholderName: 'Ada King',
      metadata: { team: null, site: 'London' },
    });
    expect([renamed.status, renamed.body.cardholderName, renamed.body.metadata]).toEqual([
      200,
      'Ada King',
      { site: 'London' },
    ]);
    expect((await call('GET', `/v1/cards/${id}`)).body.cardholderName).toBe('Ada King');
    const tooMany = Object.fromEntries(
      Array.from({ length: 50 }, (_, i) => [`k${String(i)}`, 'v']),
    );
    const refused = await call('PATCH', `/v1/cards/${id}`, { metadata: tooMany });
    expect([refused.status, refused.body.error?.code, refused.body.error?.param]).toEqual([
      400,
      'parameter_invalid',
      'metadata',
    ]);
    const blank = await call('PATCH', `/v1/cards/${id}`, { cardholderName: '' });
    expect([blank.status, blank.body.error?.param]).toEqual([400, 'cardholderName']);
    expect((await call('GET', `/v1/cards/${id}`)).body.metadata).toEqual({ site: 'London' });
    await call('POST', `/v1/cards/${id}/cancel`);
    const cancelled = await call('PATCH', `/v1/cards/${id}`, { cardholderName: 'Late' });
    expect([cancelled.status, cancelled.body.error?.code]).toEqual([409, 'card_cancelled']);
    const unknown = await call('PATCH', '/v1/cards/card_nope', { cardholderName: 'X' });
    expect([unknown.status, unknown.body.error?.code]).toEqual([404, 'card_not_found']);
  });

  it('bills in USD unless told, takes any ISO 4217 code, and refuses anything else', async () => {
    const { id: vaultId } = await vault();
    expect((await card(vaultId)).body.billingCurrency).toBe('USD');
    const euro = await call('POST', '/v1/cards', {
      vaultId,
      cardholderName: 'E',
      billingCurrency: 'EUR',
    });
    expect([euro.status, euro.body.billingCurrency]).toEqual([201, 'EUR']);
    expect((await call('GET', `/v1/cards/${euro.body.id}`)).body.billingCurrency).toBe('EUR');
    for (const billingCurrency of ['usd', 'USDC', 'XAU', 'ZZZ']) {
      const refused = await call('POST', '/v1/cards', {
        vaultId,
        cardholderName: 'E',
        billingCurrency,
      });
      expect([refused.status, refused.body.error?.param], billingCurrency).toEqual([
        400,
        'billingCurrency',
      ]);
    }
  });

  it('refuses a body on an operation that takes none, naming the key, and changes nothing', async () => {
    const { id: vaultId } = await vault();
    const { id } = (await card(vaultId)).body;
    for (const action of ['freeze', 'cancel']) {
      const refused = await call('POST', `/v1/cards/${id}/${action}`, { reason: 'lost' });
      expect([refused.status, refused.body.error?.code, refused.body.error?.param]).toEqual([
        400,
        'parameter_invalid',
        'reason',
      ]);
    }
    expect((await call('GET', `/v1/cards/${id}`)).body.status).toBe('active');
    // No body, null and {} are all "no body".
    expect((await call('POST', `/v1/cards/${id}/freeze`, {})).body.status).toBe('frozen');
    expect((await call('POST', `/v1/cards/${id}/unfreeze`, null)).body.status).toBe('active');
  });

  it('refuses a card on a frozen, closed or unknown vault, and cancels a closed vault’s cards', async () => {
    const frozen = await vault();
    await call('POST', `/v1/vaults/${frozen.id}/freeze`, { reason: 'audit' });
    const onFrozen = await card(frozen.id);
    expect([onFrozen.status, onFrozen.body.error?.code]).toEqual([409, 'vault_frozen']);

    const closing = await vault();
    const target = await vault();
    const [one, two] = [(await card(closing.id)).body, (await card(closing.id)).body];
    await call('POST', `/v1/cards/${two.id}/freeze`);
    const closed = await call('POST', `/v1/vaults/${closing.id}/close`, {
      destination: { vaultId: target.id },
    });
    expect(closed.status).toBe(200);
    for (const { id } of [one, two]) {
      expect((await call('GET', `/v1/cards/${id}`)).body.status).toBe('cancelled');
    }
    const onClosed = await card(closing.id);
    expect([onClosed.status, onClosed.body.error?.code]).toEqual([409, 'vault_closed']);
    const unknown = await card('vlt_0123456789abcdef0123456789abcdef');
    expect([unknown.status, unknown.body.error?.code, unknown.body.error?.param]).toEqual([
      404,
      'vault_not_found',
      'vaultId',
    ]);
  });

  it('answers card_not_found for an unknown card or another account’s, changing nothing', async () => {
    const { id: vaultId } = await vault();
    const { id } = (await card(vaultId)).body;
    const stranger = await harness.service.key();
    for (const [method, path] of [
      ['GET', `/v1/cards/${id}`],
      ['POST', `/v1/cards/${id}/reveal`],
      ['POST', `/v1/cards/${id}/freeze`],
      ['POST', `/v1/cards/${id}/cancel`],
    ] as const) {
      const answer = await call(method, path, undefined, stranger.key);
      expect([path, answer.status, answer.body.error?.code]).toEqual([path, 404, 'card_not_found']);
    }
    expect((await call('GET', `/v1/cards/${id}`)).body.status).toBe('active');
  });

  it('reveals only with cards:reveal, and with a fresh second factor once it is on', async () => {
    const own = await harness.service.key();
    const { id: vaultId } = await vault(own.key);
    const { id } = (await card(vaultId, own.key)).body;
    const reader = await harness.service.key({
      account: (await harness.service.store.getAccount(own.scope.accountId))?.name ?? '',
      scopes: ['cards:read', 'cards:write'],
    });
    const noScope = await call('POST', `/v1/cards/${id}/reveal`, undefined, reader.key);
    expect([noScope.status, noScope.body.error?.code]).toEqual([403, 'insufficient_scope']);

    const enrolment = await call('POST', '/v1/account/two-factor', undefined, own.key);
    const secret = enrolment.body.secret;
    const enable = await call(
      'POST',
      '/v1/account/two-factor/verify',
      { code: codeAt(secret) },
      own.key,
    );
    expect(enable.status).toBe(200);
    const reveal = (headers: Record<string, string>) =>
      harness.service.request(own.key, 'POST', `/v1/cards/${id}/reveal`, undefined, headers);
    const missing = await reveal({});
    expect([missing.status, (missing.body as Json).error?.code]).toEqual([
      403,
      'two_factor_required',
    ]);
    const wrong = await reveal({ 'x-two-factor-code': '000000' });
    expect([wrong.status, (wrong.body as Json).error?.code]).toEqual([
      403,
      'invalid_two_factor_code',
    ]);
    // The code that enabled two-factor was spent: a fresh one comes with the next time step.
    clock.advance(30_000);
    const code = codeAt(secret);
    const right = await reveal({ 'x-two-factor-code': code });
    expect(right.status).toBe(200);
    expect((right.body as Json).number).toMatch(/^[0-9]{16}$/);
    const reused = await reveal({ 'x-two-factor-code': code });
    expect([reused.status, (reused.body as Json).error?.code]).toEqual([
      403,
      'invalid_two_factor_code',
    ]);
  });
});
