import { Decimal, type Scope } from '../../src/core/index.js';
import type { Store } from '../../src/store/store.js';
import type { ServiceHarness } from './http.js';

/** What the tests read of an authorization decision (contract section 8). */
export interface DecisionJson {
  id: string | null;
  object: string;
  approved: boolean;
  status: string;
  declineCode: string | null;
  declineReason: { rule: string; message: string } | null;
  amount: string;
  currency: string;
  cardId: string;
  vaultId: string | null;
  standIn: boolean;
  decidedInMicros: number;
  shadowMatches: { rule: string }[];
}

export const MERCHANT = { name: 'Cafe Rio', mcc: '5812', country: 'US', city: 'Austin', id: 'm_1' };

let networkIds = 0;
/** A networkTransactionId no other callback of this run has used. */
export function networkId(): string {
  networkIds += 1;
  return `ntx_${process.pid}_${Date.now()}_${networkIds}`;
}

/** A funded vault with an active card, for the harness's first key unless told otherwise. */
export async function fundedCard(
  harness: ServiceHarness<{ id: string }>,
  initialDeposit: string,
  options: { currency?: string; key?: string } = {},
): Promise<{ vaultId: string; cardId: string }> {
  const key = options.key ?? harness.key;
  const vault = await harness.call(
    'POST',
    '/v1/vaults',
    { name: 'A', currency: options.currency ?? 'USDC', network: 'solana', initialDeposit },
    key,
  );
  const card = await harness.call(
    'POST',
    '/v1/cards',
    { vaultId: vault.body.id, cardholderName: 'Ada' },
    key,
  );
  return { vaultId: vault.body.id, cardId: card.body.id };
}

/**
 * A new card on the vault and a card authorization of `amount` on it, placed through the
 * store: a hold (when approved) and spend the vault's policy counts.
 */
export async function authorizeThroughStore(
  store: Store,
  scope: Scope,
  vaultId: string,
  amount: string,
): Promise<{ cardId: string; transactionId: string; approved: boolean }> {
  const card = await store.createCard(scope, { vaultId, cardholderName: 'Ada', metadata: {} });
  const outcome = await store.authorize(scope, {
    cardId: card.id,
    amount: new Decimal(amount),
    currency: 'USDC',
    merchant: { name: MERCHANT.name, mcc: MERCHANT.mcc, country: MERCHANT.country },
    networkTransactionId: networkId(),
  });
  return {
    cardId: card.id,
    transactionId: outcome.transaction?.id ?? '',
    approved: outcome.decision.approved,
  };
}
