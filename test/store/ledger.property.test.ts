import fc from 'fast-check';
import { expect, it } from 'vitest';
import { Decimal, SpendgateError, ZERO, type Scope } from '../../src/core/index.js';
import { forEachDatabase } from '../support/databases.js';
import { merchant, networkTransactionId, useTestStore } from '../support/store.js';

/**
 * Random sequences of operations against a model of what the ledger should hold. After every
 * step: each vault's ledger and pending equal the model's, every decision and refusal is the
 * one the model predicts, and the global invariants hold (entries sum to zero per currency,
 * totals equal entries, available never negative, a closed vault holds nothing).
 */
const VAULTS = 3;
const micro = (units: number) => new Decimal(units).dividedBy(1_000_000);
const amount = fc.integer({ min: 1, max: 60_000_000 }).map(micro);
const vaultIndex = fc.integer({ min: 0, max: VAULTS - 1 });
const fraction = fc.constantFrom(0.25, 0.5, 1);

type Op =
  | { kind: 'deposit'; vault: number; amount: Decimal }
  | { kind: 'authorize'; vault: number; amount: Decimal }
  | { kind: 'capture' | 'reverse'; hold: number; fraction: number }
  | { kind: 'transfer'; from: number; to: number; amount: Decimal }
  | { kind: 'freeze' | 'unfreeze'; vault: number }
  | { kind: 'close'; vault: number; to: number };

const op: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ kind: fc.constant('deposit' as const), vault: vaultIndex, amount }),
  fc.record({ kind: fc.constant('authorize' as const), vault: vaultIndex, amount }),
  fc.record({ kind: fc.constant('authorize' as const), vault: vaultIndex, amount }),
  fc.record({
    kind: fc.constantFrom('capture' as const, 'reverse' as const),
    hold: fc.nat({ max: 20 }),
    fraction,
  }),
  fc.record({
    kind: fc.constantFrom('capture' as const, 'reverse' as const),
    hold: fc.nat({ max: 20 }),
    fraction,
  }),
  fc.record({ kind: fc.constant('transfer' as const), from: vaultIndex, to: vaultIndex, amount }),
  fc.record({ kind: fc.constantFrom('freeze' as const, 'unfreeze' as const), vault: vaultIndex }),
  fc.record({ kind: fc.constant('close' as const), vault: vaultIndex, to: vaultIndex }),
);

interface ModelVault {
  id: string;
  cardId: string;
  status: 'active' | 'frozen' | 'closed';
  ledger: Decimal;
  pending: Decimal;
}
interface ModelHold {
  transactionId: string;
  vault: number;
  remaining: Decimal;
}

async function codeOf(run: Promise<unknown>): Promise<string> {
  try {
    await run;
    return 'ok';
  } catch (error) {
    if (error instanceof SpendgateError) return error.code;
    throw error;
  }
}

