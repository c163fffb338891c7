import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Scope } from '../../src/core/index.js';
import type { OpenedStore as Store } from '../../src/store/store.js';
import { checkInvariants } from '../../src/store/invariants.js';
import { forEachDatabase } from '../support/databases.js';
import { refusal } from '../support/refusal.js';
import {
  merchant,
  networkTransactionId,
  openTestStore,
  usdc,
  type TestStore,
} from '../support/store.js';

forEachDatabase('ledger operations', (database) => {
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

  const vault = async (initialDeposit = '0', currency: 'USDC' | 'SOL' = 'USDC', owner = scope) =>
    (
      await store.createVault(owner, {
        name: 'Ops',
        currency,
        metadata: { team: 'ops' },
        initialDeposit: usdc(initialDeposit),
      })
    ).vault;
  const card = async (vaultId: string, owner = scope) =>
    store.createCard(owner, { vaultId, cardholderName: 'Ada Lovelace', metadata: {} });
  const authorize = (
    cardId: string,
    amount: string,
    owner = scope,
    extra: Partial<{ mcc: string; networkTransactionId: string; currency: string }> = {},
  ) =>
    store.authorize(owner, {
      cardId,
      amount: usdc(amount),
      currency: extra.currency ?? 'USDC',
      merchant: merchant(extra.mcc === undefined ? {} : { mcc: extra.mcc }),
      networkTransactionId: extra.networkTransactionId ?? networkTransactionId(),
    });

  it('creates a vault with its initial deposit as one posting', async () => {
    const { vault: created, deposit } = await store.createVault(scope, {
      name: 'Treasury',
      currency: 'USDC',
      metadata: {},
      initialDeposit: usdc('1000.50'),
    });
    expect(created.ledger.toFixed()).toBe('1000.5');
    expect(created.pending.isZero()).toBe(true);
    expect(deposit?.type).toBe('deposit');
    expect(deposit?.status).toBe('completed');
    expect((await store.getVault(scope, created.id)).ledger.eq(usdc('1000.5'))).toBe(true);
    const events = await store.client.query<{ type: string }>(
      "SELECT type FROM outbox_events WHERE payload->'data'->'object'->>'id' IN ($1, $2) ORDER BY id",
      [created.id, deposit?.id],
    );
    expect(events.rows.map((row) => row.type)).toEqual(['vault.created', 'transaction.completed']);
    await t.expectInvariants();
  });

  it('hides a vault from another account and from the other mode (404, not 403)', async () => {
    const created = await vault('5');
    const stranger = await t.scope();
    expect((await refusal(store.getVault(stranger, created.id))).code).toBe('vault_not_found');
    expect((await refusal(store.getVault({ ...scope, mode: 'live' }, created.id))).code).toBe(
      'vault_not_found',
    );
    expect((await refusal(store.deposit(stranger, created.id, usdc('1')))).code).toBe(
      'vault_not_found',
    );
  });

  it('approves within the balance and holds the amount; declines beyond it and records the decline', async () => {
    const funded = await vault('100');
    const { id: cardId } = await card(funded.id);
    const approved = await authorize(cardId, '60');
    expect(approved.decision.approved).toBe(true);
    expect(approved.transaction?.status).toBe('pending');
    expect(approved.transaction?.holdRemaining.toFixed()).toBe('60');
    const declined = await authorize(cardId, '40.000001');
    expect(declined.decision.declineCode).toBe('insufficient_balance');
    expect(declined.transaction?.status).toBe('declined');
    const after = await store.getVault(scope, funded.id);
    expect([after.ledger.toFixed(), after.pending.toFixed()]).toEqual(['100', '60']);
    await t.expectInvariants();
  });

  it('returns the first decision for a repeated networkTransactionId and holds once', async () => {
    const funded = await vault('100');
    const { id: cardId } = await card(funded.id);
    const id = networkTransactionId();
    const first = await authorize(cardId, '30', scope, { networkTransactionId: id });
    const again = await authorize(cardId, '30', scope, { networkTransactionId: id });
    expect(again.replayed).toBe(true);
    expect(again.transaction?.id).toBe(first.transaction?.id);
    expect(again.decision.approved).toBe(true);
    expect((await store.getVault(scope, funded.id)).pending.toFixed()).toBe('30');
  });

  it('declines an unknown, frozen or cancelled card, a frozen vault and another currency', async () => {
    const funded = await vault('100');
    const { id: cardId } = await card(funded.id);
    expect(
      (await authorize('card_00000000000000000000000000000000', '1')).decision.declineReason?.rule,
    ).toBe('card_not_found');
    await store.setCardStatus(scope, cardId, 'frozen');
    expect((await authorize(cardId, '1')).decision.declineReason?.rule).toBe('card_frozen');
    await store.setCardStatus(scope, cardId, 'active');
    await store.freezeVault(scope, funded.id, 'incident');
    expect((await authorize(cardId, '1')).decision.declineReason?.rule).toBe('vault_frozen');
    await store.unfreezeVault(scope, funded.id);
    const sol = await authorize(cardId, '1.000000001', scope, { currency: 'SOL' });
    expect(sol.decision.declineReason?.rule).toBe('currency_mismatch');
    expect(sol.transaction?.currency).toBe('SOL');
    await store.setCardStatus(scope, cardId, 'cancelled');
    expect((await authorize(cardId, '1')).decision.declineReason?.rule).toBe('card_cancelled');
    const events = await store.client.query<{
      payload: { data: { object: Record<string, unknown> } };
    }>(
      "SELECT payload FROM outbox_events WHERE type = 'card.cancelled' AND payload->'data'->'object'->>'id' = $1",
      [cardId],
    );
    // The event carries the card as the API returns it, never a stub.
    expect(events.rows[0]?.payload.data.object).toMatchObject({
      id: cardId,
      object: 'card',
      status: 'cancelled',
      last4: expect.stringMatching(/^\d{4}$/) as unknown,
    });
    expect((await refusal(store.setCardStatus(scope, cardId, 'active'))).code).toBe(
      'card_cancelled',
    );
    expect((await store.getVault(scope, funded.id)).pending.isZero()).toBe(true);
    await t.expectInvariants();
  });

  it('captures partially, posting the amount and releasing the rest of the hold', async () => {
    const funded = await vault('100');
    const { id: cardId } = await card(funded.id);
    const held = (await authorize(cardId, '50')).transaction;
    if (held === null) throw new Error('no transaction');
    expect((await refusal(store.capture(scope, held.id, usdc('50.000001')))).code).toBe(
      'invalid_amount',
    );
    const captured = await store.capture(scope, held.id, usdc('45.25'));
    expect(captured.status).toBe('completed');
    expect(captured.capturedAmount.toFixed()).toBe('45.25');
    const after = await store.getVault(scope, funded.id);
    expect([after.ledger.toFixed(), after.pending.toFixed()]).toEqual(['54.75', '0']);
    expect((await refusal(store.capture(scope, held.id, null))).code).toBe(
      'transaction_not_pending',
    );
    await t.expectInvariants();
  });

  it('reverses partially (still pending, smaller) and then fully (failed, reversed)', async () => {
    const funded = await vault('100');
    const { id: cardId } = await card(funded.id);
    const held = (await authorize(cardId, '80')).transaction;
    if (held === null) throw new Error('no transaction');
    const partial = await store.reverse(scope, held.id, usdc('30'));
    expect([partial.status, partial.holdRemaining.toFixed()]).toEqual(['pending', '50']);
    const full = await store.reverse(scope, held.id, null);
    expect([full.status, full.failureReason, full.holdRemaining.toFixed()]).toEqual([
      'failed',
      'reversed',
      '0',
    ]);
    const after = await store.getVault(scope, funded.id);
    expect([after.ledger.toFixed(), after.pending.toFixed()]).toEqual(['100', '0']);
    expect(
      (await refusal(store.reverse(scope, 'txn_00000000000000000000000000000000', null))).code,
    ).toBe('transaction_not_found');
    await t.expectInvariants();
  });

  it('expires holds older than the configured age, and only those', async () => {
    const funded = await vault('100');
    const { id: cardId } = await card(funded.id);
    const old = (await authorize(cardId, '10')).transaction;
    t.clock.advance(6 * 86_400_000);
    const recent = (await authorize(cardId, '20')).transaction;
    t.clock.advance(1 * 86_400_000 + 1);
    expect(await store.expireHolds(7 * 86_400_000)).toBeGreaterThanOrEqual(1);
    const rows = await store.client.query<{
      id: string;
      status: string;
      failure_reason: string | null;
    }>('SELECT id, status, failure_reason FROM transactions WHERE id = ANY($1) ORDER BY id', [
      [old?.id, recent?.id],
    ]);
    expect(rows.rows.map((row) => [row.status, row.failure_reason])).toEqual([
      ['failed', 'expired'],
      ['pending', null],
    ]);
    expect((await store.getVault(scope, funded.id)).pending.toFixed()).toBe('20');
    await t.expectInvariants();
  });

  it('moves money between vaults of different accounts, and refuses every bad transfer', async () => {
    const counterparty = await t.scope();
    const from = await vault('100');
    const to = await vault('0', 'USDC', counterparty);
    const sol = await vault('5', 'SOL');
    const transfer = await store.createInternalTransfer(scope, {
      fromVaultId: from.id,
      toVaultId: to.id,
      amount: usdc('40'),
      description: 'rent',
    });
    expect(transfer.status).toBe('completed');
    expect((await store.getVault(counterparty, to.id)).ledger.toFixed()).toBe('40');
    const bad = async (
      input: { fromVaultId: string; toVaultId: string; amount: string },
      owner = scope,
    ) =>
      (
        await refusal(
          store.createInternalTransfer(owner, {
            ...input,
            amount: usdc(input.amount),
            description: null,
          }),
        )
      ).code;
    expect(await bad({ fromVaultId: from.id, toVaultId: to.id, amount: '60.000001' })).toBe(
      'insufficient_balance',
    );
    expect(await bad({ fromVaultId: from.id, toVaultId: sol.id, amount: '1' })).toBe(
      'currency_mismatch',
    );
    expect(await bad({ fromVaultId: from.id, toVaultId: from.id, amount: '1' })).toBe(
      'parameter_invalid',
    );
    expect(await bad({ fromVaultId: to.id, toVaultId: from.id, amount: '1' })).toBe(
      'vault_not_found',
    );
    expect(
      await bad({
        fromVaultId: from.id,
        toVaultId: 'vlt_00000000000000000000000000000000',
        amount: '1',
      }),
    ).toBe('vault_not_found');
    await store.freezeVault(counterparty, to.id, null);
    expect(await bad({ fromVaultId: from.id, toVaultId: to.id, amount: '1' })).toBe('vault_frozen');
    expect((await store.getVault(scope, from.id)).ledger.toFixed()).toBe('60');
    await t.expectInvariants();
  });

  it('freezes and unfreezes idempotently; closing withdraws the balance, cancels cards and is final', async () => {
    const source = await vault('25');
    const destination = await vault('0');
    const { id: cardId } = await card(source.id);
    expect((await store.freezeVault(scope, source.id, 'incident')).status).toBe('frozen');
    expect((await store.freezeVault(scope, source.id, 'again')).freezeReason).toBe('incident');
    expect((await store.unfreezeVault(scope, source.id)).status).toBe('active');
    const held = (await authorize(cardId, '5')).transaction;
    expect(
      (await refusal(store.closeVault(scope, source.id, { vaultId: destination.id }))).code,
    ).toBe('vault_has_pending_transactions');
    await store.reverse(scope, held?.id ?? '', null);
    expect((await refusal(store.closeVault(scope, source.id, null))).code).toBe(
      'parameter_missing',
    );
    const closed = await store.closeVault(scope, source.id, { vaultId: destination.id });
    expect([closed.status, closed.ledger.toFixed()]).toEqual(['closed', '0']);
    expect((await store.getVault(scope, destination.id)).ledger.toFixed()).toBe('25');
    expect((await authorize(cardId, '1')).decision.declineReason?.rule).toBe('card_cancelled');
    expect(
      (await refusal(store.closeVault(scope, source.id, { vaultId: destination.id }))).code,
    ).toBe('vault_closed');
    expect((await refusal(store.freezeVault(scope, source.id, null))).code).toBe('vault_closed');
    expect((await refusal(store.deposit(scope, source.id, usdc('1')))).code).toBe('vault_closed');
    expect(
      (
        await refusal(
          store.createCard(scope, { vaultId: source.id, cardholderName: 'x', metadata: {} }),
        )
      ).code,
    ).toBe('vault_closed');
    await t.expectInvariants();
  });

  it('keeps policy versions increasing across deletes and applies the policy with live aggregates', async () => {
    const funded = await vault('1000');
    const { id: cardId } = await card(funded.id);
    const first = await store.setPolicy(scope, funded.id, {
      limits: [
        { interval: 'daily', amount: '100' },
        { interval: 'daily', count: 3 },
      ],
    });
    expect(first.version).toBe(1);
    expect((await authorize(cardId, '60')).decision.approved).toBe(true);
    const overDaily = await authorize(cardId, '40.01');
    expect(overDaily.decision.declineReason?.rule).toBe('limits[0]');
    expect((await authorize(cardId, '40')).decision.approved).toBe(true);
    await store.deletePolicy(scope, funded.id);
    expect((await refusal(store.getPolicy(scope, funded.id))).code).toBe('policy_not_found');
    expect((await refusal(store.deletePolicy(scope, funded.id))).code).toBe('policy_not_found');
    const second = await store.setPolicy(scope, funded.id, {
      limits: [{ interval: 'daily', count: 2 }],
    });
    expect(second.version).toBe(2);
    expect((await authorize(cardId, '1')).decision.declineReason?.rule).toBe('limits[0]');
    // A new UTC day opens a new window.
    t.clock.advance(86_400_000);
    expect((await authorize(cardId, '1')).decision.approved).toBe(true);
    const invalid = await refusal(
      store.setPolicy(scope, funded.id, { limits: [{ interval: 'daily', amount: '1.0000001' }] }),
    );
    expect([invalid.code, invalid.param]).toEqual(['policy_invalid', 'limits[0].amount']);
    expect((await store.getPolicy(scope, funded.id)).version).toBe(2);
    await t.expectInvariants();
  });

  it('refuses, in the database itself, to delete the accounts, vaults and cards history names', async () => {
    const funded = await vault('10');
    for (const table of ['accounts', 'vaults', 'cards']) {
      await expect(store.client.query(`DELETE FROM ${table}`)).rejects.toThrow(/never deleted/);
      await expect(store.client.exec(`TRUNCATE ${table} CASCADE`)).rejects.toThrow(/never deleted/);
    }
    expect((await store.getVault(scope, funded.id)).id).toBe(funded.id);
    // And the orphan check sees a row that names nothing (as a writer bug would leave).
    await store.client.query(
      `INSERT INTO spend_counters (vault_id, mcc, day, amount, count) VALUES ('vlt_gone', '', '2026-01-01', 1, 1)`,
    );
    expect((await checkInvariants(store.client)).map((violation) => violation.detail)).toContain(
      'spend counter vlt_gone  2026-01-01',
    );
    await store.client.query(`DELETE FROM spend_counters WHERE vault_id = 'vlt_gone'`);
    await t.expectInvariants();
  });

  it('refuses, in the database itself, entries that change or do not balance, and an overdrawn vault', async () => {
    const funded = await vault('10');
    await expect(
      store.client.query('UPDATE ledger_entries SET amount = amount * 2'),
    ).rejects.toThrow(/immutable/);
    await expect(store.client.query('DELETE FROM ledger_entries')).rejects.toThrow(/immutable/);
    await expect(
      store.client.transaction((tx) =>
        tx.query(
          `INSERT INTO ledger_entries (posting_id, ledger_account_id, mode, currency, amount, created_at)
           VALUES ('pst_unbalanced', $1, 'test', 'USDC', 5, now())`,
          [funded.id],
        ),
      ),
    ).rejects.toThrow(/does not balance/);
    await expect(
      store.client.query('UPDATE vaults SET pending = ledger + 1 WHERE id = $1', [funded.id]),
    ).rejects.toThrow(/vaults_available_not_negative/);
    await t.expectInvariants();
  });
});
