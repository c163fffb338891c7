import { expect, it } from 'vitest';
import { SpendgateError } from '../../src/core/index.js';
import type { StoredResponse } from '../../src/store/port/index.js';
import { forEachDatabase } from '../support/databases.js';
import { refusal } from '../support/refusal.js';
import { merchant, networkTransactionId, usdc, useTestStore } from '../support/store.js';

// Which refusals are kept is the caller's rule (the HTTP adapter's, by status): here, all but 400s.
const presentError = (error: SpendgateError): StoredResponse | null =>
  error.status === 400 ? null : { status: error.status, body: { error: { code: error.code } } };

forEachDatabase('store operations', (database) => {
  const t = useTestStore(database);

  const vault = (initialDeposit = '0') => t.vault(t.owner, initialDeposit);

  it('keeps API keys as hashes and tells unknown, revoked and expired keys apart', async () => {
    const account = await t.store.findOrCreateAccount('acme-keys');
    expect((await t.store.findOrCreateAccount('acme-keys')).id).toBe(account.id);
    const { key, record } = await t.store.createApiKey({
      accountId: account.id,
      mode: 'test',
      scopes: [],
    });
    expect(key).toMatch(/^sk_test_[A-Za-z0-9_-]{32}$/);
    expect(record.scopes).toContain('authorizations:write');
    const stored = await t.store.client.query<{ key_hash: string }>(
      'SELECT key_hash FROM api_keys WHERE id = $1',
      [record.id],
    );
    expect(stored.rows[0]?.key_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(JSON.stringify(stored.rows)).not.toContain(key);
    expect(await t.store.authenticateApiKey(key)).toMatchObject({
      status: 'ok',
      key: { accountId: account.id, mode: 'test' },
    });
    expect((await t.store.authenticateApiKey(`${key}x`)).status).toBe('unknown');
    const scoped = await t.store.createApiKey({
      accountId: account.id,
      mode: 'live',
      scopes: ['authorizations:write'],
    });
    expect(scoped.record.scopes).toEqual(['authorizations:write']);
    expect(await t.store.revokeApiKey(scoped.record.id)).toBe(true);
    expect(await t.store.revokeApiKey(scoped.record.id)).toBe(false);
    expect((await t.store.authenticateApiKey(scoped.key)).status).toBe('revoked');
    const expiring = await t.store.createApiKey({
      accountId: account.id,
      mode: 'test',
      scopes: [],
      expiresAtMs: t.clock.nowMs + 1000,
    });
    t.clock.advance(1000);
    expect((await t.store.authenticateApiKey(expiring.key)).status).toBe('expired');
    expect((await t.store.listApiKeys(account.id)).map((listed) => listed.id)).toContain(record.id);
  });

  it('replays an idempotent effect, refuses another request under the key, and forgets it after 24 hours', async () => {
    const request = {
      key: 'create-vault-1',
      method: 'POST',
      path: '/v1/vaults',
      body: '{"name":"A"}',
    };
    const create = () =>
      t.store.idempotent(
        t.owner,
        request,
        async (operations) => {
          const { vault: created } = await operations.createVault(t.owner, {
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
        await t.store.client.query<{ n: number }>(
          "SELECT count(*)::int AS n FROM vaults WHERE account_id = $1 AND name = 'A'",
          [t.owner.accountId],
        )
      ).rows[0]?.n;
    expect(await count()).toBe(1);
    const other = await refusal(
      t.store.idempotent(
        t.owner,
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
    expect(await t.store.purgeIdempotencyKeys()).toBeGreaterThanOrEqual(1);
  });

  it('stores a refused effect without its partial writes; a refusal not kept, or a crash, stores nothing', async () => {
    const source = await vault('10');
    const destination = await vault();
    const request = { key: 'transfer-too-much', method: 'POST', path: '/v1/transfers', body: '{}' };
    const tooMuch = async () =>
      t.store.idempotent(
        t.owner,
        request,
        async (operations) => {
          await operations.deposit(t.owner, source.id, usdc('5')); // undone with the refusal
          await operations.createInternalTransfer(t.owner, {
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
    expect((await t.store.getVault(t.owner, source.id)).ledger.toFixed()).toBe('10');
    const badRequest = { key: 'bad-400', method: 'POST', path: '/v1/x', body: '{}' };
    await expect(
      t.store.idempotent(
        t.owner,
        badRequest,
        () => Promise.reject(new SpendgateError('parameter_invalid', 'no', 'x')),
        presentError,
      ),
    ).rejects.toThrow(SpendgateError);
    await expect(
      t.store.idempotent(
        t.owner,
        badRequest,
        () => Promise.reject(new Error('crash')),
        presentError,
      ),
    ).rejects.toThrow('crash');
    const ok = await t.store.idempotent(
      t.owner,
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
    const sent = await t.store.createExternalTransfer(t.owner, {
      fromVaultId: source.id,
      address,
      amount: usdc('30'),
      memo: 'payout',
    });
    expect([sent.status, sent.address]).toEqual(['pending', address]);
    expect((await t.store.getVault(t.owner, source.id)).pending.toFixed()).toBe('30');
    const completed = await t.store.completeExternalTransfer(sent.id, '5sig');
    expect([completed.status, completed.signature]).toEqual(['completed', '5sig']);
    let after = await t.store.getVault(t.owner, source.id);
    expect([after.ledger.toFixed(), after.pending.toFixed()]).toEqual(['70', '0']);
    expect((await refusal(t.store.completeExternalTransfer(sent.id, 'again'))).code).toBe(
      'parameter_invalid',
    );

    const failing = await t.store.createExternalTransfer(t.owner, {
      fromVaultId: source.id,
      address,
      amount: usdc('70'),
      memo: null,
    });
    expect(
      (
        await refusal(
          t.store.createExternalTransfer(t.owner, {
            fromVaultId: source.id,
            address,
            amount: usdc('0.000001'),
            memo: null,
          }),
        )
      ).code,
    ).toBe('insufficient_balance');
    const failed = await t.store.failExternalTransfer(failing.id, 'chain_failed');
    expect([failed.status, failed.failureReason]).toEqual(['failed', 'chain_failed']);
    after = await t.store.getVault(t.owner, source.id);
    expect([after.ledger.toFixed(), after.pending.toFixed()]).toEqual(['70', '0']);
    expect(
      (await refusal(t.store.failExternalTransfer('tr_00000000000000000000000000000000', 'x')))
        .code,
    ).toBe('transfer_not_found');
    await t.expectInvariants();
  });

  it('applies the policy limits to external transfers as to card spend, but not its merchant rules', async () => {
    const source = await vault('1000');
    await t.store.setPolicy(t.owner, source.id, {
      limits: [
        { interval: 'daily', amount: '50' },
        { interval: 'monthly', amount: '1', merchantCategories: ['5812'] },
      ],
      merchantCategories: { allow: ['5812'] },
    });
    const card = await t.card(t.owner, source.id);
    await t.store.authorize(t.owner, {
      cardId: card.id,
      amount: usdc('0.5'),
      currency: 'USDC',
      merchant: merchant(),
      networkTransactionId: networkTransactionId(),
    });
    const address = '9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin';
    await t.store.createExternalTransfer(t.owner, {
      fromVaultId: source.id,
      address,
      amount: usdc('49.5'),
      memo: null,
    });
    const over = await refusal(
      t.store.createExternalTransfer(t.owner, {
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
    const card2 = await t.store.authorize(t.owner, {
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
    const card = await t.card(t.owner, snapVault.id);
    const held = await t.store.authorize(t.owner, {
      cardId: card.id,
      amount: usdc('25'),
      currency: 'USDC',
      merchant: merchant(),
      networkTransactionId: networkTransactionId(),
    });
    // The next day: capture part, deposit more. The snapshot of the 10th must not see them.
    t.clock.nowMs = dayStart + 86_400_000 + 3_600_000;
    await t.store.capture(t.owner, held.transaction?.id ?? '', usdc('20'));
    await t.store.deposit(t.owner, snapVault.id, usdc('7'));
    let cursor: string | null = null;
    do cursor = await t.store.snapshotDay('2027-01-10', cursor, 2);
    while (cursor !== null);
    const { rows } = await t.store.client.query<{
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
    await t.store.snapshotDay('2027-01-11', null, 10_000);
    const next = await t.store.client.query<{ ledger: string; pending: string }>(
      "SELECT ledger::text, pending::text FROM balance_snapshots WHERE vault_id = $1 AND day = '2027-01-11'",
      [snapVault.id],
    );
    expect(next.rows).toEqual([{ ledger: '87.000000000', pending: '0.000000000' }]);
  });

  it('closes a vault to an address: the balance leaves at once, the chain transfer completes from withdrawals', async () => {
    const address = '9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin';
    const closing = await vault('12.5');
    const closed = await t.store.closeVault(t.owner, closing.id, { address });
    expect([closed.status, closed.ledger.toFixed()]).toEqual(['closed', '0']);
    const { rows } = await t.store.client.query<{
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
    const completed = await t.store.completeExternalTransfer(rows[0]?.id ?? '', 'sig-close');
    expect(completed.status).toBe('completed');
    const outbound = await t.store.client.query<{ total: string }>(
      "SELECT coalesce(sum(amount), 0)::text AS total FROM ledger_entries WHERE ledger_account_id = 'sys_test_USDC_withdrawals'",
    );
    expect(outbound.rows[0]?.total).toBe('0.000000000');
    await t.expectInvariants();
    const failing = await vault('3');
    await t.store.closeVault(t.owner, failing.id, { address });
    const { rows: failRows } = await t.store.client.query<{ id: string }>(
      'SELECT id FROM transfers WHERE from_vault_id = $1',
      [failing.id],
    );
    const failed = await t.store.failExternalTransfer(failRows[0]?.id ?? '', 'chain_failed');
    expect(failed.status).toBe('failed');
    await t.expectInvariants();
  });

  it('keeps transaction metadata encrypted, readable by the owner and the counterparty only', async () => {
    const counterparty = await t.scope();
    const from = await vault('50');
    const to = await t.vault(counterparty, '0', { name: 'Theirs' });
    const metadata = { invoice: 'INV-42', note: 'café ☕' };
    await t.store.createInternalTransfer(t.owner, {
      fromVaultId: from.id,
      toVaultId: to.id,
      amount: usdc('5'),
      description: null,
      metadata,
    });
    const { rows } = await t.store.client.query<{
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
    expect(await t.store.readTransactionMetadata(t.owner, debit.id)).toEqual(metadata);
    expect(await t.store.readTransactionMetadata(counterparty, credit.id)).toEqual(metadata);
    // The counterparty of the debit is the other account: it may read that side too.
    expect(await t.store.readTransactionMetadata(counterparty, debit.id)).toEqual(metadata);
    const stranger = await t.scope();
    expect((await refusal(t.store.readTransactionMetadata(stranger, debit.id))).code).toBe(
      'transaction_not_found',
    );
    expect(
      (await refusal(t.store.readTransactionMetadata({ ...t.owner, mode: 'live' }, debit.id))).code,
    ).toBe('transaction_not_found');
    // A ciphertext copied onto another transaction does not decrypt there.
    await t.store.client.query('UPDATE transactions SET metadata_enc = $1 WHERE id = $2', [
      debit.metadata_enc,
      credit.id,
    ]);
    await expect(t.store.readTransactionMetadata(counterparty, credit.id)).rejects.toThrow(
      'decryption failed',
    );
    const { deposit } = await t.store.deposit(t.owner, from.id, usdc('1'), { source: 'wire' });
    expect(deposit.hasMetadata).toBe(true);
    expect(await t.store.readTransactionMetadata(t.owner, deposit.id)).toEqual({ source: 'wire' });
    const plain = await t.store.deposit(t.owner, from.id, usdc('1'));
    expect(await t.store.readTransactionMetadata(t.owner, plain.deposit.id)).toEqual({});
  });

  it('keeps webhook secrets encrypted, lists and deletes endpoints within the t.owner', async () => {
    const { endpoint, secret } = await t.store.createWebhookEndpoint(t.owner, {
      url: 'https://example.test/hooks',
      events: ['*'],
      description: null,
    });
    expect(secret).toMatch(/^whsec_/);
    const row = await t.store.client.query<{ secret_enc: string }>(
      'SELECT secret_enc FROM webhook_endpoints WHERE id = $1',
      [endpoint.id],
    );
    expect(row.rows[0]?.secret_enc).not.toContain(secret.slice(6));
    expect(await t.store.webhookSecret(endpoint.id)).toBe(secret);
    expect((await t.store.listWebhookEndpoints(t.owner)).map((listed) => listed.id)).toContain(
      endpoint.id,
    );
    const stranger = await t.scope();
    expect((await refusal(t.store.deleteWebhookEndpoint(stranger, endpoint.id))).code).toBe(
      'webhook_not_found',
    );
    await t.store.deleteWebhookEndpoint(t.owner, endpoint.id);
    expect((await t.store.listWebhookEndpoints(t.owner)).map((listed) => listed.id)).not.toContain(
      endpoint.id,
    );
    expect((await refusal(t.store.deleteWebhookEndpoint(t.owner, endpoint.id))).code).toBe(
      'webhook_not_found',
    );
  });

  it("hands out each outbox event to one relay, in order, taken off the relay's queue as it is claimed", async () => {
    await vault('1');
    const queued = async () =>
      (
        await t.store.client.query<{ id: string }>('SELECT id FROM outbox_unrelayed ORDER BY id')
      ).rows.map((row) => row.id);
    const waiting = await queued();
    const claimed = await t.store.transaction((operations) => operations.relayEvents(10_000));
    expect(claimed.length).toBeGreaterThan(0);
    expect(claimed.map((event) => event.id)).toEqual(waiting);
    expect(await queued()).toEqual([]);
    // The events stay, for the delivery worker to read and the retention to purge.
    const { rows: kept } = await t.store.client.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM outbox_events WHERE id = ANY($1)',
      [waiting],
    );
    expect(kept[0]?.n).toBe(waiting.length);
    expect(claimed.map((event) => event.id)).toEqual([...claimed.map((event) => event.id)].sort());
    expect(claimed[0]).toMatchObject({ mode: 'test', accountId: t.owner.accountId });
    expect(claimed.map((event) => event.type)).toContain('vault.created');
    // The relay never reads the payload: the delivery worker does, when it sends.
    expect(claimed[0]).not.toHaveProperty('payload');
    expect(await t.store.transaction((operations) => operations.relayEvents(1000))).toEqual([]);
  });

  it('leaves the events of a relay round that rolls back unrelayed, for the next round', async () => {
    await vault('1');
    const failure = new Error('the queue refused the jobs');
    let claimedIds: string[] = [];
    await expect(
      t.store.transaction(async (operations) => {
        claimedIds = (await operations.relayEvents(1000)).map((event) => event.id);
        throw failure;
      }),
    ).rejects.toBe(failure);
    expect(claimedIds.length).toBeGreaterThan(0);
    const again = await t.store.transaction((operations) => operations.relayEvents(1000));
    expect(again.map((event) => event.id)).toEqual(claimedIds);
  });
});
