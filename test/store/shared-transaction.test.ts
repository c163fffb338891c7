import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Decimal, SpendgateError, type Scope } from '../../src/core/index.js';
import type { SharedTransactionStats } from '../../src/store/sql/shared-transaction.js';
import { testDatabase } from '../support/databases.js';
import {
  lockVault,
  merchant,
  networkTransactionId,
  useTestStore,
  type StoreSuite,
} from '../support/store.js';

async function holdsOn(
  t: StoreSuite,
  owner: Scope,
  vaultId: string,
  count: number,
  amount = '1.00',
) {
  const card = await t.card(owner, vaultId);
  const ids: string[] = [];
  for (let n = 0; n < count; n++) {
    const outcome = await t.store.authorize(owner, {
      cardId: card.id,
      amount: new Decimal(amount),
      currency: 'USDC',
      merchant: merchant(),
      networkTransactionId: networkTransactionId(),
    });
    expect(outcome.decision.approved).toBe(true);
    ids.push(outcome.transaction?.id ?? '');
  }
  return { card, ids };
}

/**
 * Lifecycle messages sharing database transactions (src/store/sql/shared-transaction.ts,
 * Store.message): sent at once, they run in batches on one connection, and each ends as it
 * would have alone: one vault's messages one after another, a refusal before any write
 * answered alone, a failure after a write rolling the batch back and every member run alone,
 * and a vault another transaction holds sending its message to run alone.
 */
