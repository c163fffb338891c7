import { afterAll, beforeAll, expect, it } from 'vitest';
import { SpendgateError, type Scope } from '../../src/core/index.js';
import type { StoredResponse } from '../../src/store/ops/idempotency.js';
import type { OpenedStore as Store } from '../../src/store/store.js';
import { forEachDatabase } from '../support/databases.js';
import { refusal } from '../support/refusal.js';
import {
  merchant,
  networkTransactionId,
  openTestStore,
  usdc,
  type TestStore,
} from '../support/store.js';

// Which refusals are kept is the caller's rule (the HTTP adapter's, by status): here, all but 400s.
const presentError = (error: SpendgateError): StoredResponse | null =>
  error.status === 400 ? null : { status: error.status, body: { error: { code: error.code } } };

forEachDatabase('store operations', (database) => {
  let t: TestStore;
  let store: Store;
  let scope: Scope;

  beforeAll(async () => {
    t = await openTestStore(database);
    store = t.store;
    scope = await t.scope();
  });

  afterAll(async () => {
    await database.close();
  });

  const vault = async (initialDeposit = '0') =>
    (
      await store.createVault(scope, {
        name: 'Ops',
        currency: 'USDC',
        metadata: {},
        initialDeposit: usdc(initialDeposit),
      })
    ).vault;

  it('keeps API keys as hashes and tells unknown, revoked and expired keys apart', async () => {
    const account = await store.findOrCreateAccount('acme-keys');
    expect((await store.findOrCreateAccount('acme-keys')).id).toBe(account.id);
    const { key, record } = await store.createApiKey({
      accountId: account.id,
      mode: 'test',
      scopes: [],
    });
    expect(key).toMatch(/^sk_test_[A-Za-z0-9_-]{32}$/);
    expect(record.scopes).toContain('authorizations:write');
    const stored = await store.client.query<{ key_hash: string }>(
      'SELECT key_hash FROM api_keys WHERE id = $1',
      [record.id],
    );
    expect(stored.rows[0]?.key_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(JSON.stringify(stored.rows)).not.toContain(key);
    expect(await store.authenticateApiKey(key)).toMatchObject({
      status: 'ok',
      key: { accountId: account.id, mode: 'test' },
    });
    expect((await store.authenticateApiKey(`${key}x`)).status).toBe('unknown');
    const scoped = await store.createApiKey({
      accountId: account.id,
      mode: 'live',
      scopes: ['authorizations:write'],
    });
    expect(scoped.record.scopes).toEqual(['authorizations:write']);
    expect(await store.revokeApiKey(scoped.record.id)).toBe(true);
    expect(await store.revokeApiKey(scoped.record.id)).toBe(false);
    expect((await store.authenticateApiKey(scoped.key)).status).toBe('revoked');
    const expiring = await store.createApiKey({
      accountId: account.id,
      mode: 'test',
      scopes: [],
      expiresAtMs: t.clock.nowMs + 1000,
    });
    t.clock.advance(1000);
    expect((await store.authenticateApiKey(expiring.key)).status).toBe('expired');
    expect((await store.listApiKeys(account.id)).map((listed) => listed.id)).toContain(record.id);
  });

  it('replays an idempotent effect, refuses another request under the key, and forgets it after 24 hours', async () => {
    const request = {
      key: 'create-vault-1',
      method: 'POST',
      path: '/v1/vaults',
      body: '{"name":"A"}',
    };
    const create = () =>
      store.idempotent(
        scope,
        request,
        async (operations) => {
          const { vault: created } = await operations.createVault(scope, {
            name: 'A',
            currency: 'USDC',
            metadata: {},
            initialDeposit: usdc('0'),
          });
          return { status: 201, body: { id: created.id } };
        },
        presentError,
      );
    const first = await create();
    const again = await create();
    expect(first.replayed).toBe(false);
    expect(again).toEqual({ replayed: true, response: first.response });
    const count = async () =>
      (
        await store.client.query<{ n: number }>(
          "SELECT count(*)::int AS n FROM vaults WHERE account_id = $1 AND name = 'A'",
          [scope.accountId],
        )
      ).rows[0]?.n;
    expect(await count()).toBe(1);
    const other = await refusal(
      store.idempotent(
        scope,
        { ...request, body: '{"name":"B"}' },
        () => Promise.resolve({ status: 201, body: {} }),
        presentError,
      ),
    );
    expect(other.code).toBe('duplicate_idempotency_key');
    t.clock.advance(24 * 3_600_000);
    expect((await create()).replayed).toBe(false);
    expect(await count()).toBe(2);
    t.clock.advance(24 * 3_600_000 + 1);
    expect(await store.purgeIdempotencyKeys()).toBeGreaterThanOrEqual(1);
  });

  it('stores a refused effect without its partial writes; a refusal not kept, or a crash, stores nothing', async () => {
    const source = await vault('10');
    const destination = await vault();
    const request = { key: 'transfer-too-much', method: 'POST', path: '/v1/transfers', body: '{}' };
    const tooMuch = async () =>
      store.idempotent(
        scope,
        request,
        async (operations) => {
          await operations.deposit(scope, source.id, usdc('5')); // undone with the refusal
          await operations.createInternalTransfer(scope, {
            fromVaultId: source.id,
            toVaultId: destination.id,
            amount: usdc('100'),
            description: null,
          });
          return { status: 201, body: {} };
        },
        presentError,
      );
    const first = await tooMuch();
    expect(first.response).toEqual({
      status: 402,
      body: { error: { code: 'insufficient_balance' } },
    });
    expect((await tooMuch()).replayed).toBe(true);
    expect((await store.getVault(scope, source.id)).ledger.toFixed()).toBe('10');
    const badRequest = { key: 'bad-400', method: 'POST', path: '/v1/x', body: '{}' };
    await expect(
      store.idempotent(
        scope,
        badRequest,
        () => Promise.reject(new SpendgateError('parameter_invalid', 'no', 'x')),
        presentError,
      ),
    ).rejects.toThrow(SpendgateError);
    await expect(
      store.idempotent(scope, badRequest, () => Promise.reject(new Error('crash')), presentError),
    ).rejects.toThrow('crash');
    const ok = await store.idempotent(
      scope,
      badRequest,
      () => Promise.resolve({ status: 200, body: { ok: true } }),
      presentError,
    );
    expect(ok).toEqual({ replayed: false, response: { status: 200, body: { ok: true } } });
    await t.expectInvariants();
  });

  it('holds an external transfer, completes it onto the chain account, or fails it and releases the hold', async () => {
    const source = await vault('100');
    const address = '9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin';
    const sent = await store.createExternalTransfer(scope, {
      fromVaultId: source.id,
      address,
      amount: usdc('30'),
      memo: 'payout',
    });
    expect([sent.status, sent.address]).toEqual(['pending', address]);
    expect((await store.getVault(scope, source.id)).pending.toFixed()).toBe('30');
    const completed = await store.completeExternalTransfer(sent.id, '5sig');
    expect([completed.status, completed.signature]).toEqual(['completed', '5sig']);
    let after = await store.getVault(scope, source.id);
    expect([after.ledger.toFixed(), after.pending.toFixed()]).toEqual(['70', '0']);
    expect((await refusal(store.completeExternalTransfer(sent.id, 'again'))).code).toBe(
      'parameter_invalid',
    );

    const failing = await store.createExternalTransfer(scope, {
      fromVaultId: source.id,
      address,
      amount: usdc('70'),
      memo: null,
    });
    expect(
      (
        await refusal(
          store.createExternalTransfer(scope, {
            fromVaultId: source.id,
            address,
            amount: usdc('0.000001'),
            memo: null,
          }),
        )
      ).code,
    ).toBe('insufficient_balance');
    const failed = await store.failExternalTransfer(failing.id, 'chain_failed');
    expect([failed.status, failed.failureReason]).toEqual(['failed', 'chain_failed']);
    after = await store.getVault(scope, source.id);
    expect([after.ledger.toFixed(), after.pending.toFixed()]).toEqual(['70', '0']);
    expect(
      (await refusal(store.failExternalTransfer('tr_00000000000000000000000000000000', 'x'))).code,
    ).toBe('transfer_not_found');
    await t.expectInvariants();
  });

  it('applies the policy limits to external transfers as to card spend, but not its merchant rules', async () => {
    const source = await vault('1000');
    await store.setPolicy(scope, source.id, {
      limits: [
        { interval: 'daily', amount: '50' },
        { interval: 'monthly', amount: '1', merchantCategories: ['5812'] },
      ],
      merchantCategories: { allow: ['5812'] },
    });
    const card = await store.createCard(scope, {
      vaultId: source.id,
      cardholderName: 'Ada',
      metadata: {},
    });
    await store.authorize(scope, {
      cardId: card.id,
      amount: usdc('0.5'),
      currency: 'USDC',
      merchant: merchant(),
      networkTransactionId: networkTransactionId(),
    });
    const address = '9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin';
    await store.createExternalTransfer(scope, {
      fromVaultId: source.id,
      address,
      amount: usdc('49.5'),
      memo: null,
    });
    const over = await refusal(
      store.createExternalTransfer(scope, {
        fromVaultId: source.id,
        address,
        amount: usdc('0.000001'),
        memo: null,
      }),
    );
    expect([over.code, over.message]).toEqual([
      'authorization_failed',
      'Daily spend limit of 50.00 USDC would be exceeded',
    ]);
    // Transfers count as spend for card authorizations too.
    const card2 = await store.authorize(scope, {
      cardId: card.id,
      amount: usdc('0.01'),
      currency: 'USDC',
      merchant: merchant(),
      networkTransactionId: networkTransactionId(),
    });
    expect(card2.decision.declineReason?.rule).toBe('limits[0]');
    await t.expectInvariants();
  });

  it('snapshots a day exactly from the ledger and the hold journal, also for a day already past', async () => {
    const dayStart = Date.UTC(2027, 0, 10);
    t.clock.nowMs = dayStart + 3_600_000;
    const snapVault = await vault('100');
    const card = await store.createCard(scope, {
      vaultId: snapVault.id,
      cardholderName: 'Ada',
      metadata: {},
    });
    const held = await store.authorize(scope, {
      cardId: card.id,
      amount: usdc('25'),
      currency: 'USDC',
      merchant: merchant(),
      networkTransactionId: networkTransactionId(),
    });
    // The next day: capture part, deposit more. The snapshot of the 10th must not see them.
    t.clock.nowMs = dayStart + 86_400_000 + 3_600_000;
    await store.capture(scope, held.transaction?.id ?? '', usdc('20'));
    await store.deposit(scope, snapVault.id, usdc('7'));
    let cursor: string | null = null;
    do cursor = await store.snapshotDay('2027-01-10', cursor, 2);
    while (cursor !== null);
    const { rows } = await store.client.query<{
      ledger: string;
      pending: string;
      available: string;
    }>(
      "SELECT ledger::text, pending::text, available::text FROM balance_snapshots WHERE vault_id = $1 AND day = '2027-01-10'",
      [snapVault.id],
    );
    expect(rows).toEqual([
      { ledger: '100.000000000', pending: '25.000000000', available: '75.000000000' },
    ]);
    await store.snapshotDay('2027-01-11', null, 10_000);
    const next = await store.client.query<{ ledger: string; pending: string }>(
      "SELECT ledger::text, pending::text FROM balance_snapshots WHERE vault_id = $1 AND day = '2027-01-11'",
      [snapVault.id],
    );
    expect(next.rows).toEqual([{ ledger: '87.000000000', pending: '0.000000000' }]);
  });

  it('closes a vault to an address: the balance leaves at once, the chain transfer completes from withdrawals', async () => {
    const address = '9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin';
    const closing = await vault('12.5');
    const closed = await store.closeVault(scope, closing.id, { address });
    expect([closed.status, closed.ledger.toFixed()]).toEqual(['closed', '0']);
    const { rows } = await store.client.query<{
      id: string;
      status: string;
      source: string;
      amount: string;
    }>(
      "SELECT id, status, source, amount::text FROM transfers WHERE from_vault_id = $1 AND kind = 'external'",
      [closing.id],
    );
    expect(rows.map((row) => [row.status, row.source, row.amount])).toEqual([
      ['pending', 'withdrawal', '12.500000000'],
    ]);
    await t.expectInvariants();
    const completed = await store.completeExternalTransfer(rows[0]?.id ?? '', 'sig-close');
    expect(completed.status).toBe('completed');
    const outbound = await store.client.query<{ total: string }>(
      "SELECT coalesce(sum(amount), 0)::text AS total FROM ledger_entries WHERE ledger_account_id = 'sys_test_USDC_withdrawals'",
    );
    expect(outbound.rows[0]?.total).toBe('0.000000000');
    await t.expectInvariants();
    const failing = await vault('3');
    await store.closeVault(scope, failing.id, { address });
    const { rows: failRows } = await store.client.query<{ id: string }>(
      'SELECT id FROM transfers WHERE from_vault_id = $1',
      [failing.id],
    );
    const failed = await store.failExternalTransfer(failRows[0]?.id ?? '', 'chain_failed');
    expect(failed.status).toBe('failed');
    await t.expectInvariants();
  });

  it('keeps transaction metadata encrypted, readable by the owner and the counterparty only', async () => {
    const counterparty = await t.scope();
    const from = await vault('50');
    const to = (
      await store.createVault(counterparty, {
        name: 'Theirs',
        currency: 'USDC',
        metadata: {},
        initialDeposit: usdc('0'),
      })
    ).vault;
    const metadata = { invoice: 'INV-42', note: 'café ☕' };
    await store.createInternalTransfer(scope, {
      fromVaultId: from.id,
      toVaultId: to.id,
      amount: usdc('5'),
      description: null,
      metadata,
    });
    const { rows } = await store.client.query<{
      id: string;
      account_id: string;
      metadata_enc: string | null;
      type: string;
    }>(
      'SELECT id, account_id, metadata_enc, type FROM transactions WHERE vault_id IN ($1, $2) AND type IN ($3, $4) ORDER BY type',
      [from.id, to.id, 'transfer_in', 'transfer_out'],
    );
    const [credit, debit] = rows;
    if (credit === undefined || debit === undefined)
      throw new Error('transfer transactions missing');
    expect(debit.metadata_enc).not.toContain('INV-42');
    expect(await store.readTransactionMetadata(scope, debit.id)).toEqual(metadata);
    expect(await store.readTransactionMetadata(counterparty, credit.id)).toEqual(metadata);
    // The counterparty of the debit is the other account: it may read that side too.
    expect(await store.readTransactionMetadata(counterparty, debit.id)).toEqual(metadata);
    const stranger = await t.scope();
    expect((await refusal(store.readTransactionMetadata(stranger, debit.id))).code).toBe(
      'transaction_not_found',
    );
    expect(
      (await refusal(store.readTransactionMetadata({ ...scope, mode: 'live' }, debit.id))).code,
    ).toBe('transaction_not_found');
    // A ciphertext copied onto another transaction does not decrypt there.
    await store.client.query('UPDATE transactions SET metadata_enc = $1 WHERE id = $2', [
      debit.metadata_enc,
      credit.id,
    ]);
    await expect(store.readTransactionMetadata(counterparty, credit.id)).rejects.toThrow(
      'decryption failed',
    );
    const { deposit } = await store.deposit(scope, from.id, usdc('1'), { source: 'wire' });
    expect(deposit.hasMetadata).toBe(true);
    expect(await store.readTransactionMetadata(scope, deposit.id)).toEqual({ source: 'wire' });
    const plain = await store.deposit(scope, from.id, usdc('1'));
    expect(await store.readTransactionMetadata(scope, plain.deposit.id)).toEqual({});
  });

  it('keeps webhook secrets encrypted, lists and deletes endpoints within the scope', async () => {
    const { endpoint, secret } = await store.createWebhookEndpoint(scope, {
      url: 'https://example.test/hooks',
      events: ['*'],
      description: null,
    });
    expect(secret).toMatch(/^whsec_/);
    const row = await store.client.query<{ secret_enc: string }>(
      'SELECT secret_enc FROM webhook_endpoints WHERE id = $1',
      [endpoint.id],
    );
    expect(row.rows[0]?.secret_enc).not.toContain(secret.slice(6));
    expect(await store.webhookSecret(endpoint.id)).toBe(secret);
    expect((await store.listWebhookEndpoints(scope)).map((listed) => listed.id)).toContain(
      endpoint.id,
    );
    const stranger = await t.scope();
    expect((await refusal(store.deleteWebhookEndpoint(stranger, endpoint.id))).code).toBe(
      'webhook_not_found',
    );
    await store.deleteWebhookEndpoint(scope, endpoint.id);
    expect((await store.listWebhookEndpoints(scope)).map((listed) => listed.id)).not.toContain(
      endpoint.id,
    );
    expect((await refusal(store.deleteWebhookEndpoint(scope, endpoint.id))).code).toBe(
      'webhook_not_found',
    );
  });

  it('hands out each outbox event to one relay, in order, until it is marked relayed', async () => {
    await vault('1');
    const claimed = await store.transaction(async (operations) => {
      const events = await operations.claimEvents(1000);
      await operations.markRelayed(events.map((event) => event.id));
      return events;
    });
    expect(claimed.length).toBeGreaterThan(0);
    expect(claimed.map((event) => event.id)).toEqual([...claimed.map((event) => event.id)].sort());
    expect(claimed[0]?.payload).toMatchObject({ object: 'event', mode: 'test' });
    expect(await store.transaction((operations) => operations.claimEvents(1000))).toEqual([]);
  });
});
