import {
  Decimal,
  type CompiledPolicy,
  type DecideInput,
  type DecisionInput,
  type Merchant,
  type SpendInput,
} from '../../src/core/index.js';

/** A decision input with an active card and vault; override any part. */
export function decisionInput(
  overrides: {
    amount?: string | undefined;
    currency?: string | undefined;
    merchant?: Partial<Merchant> | undefined;
    policy?: CompiledPolicy | null | undefined;
    spend?: SpendInput | undefined;
    available?: string | undefined;
    at?: string | undefined;
    card?: DecisionInput['card'] | undefined;
    vault?: Partial<NonNullable<DecisionInput['vault']>> | undefined;
  } = {},
): DecideInput {
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
