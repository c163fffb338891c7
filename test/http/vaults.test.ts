import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer } from '../../src/http/server.js';
import {
  startTestService,
  testServerConfig,
  type TestService,
  useTestService,
} from '../support/http.js';

/** The vault routes and the platform under them, over real HTTP on a real PostgreSQL. */
describe('vault routes', () => {
  let service: TestService;
  let key: string;

  beforeAll(async () => {
    service = await startTestService();
    ({ key } = await service.key());
  });

  afterAll(async () => {
    await service.close();
  });

  const call = (
    method: string,
    path: string,
    options: { body?: string; key?: string; headers?: Record<string, string> } = {},
  ) =>
    fetch(`${service.base}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${options.key ?? key}`,
        ...(options.body === undefined ? {} : { 'content-type': 'application/json' }),
        ...options.headers,
      },
      ...(options.body === undefined ? {} : { body: options.body }),
    });
  const create = (
    body: unknown,
    options: { key?: string; headers?: Record<string, string> } = {},
  ) =>
    call('POST', '/v1/vaults', {
      ...options,
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });
  const errorOf = async (response: Response) => {
    const body = (await response.json()) as {
      error: { code: string; param?: string; type: string };
    };
    return { status: response.status, code: body.error.code, param: body.error.param };
  };

  it('creates a vault with its initial deposit, and answers it as the contract shapes it', async () => {
    const response = await create({
      name: 'Ops',
      currency: 'USDC',
      network: 'solana',
      initialDeposit: 1250.5,
      metadata: { team: 'ops' },
    });
    expect(response.status).toBe(201);
    const vault = (await response.json()) as Record<string, unknown>;
    expect(vault).toMatchObject({
      object: 'vault',
      name: 'Ops',
      currency: 'USDC',
      network: 'solana',
      status: 'active',
      balance: { available: '1250.50', pending: '0.00', ledger: '1250.50' },
      metadata: { team: 'ops' },
      frozenAt: null,
    });
    expect(vault.id).toMatch(/^vlt_[0-9a-f]{32}$/);
    const fetched = await call('GET', `/v1/vaults/${String(vault.id)}`);
    expect(await fetched.json()).toEqual(vault);
  });

  it.each([
    ['a missing name', { currency: 'USDC', network: 'solana' }, 400, 'parameter_missing', 'name'],
    [
      'an unsupported currency',
      { name: 'x', currency: 'DOGE', network: 'solana' },
      400,
      'invalid_currency',
      'currency',
    ],
    [
      'another network',
      { name: 'x', currency: 'USDC', network: 'ethereum' },
      400,
      'parameter_invalid',
      'network',
    ],
    [
      'an amount finer than USDC',
      { name: 'x', currency: 'USDC', network: 'solana', initialDeposit: '1.0000001' },
      400,
      'invalid_amount',
      'initialDeposit',
    ],
    [
      'a negative amount',
      { name: 'x', currency: 'USDC', network: 'solana', initialDeposit: -5 },
      400,
      'invalid_amount',
      'initialDeposit',
    ],
    [
      'an unknown field',
      { name: 'x', currency: 'USDC', network: 'solana', colour: 'red' },
      400,
      'parameter_invalid',
      undefined,
    ],
    [
      'a long metadata key',
      { name: 'x', currency: 'USDC', network: 'solana', metadata: { ['k'.repeat(41)]: 'v' } },
      400,
      'parameter_invalid',
      undefined,
    ],
    [
      'a metadata value that is no string',
      { name: 'x', currency: 'USDC', network: 'solana', metadata: { team: 5 } },
      400,
      'parameter_invalid',
      'metadata.team',
    ],
  ])('refuses %s', async (_title, body, status, code, param) => {
    const error = await errorOf(await create(body));
    expect(error).toMatchObject({ status, code });
    if (param !== undefined) expect(error.param).toBe(param);
  });

  it('refuses a JSON number with more than 15 significant digits instead of rounding it', async () => {
    const body =
      '{"name":"x","currency":"SOL","network":"solana","initialDeposit":0.10000000000000001}';
    expect(await errorOf(await create(body))).toMatchObject({
      status: 400,
      code: 'invalid_amount',
      param: 'initialDeposit',
    });
    const exact = await create(
      '{"name":"x","currency":"SOL","network":"solana","initialDeposit":123456789.123456}',
    );
    expect(((await exact.json()) as { balance: { ledger: string } }).balance.ledger).toBe(
      '123456789.123456',
    );
  });

  it('needs vaults:write to create and vaults:read to read', async () => {
    const reader = await service.key({ scopes: ['vaults:read'] });
    expect(
      await errorOf(
        await create({ name: 'x', currency: 'USDC', network: 'solana' }, { key: reader.key }),
      ),
    ).toMatchObject({
      status: 403,
      code: 'insufficient_scope',
    });
    expect((await call('GET', '/v1/vaults', { key: reader.key })).status).toBe(200);
  });

  it("hides another account's and the other mode's vaults (404)", async () => {
    const created = (await (
      await create({ name: 'Mine', currency: 'USDC', network: 'solana' })
    ).json()) as { id: string };
    const stranger = await service.key();
    const live = await service.key({ mode: 'live' });
    for (const other of [stranger.key, live.key]) {
      expect(
        await errorOf(await call('GET', `/v1/vaults/${created.id}`, { key: other })),
      ).toMatchObject({ status: 404, code: 'vault_not_found', param: 'id' });
    }
  });

  // Nothing on chain backs a live deposit out of nothing.
  it('refuses a live initialDeposit above 0, creating nothing, and keeps it in test mode', async () => {
    const live = await service.key({ mode: 'live' });
    const ledgerRows = async () =>
      (
        await service.store.client.query<{ n: number }>(
          'SELECT count(*)::int AS n FROM ledger_entries',
        )
      ).rows[0]?.n;
    const entriesBefore = await ledgerRows();
    for (const initialDeposit of ['100', 0.01, '0.000001']) {
      const refused = await create(
        { name: 'Free money', currency: 'USDC', network: 'solana', initialDeposit },
        { key: live.key, headers: { 'idempotency-key': `live-${String(initialDeposit)}` } },
      );
      const body = (await refused.json()) as {
        error: { code: string; param: string; message: string };
      };
      expect([refused.status, body.error.code, body.error.param]).toEqual([
        400,
        'parameter_invalid',
        'initialDeposit',
      ]);
      expect(body.error.message).toMatch(/transfer from another vault/);
      expect(body.error.message).toMatch(/depositAddress on chain/);
      expect(body.error.message).not.toMatch(/coming/);
    }
    const listed = (await (await call('GET', '/v1/vaults', { key: live.key })).json()) as {
      data: unknown[];
    };
    expect(listed.data).toEqual([]);
    expect(await ledgerRows()).toBe(entriesBefore);
    // A live vault may start empty; 0 is no deposit at all.
    for (const initialDeposit of [undefined, '0', 0]) {
      const empty = await create(
        { name: 'Empty', currency: 'USDC', network: 'solana', initialDeposit },
        { key: live.key },
      );
      const made = (await empty.json()) as { balance: { ledger: string } };
      expect([empty.status, made.balance.ledger]).toEqual([201, '0.00']);
    }
    // Nor can a live key simulate a deposit into it (test mode only).
    const liveVault = (
      (await (await call('GET', '/v1/vaults', { key: live.key })).json()) as {
        data: { id: string }[];
      }
    ).data[0];
    const simulated = await call('POST', '/v1/simulate/deposits', {
      key: live.key,
      body: JSON.stringify({ vaultId: liveVault?.id, amount: '100' }),
    });
    expect(await errorOf(simulated)).toMatchObject({ status: 400, code: 'parameter_invalid' });
    expect(await ledgerRows()).toBe(entriesBefore);
    // Test mode keeps its initial deposit, to play with.
    const test = await create({
      name: 'Play',
      currency: 'USDC',
      network: 'solana',
      initialDeposit: '100',
    });
    const played = (await test.json()) as { balance: { ledger: string } };
    expect([test.status, played.balance.ledger]).toEqual([201, '100.00']);
  });

  it('pages vaults newest first with filters, and refuses a bad limit or cursor', async () => {
    const own = await service.key();
    for (const currency of ['USDC', 'SOL', 'USDC'])
      await create({ name: currency, currency, network: 'solana' }, { key: own.key });
    const first = (await (await call('GET', '/v1/vaults?limit=2', { key: own.key })).json()) as {
      data: { id: string; name: string }[];
      hasMore: boolean;
      nextCursor: string;
    };
    expect(first.data.map((vault) => vault.name)).toEqual(['USDC', 'SOL']);
    expect(first.hasMore).toBe(true);
    const second = (await (
      await call('GET', `/v1/vaults?limit=2&startingAfter=${first.nextCursor}`, { key: own.key })
    ).json()) as { data: unknown[]; hasMore: boolean; nextCursor: null };
    expect([second.data.length, second.hasMore, second.nextCursor]).toEqual([1, false, null]);
    const sol = (await (await call('GET', '/v1/vaults?currency=SOL', { key: own.key })).json()) as {
      data: { currency: string }[];
    };
    expect(sol.data.map((vault) => vault.currency)).toEqual(['SOL']);
    expect(await errorOf(await call('GET', '/v1/vaults?limit=0', { key: own.key }))).toMatchObject({
      status: 400,
      code: 'parameter_invalid',
      param: 'limit',
    });
    expect(
      await errorOf(await call('GET', '/v1/vaults?limit=101', { key: own.key })),
    ).toMatchObject({ status: 400, param: 'limit' });
    expect(
      await errorOf(
        await call('GET', '/v1/vaults?startingAfter=card_00000000000000000000000000000000', {
          key: own.key,
        }),
      ),
    ).toMatchObject({
      status: 400,
      code: 'parameter_invalid',
      param: 'startingAfter',
    });
  });

  it('replays a create under one Idempotency-Key, refuses another body under it, and creates once from 20 at once', async () => {
    const own = await service.key();
    const body = { name: 'Once', currency: 'USDC', network: 'solana', initialDeposit: '10' };
    const first = await create(body, {
      key: own.key,
      headers: { 'idempotency-key': 'create-once' },
    });
    const again = await create(body, {
      key: own.key,
      headers: { 'idempotency-key': 'create-once' },
    });
    expect(first.status).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(await again.json()).toEqual(await first.json());
    expect(
      await errorOf(
        await create(
          { ...body, name: 'Other' },
          { key: own.key, headers: { 'idempotency-key': 'create-once' } },
        ),
      ),
    ).toMatchObject({
      status: 409,
      code: 'duplicate_idempotency_key',
    });
    const burst = await Promise.all(
      Array.from({ length: 20 }, () =>
        create(
          { ...body, name: 'Burst' },
          { key: own.key, headers: { 'idempotency-key': 'burst' } },
        ),
      ),
    );
    expect(burst.every((response) => response.status === 201 || response.status === 409)).toBe(
      true,
    );
    const list = (await (await call('GET', '/v1/vaults?limit=100', { key: own.key })).json()) as {
      data: { name: string }[];
    };
    expect(list.data.filter((vault) => vault.name === 'Burst')).toHaveLength(1);
    expect(
      await errorOf(await create(body, { key: own.key, headers: { 'idempotency-key': 'é' } })),
    ).toMatchObject({ status: 400, param: 'Idempotency-Key' });
  });
});

