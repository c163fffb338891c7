import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  Decimal,
  SpendgateError,
  type AuthorizationOutcome,
  type Scope,
} from '../../src/core/index.js';
import { checkInvariants } from '../../src/store/invariants.js';
import { testDatabase } from '../support/databases.js';
import { merchant, networkTransactionId, useTestStore } from '../support/store.js';

/**
 * A card transaction's whole life (contract v1.2, section 16) as random sequences of every
 * message (authorize with and without partial approval, increment, capture final or not,
 * reverse, force capture, refund, advice over a recorded decision or a new one), across two
 * cards on two vaults, interleaved and repeated. After every step: the ledger's invariants hold
 * (entries sum to zero, ledger = its postings, pending = the open holds, available below 0 only
 * while overdrawn and overdrawn_at set exactly then, spend counters = what counts as spend,
 * every event and message names a row); no decision of spendgate's (authorize, increment) took
 * available lower when it was below 0, nor below 0 from above; and a repeated message answers
 * what was first recorded.
 */
const VAULTS = 2;
const cents = (value: number) => new Decimal(value).dividedBy(100);
const money = fc.integer({ min: 1, max: 8_000 }).map(cents);
const vaultIndex = fc.integer({ min: 0, max: VAULTS - 1 });
const pick = fc.nat({ max: 30 });

type Op =
  | { kind: 'authorize'; vault: number; amount: Decimal; partial: boolean }
  | { kind: 'increment'; hold: number; amount: Decimal }
  | { kind: 'capture'; hold: number; amount: Decimal; final: boolean }
  | { kind: 'reverse'; hold: number }
  | { kind: 'forceCapture' | 'refund'; vault: number; amount: Decimal }
  | { kind: 'advice'; vault: number; amount: Decimal; approved: boolean; of: number | null }
  | { kind: 'repeat'; message: number };

const op: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant('authorize' as const),
      vault: vaultIndex,
      amount: money,
      partial: fc.boolean(),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({ kind: fc.constant('increment' as const), hold: pick, amount: money }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('capture' as const),
      hold: pick,
      amount: money,
      final: fc.boolean(),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('reverse' as const), hold: pick }) },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constantFrom('forceCapture' as const, 'refund' as const),
      vault: vaultIndex,
      amount: money,
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('advice' as const),
      vault: vaultIndex,
      amount: money,
      approved: fc.boolean(),
      of: fc.option(pick, { nil: null }),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('repeat' as const), message: pick }) },
);

/** What the model keeps of an authorization, and what was asked of it. */
interface Held {
  readonly id: string;
  readonly vault: number;
  readonly networkTransactionId: string;
}