// The embedded database (PGlite, `npm start`'s default) runs the same code on one connection.
describe.each(['pg', 'pglite'] as const)(
  'lifecycle messages in shared transactions (%s)',
  (kind) => {
    const t = useTestStore(testDatabase(kind));

    const statsChange = (before: SharedTransactionStats) => {
      const after = t.store.messageStats();
      return {
        batches: after.batches - before.batches,
        members: after.members - before.members,
        deferred: after.deferred - before.deferred,
        left: after.left - before.left,
        rolledBack: after.rolledBack - before.rolledBack,
      };
    };

    it("shares transactions, and runs one vault's messages one after another", async () => {
      const owner = await t.scope();
      const vaults = await Promise.all([0, 1, 2].map(() => t.vault(owner, '100')));
      const holds = await Promise.all(vaults.map((vault) => holdsOn(t, owner, vault.id, 8)));
      const before = t.store.messageStats();
      // A tip on each: 1.25 captured of 1.00 held.
      const captured = await Promise.all(
        holds.flatMap(({ ids }) =>
          ids.map((id) =>
            t.store.message((operations) => operations.capture(owner, id, new Decimal('1.25'))),
          ),
        ),
      );
      expect(captured.every((transaction) => transaction.status === 'completed')).toBe(true);
      for (const vault of vaults) {
        const now = await t.store.getVault(owner, vault.id);
        expect(now.ledger.toFixed(2)).toBe('90.00');
        expect(now.pending.toFixed(2)).toBe('0.00');
      }
      const change = statsChange(before);
      expect(change.members).toBeGreaterThanOrEqual(24);
      expect(change.batches).toBeLessThan(change.members);
      // 24 messages on 3 vaults in a batch: some meet their vault held by another member.
      expect(change.deferred).toBeGreaterThan(0);
      expect(change.rolledBack).toBe(0);
      await t.expectInvariants();
    });

    it("keeps a message out of a batch that has its hold's vault, told what it is about", async () => {
      const owner = await t.scope();
      const vaults = await Promise.all([0, 1].map(() => t.vault(owner, '100')));
      const holds = await Promise.all(vaults.map((vault) => holdsOn(t, owner, vault.id, 6)));
      const before = t.store.messageStats();
      const captured = await Promise.all(
        holds.flatMap(({ ids }) =>
          ids.map((id) =>
            t.store.message((operations) => operations.capture(owner, id, null), {
              authorizationId: id,
            }),
          ),
        ),
      );
      expect(captured.every((transaction) => transaction.status === 'completed')).toBe(true);
      const change = statsChange(before);
      // The store saw each hold approved in its vault: no batch took two of one vault, so none
      // was sent on, and two vaults' twelve captures took at least six batches.
      expect(change.deferred).toBe(0);
      expect(change.members).toBe(12);
      expect(change.batches).toBeGreaterThanOrEqual(6);
      for (const vault of vaults) {
        expect((await t.store.getVault(owner, vault.id)).ledger.toFixed(2)).toBe('94.00');
      }
      await t.expectInvariants();
    });

    it('answers a refusal made before any write alone, and commits the rest', async () => {
      const owner = await t.scope();
      const vault = await t.vault(owner, '100');
      const { ids } = await holdsOn(t, owner, vault.id, 5);
      const done = ids[0] ?? '';
      await t.store.capture(owner, done, null);
      const before = t.store.messageStats();
      const sent = [
        ...ids
          .slice(1)
          .map((id) => t.store.message((operations) => operations.capture(owner, id, null))),
        // Completed already: nothing is held to reverse, a refusal at the lock.
        t.store.message((operations) => operations.reverse(owner, done, null)),
      ];
      const settled = await Promise.allSettled(sent);
      expect(settled.slice(0, 4).every((result) => result.status === 'fulfilled')).toBe(true);
      const refused = settled[4];
      expect(refused?.status).toBe('rejected');
      expect((refused as PromiseRejectedResult).reason).toBeInstanceOf(SpendgateError);
      expect((refused as PromiseRejectedResult).reason).toMatchObject({
        code: 'transaction_not_pending',
      });
      expect((await t.store.getVault(owner, vault.id)).ledger.toFixed(2)).toBe('95.00');
      expect(statsChange(before).rolledBack).toBe(0);
      await t.expectInvariants();
    });

    it('rolls the batch back when a member fails after it wrote, and runs each alone', async () => {
      const owner = await t.scope();
      const vaults = await Promise.all([0, 1].map(() => t.vault(owner, '100')));
      const [first, second] = await Promise.all(
        vaults.map((vault) => holdsOn(t, owner, vault.id, 4)),
      );
      const failing = second?.ids[3] ?? '';
      const before = t.store.messageStats();
      const sent = [
        ...(first?.ids ?? []).map((id) =>
          t.store.message((operations) => operations.capture(owner, id, null)),
        ),
        ...(second?.ids.slice(0, 3) ?? []).map((id) =>
          t.store.message((operations) => operations.capture(owner, id, null)),
        ),
        t.store.message(async (operations) => {
          await operations.capture(owner, failing, null);
          throw new Error('failed after its write');
        }),
      ];
      const settled = await Promise.allSettled(sent);
      expect(settled.slice(0, 7).every((result) => result.status === 'fulfilled')).toBe(true);
      expect(settled[7]).toMatchObject({
        status: 'rejected',
        reason: new Error('failed after its write'),
      });
      // Neither its batch nor its run alone committed the failed work's capture.
      expect((await t.store.getTransaction(owner, failing)).status).toBe('pending');
      expect((await t.store.getVault(owner, vaults[0]?.id ?? '')).ledger.toFixed(2)).toBe('96.00');
      expect((await t.store.getVault(owner, vaults[1]?.id ?? '')).ledger.toFixed(2)).toBe('97.00');
      expect(statsChange(before).rolledBack).toBeGreaterThanOrEqual(1);
      await t.expectInvariants();
    });

    it('ends random concurrent messages as their answers say (property)', async () => {
      const message = fc.record({
        hold: fc.nat({ max: 5 }),
        kind: fc.constantFrom('capture', 'captureSome', 'reverse', 'increment'),
        cents: fc.integer({ min: 1, max: 300 }),
      });
      await fc.assert(
        fc.asyncProperty(fc.array(message, { minLength: 1, maxLength: 24 }), async (messages) => {
          const owner = await t.scope();
          const vaults = await Promise.all([0, 1].map(() => t.vault(owner, '100')));
          const holds = (
            await Promise.all(vaults.map((vault) => holdsOn(t, owner, vault.id, 3, '1.00')))
          ).flatMap(({ ids }, vault) => ids.map((id) => ({ id, vault })));
          const ledgers = await Promise.all(
            vaults.map((vault) => t.store.getVault(owner, vault.id)),
          );
          const settled = await Promise.allSettled(
            messages.map(({ hold, kind, cents }) => {
              const { id } = holds[hold] ?? { id: '' };
              const amount = new Decimal(cents).dividedBy(100);
              return t.store.message((operations): Promise<unknown> => {
                if (kind === 'reverse') return operations.reverse(owner, id, null);
                if (kind === 'increment') {
                  return operations.incrementAuthorization(owner, id, {
                    amount,
                    networkTransactionId: networkTransactionId(),
                  });
                }
                return operations.capture(owner, id, amount, kind === 'capture');
              });
            }),
          );
          // What the answers say was captured leaves each vault's ledger; nothing else does.
          const capturedByVault = [new Decimal(0), new Decimal(0)];
          settled.forEach((result, index) => {
            const sent = messages[index];
            if (sent === undefined) return;
            if (result.status === 'rejected') {
              expect(result.reason).toBeInstanceOf(SpendgateError);
              return;
            }
            if (sent.kind !== 'capture' && sent.kind !== 'captureSome') return;
            const vault = holds[sent.hold]?.vault ?? 0;
            capturedByVault[vault] = (capturedByVault[vault] as Decimal).plus(
              new Decimal(sent.cents).dividedBy(100),
            );
          });
          for (const [index, vault] of vaults.entries()) {
            const now = await t.store.getVault(owner, vault.id);
            const was = ledgers[index]?.ledger ?? new Decimal(0);
            expect(now.ledger.toFixed()).toBe(
              was.minus(capturedByVault[index] as Decimal).toFixed(),
            );
          }
          await t.expectInvariants();
        }),
        { numRuns: 15 },
      );
    });
  },
);

// One connection cannot hold a lock against itself: on PostgreSQL only.
describe('lifecycle messages in shared transactions, beside another transaction (pg)', () => {
  const t = useTestStore(testDatabase('pg'));
  const leftSince = (before: number) => t.store.messageStats().left - before;

  it('sends a message whose vault another transaction holds to run alone', async () => {
    const owner = await t.scope();
    const [locked, free] = await Promise.all([0, 1].map(() => t.vault(owner, '100')));
    const lockedHold = (await holdsOn(t, owner, locked?.id ?? '', 1)).ids[0] ?? '';
    const freeHold = (await holdsOn(t, owner, free?.id ?? '', 1)).ids[0] ?? '';
    const lock = lockVault(t.store, locked?.id ?? '');
    await lock.isLocked;
    const before = t.store.messageStats().left;
    const waiting = t.store.message((operations) => operations.capture(owner, lockedHold, null));
    const other = t.store.message((operations) => operations.capture(owner, freeHold, null));
    // The batch did not wait for the lock: the other vault's capture is done while it is held.
    expect((await other).status).toBe('completed');
    expect(leftSince(before)).toBe(1);
    lock.release();
    await lock.done;
    expect((await waiting).status).toBe('completed');
    await t.expectInvariants();
  });
});
