import { describe, expect, it } from 'vitest';
import { useTestService } from '../support/http.js';
import { TestClock } from '../support/store.js';

/**
 * Processor connections over real HTTP on PostgreSQL (contract v1.2, section 17): the secrets
 * are stored encrypted and answered once; list and get never show them; a rotation keeps the
 * previous secrets verifying for its grace; delete erases them; a card is tied to one
 * processor card per connection.
 */
interface Json {
  id: string;
  object: string;
  processor: string;
  mode: string;
  url: string;
  secrets?: Record<string, string>;
  previousSecretsUntil: string | null;
  rotatedAt: string | null;
  processorCard: { connectionId: string; cardId: string } | null;
  data: { id: string }[];
  deleted?: boolean;
  error?: { code: string; param?: string };
}

const SECRET = 'whsec_connections_first_secret';

describe('processor connections', () => {
  const clock = new TestClock();
  const harness = useTestService<Json>({ clock: clock.now });
  const { call } = harness;
  const connect = (body: Record<string, unknown> = {}) =>
    call('POST', '/v1/processors', {
      processor: 'stripe',
      mode: 'test',
      signingSecret: SECRET,
      ...body,
    });
  const scope = async () => {
    const account = await call('GET', '/v1/account');
    return { accountId: account.body.id, mode: 'test' as const };
  };

  it('answers the secrets once, keeps them encrypted, and never shows them again', async () => {
    const created = await connect();
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      object: 'processor_connection',
      processor: 'stripe',
      mode: 'test',
      url: `/v1/processors/stripe/${created.body.id}`,
      secrets: { signingSecret: SECRET },
      previousSecretsUntil: null,
    });
    expect(created.body.id).toMatch(/^pc_[0-9a-f]{32}$/);
    const got = await call('GET', `/v1/processors/${created.body.id}`);
    expect(got.status).toBe(200);
    expect(JSON.stringify(got.body)).not.toContain(SECRET);
    expect(got.body.secrets).toBeUndefined();
    const listed = await call('GET', '/v1/processors');
    expect(listed.body.data.map((connection) => connection.id)).toContain(created.body.id);
    expect(JSON.stringify(listed.body)).not.toContain(SECRET);
    // Encrypted at rest: the row holds no trace of the secret.
    const { rows } = await harness.service.store.client.query<{ row: string }>(
      'SELECT p::text AS row FROM processor_connections p WHERE id = $1',
      [created.body.id],
    );
    expect(rows[0]?.row).toBeDefined();
    expect(rows[0]?.row).not.toContain(SECRET);
    expect(rows[0]?.row).not.toContain('connections_first');
    const secrets = await harness.service.store.processorConnectionSecrets(
      'stripe',
      created.body.id,
    );
    expect(secrets.secrets).toEqual([{ signingSecret: SECRET }]);
  });

  it('replays a creation with its Idempotency-Key without the secrets, creating nothing', async () => {
    const body = { processor: 'stripe', mode: 'test', signingSecret: SECRET };
    const headers = { 'idempotency-key': 'connect-once' };
    const first = await harness.service.request(
      harness.key,
      'POST',
      '/v1/processors',
      body,
      headers,
    );
    const again = await harness.service.request(
      harness.key,
      'POST',
      '/v1/processors',
      body,
      headers,
    );
    expect([first.status, again.status]).toEqual([201, 201]);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect((again.body as Json).id).toBe((first.body as Json).id);
    expect((again.body as Json).secrets).toBeUndefined();
  });

  it('refuses bad input with the error body, creating nothing', async () => {
    const before = (await call('GET', '/v1/processors')).body.data.length;
    const cases: [Record<string, unknown>, number, string, string][] = [
      [{ signingSecret: 'not_a_whsec_secret' }, 400, 'parameter_invalid', 'signingSecret'],
      [{ signingSecret: undefined }, 400, 'parameter_missing', 'signingSecret'],
      [{ processor: 'adyen' }, 400, 'parameter_invalid', 'processor'],
      [{ mode: 'live' }, 400, 'parameter_invalid', 'mode'],
      [{ asaSecret: 'a-lithic-secret' }, 400, 'parameter_invalid', 'asaSecret'],
      [
        { processor: 'marqeta', signingSecret: undefined, username: 'gateway-user' },
        400,
        'parameter_missing',
        'password',
      ],
      [{ unknownField: 'x' }, 400, 'parameter_invalid', 'unknownField'],
    ];
    for (const [body, status, code, param] of cases) {
      const answer = await connect(body);
      expect(
        [answer.status, answer.body.error?.code, answer.body.error?.param],
        JSON.stringify(body),
      ).toEqual([status, code, param]);
    }
    expect((await call('GET', '/v1/processors')).body.data.length).toBe(before);
    const marqeta = await connect({
      processor: 'marqeta',
      signingSecret: undefined,
      username: 'gateway-user',
      password: 'gateway-password',
    });
    expect([marqeta.status, marqeta.body.processor]).toEqual([201, 'marqeta']);
  });

  it('rotates: both secrets verify through the grace, the old one no longer after it', async () => {
    const created = await connect();
    const rotated = await call('POST', `/v1/processors/${created.body.id}/rotate`, {
      signingSecret: 'whsec_connections_second_secret',
      graceSeconds: 3600,
    });
    expect(rotated.status).toBe(200);
    expect(rotated.body.secrets).toEqual({ signingSecret: 'whsec_connections_second_secret' });
    expect(rotated.body.previousSecretsUntil).toBe(new Date(clock.nowMs + 3600_000).toISOString());
    const store = harness.service.store;
    expect((await store.processorConnectionSecrets('stripe', created.body.id)).secrets).toEqual([
      { signingSecret: 'whsec_connections_second_secret' },
      { signingSecret: SECRET },
    ]);
    clock.advance(3600_000 + 1);
    expect((await store.processorConnectionSecrets('stripe', created.body.id)).secrets).toEqual([
      { signingSecret: 'whsec_connections_second_secret' },
    ]);
    expect(
      (await call('GET', `/v1/processors/${created.body.id}`)).body.previousSecretsUntil,
    ).toBeNull();
    // A rotation gives the processor's own secrets: another's are refused, nothing changed.
    const wrong = await call('POST', `/v1/processors/${created.body.id}/rotate`, {
      username: 'someone-else',
    });
    expect([wrong.status, wrong.body.error?.code, wrong.body.error?.param]).toEqual([
      400,
      'parameter_invalid',
      'username',
    ]);
    const tooLong = await call('POST', `/v1/processors/${created.body.id}/rotate`, {
      signingSecret: 'whsec_connections_third_secret',
      graceSeconds: 8 * 24 * 3600,
    });
    expect([tooLong.status, tooLong.body.error?.param]).toEqual([400, 'graceSeconds']);
    expect(
      (await store.processorConnectionSecrets('stripe', created.body.id)).secrets,
    ).toHaveLength(1);
  });

  it('deletes: the secrets are erased, the connection is not found, its cards are untied', async () => {
    const created = await connect();
    const vault = await call('POST', '/v1/vaults', {
      name: 'P',
      currency: 'USDC',
      network: 'solana',
      initialDeposit: '10',
    });
    const card = await call('POST', '/v1/cards', {
      vaultId: vault.body.id,
      cardholderName: 'Ada',
      processorCard: { connectionId: created.body.id, cardId: 'ic_deleted_1' },
    });
    expect(card.body.processorCard).toEqual({
      connectionId: created.body.id,
      cardId: 'ic_deleted_1',
    });
    const deleted = await call('DELETE', `/v1/processors/${created.body.id}`);
    expect(deleted.body).toEqual({
      object: 'processor_connection',
      id: created.body.id,
      deleted: true,
    });
    expect((await call('GET', `/v1/processors/${created.body.id}`)).body.error?.code).toBe(
      'processor_not_found',
    );
    await expect(
      harness.service.store.processorConnectionSecrets('stripe', created.body.id),
    ).rejects.toMatchObject({ code: 'processor_not_found' });
    expect((await call('GET', `/v1/cards/${card.body.id}`)).body.processorCard).toBeNull();
    const { rows } = await harness.service.store.client.query<{ secrets_enc: string | null }>(
      'SELECT secrets_enc FROM processor_connections WHERE id = $1',
      [created.body.id],
    );
    expect(rows[0]?.secrets_enc).toBeNull();
  });

  it('ties a card to one processor card per connection, on create and update', async () => {
    const first = await connect();
    const second = await connect();
    const vault = await call('POST', '/v1/vaults', {
      name: 'T',
      currency: 'USDC',
      network: 'solana',
      initialDeposit: '10',
    });
    const tie = (connectionId: string, cardId: string) => ({ connectionId, cardId });
    const a = await call('POST', '/v1/cards', {
      vaultId: vault.body.id,
      cardholderName: 'A',
      processorCard: tie(first.body.id, 'ic_shared'),
    });
    expect(a.status).toBe(201);
    const b = await call('POST', '/v1/cards', { vaultId: vault.body.id, cardholderName: 'B' });
    expect(b.body.processorCard).toBeNull();
    // The same processor card on the same connection: refused, and nothing changed.
    const taken = await call('PATCH', `/v1/cards/${b.body.id}`, {
      cardholderName: 'B2',
      processorCard: tie(first.body.id, 'ic_shared'),
    });
    expect([taken.status, taken.body.error?.code, taken.body.error?.param]).toEqual([
      400,
      'parameter_invalid',
      'processorCard.cardId',
    ]);
    const createdTaken = await call('POST', '/v1/cards', {
      vaultId: vault.body.id,
      cardholderName: 'C',
      processorCard: tie(first.body.id, 'ic_shared'),
    });
    expect(createdTaken.status).toBe(400);
    const unchanged = await call('GET', `/v1/cards/${b.body.id}`);
    expect([
      unchanged.body.processorCard,
      (unchanged.body as unknown as { cardholderName: string }).cardholderName,
    ]).toEqual([null, 'B']);
    // On another connection the same id is another card.
    const other = await call('PATCH', `/v1/cards/${b.body.id}`, {
      processorCard: tie(second.body.id, 'ic_shared'),
    });
    expect(other.body.processorCard).toEqual(tie(second.body.id, 'ic_shared'));
    const store = harness.service.store;
    const owner = await scope();
    expect(await store.cardOfProcessorCard(owner, first.body.id, 'ic_shared')).toBe(a.body.id);
    expect(await store.cardOfProcessorCard(owner, second.body.id, 'ic_shared')).toBe(b.body.id);
    // Untied with null; then the first connection's id is free again.
    const untied = await call('PATCH', `/v1/cards/${a.body.id}`, { processorCard: null });
    expect(untied.body.processorCard).toBeNull();
    expect(await store.cardOfProcessorCard(owner, first.body.id, 'ic_shared')).toBeNull();
    // A connection of another account is not found.
    const stranger = await harness.service.key({ account: 'stranger' });
    const strangers = await call(
      'POST',
      '/v1/cards',
      { vaultId: vault.body.id, cardholderName: 'S', processorCard: tie(first.body.id, 'ic_x') },
      stranger.key,
    );
    expect(strangers.status).toBe(404);
    const unknown = await call('PATCH', `/v1/cards/${b.body.id}`, {
      processorCard: tie('pc_0123456789abcdef0123456789abcdef', 'ic_y'),
    });
    expect([unknown.status, unknown.body.error?.code, unknown.body.error?.param]).toEqual([
      404,
      'processor_not_found',
      'processorCard.connectionId',
    ]);
  });
});
