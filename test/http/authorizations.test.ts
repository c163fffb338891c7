import { describe, expect, it } from 'vitest';
import { fundedCard, MERCHANT, networkId, type DecisionJson } from '../support/authorize.js';
import { useTestService } from '../support/http.js';

/**
 * The card network's money path over real HTTP on PostgreSQL (contract sections 7-10): each
 * decision and decline code, shadow rules, the repeated callback, capture and reverse (full
 * and partial) with their events, and 500 concurrent callbacks that never overdraw a vault.
 */
interface Json extends Omit<DecisionJson, 'id'> {
  id: string;
  type: string;
  capturedAmount: string;
  failureReason: string | null;
  balance: { available: string; pending: string; ledger: string };
  error?: { code: string; param?: string };
}

describe('authorizations', () => {
  const harness = useTestService<Json>();
  const { call } = harness;
  const authorize = (cardId: string, amount: string | number, extra: object = {}) =>
    call('POST', '/v1/authorizations', {
      cardId,
      amount,
      currency: 'USDC',
      merchant: MERCHANT,
      networkTransactionId: networkId(),
      ...extra,
    });
  const balanceOf = async (vaultId: string) =>
    (await call('GET', `/v1/vaults/${vaultId}`)).body.balance;
  const eventsFor = async (id: string) => {
    const { rows } = await harness.service.store.client.query<{ type: string }>(
      `SELECT type FROM outbox_events WHERE payload->'data'->'object'->>'id' = $1 ORDER BY id`,
      [id],
    );
    return rows.map((row) => row.type);
  };

  it('approves with a hold, records it, and emits authorization.approved in the same change', async () => {
    const { vaultId, cardId } = await fundedCard(harness, '100');
    const answer = await authorize(cardId, '12.5');
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({
      object: 'authorization',
      approved: true,
      status: 'pending',
      declineCode: null,
      declineReason: null,
      amount: '12.50',
      currency: 'USDC',
      cardId,
      vaultId,
      standIn: false,
      shadowMatches: [],
    });
    expect(answer.body.decidedInMicros).toBeGreaterThan(0);
    expect(await balanceOf(vaultId)).toEqual({
      available: '87.50',
      pending: '12.50',
      ledger: '100.00',
    });
    const recorded = await call('GET', `/v1/transactions/${answer.body.id}`);
    expect(recorded.body).toMatchObject({ type: 'card_authorization', status: 'pending' });
    expect(await eventsFor(answer.body.id)).toEqual(['authorization.approved']);
  });

  it('declines with each code of section 10, in its order, recording each decline', async () => {
    const { vaultId, cardId } = await fundedCard(harness, '100');
    const declineOf = (answer: Awaited<ReturnType<typeof authorize>>) => {
      expect(answer.status).toBe(200);
      expect([answer.body.approved, answer.body.status]).toEqual([false, 'declined']);
      return [answer.body.declineCode, answer.body.declineReason?.rule];
    };
    const unknown = await authorize('card_0123456789abcdef0123456789abcdef', '1');
    expect(declineOf(unknown)).toEqual(['card_declined', 'card_not_found']);
    expect([unknown.body.id, unknown.body.vaultId]).toEqual([null, null]);
    expect(declineOf(await authorize(cardId, '100.01'))).toEqual([
      'insufficient_balance',
      'available_balance',
    ]);
    const mismatch = await authorize(cardId, '1', { currency: 'SOL' });
    expect(declineOf(mismatch)[0]).toBe('card_declined');

    await call('PUT', `/v1/vaults/${vaultId}/policy`, {
      limits: [{ interval: 'perTransaction', amount: '50' }],
    });
    const policy = await authorize(cardId, '60');
    expect(declineOf(policy)).toEqual(['authorization_failed', 'limits[0]']);
    expect(await eventsFor(policy.body.id)).toEqual(['authorization.declined']);
    // The policy comes before the balance: 200 is over both, and the policy answers.
    expect(declineOf(await authorize(cardId, '200'))[0]).toBe('authorization_failed');

    await call('POST', `/v1/cards/${cardId}/freeze`);
    expect(declineOf(await authorize(cardId, '1'))).toEqual(['card_declined', 'card_frozen']);
    await call('POST', `/v1/cards/${cardId}/unfreeze`);
    await call('POST', `/v1/vaults/${vaultId}/freeze`);
    expect(declineOf(await authorize(cardId, '1'))).toEqual(['card_declined', 'vault_frozen']);
    await call('POST', `/v1/vaults/${vaultId}/unfreeze`);

    const declined = await call('GET', `/v1/transactions?vaultId=${vaultId}&status=declined`);
    expect((declined.body as unknown as { data: unknown[] }).data).toHaveLength(6);
    // Nothing was held by any of them.
    expect(await balanceOf(vaultId)).toEqual({
      available: '100.00',
      pending: '0.00',
      ledger: '100.00',
    });
  });

  it('reports shadow rules without declining', async () => {
    const { vaultId, cardId } = await fundedCard(harness, '100');
    await call('PUT', `/v1/vaults/${vaultId}/policy`, {
      rules: [
        {
          name: 'watch-big',
          action: 'decline',
          mode: 'shadow',
          message: 'Big spend',
          conditions: { all: [{ fact: 'amount', operator: 'greaterThan', value: 5 }] },
        },
      ],
    });
    const big = await authorize(cardId, '6');
    expect([big.body.approved, big.body.shadowMatches.map((match) => match.rule)]).toEqual([
      true,
      ['watch-big'],
    ]);
    const small = await authorize(cardId, '5');
    expect([small.body.approved, small.body.shadowMatches]).toEqual([true, []]);
  });

  it('answers a repeated callback with the first decision, placing nothing twice', async () => {
    const { vaultId, cardId } = await fundedCard(harness, '10');
    const body = {
      cardId,
      amount: '6',
      currency: 'USDC',
      merchant: MERCHANT,
      networkTransactionId: networkId(),
    };
    const first = await call('POST', '/v1/authorizations', body);
    const again = await Promise.all(
      Array.from({ length: 5 }, () => call('POST', '/v1/authorizations', body)),
    );
    for (const answer of again) {
      expect(answer.headers.get('idempotent-replayed')).toBe('true');
      expect([answer.body.id, answer.body.approved]).toEqual([first.body.id, true]);
    }
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    // Even with another amount: the network's id names the authorization.
    const changed = await call('POST', '/v1/authorizations', { ...body, amount: '9' });
    expect([changed.body.id, changed.body.amount]).toEqual([first.body.id, '6.00']);
    expect((await balanceOf(vaultId)).pending).toBe('6.00');
  });

  it('captures fully or partly, releasing the rest of the hold, with transaction.completed', async () => {
    const { vaultId, cardId } = await fundedCard(harness, '100');
    const partial = await authorize(cardId, '10');
    const captured = await call('POST', `/v1/authorizations/${partial.body.id}/capture`, {
      amount: '7.25',
    });
    expect(captured.status).toBe(200);
    expect(captured.body).toMatchObject({
      object: 'transaction',
      status: 'completed',
      amount: '10.00',
      capturedAmount: '7.25',
    });
    expect(await balanceOf(vaultId)).toEqual({
      available: '92.75',
      pending: '0.00',
      ledger: '92.75',
    });
    expect(await eventsFor(partial.body.id)).toEqual([
      'authorization.approved',
      'transaction.captured',
      'transaction.completed',
    ]);
    const whole = await authorize(cardId, '2');
    const all = await call('POST', `/v1/authorizations/${whole.body.id}/capture`);
    expect([all.status, all.body.capturedAmount]).toEqual([200, '2.00']);
    expect((await balanceOf(vaultId)).ledger).toBe('90.75');
  });

  it('reverses partly (still pending, smaller) then fully (failed, reversed), with transaction.failed', async () => {
    const { vaultId, cardId } = await fundedCard(harness, '100');
    const held = await authorize(cardId, '10');
    const part = await call('POST', `/v1/authorizations/${held.body.id}/reverse`, {
      amount: '3',
    });
    expect([part.status, part.body.status]).toEqual([200, 'pending']);
    expect((await balanceOf(vaultId)).pending).toBe('7.00');
    const rest = await call('POST', `/v1/authorizations/${held.body.id}/reverse`);
    expect([rest.body.status, rest.body.failureReason]).toEqual(['failed', 'reversed']);
    expect(await balanceOf(vaultId)).toEqual({
      available: '100.00',
      pending: '0.00',
      ledger: '100.00',
    });
    expect(await eventsFor(held.body.id)).toEqual(['authorization.approved', 'transaction.failed']);
  });

  it('refuses capture and reverse outside the rules, changing nothing', async () => {
    const { vaultId, cardId } = await fundedCard(harness, '100');
    const held = await authorize(cardId, '10');
    const refusals = [
      [`/v1/authorizations/${held.body.id}/capture`, { amount: '0' }, 400, 'invalid_amount'],
      [`/v1/authorizations/${held.body.id}/reverse`, { amount: '0' }, 400, 'invalid_amount'],
      [
        `/v1/authorizations/${held.body.id}/capture`,
        { amount: '1.0000001' },
        400,
        'invalid_amount',
      ],
      [
        '/v1/authorizations/txn_0123456789abcdef0123456789abcdef/capture',
        {},
        404,
        'transaction_not_found',
      ],
      // Contract v1.1: a malformed id is an id that names nothing, not a 400.
      ['/v1/authorizations/txn_nope/capture', {}, 404, 'transaction_not_found'],
      ['/v1/authorizations/txn_%00%E2%9C%93/reverse', {}, 404, 'transaction_not_found'],
    ] as const;
    for (const [path, body, status, code] of refusals) {
      const answer = await call('POST', path, body);
      expect([path, answer.status, answer.body.error?.code]).toEqual([path, status, code]);
    }
    expect((await balanceOf(vaultId)).pending).toBe('10.00');
    await call('POST', `/v1/authorizations/${held.body.id}/capture`);
    // Contract v1.1: a transaction no longer pending is a conflict, 409 transaction_not_pending,
    // whether it was captured, reversed, expired or declined.
    const reversed = await authorize(cardId, '1');
    await call('POST', `/v1/authorizations/${reversed.body.id}/reverse`);
    const expired = await authorize(cardId, '1');
    // Expiry is the store's reverse with reason `expired`, as the maintenance schedule runs it.
    const accountId = (await call('GET', '/v1/account')).body.id;
    await harness.service.store.reverse(
      { accountId, mode: 'test' },
      expired.body.id,
      null,
      'expired',
    );
    expect((await call('GET', `/v1/transactions/${expired.body.id}`)).body.failureReason).toBe(
      'expired',
    );
    const declined = await authorize(cardId, '1000');
    expect(declined.body.status).toBe('declined');
    for (const id of [held.body.id, reversed.body.id, expired.body.id, declined.body.id]) {
      const again = await call('POST', `/v1/authorizations/${id}/reverse`);
      expect([again.status, again.body.error?.code, again.body.error?.param]).toEqual([
        409,
        'transaction_not_pending',
        'id',
      ]);
      // Contract v1.2, section 16: a capture always posts, late ones too; without an amount
      // there is nothing held to name, so it is malformed (transaction-lifecycle.test.ts).
      const capture = await call('POST', `/v1/authorizations/${id}/capture`);
      expect([capture.status, capture.body.error?.code]).toEqual([400, 'invalid_amount']);
    }
    // A transfer's transaction is not an authorization.
    const deposit = await call('GET', `/v1/transactions?vaultId=${vaultId}&status=completed`);
    const depositId = (
      deposit.body as unknown as { data: { id: string; type: string }[] }
    ).data.find((transaction) => transaction.type === 'deposit')?.id;
    const notAuthorization = await call('POST', `/v1/authorizations/${depositId ?? ''}/reverse`);
    expect(notAuthorization.body.error?.code).toBe('transaction_not_found');
  });

  it('refuses a malformed callback with the contract error, and a key without the scope', async () => {
    const { cardId } = await fundedCard(harness, '100');
    // Neither a vault asset nor an ISO 4217 code (EUR is one: declined currency_mismatch).
    const unknownCurrency = await authorize(cardId, '1', { currency: 'EURC' });
    expect([unknownCurrency.status, unknownCurrency.body.error?.code]).toEqual([
      400,
      'invalid_currency',
    ]);
    const negative = await authorize(cardId, '-1');
    expect([negative.status, negative.body.error?.param]).toEqual([400, 'amount']);
    const noNetworkId = await call('POST', '/v1/authorizations', {
      cardId,
      amount: '1',
      currency: 'USDC',
      merchant: MERCHANT,
    });
    expect([noNetworkId.status, noNetworkId.body.error?.param]).toEqual([
      400,
      'networkTransactionId',
    ]);
    const reader = await harness.service.key({ scopes: ['cards:read'] });
    const refused = await call(
      'POST',
      '/v1/authorizations',
      {
        cardId,
        amount: '1',
        currency: 'USDC',
        merchant: MERCHANT,
        networkTransactionId: networkId(),
      },
      reader.key,
    );
    expect([refused.status, refused.body.error?.code]).toEqual([403, 'insufficient_scope']);
  });

  it('never overdraws: 500 concurrent callbacks on a vault funded for 200 approve exactly 200', async () => {
    const { vaultId, cardId } = await fundedCard(harness, '200');
    const answers = await Promise.all(Array.from({ length: 500 }, () => authorize(cardId, '1')));
    expect(answers.every((answer) => answer.status === 200)).toBe(true);
    const approved = answers.filter((answer) => answer.body.approved);
    expect(approved).toHaveLength(200);
    expect(
      answers.filter((answer) => answer.body.declineCode === 'insufficient_balance'),
    ).toHaveLength(300);
    expect(await balanceOf(vaultId)).toEqual({
      available: '0.00',
      pending: '200.00',
      ledger: '200.00',
    });
    expect(harness.service.store.authorizeStats().fallbacks).toBe(0);
  });
});
