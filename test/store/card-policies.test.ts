import { expect, it } from 'vitest';
import { Decimal, type Scope } from '../../src/core/index.js';
import { forEachDatabase } from '../support/databases.js';
import { refusal } from '../support/refusal.js';
import {
  merchant,
  networkTransactionId,
  openTestStore,
  usdc,
  useTestStore,
} from '../support/store.js';

/**
 * Card-level policies, remaining limits and policy versions in the store, on PostgreSQL and
 * PGlite: a card's own policy decides after the vault's and its declines say so; its counters
 * are kept from the moment it is set (filled from the card's history), by approvals in the
 * batch's write and by releases, and dropped with it; remaining limits agree with the next
 * decision to the unit; every change is a version that can be listed and restored. The ledger
 * invariants (the card counters' own among them) are checked after each test.
 */
forEachDatabase('card policies', (database) => {
  const t = useTestStore(database);

  const setup = async (deposit = '1000') => {
    const vault = await t.vault(t.owner, deposit);
    const card = await t.card(t.owner, vault.id);
    return { vault, card };
  };
  const buy = (cardId: string, amount: string, mcc = '5812', scope: Scope = t.owner) =>
    t.store.authorize(scope, {
      cardId,
      amount: usdc(amount),
      currency: 'USDC',
      merchant: merchant({ mcc }),
      networkTransactionId: networkTransactionId(),
    });

  it("declines by the card's own policy after the vault's, naming it; other cards are untouched", async () => {
    const { vault, card } = await setup();
    const other = await t.card(t.owner, vault.id);
    await t.store.setPolicy(t.owner, vault.id, {
      limits: [{ interval: 'perTransaction', amount: '100' }],
    });
    const set = await t.store.setCardPolicy(t.owner, card.id, {
      limits: [{ interval: 'daily', amount: '50' }],
    });
    expect(set).toMatchObject({ vaultId: vault.id, cardId: card.id, version: 1 });
    expect((await buy(card.id, '30')).decision.approved).toBe(true);
    const overCard = await buy(card.id, '30');
    expect(overCard.decision.declineReason).toEqual({
      rule: 'limits[0]',
      message: 'Daily spend limit of 50.00 USDC would be exceeded',
      policy: 'card',
    });
    expect(overCard.transaction?.declineReason?.policy).toBe('card');
    // The vault's decline reads as it always has; the other card has no limit of its own.
    expect((await buy(card.id, '150')).decision.declineReason).toEqual({
      rule: 'limits[0]',
      message: 'Amount exceeds the per-transaction limit of 100.00 USDC',
    });
    expect((await buy(other.id, '90')).decision.approved).toBe(true);
    expect(await t.store.getCardPolicy(t.owner, card.id)).toEqual(set);
    await t.expectInvariants();
  });

  it('counts the spend before the policy was set, takes releases back, and drops the counters with the policy', async () => {
    const { card } = await setup();
    const first = await buy(card.id, '30');
    const second = await buy(card.id, '15', '5411');
    if (first.transaction === null || second.transaction === null) throw new Error('no hold');
    await t.store.reverse(t.owner, second.transaction.id, usdc('5'));
    await t.store.setCardPolicy(t.owner, card.id, {
      limits: [
        { interval: 'daily', amount: '50' },
        { interval: 'daily', count: 3, merchantCategories: ['5411'] },
      ],
    });
    await t.expectInvariants();
    const limits = async () =>
      (await t.store.policyLimits(t.owner, { kind: 'card', id: card.id })).statuses.map(
        (status) => [String(status.used), String(status.remaining)],
      );
    expect(await limits()).toEqual([
      ['40', '10'],
      ['1', '2'],
    ]);
    // A capture of part of the hold releases the rest; a whole reverse takes the count back.
    await t.store.capture(t.owner, first.transaction.id, usdc('20'));
    await t.store.reverse(t.owner, second.transaction.id, null);
    expect(await limits()).toEqual([
      ['20', '30'],
      ['0', '3'],
    ]);
    await t.expectInvariants();
    await t.store.deleteCardPolicy(t.owner, card.id);
    const { rows } = await t.store.client.query(
      'SELECT 1 FROM card_spend_counters WHERE card_id = $1',
      [card.id],
    );
    expect(rows).toEqual([]);
    expect((await buy(card.id, '500')).decision.approved).toBe(true);
    // Set again: filled again from the whole history, the approval without a policy included.
    await t.store.setCardPolicy(t.owner, card.id, {
      limits: [{ interval: 'daily', amount: '50' }],
    });
    expect(await limits()).toEqual([['520', '0']]);
    await t.expectInvariants();
  });

  it('agrees with the decision: spend until nothing remains, then the next authorization declines', async () => {
    const { vault, card } = await setup('10000');
    await t.store.setPolicy(t.owner, vault.id, { limits: [{ interval: 'weekly', amount: '70' }] });
    await t.store.setCardPolicy(t.owner, card.id, {
      limits: [
        { interval: 'monthly', amount: '45.5' },
        { interval: 'daily', count: 4 },
      ],
    });
    const card2 = await t.card(t.owner, vault.id);
    for (let step = 0; step < 10; step++) {
      const [monthly, daily] = (await t.store.policyLimits(t.owner, { kind: 'card', id: card.id }))
        .statuses;
      const remaining = monthly?.remaining as Decimal;
      if (remaining.isZero() || daily?.remaining === 0) break;
      const amount = Decimal.min(remaining, new Decimal('12.25'));
      expect((await buy(card.id, amount.toFixed())).decision.approved).toBe(true);
    }
    const spent = (await t.store.policyLimits(t.owner, { kind: 'card', id: card.id })).statuses;
    expect(spent.map((status) => String(status.remaining))).toEqual(['0', '0']);
    expect((await buy(card.id, '0.01')).decision.declineReason?.policy).toBe('card');
    // The vault's weekly limit: 45.50 spent on the first card, the rest on the second.
    const [weekly] = (await t.store.policyLimits(t.owner, { kind: 'vault', id: vault.id }))
      .statuses;
    expect(String(weekly?.remaining)).toBe('24.5');
    expect((await buy(card2.id, '24.5')).decision.approved).toBe(true);
    const declined = await buy(card2.id, '0.000001');
    expect(declined.decision.declineReason).toMatchObject({ rule: 'limits[0]' });
    expect(declined.decision.declineReason).not.toHaveProperty('policy');
    await t.expectInvariants();
  });

  it('decides a batch in order: a later request sees the card spend of the earlier ones', async () => {
    // One batch in flight at a time: requests sent together gather into the next batch.
    const batched = await openTestStore(database, { authorizeBatchesMax: 1 });
    const scope = await batched.scope();
    const vault = await batched.vault(scope, '100');
    const card = await batched.card(scope, vault.id);
    await batched.store.setCardPolicy(scope, card.id, {
      limits: [{ interval: 'daily', count: 2 }],
    });
    const burst = () =>
      Promise.all(
        Array.from({ length: 6 }, () =>
          batched.store.authorize(scope, {
            cardId: card.id,
            amount: usdc('1'),
            currency: 'USDC',
            merchant: merchant(),
            networkTransactionId: networkTransactionId(),
          }),
        ),
      );
    // The first day reads the card's counters in a statement of their own; the next with the
    // lock (this process has seen the policy): both decide exactly as one at a time would.
    for (let day = 0; day < 2; day++) {
      const batchesBefore = batched.store.authorizeStats().batches;
      const outcomes = await burst();
      expect(outcomes.map((outcome) => outcome.decision.approved)).toEqual([
        true,
        true,
        false,
        false,
        false,
        false,
      ]);
      expect(batched.store.authorizeStats().batches - batchesBefore).toBeLessThan(6);
      batched.clock.advance(86_400_000);
    }
    expect(batched.store.authorizeStats().fallbacks).toBe(0);
    await batched.expectInvariants();
  });

  it('simulates with the card policy when a card is named', async () => {
    const { vault, card } = await setup();
    await t.store.setCardPolicy(t.owner, card.id, {
      merchantCategories: { block: ['5411'] },
      rules: [
        {
          name: 'watch',
          mode: 'shadow',
          conditions: { all: [{ fact: 'amount', operator: 'greaterThan', value: 5 }] },
        },
      ],
    });
    const simulate = (cardId: string, mcc: string) =>
      t.store.simulatePolicy(t.owner, vault.id, {
        draft: null,
        request: { cardId, amount: '10', merchant: merchant({ mcc }) },
      });
    expect((await simulate(card.id, '5411')).decision.declineReason).toEqual({
      rule: 'merchantCategories',
      message: 'Merchant category is blocked',
      policy: 'card',
    });
    const approved = (await simulate(card.id, '5812')).decision;
    expect(approved.approved).toBe(true);
    expect(approved.shadowMatches).toEqual([
      { rule: 'watch', message: 'Declined by rule watch', policy: 'card' },
    ]);
    expect((await simulate('', '5411')).decision.approved).toBe(true);
  });

  it('keeps every change as a version, with its key, and restores one as a new version', async () => {
    const { vault, card } = await setup();
    const first = { limits: [{ interval: 'daily', amount: '10' }] };
    const second = { merchantCountries: { block: ['FR'] } };
    await t.store.setPolicy(t.owner, vault.id, first, 'key_one');
    t.clock.advance(1000);
    await t.store.setPolicy(t.owner, vault.id, second, 'key_two');
    await t.store.deletePolicy(t.owner, vault.id, 'key_two');
    // A delete is a version: the count goes on from it.
    const restored = await t.store.restorePolicyVersion(
      t.owner,
      { kind: 'vault', id: vault.id },
      '1',
      'key_three',
    );
    expect(restored).toMatchObject({ version: 4, document: first });
    const page = await t.store.listPolicyVersions(
      t.owner,
      { kind: 'vault', id: vault.id },
      { limit: 3 },
    );
    expect(
      page.data.map((version) => [
        version.version,
        version.change,
        version.restoredFrom,
        version.keyId,
        version.document,
      ]),
    ).toEqual([
      [4, 'restore', 1, 'key_three', first],
      [3, 'delete', null, 'key_two', null],
      [2, 'set', null, 'key_two', second],
    ]);
    expect(page).toMatchObject({ hasMore: true, nextCursor: '2' });
    const rest = await t.store.listPolicyVersions(
      t.owner,
      { kind: 'vault', id: vault.id },
      { limit: 3, startingAfter: '2' },
    );
    expect(rest.data.map((version) => version.version)).toEqual([1]);
    expect(rest).toMatchObject({ hasMore: false, nextCursor: null });
    expect((await t.store.getPolicy(t.owner, vault.id)).version).toBe(4);

    await t.store.setCardPolicy(t.owner, card.id, second, 'key_one');
    await t.store.deleteCardPolicy(t.owner, card.id);
    const cardVersions = await t.store.listPolicyVersions(
      t.owner,
      { kind: 'card', id: card.id },
      { limit: 10 },
    );
    expect(cardVersions.data.map((version) => [version.version, version.cardId])).toEqual([
      [2, card.id],
      [1, card.id],
    ]);
    for (const [version, code, param] of [
      ['2', 'parameter_invalid', 'version'],
      ['3', 'policy_not_found', 'version'],
      ['01', 'policy_not_found', 'version'],
      ['nope', 'policy_not_found', 'version'],
    ] as const) {
      expect(
        await refusal(
          t.store.restorePolicyVersion(t.owner, { kind: 'card', id: card.id }, version),
        ),
      ).toMatchObject({ code, param });
    }
    const back = await t.store.restorePolicyVersion(t.owner, { kind: 'card', id: card.id }, '1');
    expect(back).toMatchObject({ cardId: card.id, version: 3, document: second });
    await t.expectInvariants();
  });

  it("purges a card's old daily counters as a vault's, keeping those a pending hold will release", async () => {
    const { card } = await setup();
    await t.store.setCardPolicy(t.owner, card.id, { limits: [{ interval: 'yearly', count: 99 }] });
    const pending = await buy(card.id, '3');
    t.clock.advance(86_400_000);
    const captured = await buy(card.id, '4', '5411');
    if (pending.transaction === null || captured.transaction === null) throw new Error('no hold');
    await t.store.capture(t.owner, captured.transaction.id, null);
    t.clock.advance(401 * 86_400_000);
    const days = async () =>
      (
        await t.store.client.query<{ day: string }>(
          `SELECT DISTINCT day::text AS day FROM card_spend_counters WHERE card_id = $1 ORDER BY 1`,
          [card.id],
        )
      ).rows.map((row) => row.day);
    expect(await days()).toHaveLength(3);
    for (let round = 0; round < 100 && (await t.store.purgeSpendCounters(400, 1000)) > 0; round++);
    // The all-time rows and the pending hold's day stay; the captured one's day goes.
    expect(await days()).toEqual(['0001-01-01', '2026-11-18']);
    await t.store.reverse(t.owner, pending.transaction.id, null);
    await t.expectInvariants();
  });

  it('refuses what names nothing, a cancelled card, and a policy that is not there', async () => {
    const { card } = await setup();
    const stranger = await t.scope();
    for (const [operation, code] of [
      [() => t.store.setCardPolicy(stranger, card.id, {}), 'card_not_found'],
      [() => t.store.getCardPolicy(t.owner, card.id), 'policy_not_found'],
      [() => t.store.deleteCardPolicy(t.owner, card.id), 'policy_not_found'],
      [() => t.store.policyLimits(t.owner, { kind: 'card', id: card.id }), 'policy_not_found'],
      [
        () => t.store.policyLimits(stranger, { kind: 'vault', id: card.vaultId }),
        'vault_not_found',
      ],
      [
        () => t.store.listPolicyVersions(stranger, { kind: 'card', id: card.id }, { limit: 10 }),
        'card_not_found',
      ],
      [
        () =>
          t.store.listPolicyVersions(
            t.owner,
            { kind: 'card', id: card.id },
            { limit: 10, startingAfter: 'x' },
          ),
        'parameter_invalid',
      ],
      [() => t.store.setCardPolicy(t.owner, card.id, { limits: 3 }), 'policy_invalid'],
    ] as const) {
      expect((await refusal(operation())).code).toBe(code);
    }
    await t.store.setCardStatus(t.owner, card.id, 'cancelled');
    expect((await refusal(t.store.setCardPolicy(t.owner, card.id, {}))).code).toBe(
      'card_cancelled',
    );
  });
});
