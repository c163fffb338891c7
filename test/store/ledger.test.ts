import { expect, it } from 'vitest';
import { checkInvariants } from '../../src/store/invariants.js';
import { forEachDatabase } from '../support/databases.js';
import { refusal } from '../support/refusal.js';
import { merchant, networkTransactionId, usdc, useTestStore } from '../support/store.js';

forEachDatabase('ledger operations', (database) => {
  const t = useTestStore(database);

  const vault = (initialDeposit = '0', currency: 'USDC' | 'SOL' = 'USDC', owner = t.owner) =>
    t.vault(owner, initialDeposit, { currency, metadata: { team: 'ops' } });
  const card = (vaultId: string, owner = t.owner) =>
    t.card(owner, vaultId, { cardholderName: 'Ada Lovelace' });
  const authorize = (
    cardId: string,
    amount: string,
    owner = t.owner,
    extra: Partial<{ mcc: string; networkTransactionId: string; currency: string }> = {},
  ) =>
    t.store.authorize(owner, {
      cardId,
      amount: usdc(amount),
      currency: extra.currency ?? 'USDC',
      merchant: merchant(extra.mcc === undefined ? {} : { mcc: extra.mcc }),
      networkTransactionId: extra.networkTransactionId ?? networkTransactionId(),
    });

  it('creates a vault with its initial deposit as one posting', async () => {
    const { vault: created, deposit } = await t.store.createVault(t.owner, {
      name: 'Treasury',
      currency: 'USDC',
      metadata: {},
      initialDeposit: usdc('1000.50'),
    });
    expect(created.ledger.toFixed()).toBe('1000.5');
    expect(created.pending.isZero()).toBe(true);
    expect(deposit?.type).toBe('deposit');
    expect(deposit?.status).toBe('completed');
    expect((await t.store.getVault(t.owner, created.id)).ledger.eq(usdc('1000.5'))).toBe(true);
    const events = await t.store.client.query<{ type: string }>(
      "SELECT type FROM outbox_events WHERE payload->'data'->'object'->>'id' IN ($1, $2) ORDER BY id",
      [created.id, deposit?.id],
    );
    expect(events.rows.map((row) => row.type)).toEqual(['vault.created', 'transaction.completed']);
    await t.expectInvariants();
  });

  it('hides a vault from another account and from the other mode (404, not 403)', async () => {
    const created = await vault('5');
    const stranger = await t.scope();
    expect((await refusal(t.store.getVault(stranger, created.id))).code).toBe('vault_not_found');
    expect((await refusal(t.store.getVault({ ...t.owner, mode: 'live' }, created.id))).code).toBe(
      'vault_not_found',
    );
    expect((await refusal(t.store.deposit(stranger, created.id, usdc('1')))).code).toBe(
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
    const after = await t.store.getVault(t.owner, funded.id);
    expect([after.ledger.toFixed(), after.pending.toFixed()]).toEqual(['100', '60']);
    await t.expectInvariants();
  });

  it('returns the first decision for a repeated networkTransactionId and holds once', async () => {
    const funded = await vault('100');
    const { id: cardId } = await card(funded.id);
    const id = networkTransactionId();
    const first = await authorize(cardId, '30', t.owner, { networkTransactionId: id });
    const again = await authorize(cardId, '30', t.owner, { networkTransactionId: id });
    expect(again.replayed).toBe(true);
    expect(again.transaction?.id).toBe(first.transaction?.id);
    expect(again.decision.approved).toBe(true);
    expect((await t.store.getVault(t.owner, funded.id)).pending.toFixed()).toBe('30');
  });

  it('declines an unknown, frozen or cancelled card, a frozen vault and another currency', async () => {
    const funded = await vault('100');
    const { id: cardId } = await card(funded.id);
    expect(
      (await authorize('card_00000000000000000000000000000000', '1')).decision.declineReason?.rule,
    ).toBe('card_not_found');
    await t.store.setCardStatus(t.owner, cardId, 'frozen');
    expect((await authorize(cardId, '1')).decision.declineReason?.rule).toBe('card_frozen');
    await t.store.setCardStatus(t.owner, cardId, 'active');
    await t.store.freezeVault(t.owner, funded.id, 'incident');
    expect((await authorize(cardId, '1')).decision.declineReason?.rule).toBe('vault_frozen');
    await t.store.unfreezeVault(t.owner, funded.id);
    const sol = await authorize(cardId, '1.000000001', t.owner, { currency: 'SOL' });
    expect(sol.decision.declineReason?.rule).toBe('currency_mismatch');
    expect(sol.transaction?.currency).toBe('SOL');
    await t.store.setCardStatus(t.owner, cardId, 'cancelled');
    expect((await authorize(cardId, '1')).decision.declineReason?.rule).toBe('card_cancelled');
    const events = await t.store.client.query<{
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
    expect((await refusal(t.store.setCardStatus(t.owner, cardId, 'active'))).code).toBe(
      'card_cancelled',
    );
    expect((await t.store.getVault(t.owner, funded.id)).pending.isZero()).toBe(true);
    await t.expectInvariants();
  });

  it('captures partially, posting the amount and releasing the rest of the hold', async () => {
    const funded = await vault('100');
    const { id: cardId } = await card(funded.id);
    const held = (await authorize(cardId, '50')).transaction;
    if (held === null) throw new Error('no transaction');
    expect((await refusal(t.store.capture(t.owner, held.id, usdc('0.0000001')))).code).toBe(
      'invalid_amount',
    );
    const captured = await t.store.capture(t.owner, held.id, usdc('45.25'));
    expect(captured.status).toBe('completed');
    expect(captured.capturedAmount.toFixed()).toBe('45.25');
    const after = await t.store.getVault(t.owner, funded.id);
    expect([after.ledger.toFixed(), after.pending.toFixed()]).toEqual(['54.75', '0']);
    // Completed: nothing is held, so a capture must say what it posts (section 16).
    expect((await refusal(t.store.capture(t.owner, held.id, null))).code).toBe('invalid_amount');
    await t.expectInvariants();
  });

  it('reverses partially (still pending, smaller) and then fully (failed, reversed)', async () => {
    const funded = await vault('100');
    const { id: cardId } = await card(funded.id);
    const held = (await authorize(cardId, '80')).transaction;
    if (held === null) throw new Error('no transaction');
    const partial = await t.store.reverse(t.owner, held.id, usdc('30'));
    expect([partial.status, partial.holdRemaining.toFixed()]).toEqual(['pending', '50']);
    const full = await t.store.reverse(t.owner, held.id, null);
    expect([full.status, full.failureReason, full.holdRemaining.toFixed()]).toEqual([
      'failed',
      'reversed',
      '0',
    ]);
    const after = await t.store.getVault(t.owner, funded.id);
    expect([after.ledger.toFixed(), after.pending.toFixed()]).toEqual(['100', '0']);
    expect(
      (await refusal(t.store.reverse(t.owner, 'txn_00000000000000000000000000000000', null))).code,
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
    expect(await t.store.expireHolds(7 * 86_400_000)).toBeGreaterThanOrEqual(1);
    const rows = await t.store.client.query<{
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
    expect((await t.store.getVault(t.owner, funded.id)).pending.toFixed()).toBe('20');
    await t.expectInvariants();
  });

  it('moves money between vaults of different accounts, and refuses every bad transfer', async () => {
    const counterparty = await t.scope();
    const from = await vault('100');
    const to = await vault('0', 'USDC', counterparty);
    const sol = await vault('5', 'SOL');
    const transfer = await t.store.createInternalTransfer(t.owner, {
      fromVaultId: from.id,
      toVaultId: to.id,
      amount: usdc('40'),
      description: 'rent',
    });
    expect(transfer.status).toBe('completed');
    expect((await t.store.getVault(counterparty, to.id)).ledger.toFixed()).toBe('40');
    const bad = async (
      input: { fromVaultId: string; toVaultId: string; amount: string },
      owner = t.owner,
    ) =>
      (
        await refusal(
          t.store.createInternalTransfer(owner, {
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
    await t.store.freezeVault(counterparty, to.id, null);
    expect(await bad({ fromVaultId: from.id, toVaultId: to.id, amount: '1' })).toBe('vault_frozen');
    expect((await t.store.getVault(t.owner, from.id)).ledger.toFixed()).toBe('60');
    await t.expectInvariants();
  });

  it('freezes and unfreezes idempotently; closing withdraws the balance, cancels cards and is final', async () => {
    const source = await vault('25');
    const destination = await vault('0');
    const { id: cardId } = await card(source.id);
    expect((await t.store.freezeVault(t.owner, source.id, 'incident')).status).toBe('frozen');
    expect((await t.store.freezeVault(t.owner, source.id, 'again')).freezeReason).toBe('incident');
    expect((await t.store.unfreezeVault(t.owner, source.id)).status).toBe('active');
    const held = (await authorize(cardId, '5')).transaction;
    expect(
      (await refusal(t.store.closeVault(t.owner, source.id, { vaultId: destination.id }))).code,
    ).toBe('vault_has_pending_transactions');
    await t.store.reverse(t.owner, held?.id ?? '', null);
    expect((await refusal(t.store.closeVault(t.owner, source.id, null))).code).toBe(
      'parameter_missing',
    );
    const closed = await t.store.closeVault(t.owner, source.id, { vaultId: destination.id });
    expect([closed.status, closed.ledger.toFixed()]).toEqual(['closed', '0']);
    expect((await t.store.getVault(t.owner, destination.id)).ledger.toFixed()).toBe('25');
    expect((await authorize(cardId, '1')).decision.declineReason?.rule).toBe('card_cancelled');
    expect(
      (await refusal(t.store.closeVault(t.owner, source.id, { vaultId: destination.id }))).code,
    ).toBe('vault_closed');
    expect((await refusal(t.store.freezeVault(t.owner, source.id, null))).code).toBe(
      'vault_closed',
    );
    expect((await refusal(t.store.deposit(t.owner, source.id, usdc('1')))).code).toBe(
      'vault_closed',
    );
    expect(
      (
        await refusal(
          t.store.createCard(t.owner, { vaultId: source.id, cardholderName: 'x', metadata: {} }),
        )
      ).code,
    ).toBe('vault_closed');
    await t.expectInvariants();
  });

  it('keeps policy versions increasing across deletes and applies the policy with live aggregates', async () => {
    const funded = await vault('1000');
    const { id: cardId } = await card(funded.id);
    const first = await t.store.setPolicy(t.owner, funded.id, {
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
    await t.store.deletePolicy(t.owner, funded.id);
    expect((await refusal(t.store.getPolicy(t.owner, funded.id))).code).toBe('policy_not_found');
    expect((await refusal(t.store.deletePolicy(t.owner, funded.id))).code).toBe('policy_not_found');
    const second = await t.store.setPolicy(t.owner, funded.id, {
      limits: [{ interval: 'daily', count: 2 }],
    });
    // The delete was version 2 (every change is a version of the policy's history).
    expect(second.version).toBe(3);
    expect((await authorize(cardId, '1')).decision.declineReason?.rule).toBe('limits[0]');
    // A new UTC day opens a new window.
    t.clock.advance(86_400_000);
    expect((await authorize(cardId, '1')).decision.approved).toBe(true);
    const invalid = await refusal(
      t.store.setPolicy(t.owner, funded.id, {
        limits: [{ interval: 'daily', amount: '1.0000001' }],
      }),
    );
    expect([invalid.code, invalid.param]).toEqual(['policy_invalid', 'limits[0].amount']);
    expect((await t.store.getPolicy(t.owner, funded.id)).version).toBe(3);
    await t.expectInvariants();
  });

  it('refuses, in the database itself, to delete the accounts, vaults and cards history names', async () => {
    const funded = await vault('10');
    for (const table of ['accounts', 'vaults', 'cards']) {
      await expect(t.store.client.query(`DELETE FROM ${table}`)).rejects.toThrow(/never deleted/);
      await expect(t.store.client.exec(`TRUNCATE ${table} CASCADE`)).rejects.toThrow(
        /never deleted/,
      );
    }
    expect((await t.store.getVault(t.owner, funded.id)).id).toBe(funded.id);
    // And the orphan check sees a row that names nothing (as a writer bug would leave).
    await t.store.client.query(
      `INSERT INTO spend_counters (vault_id, mcc, day, amount, count) VALUES ('vlt_gone', '', '2026-01-01', 1, 1)`,
    );
    expect((await checkInvariants(t.store.client)).map((violation) => violation.detail)).toContain(
      'spend counter vlt_gone  2026-01-01',
    );
    await t.store.client.query(`DELETE FROM spend_counters WHERE vault_id = 'vlt_gone'`);
    // The relay's queue names events (migration 0016): an id of none is an orphan too.
    await t.store.client.query(`INSERT INTO outbox_unrelayed (id) VALUES ('evt_gone')`);
    expect((await checkInvariants(t.store.client)).map((violation) => violation.detail)).toContain(
      'unrelayed event evt_gone',
    );
    await t.store.client.query(`DELETE FROM outbox_unrelayed WHERE id = 'evt_gone'`);
    await t.expectInvariants();
  });

  it('refuses, in the database itself, entries that change or do not balance, and an overdrawn vault', async () => {
    const funded = await vault('10');
    await expect(
      t.store.client.query('UPDATE ledger_entries SET amount = amount * 2'),
    ).rejects.toThrow(/immutable/);
    await expect(t.store.client.query('DELETE FROM ledger_entries')).rejects.toThrow(/immutable/);
    await expect(
      t.store.client.transaction((tx) =>
        tx.query(
          `INSERT INTO ledger_entries (posting_id, ledger_account_id, mode, currency, amount, created_at)
           VALUES ('pst_unbalanced', $1, 'test', 'USDC', 5, now())`,
          [funded.id],
        ),
      ),
    ).rejects.toThrow(/does not balance/);
    // Only an overdrawn vault (overdrawn_at set, by a posting the network mandates) may have a
    // negative available balance (migration 0019).
    await expect(
      t.store.client.query('UPDATE vaults SET pending = ledger + 1 WHERE id = $1', [funded.id]),
    ).rejects.toThrow(/vaults_available_negative_only_overdrawn/);
    await t.expectInvariants();
  });
});
