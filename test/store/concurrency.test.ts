import { describe, expect, it } from 'vitest';
import { SpendgateError } from '../../src/core/index.js';
import { testDatabase } from '../support/databases.js';
import { merchant, networkTransactionId, usdc, useTestStore } from '../support/store.js';

/**
 * Concurrency on a real PostgreSQL server (PGlite runs one transaction at a time, so it cannot
 * race): many connections, one vault, and the balance must hold exactly.
 */
describe('concurrency on PostgreSQL', () => {
  const t = useTestStore(testDatabase('pg', 32));

  /** `count` authorizations of `amount` on one card, all at once, each its own callback. */
  const burst = (cardId: string, count: number, amount: string) =>
    Promise.all(
      Array.from({ length: count }, () =>
        t.store.authorize(t.owner, {
          cardId,
          amount: usdc(amount),
          currency: 'USDC',
          merchant: merchant(),
          networkTransactionId: networkTransactionId(),
        }),
      ),
    );

  it('500 concurrent authorizations on a vault funded for exactly 200: 200 approved, 300 declined, 0 left', async () => {
    const vault = await t.vault(t.owner, '500', { name: 'Hot' });
    const card = await t.card(t.owner, vault.id);
    const outcomes = await burst(card.id, 500, '2.5');
    const approved = outcomes.filter((outcome) => outcome.decision.approved).length;
    const declineCodes = new Set(
      outcomes
        .filter((outcome) => !outcome.decision.approved)
        .map((outcome) => outcome.decision.declineCode),
    );
    expect(approved).toBe(200);
    // They were decided in batches, and no batch had to fall back to one request at a time.
    const stats = t.store.authorizeStats();
    expect(stats.batches).toBeLessThan(500);
    expect(stats.fallbacks).toBe(0);
    expect([...declineCodes]).toEqual(['insufficient_balance']);
    const after = await t.store.getVault(t.owner, vault.id);
    expect(after.ledger.minus(after.pending).toFixed()).toBe('0');
    expect(after.pending.toFixed()).toBe('500');
    await t.expectInvariants();
  });

  it('500 concurrent authorizations against a daily count limit of 120 and an amount limit: the limits hold exactly', async () => {
    const vault = await t.vault(t.owner, '100000', { name: 'Limited' });
    await t.store.setPolicy(t.owner, vault.id, {
      limits: [
        { interval: 'daily', count: 120 },
        { interval: 'weekly', amount: '250' },
      ],
    });
    const card = await t.card(t.owner, vault.id);
    const outcomes = await burst(card.id, 500, '2.5');
    // 2.5 x 100 = 250 reaches the weekly amount first; the count limit of 120 would allow more.
    expect(outcomes.filter((outcome) => outcome.decision.approved)).toHaveLength(100);
    expect(
      new Set(
        outcomes.filter((o) => !o.decision.approved).map((o) => o.decision.declineReason?.rule),
      ),
    ).toEqual(new Set(['limits[1]']));
    const second = await t.vault(t.owner, '100000', { name: 'Counted' });
    await t.store.setPolicy(t.owner, second.id, {
      limits: [{ interval: 'daily', count: 120 }],
    });
    const card2 = await t.card(t.owner, second.id);
    const counted = await burst(card2.id, 500, '1');
    expect(counted.filter((outcome) => outcome.decision.approved)).toHaveLength(120);
    await t.expectInvariants();
  });

  it('concurrent transfers in both directions between two vaults lose no update and leave no deadlock', async () => {
    const create = () => t.vault(t.owner, '300', { name: 'Side' });
    const [a, b] = [await create(), await create()];
    // Amounts 1..20; 200 each way, far more than either balance: some must be refused.
    const plans = Array.from({ length: 400 }, (_, index) => ({
      from: index % 2 === 0 ? a.id : b.id,
      to: index % 2 === 0 ? b.id : a.id,
      amount: usdc(String((index % 20) + 1)),
    }));
    const results = await Promise.all(
      plans.map(async (plan) => {
        try {
          await t.store.createInternalTransfer(t.owner, {
            fromVaultId: plan.from,
            toVaultId: plan.to,
            amount: plan.amount,
            description: null,
          });
          return { plan, ok: true as const };
        } catch (error) {
          if (error instanceof SpendgateError && error.code === 'insufficient_balance')
            return { plan, ok: false as const };
          throw error;
        }
      }),
    );
    let expectedA = usdc('300');
    for (const { plan, ok } of results) {
      if (!ok) continue;
      expectedA = plan.from === a.id ? expectedA.minus(plan.amount) : expectedA.plus(plan.amount);
    }
    const [afterA, afterB] = [
      await t.store.getVault(t.owner, a.id),
      await t.store.getVault(t.owner, b.id),
    ];
    expect(afterA.ledger.toFixed()).toBe(expectedA.toFixed());
    expect(afterA.ledger.plus(afterB.ledger).toFixed()).toBe('600');
    expect(results.filter((result) => result.ok).length).toBeGreaterThan(100);
    await t.expectInvariants();
  });

  it('one networkTransactionId sent 50 times at once holds once', async () => {
    const vault = await t.vault(t.owner, '100', { name: 'Dup' });
    const card = await t.card(t.owner, vault.id);
    const id = networkTransactionId();
    const outcomes = await Promise.all(
      Array.from({ length: 50 }, () =>
        t.store.authorize(t.owner, {
          cardId: card.id,
          amount: usdc('10'),
          currency: 'USDC',
          merchant: merchant(),
          networkTransactionId: id,
        }),
      ),
    );
    expect(new Set(outcomes.map((outcome) => outcome.transaction?.id)).size).toBe(1);
    expect(outcomes.filter((outcome) => !outcome.replayed)).toHaveLength(1);
    expect((await t.store.getVault(t.owner, vault.id)).pending.toFixed()).toBe('10');
    await t.expectInvariants();
  });

  it('20 concurrent requests with one Idempotency-Key create one vault; the others get 409 in_use or the replay', async () => {
    const request = {
      key: `concurrent-${networkTransactionId()}`,
      method: 'POST',
      path: '/v1/vaults',
      body: '{"name":"Once"}',
    };
    const results = await Promise.all(
      Array.from({ length: 20 }, () =>
        t.store
          .idempotent(
            t.owner,
            request,
            async (operations) => {
              const { vault } = await operations.createVault(t.owner, {
                name: 'Once',
                currency: 'USDC',
                metadata: {},
                initialDeposit: usdc('0'),
              });
              return { status: 201, body: { id: vault.id } };
            },
            (error) => ({ status: error.status, body: { code: error.code } }),
          )
          .then(
            (result) => (result.replayed ? 'replayed' : 'created'),
            (error: unknown) => (error instanceof SpendgateError ? error.code : 'crash'),
          ),
      ),
    );
    expect(results.filter((result) => result === 'created')).toHaveLength(1);
    expect(new Set(results.filter((result) => result !== 'created'))).toSatisfy(
      (codes: Set<string>) =>
        [...codes].every((code) => code === 'replayed' || code === 'idempotency_key_in_use'),
    );
    const { rows } = await t.store.client.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM vaults WHERE account_id = $1 AND name = 'Once'",
      [t.owner.accountId],
    );
    expect(rows[0]?.n).toBe(1);
  });

  it('relays claiming at once each get their own events, none twice', async () => {
    for (let index = 0; index < 30; index++) {
      await t.vault(t.owner, '0', { name: `e${index}` });
    }
    const claims = await Promise.all(
      Array.from({ length: 6 }, () =>
        t.store.transaction(async (operations) => {
          const events = await operations.relayEvents(10);
          // Hold the claim a moment, as a relay adding jobs would.
          await new Promise((resolve) => setTimeout(resolve, 50));
          return events.map((event) => event.id);
        }),
      ),
    );
    const all = claims.flat();
    expect(new Set(all).size).toBe(all.length);
    expect(claims.filter((claim) => claim.length > 0).length).toBeGreaterThan(1);
  });
});
