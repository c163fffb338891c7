import {
  Decimal,
  type CompiledPolicy,
  type DecideInput,
  type DecisionInput,
  type Merchant,
  type SpendInput,
} from '../../src/core/index.js';

type Overrides<Spend> = {
  amount?: string | undefined;
  currency?: string | undefined;
  merchant?: Partial<Merchant> | undefined;
  policy?: CompiledPolicy | null | undefined;
  spend?: Spend | undefined;
  available?: string | undefined;
  at?: string | undefined;
  card?: DecisionInput['card'] | undefined;
  vault?: Partial<NonNullable<DecisionInput['vault']>> | undefined;
};

/** A decision input with an active card and vault, as `decide` takes it; override any part. */
export function decisionInput(overrides: Overrides<SpendInput> = {}): DecideInput {
  const { nowMs, ...rest } = decisionState({ ...overrides, spend: undefined });
  // Spend as given (strings too): decide reads it.
  return { ...rest, spend: overrides.spend ?? {}, at: nowMs };
}

/**
 * The same in the core's read form (`DecisionInput`: amounts as Decimals, the time as
 * `nowMs`), for the functions below `decide` that take it (partial approval).
 */
export function decisionState(overrides: Overrides<DecisionInput['spend']> = {}): DecisionInput {
  const vault = {
    id: 'vlt_1',
    status: 'active' as const,
    currency: overrides.policy?.currency.code ?? 'USDC',
    available: new Decimal(overrides.available ?? '1000'),
    ...overrides.vault,
  };
  return {
    card:
      overrides.card === undefined
        ? { id: 'card_1', vaultId: vault.id, status: 'active' }
        : overrides.card,
    vault,
    policy: overrides.policy ?? null,
    spend: overrides.spend ?? {},
    nowMs: Date.parse(overrides.at ?? '2026-11-18T12:00:00Z'),
    request: {
      cardId: 'card_1',
      amount: new Decimal(overrides.amount ?? '25'),
      currency: overrides.currency ?? vault.currency,
      merchant: { name: 'Cafe Rio', mcc: '5812', country: 'US', ...overrides.merchant },
    },
  };
}