describe('a card transaction’s whole life, message by message', () => {
  const t = useTestStore(testDatabase('pg', 8));

  it('holds the ledger invariants after every step of random message sequences', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 5, maxLength: 25 }), async (ops) => {
        const owner: Scope = await t.scope();
        const vaults = await Promise.all(
          Array.from({ length: VAULTS }, () => t.vault(owner, '100')),
        );
        const cards = await Promise.all(vaults.map((vault) => t.card(owner, vault.id)));
        const holds: Held[] = [];
        const replays: { readonly send: () => Promise<unknown>; readonly first: unknown }[] = [];
        const cardOf = (vault: number) => cards[vault]?.id ?? '';
        const answer = (outcome: AuthorizationOutcome) => ({
          id: outcome.transaction?.id ?? null,
          approved: outcome.decision.approved,
        });

        for (const step of ops) {
          const before = await Promise.all(
            vaults.map((vault) => t.store.getVault(owner, vault.id)),
          );
          const send = stepOf(step);
          let result: unknown;
          try {
            result = await send();
          } catch (error) {
            // Only a state conflict (a hold no longer pending) may refuse a well-formed message.
            expect(error).toBeInstanceOf(SpendgateError);
            expect((error as SpendgateError).code).toBe('transaction_not_pending');
            continue;
          }
          replays.push({ send, first: result });
          await expect(checkInvariants(t.store.client)).resolves.toEqual([]);
          const after = await Promise.all(vaults.map((vault) => t.store.getVault(owner, vault.id)));
          after.forEach((vault, index) => {
            const was = before[index];
            if (was === undefined) return;
            const decided = step.kind === 'authorize' || step.kind === 'increment';
            // No decision of spendgate's takes available below 0, or lower once there.
            const available = vault.ledger.minus(vault.pending);
            if (decided && available.isNegative()) {
              expect(available.gte(was.ledger.minus(was.pending))).toBe(true);
            }
          });
        }

        function stepOf(step: Op): () => Promise<unknown> {
          switch (step.kind) {
            case 'authorize': {
              const networkTransactionId = networkTransactionId_();
              return async () => {
                const outcome = await t.store.authorize(owner, {
                  cardId: cardOf(step.vault),
                  amount: step.amount,
                  currency: 'USD',
                  merchant: merchant(),
                  networkTransactionId,
                  partialApprovalAllowed: step.partial,
                  amountScale: 2,
                });
                const id = outcome.transaction?.id;
                if (id !== undefined && !holds.some((held) => held.id === id)) {
                  holds.push({ id, vault: step.vault, networkTransactionId });
                }
                return answer(outcome);
              };
            }
            case 'increment': {
              const held = holds[step.hold % Math.max(holds.length, 1)];
              const networkTransactionId = networkTransactionId_();
              return async () =>
                held === undefined
                  ? null
                  : answer(
                      await t.store.incrementAuthorization(owner, held.id, {
                        amount: step.amount,
                        networkTransactionId,
                      }),
                    );
            }
            case 'capture':
            case 'reverse': {
              const held = holds[step.hold % Math.max(holds.length, 1)];
              return async () => {
                if (held === undefined) return null;
                const done =
                  step.kind === 'capture'
                    ? await t.store.capture(owner, held.id, step.amount, step.final)
                    : await t.store.reverse(owner, held.id, null);
                return done.id;
              };
            }
            case 'forceCapture':
            case 'refund': {
              const input = {
                cardId: cardOf(step.vault),
                amount: step.amount,
                currency: 'USDC',
                merchant: merchant(),
                networkTransactionId: networkTransactionId_(),
              };
              return async () => {
                const outcome =
                  step.kind === 'forceCapture'
                    ? await t.store.forceCapture(owner, input)
                    : await t.store.refund(owner, input);
                return outcome.transaction.id;
              };
            }
            case 'advice': {
              const of = step.of === null ? undefined : holds[step.of % Math.max(holds.length, 1)];
              const vault = of?.vault ?? step.vault;
              const networkTransactionId = of?.networkTransactionId ?? networkTransactionId_();
              return async () =>
                answer(
                  await t.store.advise(owner, {
                    cardId: cardOf(vault),
                    amount: step.amount,
                    currency: 'USDC',
                    merchant: merchant(),
                    networkTransactionId,
                    approved: step.approved,
                    reason: 'network stand-in',
                  }),
                );
            }
            case 'repeat': {
              // A decision sent again, interleaved with the rest: answered as first recorded.
              const earlier = replays.filter(({ first }) => isDecision(first))[
                step.message % Math.max(replays.length, 1)
              ];
              return async () => {
                if (earlier === undefined) return null;
                const again = await earlier.send();
                expect((again as { id: unknown }).id).toBe((earlier.first as { id: unknown }).id);
                return null;
              };
            }
          }
        }

        // Every message repeated answers what was first recorded (a message whose state has
        // moved on since, such as a capture of a hold now completed, is not a repeat).
        for (const { send, first } of replays) {
          if (!isDecision(first)) continue;
          const again = (await send().catch(() => null)) as { id: string | null } | null;
          if (again !== null) expect(again.id).toBe((first as { id: string | null }).id);
        }
        await expect(checkInvariants(t.store.client)).resolves.toEqual([]);
      }),
      { numRuns: 25 },
    );
  });
});

function isDecision(value: unknown): value is { id: string | null; approved: boolean } {
  return typeof value === 'object' && value !== null && 'approved' in value;
}

function networkTransactionId_(): string {
  return networkTransactionId();
}