forEachDatabase('ledger properties', (database) => {
  const t = useTestStore(database);

  it('hold after every step of random operation sequences', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(amount, { minLength: VAULTS, maxLength: VAULTS }),
        fc.array(op, { minLength: 1, maxLength: 25 }),
        async (deposits, ops) => {
          const scope: Scope = await t.scope();
          const vaults: ModelVault[] = [];
          for (const initial of deposits) {
            const vault = await t.vault(scope, initial, { name: 'p' });
            const card = await t.card(scope, vault.id, { cardholderName: 'p' });
            vaults.push({
              id: vault.id,
              cardId: card.id,
              status: 'active',
              ledger: initial,
              pending: ZERO,
            });
          }
          const holds: ModelHold[] = [];
          const at = (index: number) => vaults[index] as ModelVault;
          const available = (vault: ModelVault) => vault.ledger.minus(vault.pending);

          for (const step of ops) {
            switch (step.kind) {
              case 'deposit': {
                const vault = at(step.vault);
                const expected = vault.status === 'active' ? 'ok' : `vault_${vault.status}`;
                expect(await codeOf(t.store.deposit(scope, vault.id, step.amount))).toBe(expected);
                if (expected === 'ok') vault.ledger = vault.ledger.plus(step.amount);
                break;
              }
              case 'authorize': {
                const vault = at(step.vault);
                const outcome = await t.store.authorize(scope, {
                  cardId: vault.cardId,
                  amount: step.amount,
                  currency: 'USDC',
                  merchant: merchant(),
                  networkTransactionId: networkTransactionId(),
                });
                const expectedRule =
                  vault.status === 'closed'
                    ? 'card_cancelled'
                    : vault.status === 'frozen'
                      ? 'vault_frozen'
                      : available(vault).lt(step.amount)
                        ? 'available_balance'
                        : null;
                expect(outcome.decision.declineReason?.rule ?? null).toBe(expectedRule);
                if (expectedRule === null) {
                  vault.pending = vault.pending.plus(step.amount);
                  holds.push({
                    transactionId: outcome.transaction?.id ?? '',
                    vault: step.vault,
                    remaining: step.amount,
                  });
                }
                break;
              }
              case 'capture':
              case 'reverse': {
                const hold = holds[step.hold % Math.max(holds.length, 1)];
                if (hold === undefined) break;
                const vault = at(hold.vault);
                const part =
                  step.fraction === 1
                    ? hold.remaining
                    : hold.remaining.times(step.fraction).toDecimalPlaces(6, Decimal.ROUND_DOWN);
                if (part.isZero()) break;
                const run =
                  step.kind === 'capture'
                    ? t.store.capture(scope, hold.transactionId, part)
                    : t.store.reverse(scope, hold.transactionId, part);
                expect(await codeOf(run)).toBe('ok');
                if (step.kind === 'capture') {
                  vault.ledger = vault.ledger.minus(part);
                  vault.pending = vault.pending.minus(hold.remaining);
                  hold.remaining = ZERO;
                } else {
                  vault.pending = vault.pending.minus(part);
                  hold.remaining = hold.remaining.minus(part);
                }
                if (hold.remaining.isZero()) holds.splice(holds.indexOf(hold), 1);
                break;
              }
              case 'transfer': {
                const [from, to] = [at(step.from), at(step.to)];
                const expected =
                  step.from === step.to
                    ? 'parameter_invalid'
                    : from.status !== 'active'
                      ? `vault_${from.status}`
                      : to.status !== 'active'
                        ? `vault_${to.status}`
                        : available(from).lt(step.amount)
                          ? 'insufficient_balance'
                          : 'ok';
                const code = await codeOf(
                  t.store.createInternalTransfer(scope, {
                    fromVaultId: from.id,
                    toVaultId: to.id,
                    amount: step.amount,
                    description: null,
                  }),
                );
                expect(code).toBe(expected);
                if (code === 'ok') {
                  from.ledger = from.ledger.minus(step.amount);
                  to.ledger = to.ledger.plus(step.amount);
                }
                break;
              }
              case 'freeze':
              case 'unfreeze': {
                const vault = at(step.vault);
                const run =
                  step.kind === 'freeze'
                    ? t.store.freezeVault(scope, vault.id, null)
                    : t.store.unfreezeVault(scope, vault.id);
                expect(await codeOf(run)).toBe(vault.status === 'closed' ? 'vault_closed' : 'ok');
                if (vault.status !== 'closed')
                  vault.status = step.kind === 'freeze' ? 'frozen' : 'active';
                break;
              }
              case 'close': {
                const [vault, to] = [at(step.vault), at(step.to)];
                const expected =
                  vault.status === 'closed'
                    ? 'vault_closed'
                    : vault.pending.gt(0)
                      ? 'vault_has_pending_transactions'
                      : vault.ledger.isZero()
                        ? 'ok'
                        : step.vault === step.to
                          ? 'parameter_invalid'
                          : to.status !== 'active'
                            ? `vault_${to.status}`
                            : 'ok';
                expect(await codeOf(t.store.closeVault(scope, vault.id, { vaultId: to.id }))).toBe(
                  expected,
                );
                if (expected === 'ok') {
                  if (vault.ledger.gt(0)) to.ledger = to.ledger.plus(vault.ledger);
                  vault.ledger = ZERO;
                  vault.status = 'closed';
                }
                break;
              }
            }
            for (const vault of vaults) {
              const stored = await t.store.getVault(scope, vault.id);
              expect([stored.status, stored.ledger.toFixed(), stored.pending.toFixed()]).toEqual([
                vault.status,
                vault.ledger.toFixed(),
                vault.pending.toFixed(),
              ]);
            }
            await t.expectInvariants();
          }
        },
      ),
      { numRuns: 40 },
    );
  });
});
