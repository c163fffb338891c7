import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Decimal, SpendgateError, type Decision, type Scope } from '../../src/core/index.js';
import { testDatabase } from '../support/databases.js';
import { cents, purchase, spendPolicy } from '../support/spend-arbitraries.js';
import { merchant, networkTransactionId, openTestStore, type TestStore } from '../support/store.js';

/**
 * Simulate Policy exists to predict authorize: for random policies with spend limits and
 * random histories of spend (approvals, partial reversals and captures, external transfers,
 * policy changes, time passing across days, weeks, months and years), the simulation of the
 * next purchase, with the vault's policy or the same one as a draft, gives exactly the
 * decision authorize then gives. Both sum the same counter rows with one function
 * (src/store/spend-window.ts); this holds them to it, on the real PostgreSQL.
 */
const HOUR_MS = 3_600_000;

const policy = spendPolicy();

type Step =
  | { kind: 'purchase'; amountCents: number; mcc: string }
  | { kind: 'reverse' | 'capture'; hold: number; fraction: number }
  | { kind: 'transfer'; amountCents: number }
  | { kind: 'wait'; hours: number }
  | { kind: 'policy'; policy: object };

const step: fc.Arbitrary<Step> = fc.oneof(
  { arbitrary: purchase, weight: 6 },
  {
    arbitrary: fc.record({
      kind: fc.constantFrom('reverse' as const, 'capture' as const),
      hold: fc.nat({ max: 20 }),
      fraction: fc.constantFrom(0.25, 0.5, 1),
    }),
    weight: 2,
  },
  {
    arbitrary: fc.record({
      kind: fc.constant('transfer' as const),
      amountCents: fc.integer({ min: 1, max: 20_000 }),
    }),
    weight: 1,
  },
  {
    arbitrary: fc.record({
      kind: fc.constant('wait' as const),
      // Within the day, across days, or across weeks and months.
      hours: fc.oneof(fc.integer({ min: 1, max: 12 }), fc.integer({ min: 12, max: 24 * 45 })),
    }),
    weight: 2,
  },
  { arbitrary: fc.record({ kind: fc.constant('policy' as const), policy }), weight: 1 },
);

const summary = (decision: Decision) => ({
  approved: decision.approved,
  declineCode: decision.declineCode,
  declineReason: decision.declineReason,
  shadowMatches: decision.shadowMatches,
});

async function refusalOf(run: Promise<unknown>): Promise<string | null> {
  try {
    await run;
    return null;
  } catch (error) {
    if (error instanceof SpendgateError) return error.code;
    throw error;
  }
}

describe('simulate predicts authorize [pg]', () => {
  const database = testDatabase('pg');
  let t: TestStore;

  beforeAll(async () => {
    t = await openTestStore(database);
  });

  afterAll(async () => {
    await database.close();
  });

  it('gives the next purchase the decision authorize gives it, whatever the spend before', async () => {
    const seen = new Set<string>();
    await fc.assert(
      fc.asyncProperty(
        policy,
        fc.integer({ min: 500, max: 5_000 }),
        fc.array(step, { minLength: 4, maxLength: 18 }),
        async (initialPolicy, depositUnits, steps) => {
          const scope: Scope = await t.scope();
          const { vault } = await t.store.createVault(scope, {
            name: 'spend',
            currency: 'USDC',
            metadata: {},
            initialDeposit: new Decimal(depositUnits),
          });
          const card = await t.store.createCard(scope, {
            vaultId: vault.id,
            cardholderName: 'spend',
            metadata: {},
          });
          let document: object = initialPolicy;
          await t.store.setPolicy(scope, vault.id, document);
          const holds: { id: string; remaining: Decimal }[] = [];

          for (const next of steps) {
            switch (next.kind) {
              case 'purchase': {
                const request = {
                  cardId: card.id,
                  amount: cents(next.amountCents),
                  currency: 'USDC',
                  merchant: merchant({ mcc: next.mcc }),
                };
                const live = (
                  await t.store.simulatePolicy(scope, vault.id, { draft: null, request })
                ).decision;
                const drafted = (
                  await t.store.simulatePolicy(scope, vault.id, { draft: document, request })
                ).decision;
                const outcome = await t.store.authorize(scope, {
                  ...request,
                  networkTransactionId: networkTransactionId(),
                });
                expect(summary(live)).toEqual(summary(outcome.decision));
                expect(summary(drafted)).toEqual(summary(outcome.decision));
                seen.add(outcome.decision.declineReason?.rule ?? 'approved');
                if (outcome.decision.approved && outcome.transaction !== null)
                  holds.push({ id: outcome.transaction.id, remaining: request.amount });
                break;
              }
              case 'reverse':
              case 'capture': {
                const hold = holds[next.hold % Math.max(holds.length, 1)];
                if (hold === undefined) break;
                const part =
                  next.fraction === 1
                    ? hold.remaining
                    : hold.remaining.times(next.fraction).toDecimalPlaces(2, Decimal.ROUND_DOWN);
                if (part.isZero()) break;
                if (next.kind === 'capture') {
                  await t.store.capture(scope, hold.id, part);
                  hold.remaining = new Decimal(0);
                } else {
                  await t.store.reverse(scope, hold.id, part);
                  hold.remaining = hold.remaining.minus(part);
                }
                if (hold.remaining.isZero()) holds.splice(holds.indexOf(hold), 1);
                break;
              }
              case 'transfer': {
                const refusal = await refusalOf(
                  t.store.createExternalTransfer(scope, {
                    fromVaultId: vault.id,
                    address: '11111111111111111111111111111111',
                    amount: cents(next.amountCents),
                    memo: null,
                  }),
                );
                expect([null, 'authorization_failed', 'insufficient_balance']).toContain(refusal);
                break;
              }
              case 'wait':
                t.clock.advance(next.hours * HOUR_MS);
                break;
              case 'policy':
                document = next.policy;
                await t.store.setPolicy(scope, vault.id, document);
                break;
            }
          }
        },
      ),
      { numRuns: 25 },
    );
    // The histories reach approvals and limit declines, or agreement would prove little.
    expect(seen).toContain('approved');
    expect([...seen].some((rule) => rule.startsWith('limits['))).toBe(true);
    await t.expectInvariants();
  });
});
