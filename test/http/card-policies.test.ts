import { describe, expect, it } from 'vitest';
import { useTestService } from '../support/http.js';

/**
 * Card-level policies, remaining limits and policy versions over real HTTP on PostgreSQL:
 * the routes' answers, scopes, idempotency, events and error bodies; a decline by a card's
 * policy naming it in the authorization, the transaction and its event; the limits agreeing
 * with the decisions to the last unit; every change a version with the key that made it.
 */
interface Reason {
  rule: string;
  message: string;
  policy?: string;
}
interface LimitJson {
  rule: string;
  interval: string;
  amount: string | null;
  count: number | null;
  used: string | number | null;
  remaining: string | number;
  resetsAt: string | null;
}
interface Json {
  id: string;
  object: string;
  vaultId: string;
  cardId?: string | null;
  version: number;
  approved: boolean;
  declineReason: Reason | null;
  shadowMatches: Reason[];
  limits: LimitJson[];
  data: {
    version: number;
    change: string;
    keyId: string | null;
    restoredFrom: number | null;
    document: unknown;
  }[];
  hasMore: boolean;
  nextCursor: string | null;
  deleted?: boolean;
  error?: { type: string; code: string; param?: string; message: string };
}

describe('card policies, limits and versions', () => {
  const harness = useTestService<Json>();
  const { call } = harness;
  const merchant = { name: 'Cafe', mcc: '5812', country: 'US' };
  let purchases = 0;

  const setup = async (initialDeposit = '1000') => {
    const vault = (
      await call('POST', '/v1/vaults', {
        name: 'C',
        currency: 'USDC',
        network: 'solana',
        initialDeposit,
      })
    ).body;
    const card = (await call('POST', '/v1/cards', { vaultId: vault.id, cardholderName: 'Ada' }))
      .body;
    return { vault, card };
  };
  const buy = async (cardId: string, amount: string, mcc = '5812') => {
    purchases += 1;
    return (
      await call('POST', '/v1/authorizations', {
        cardId,
        amount,
        currency: 'USDC',
        merchant: { ...merchant, mcc },
        networkTransactionId: `ntx-card-policies-${purchases}-${Date.now()}`,
      })
    ).body;
  };
  const keyIdOf = async (key: string) => {
    const authenticated = await harness.service.store.authenticateApiKey(key);
    if (authenticated.status !== 'ok') throw new Error('the key does not authenticate');
    return authenticated.key.id;
  };
  /** Another key of the first key's account, with `scopes`. */
  const accountKey = async (scopes: ('vaults:read' | 'policies:write')[]) => {
    const authenticated = await harness.service.store.authenticateApiKey(harness.key);
    if (authenticated.status !== 'ok') throw new Error('the key does not authenticate');
    const account = await harness.service.store.getAccount(authenticated.key.accountId);
    if (account === null) throw new Error('no account');
    return harness.service.key({ scopes, account: account.name });
  };
  const eventsOf = async (type: string, cardId: string) =>
    (
      await harness.service.store.client.query<{ payload: { data: { object: unknown } } }>(
        `SELECT payload FROM outbox_events WHERE type = $1 AND payload->'data'->'object'->>'cardId' = $2 ORDER BY id`,
        [type, cardId],
      )
    ).rows.map((row) => row.payload.data.object);

  it('sets, reads and deletes a card policy, as the vault routes do: scopes, idempotency, events', async () => {
    const { vault, card } = await setup();
    const document = { limits: [{ interval: 'daily', amount: '50' }] };
    const path = `/v1/cards/${card.id}/policy`;
    const put = () =>
      harness.service.request(harness.key, 'PUT', path, document, { 'Idempotency-Key': card.id });
    const set = await put();
    expect(set.status).toBe(200);
    expect(set.body).toMatchObject({
      object: 'policy',
      vaultId: vault.id,
      cardId: card.id,
      version: 1,
      limits: document.limits,
    });
    const replay = await put();
    expect([replay.headers.get('idempotent-replayed'), replay.body]).toEqual(['true', set.body]);
    expect((await call('GET', path)).body).toEqual(set.body);
    expect(await eventsOf('policy.updated', card.id)).toEqual([set.body]);

    const reader = await accountKey(['vaults:read']);
    expect((await call('PUT', path, document, reader.key)).body.error?.code).toBe(
      'insufficient_scope',
    );
    expect((await call('DELETE', path, undefined, reader.key)).body.error?.code).toBe(
      'insufficient_scope',
    );
    expect((await call('GET', path, undefined, reader.key)).status).toBe(200);
    const stranger = await harness.service.key({ account: `stranger-${card.id}` });
    expect((await call('GET', path, undefined, stranger.key)).body.error).toMatchObject({
      code: 'card_not_found',
      param: 'id',
    });
    const refused = await call('PUT', path, { limits: [{ interval: 'daily', amount: 'x' }] });
    expect([refused.status, refused.body.error?.code, refused.body.error?.param]).toEqual([
      400,
      'policy_invalid',
      'limits[0].amount',
    ]);

    const deleted = await call('DELETE', path);
    expect(deleted.body).toEqual({
      object: 'policy',
      vaultId: vault.id,
      cardId: card.id,
      deleted: true,
    });
    expect(await eventsOf('policy.deleted', card.id)).toEqual([deleted.body]);
    for (const answer of [await call('GET', path), await call('DELETE', path)]) {
      expect([answer.status, answer.body.error?.code, answer.body.error?.type]).toEqual([
        404,
        'policy_not_found',
        'invalid_request_error',
      ]);
    }
  });

  it("names the card's policy in a decline, in the answer, the transaction and its event", async () => {
    const { vault, card } = await setup();
    await call('PUT', `/v1/vaults/${vault.id}/policy`, {
      merchantCategories: { block: ['7995'] },
    });
    await call('PUT', `/v1/cards/${card.id}/policy`, {
      merchantCategories: { block: ['5411'] },
      rules: [
        {
          name: 'watch',
          mode: 'shadow',
          conditions: { all: [{ fact: 'amount', operator: 'greaterThan', value: 5 }] },
        },
      ],
    });
    const byCard = await buy(card.id, '10', '5411');
    const reason = {
      rule: 'merchantCategories',
      message: 'Merchant category is blocked',
      policy: 'card',
    };
    expect(byCard).toMatchObject({ approved: false, declineReason: reason });
    expect(byCard.shadowMatches).toEqual([
      { rule: 'watch', message: 'Declined by rule watch', policy: 'card' },
    ]);
    expect((await call('GET', `/v1/transactions/${byCard.id}`)).body.declineReason).toEqual(reason);
    const { rows } = await harness.service.store.client.query<{ reason: Reason }>(
      `SELECT payload->'data'->'object'->'declineReason' AS reason FROM outbox_events
       WHERE type = 'authorization.declined' AND payload->'data'->'object'->>'id' = $1`,
      [byCard.id],
    );
    expect(rows.map((row) => row.reason)).toEqual([reason]);
    // The vault's decline answers exactly as before card policies: no `policy`.
    expect((await buy(card.id, '10', '7995')).declineReason).toEqual({
      rule: 'merchantCategories',
      message: 'Merchant category is blocked',
    });
    const simulated = await call('POST', `/v1/vaults/${vault.id}/policy/simulate`, {
      transaction: { amount: '10', merchant: { ...merchant, mcc: '5411' }, cardId: card.id },
    });
    expect(simulated.body.declineReason).toEqual(reason);
  });

  it('answers remaining limits that agree with the decisions: spend them to 0, then a decline', async () => {
    const { vault, card } = await setup('10000');
    await call('PUT', `/v1/vaults/${vault.id}/policy`, {
      limits: [
        { interval: 'perTransaction', amount: '40' },
        { interval: 'weekly', amount: '100' },
      ],
      templates: [{ name: 'daily-transaction-count', params: { count: 30 } }],
    });
    await call('PUT', `/v1/cards/${card.id}/policy`, {
      limits: [
        { interval: 'monthly', amount: '75.25' },
        { interval: 'daily', count: 5, merchantCategories: ['5411'] },
      ],
    });
    const cardLimits = async () => (await call('GET', `/v1/cards/${card.id}/policy/limits`)).body;
    const first = await cardLimits();
    expect(first).toMatchObject({
      object: 'policy_limits',
      vaultId: vault.id,
      cardId: card.id,
      version: 1,
      currency: 'USDC',
    });
    expect(first.limits).toEqual([
      {
        rule: 'limits[0]',
        mode: 'enforce',
        interval: 'monthly',
        merchantCategories: null,
        amount: '75.25',
        currency: 'USDC',
        count: null,
        used: '0.00',
        remaining: '75.25',
        resetsAt: '2026-12-01T00:00:00.000Z',
      },
      expect.objectContaining({
        interval: 'daily',
        merchantCategories: ['5411'],
        count: 5,
        used: 0,
        remaining: 5,
      }) as unknown,
    ]);
    // Spend the card's monthly limit exactly, in steps the vault allows.
    for (let step = 0; step < 10; step++) {
      const remaining = (await cardLimits()).limits[0]?.remaining as string;
      if (remaining === '0.00') break;
      const amount = Math.min(Number(remaining), 30).toFixed(2);
      expect((await buy(card.id, amount)).approved).toBe(true);
    }
    expect((await cardLimits()).limits[0]).toMatchObject({ used: '75.25', remaining: '0.00' });
    expect((await buy(card.id, '0.01')).declineReason).toMatchObject({
      rule: 'limits[0]',
      policy: 'card',
    });
    const vaultLimits = (await call('GET', `/v1/vaults/${vault.id}/policy/limits`)).body;
    expect(vaultLimits.cardId).toBeNull();
    expect(vaultLimits.limits.map((limit) => [limit.rule, limit.used, limit.remaining])).toEqual([
      ['limits[0]', null, '40.00'],
      ['limits[1]', '75.25', '24.75'],
      ['daily-transaction-count', 3, 27],
    ]);
    const other = (await call('POST', '/v1/cards', { vaultId: vault.id, cardholderName: 'Grace' }))
      .body;
    expect((await buy(other.id, '24.75')).approved).toBe(true);
    expect((await buy(other.id, '0.000001')).declineReason).toEqual(
      expect.objectContaining({ rule: 'limits[1]' }),
    );
    expect((await call('GET', `/v1/cards/${other.id}/policy/limits`)).body.error?.code).toBe(
      'policy_not_found',
    );
  });

  it('lists every change as a version with its key, pages it, and restores a version', async () => {
    const { vault, card } = await setup();
    const keyId = await keyIdOf(harness.key);
    const writer = await accountKey(['policies:write', 'vaults:read']);
    const writerId = await keyIdOf(writer.key);
    const base = `/v1/vaults/${vault.id}/policy`;
    const first = { limits: [{ interval: 'daily', amount: '10' }] };
    await call('PUT', base, first);
    await call('PUT', base, { merchantCountries: { block: ['FR'] } }, writer.key);
    await call('DELETE', base, undefined, writer.key);
    const restored = await harness.service.request(
      harness.key,
      'POST',
      `${base}/versions/1/restore`,
      undefined,
      { 'Idempotency-Key': `restore-${vault.id}` },
    );
    expect([restored.status, restored.body]).toEqual([
      200,
      expect.objectContaining({ object: 'policy', version: 4, limits: first.limits }) as unknown,
    ]);
    const page = (await call('GET', `${base}/versions?limit=2`)).body;
    expect(page).toMatchObject({ object: 'list', hasMore: true, nextCursor: '3' });
    expect(page.data).toEqual([
      expect.objectContaining({
        object: 'policy_version',
        vaultId: vault.id,
        cardId: null,
        version: 4,
        change: 'restore',
        restoredFrom: 1,
        keyId,
        document: first,
      }) as unknown,
      expect.objectContaining({
        version: 3,
        change: 'delete',
        keyId: writerId,
        document: null,
      }) as unknown,
    ]);
    const rest = (await call('GET', `${base}/versions?limit=2&startingAfter=3`)).body;
    expect(rest.data.map((version) => [version.version, version.change])).toEqual([
      [2, 'set'],
      [1, 'set'],
    ]);
    expect(rest).toMatchObject({ hasMore: false, nextCursor: null });
    expect(JSON.stringify([page, rest])).not.toContain(writer.key);

    for (const [path, status, code, param] of [
      [`${base}/versions/9/restore`, 404, 'policy_not_found', 'version'],
      [`${base}/versions/v1/restore`, 404, 'policy_not_found', 'version'],
      [`${base}/versions/3/restore`, 400, 'parameter_invalid', 'version'],
      [`/v1/vaults/vlt_nope/policy/versions/1/restore`, 404, 'vault_not_found', 'id'],
    ] as const) {
      const answer = await call('POST', path);
      expect([answer.status, answer.body.error?.code, answer.body.error?.param]).toEqual([
        status,
        code,
        param,
      ]);
    }
    const badCursor = await call('GET', `${base}/versions?startingAfter=vlt_x`);
    expect([badCursor.status, badCursor.body.error?.param]).toEqual([400, 'startingAfter']);
    expect((await call('GET', `${base}/versions?limit=101`)).status).toBe(400);

    // A card's history, and a restore of it with its event.
    const cardBase = `/v1/cards/${card.id}/policy`;
    await call('PUT', cardBase, first);
    await call('DELETE', cardBase);
    const back = await call('POST', `${cardBase}/versions/1/restore`);
    expect(back.body).toMatchObject({ cardId: card.id, version: 3, limits: first.limits });
    expect(await eventsOf('policy.updated', card.id)).toHaveLength(2);
    const cardVersions = (await call('GET', `${cardBase}/versions`)).body.data;
    expect(cardVersions.map((version) => [version.version, version.change])).toEqual([
      [3, 'restore'],
      [2, 'delete'],
      [1, 'set'],
    ]);
    const reader = await accountKey(['vaults:read']);
    expect(
      (await call('POST', `${cardBase}/versions/1/restore`, undefined, reader.key)).body.error
        ?.code,
    ).toBe('insufficient_scope');
  });
});
