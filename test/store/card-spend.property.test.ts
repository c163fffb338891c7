import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Decimal, type Decision, type LimitStatus, type Scope } from '../../src/core/index.js';
import type { PolicyOwner } from '../../src/store/store.js';
import { testDatabase } from '../support/databases.js';
import { merchant, networkTransactionId, openTestStore, type TestStore } from '../support/store.js';

/**
 * Card-level policies hold to what authorize decides, on the real PostgreSQL: for random card
 * and vault policies and random histories (purchases on two cards of one vault, partial
 * reversals and captures, card policies set, replaced and deleted between purchases, time
 * passing across days and months), (1) Simulate Policy with the card gives the decision
 * authorize then gives; (2) the card's remaining limits predict it: a purchase above an
 * applicable amount limit's `remaining`, or with a count limit's `remaining` at 0, is declined,
 * and a decline by the card's limit `limits[i]` was so predicted; (3) the ledger invariants hold
 * after every history, the card counters' (equal to the card's approved spend while it has a
 * policy, and none without one) among them.
 */
const MCCS = ['5812', '5411'] as const;
const HOUR_MS = 3_600_000;
const cents = (value: number) => new Decimal(value).dividedBy(100);

const cardLimit = fc
  .record({
    interval: fc.constantFrom('daily', 'weekly', 'monthly', 'allTime'),
    measure: fc.constantFrom('amount', 'count'),
    amountCents: fc.integer({ min: 0, max: 20_000 }),
    count: fc.integer({ min: 0, max: 4 }),
    merchantCategories: fc.option(fc.subarray([...MCCS], { minLength: 1 }), { nil: undefined }),
  })
  .map(({ interval, measure, amountCents, count, merchantCategories }) => ({
    interval,
    ...(measure === 'amount' ? { amount: cents(amountCents).toFixed() } : { count }),
    ...(merchantCategories === undefined ? {} : { merchantCategories }),
  }));
const cardPolicy = fc.record({ limits: fc.array(cardLimit, { minLength: 1, maxLength: 3 }) });

type Step =
  | { kind: 'purchase'; card: number; amountCents: number; mcc: string }
  | { kind: 'reverse' | 'capture'; hold: number; half: boolean }
  | { kind: 'wait'; hours: number }
  | { kind: 'cardPolicy'; card: number; policy: object | null };

const step: fc.Arbitrary<Step> = fc.oneof(
  {
    arbitrary: fc.record({
      kind: fc.constant('purchase' as const),
      card: fc.integer({ min: 0, max: 1 }),
      amountCents: fc.integer({ min: 1, max: 9_000 }),
      mcc: fc.constantFrom(...MCCS),
    }),
    weight: 6,
  },
  {
    arbitrary: fc.record({
      kind: fc.constantFrom('reverse' as const, 'capture' as const),
      hold: fc.nat({ max: 20 }),
      half: fc.boolean(),
    }),
    weight: 2,
  },
  {
    arbitrary: fc.record({
      kind: fc.constant('wait' as const),
      hours: fc.oneof(fc.integer({ min: 1, max: 12 }), fc.integer({ min: 12, max: 24 * 40 })),
    }),
    weight: 1,
  },
  {
    arbitrary: fc.record({
      kind: fc.constant('cardPolicy' as const),
      card: fc.integer({ min: 0, max: 1 }),
      policy: fc.option(cardPolicy, { nil: null, freq: 4 }),
    }),
    weight: 2,
  },
);

/** Whether the card's limits say `amount` at `mcc` must be declined, and by which rules. */
function predictedDeclines(statuses: readonly LimitStatus[], amount: Decimal, mcc: string) {
  return statuses
    .filter(({ limit }) => limit.mode === 'enforce')
    .filter(({ limit }) => limit.merchantCategories?.includes(mcc) ?? true)
    .filter(({ remaining }) =>
      typeof remaining === 'number' ? remaining === 0 : amount.gt(remaining),
    )
    .map(({ limit }) => limit.rule);
}

const summary = (decision: Decision) => ({
  approved: decision.approved,
  declineReason: decision.declineReason,
  shadowMatches: decision.shadowMatches,
});

describe('card policies decide as their limits say [pg]', () => {
  const database = testDatabase('pg');
  let t: TestStore;

  beforeAll(async () => {
    t = await openTestStore(database);
  });

  afterAll(async () => {
    await database.close();
  });

  it('simulate and the remaining limits predict authorize, and the counters stay exact', async () => {
    const seen = new Set<string>();
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 4, maxLength: 16 }), async (steps) => {
        const scope: Scope = await t.scope();
        const vault = await t.vault(scope, '100000');
        await t.store.setPolicy(scope, vault.id, {
          limits: [{ interval: 'daily', amount: '250' }],
        });
        const cards = [(await t.card(scope, vault.id)).id, (await t.card(scope, vault.id)).id];
        const withPolicy = new Set<string>();
        const holds: { id: string; remaining: Decimal }[] = [];
        for (const next of steps) {
          if (next.kind === 'purchase') {
            const cardId = cards[next.card] as string;
            const amount = cents(next.amountCents);
            const request = {
              cardId,
              amount,
              currency: 'USDC',
              merchant: merchant({ mcc: next.mcc }),
            };
            const owner: PolicyOwner = { kind: 'card', id: cardId };
            const predicted = withPolicy.has(cardId)
              ? predictedDeclines(
                  (await t.store.policyLimits(scope, owner)).statuses,
                  amount,
                  next.mcc,
                )
              : [];
            const simulated = (
              await t.store.simulatePolicy(scope, vault.id, { draft: null, request })
            ).decision;
            const outcome = await t.store.authorize(scope, {
              ...request,
              networkTransactionId: networkTransactionId(),
            });
            const { decision } = outcome;
            expect(summary(simulated)).toEqual(summary(decision));
            if (predicted.length > 0) expect(decision.approved).toBe(false);
            if (decision.declineReason?.policy === 'card')
              expect(predicted).toContain(decision.declineReason.rule);
            seen.add(
              decision.declineReason?.policy === 'card' ? 'card' : String(decision.approved),
            );
            if (decision.approved && outcome.transaction !== null)
              holds.push({ id: outcome.transaction.id, remaining: amount });
          } else if (next.kind === 'reverse' || next.kind === 'capture') {
            const hold = holds[next.hold % Math.max(holds.length, 1)];
            if (hold === undefined) continue;
            const part = next.half
              ? hold.remaining.dividedBy(2).toDecimalPlaces(2, Decimal.ROUND_DOWN)
              : hold.remaining;
            if (part.isZero()) continue;
            if (next.kind === 'capture') await t.store.capture(scope, hold.id, part);
            else await t.store.reverse(scope, hold.id, part);
            hold.remaining = next.kind === 'capture' ? new Decimal(0) : hold.remaining.minus(part);
            if (hold.remaining.isZero()) holds.splice(holds.indexOf(hold), 1);
          } else if (next.kind === 'wait') {
            t.clock.advance(next.hours * HOUR_MS);
          } else if (next.kind === 'cardPolicy') {
            const cardId = cards[next.card] as string;
            if (next.policy !== null) {
              await t.store.setCardPolicy(scope, cardId, next.policy);
              withPolicy.add(cardId);
            } else if (withPolicy.delete(cardId)) {
              await t.store.deleteCardPolicy(scope, cardId);
            }
          }
        }
        await t.expectInvariants();
      }),
      { numRuns: 25 },
    );
    // The histories reach approvals and declines by a card's limits, or agreement proves little.
    expect(seen).toContain('true');
    expect(seen).toContain('card');
  });
});