/** The fields these tests read of a vault, a balance or an error body. */
interface VaultJson {
  id: string;
  name: string;
  status: string;
  metadata: Record<string, string>;
  frozenAt: string | null;
  balance: { ledger: string; available: string; pending: string };
  error?: { code: string; param?: string };
}

describe('vault lifecycle routes', () => {
  const harness = useTestService<VaultJson>();
  const { call } = harness;
  const vault = async (initialDeposit = '0') =>
    (
      await call('POST', '/v1/vaults', {
        name: 'Life',
        currency: 'USDC',
        network: 'solana',
        initialDeposit,
      })
    ).body;

  it('updates name and metadata, removing a key set to null', async () => {
    const created = await vault();
    await call('PATCH', `/v1/vaults/${created.id}`, { metadata: { team: 'ops', region: 'eu' } });
    const updated = await call('PATCH', `/v1/vaults/${created.id}`, {
      name: 'Renamed',
      metadata: { region: null },
    });
    expect(updated.status).toBe(200);
    expect([updated.body.name, updated.body.metadata]).toEqual(['Renamed', { team: 'ops' }]);
  });

  it('freezes and unfreezes, idempotently, with or without a body', async () => {
    const created = await vault();
    const frozen = await call('POST', `/v1/vaults/${created.id}/freeze`, { reason: 'incident' });
    expect([frozen.status, frozen.body.status]).toEqual([200, 'frozen']);
    expect(frozen.body.frozenAt).toMatch(/Z$/);
    expect((await call('POST', `/v1/vaults/${created.id}/freeze`)).body.status).toBe('frozen');
    expect((await call('POST', `/v1/vaults/${created.id}/unfreeze`)).body.status).toBe('active');
  });

  it('closes to another vault or a Solana address, and refuses what contract section 9 refuses', async () => {
    const source = await vault('40');
    const target = await vault('0');
    expect((await call('POST', `/v1/vaults/${source.id}/close`)).body.error).toMatchObject({
      code: 'parameter_missing',
      param: 'destination',
    });
    expect(
      (
        await call('POST', `/v1/vaults/${source.id}/close`, {
          destination: { address: 'not-an-address' },
        })
      ).body.error,
    ).toMatchObject({
      code: 'invalid_address',
      param: 'destination.address',
    });
    const closed = await call('POST', `/v1/vaults/${source.id}/close`, {
      destination: { vaultId: target.id },
    });
    expect([closed.status, closed.body.status, closed.body.balance.ledger]).toEqual([
      200,
      'closed',
      '0.00',
    ]);
    expect((await call('GET', `/v1/vaults/${target.id}/balance`)).body).toMatchObject({
      object: 'balance',
      vaultId: target.id,
      ledger: '40.00',
      available: '40.00',
    });
    for (const [method, path, body] of [
      ['POST', `/v1/vaults/${source.id}/close`, { destination: { vaultId: target.id } }],
      ['POST', `/v1/vaults/${source.id}/freeze`, undefined],
      ['PATCH', `/v1/vaults/${source.id}`, { name: 'x' }],
    ] as const) {
      const refused = await call(method, path, body);
      expect([refused.status, refused.body.error?.code]).toEqual([409, 'vault_closed']);
    }
    const other = await vault('5');
    const toChain = await call('POST', `/v1/vaults/${other.id}/close`, {
      destination: { address: '9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin' },
    });
    expect([toChain.status, toChain.body.status]).toEqual([200, 'closed']);
  });

  it('answers the balance history of a day not over from the live balances, never a snapshot taken early', async () => {
    const created = await vault('9');
    // Snapshots of today and the next two days, as a worker whose clock ran ahead would take
    // them: none of those days is over here, so none is final.
    const days = [0, 1, 2].map((offset) =>
      new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10),
    );
    for (const day of days) {
      await harness.service.store.transaction((operations) =>
        operations.snapshotDay(day, null, 10_000),
      );
    }
    await call('POST', '/v1/simulate/deposits', { vaultId: created.id, amount: '1' });
    const first = await call('GET', `/v1/vaults/${created.id}/balance/history?limit=2`);
    const body = first.body as unknown as {
      data: { date: string; ledger: string; object: string; final: boolean }[];
      hasMore: boolean;
      nextCursor: string | null;
    };
    expect([body.data, body.hasMore, body.nextCursor]).toEqual([
      [expect.objectContaining({ date: days[0], ledger: '10.00', final: false })],
      false,
      null,
    ]);
    expect(
      (await call('GET', `/v1/vaults/${created.id}/balance/history?startDate=2026-13-01`)).body
        .error,
    ).toMatchObject({ code: 'parameter_invalid', param: 'startDate' });
  });

  it('answers the balance of a vault of the caller only', async () => {
    const created = await vault('12.5');
    expect((await call('GET', `/v1/vaults/${created.id}/balance`)).body).toMatchObject({
      currency: 'USDC',
      ledger: '12.50',
      pending: '0.00',
    });
    const stranger = await harness.service.key();
    const response = await fetch(`${harness.service.base}/v1/vaults/${created.id}/balance`, {
      headers: { authorization: `Bearer ${stranger.key}` },
    });
    expect(response.status).toBe(404);
  });
});

describe('idempotency across a restart', () => {
  it('replays the stored response from a new server process on the same database', async () => {
    const service = await startTestService();
    try {
      const { key } = await service.key();
      const body = { name: 'Restart', currency: 'USDC', network: 'solana', initialDeposit: '3' };
      const send = (base: string) =>
        fetch(`${base}/v1/vaults`, {
          method: 'POST',
          headers: {
            authorization: `Bearer ${key}`,
            'content-type': 'application/json',
            'idempotency-key': 'across-restart',
          },
          body: JSON.stringify(body),
        });
      const first = await send(service.base);
      const firstBody: unknown = await first.json();
      // A second server on the same store: nothing of the first survives in memory.
      const restarted = createServer(testServerConfig(), { store: service.store });
      const base = await restarted.listen({ port: 0, host: '127.0.0.1' });
      try {
        const again = await send(base);
        expect(again.status).toBe(201);
        expect(again.headers.get('idempotent-replayed')).toBe('true');
        expect(await again.json()).toEqual(firstBody);
      } finally {
        await restarted.close();
      }
    } finally {
      await service.close();
    }
  });
});
