import { assert } from '../assert.js';
import { compareDecimals } from '../money/compare.js';
import { isDecimal, type Decimal } from '../money/decimal.js';
import { NO_SPEND, type AggregateSpec, type SpendTotals } from '../policy/aggregates.js';
import type { CompiledPolicy } from '../policy/compile.js';
import type { EvaluationInput } from '../policy/evaluation-input.js';
import { declineOfCard, matchesOfCard } from './policy-source.js';
import {
  APPROVED,
  declined,
  NO_SHADOW_MATCHES,
  withShadowMatches,
  type Decision,
  type ShadowMatch,
} from './result.js';
import { AggregateUnread } from '../policy/facts.js';
import { readDecisionInput, withSpendRead, type DecideInput } from './read-input.js';
import { isReadInput, type ReadInput } from './read-once.js';

export type CardStatus = 'active' | 'frozen' | 'cancelled';
export type VaultStatus = 'active' | 'frozen' | 'closed';

export interface CardState {
  readonly id: string;
  readonly vaultId: string;
  readonly status: CardStatus;
}

export interface VaultState {
  readonly id: string;
  readonly status: VaultStatus;
  readonly currency: string;
  /** Ledger minus open holds, before this authorization. */
  readonly available: Decimal;
}

/**
 * A vault as the decision sees it, from its posted and held totals: what authorize decides on
 * and what Simulate Policy predicts from, built the same way for both.
 */
export function decisionVaultOf(vault: {
  readonly id: string;
  readonly status: VaultStatus;
  readonly currency: string;
  readonly ledger: Decimal;
  readonly pending: Decimal;
}): VaultState {
  return {
    id: vault.id,
    status: vault.status,
    currency: vault.currency,
    available: vault.ledger.minus(vault.pending),
  };
}

export interface DecisionInput extends EvaluationInput {
  /** null when no card has the request's card id (in this account and mode). */
  readonly card: CardState | null;
  /** The card's vault; null only when `card` is null. */
  readonly vault: VaultState | null;
  /** The vault's compiled policy, or null when it has none. */
  readonly policy: CompiledPolicy | null;
  /**
   * The card's own policy (a card-level policy), decided after the vault's: an authorization
   * passes both. Absent or null when the card has none.
   */
  readonly cardPolicy?: CompiledPolicy | null;
  /** The card's own spend, for `cardPolicy.aggregates` (the vault's is `spend`). */
  readonly cardSpend?: SpendTotals;
}

// The fixed checks of contract section 10, each decision built once.
const CARD_NOT_FOUND = declined('card_declined', 'card_not_found', 'The card does not exist');
const CARD_FROZEN = declined('card_declined', 'card_frozen', 'The card is frozen');
const CARD_CANCELLED = declined('card_declined', 'card_cancelled', 'The card is cancelled');
const VAULT_FROZEN = declined('card_declined', 'vault_frozen', 'The vault is frozen');
const VAULT_CLOSED = declined('card_declined', 'vault_closed', 'The vault is closed');
const CURRENCY_MISMATCH = declined(
  'card_declined',
  'currency_mismatch',
  "The transaction currency differs from the vault's",
);
const INSUFFICIENT_BALANCE = declined(
  'insufficient_balance',
  'available_balance',
  'The available balance does not cover the amount',
);

/**
 * Decides one card authorization, in the order of contract section 10, first failure wins:
 * card active, vault active, currency the vault's, the policy (the vault's, then the card's
 * own), the available balance. The card policy's decline and shadow matches say so
 * (`policy: 'card'`); the vault's are answered as they always were.
 * Pure and synchronous: the caller supplies every state it reads, including the time.
 * Shadow rules are evaluated whenever the policy is reached and reported on any outcome.
 *
 * Amounts may be core Decimals, Decimals of another copy of decimal.js, decimal strings or
 * numbers, each read once and exactly (`read-input.ts`); -0 is 0, as at the HTTP edge. An
 * input that is not what this says is refused with a SpendgateError naming the field (a
 * missing aggregate is `parameter_missing` at `spend["amount:daily"]`), never a TypeError.
 *
 * An input from `readInput` was read there: it is decided without reading it again.
 */
export function decide(input: DecideInput | ReadInput): Decision {
  const read = isReadInput(input) ? input : readDecisionInput(input);
  try {
    return decideRead(read);
  } catch (error) {
    // The evaluators read spend only in the core's form; any other is read here, once.
    if (!(error instanceof AggregateUnread)) throw error;
  }
  return decideRead(withSpendRead(read, read.policy, 'spend'));
}

/** The decision on an input read by `readDecisionInput`: its amounts are core Decimals. */
function decideRead(input: DecisionInput): Decision {
  const { card, vault, request } = input;
  assert(
    isDecimal(request.amount) && !request.amount.isNegative(),
    'amount is a non-negative core Decimal',
  );
  assert(Number.isFinite(input.nowMs), 'nowMs is a finite epoch time');

  if (card === null) return CARD_NOT_FOUND;
  assert(card.id === request.cardId, 'the card is the one the request names');
  if (card.status === 'frozen') return CARD_FROZEN;
  if (card.status === 'cancelled') return CARD_CANCELLED;
  assert(vault !== null && vault.id === card.vaultId, "the vault is the card's");
  if (vault.status === 'frozen') return VAULT_FROZEN;
  if (vault.status === 'closed') return VAULT_CLOSED;
  if (request.currency !== vault.currency) return CURRENCY_MISMATCH;
  // An account verification (contract v1.2, section 16: networks send 0.00 to check that a
  // card is live) holds nothing and spends nothing, so no policy applies; an overdrawn vault
  // declines it as it declines everything until restored.
  if (request.amount.isZero()) {
    assert(isDecimal(vault.available), 'available is a core Decimal');
    return vault.available.isNegative() ? INSUFFICIENT_BALANCE : APPROVED;
  }

  let shadowMatches = NO_SHADOW_MATCHES;
  let decision = APPROVED;
  const policy = input.policy;
  if (policy !== null) {
    assert(
      policy.currency.code === vault.currency,
      "the policy was compiled for the vault's currency",
    );
    shadowMatches = policy.shadowMatches(input);
    decision = policy.firstDecline(input) ?? APPROVED;
  }
  const cardPolicy = input.cardPolicy ?? null;
  if (cardPolicy !== null) {
    ({ decision, shadowMatches } = decideCardPolicy(input, cardPolicy, decision, shadowMatches));
  }
  if (decision === APPROVED) {
    assert(isDecimal(vault.available), 'available is a core Decimal');
    if (compareDecimals(vault.available, request.amount) < 0) decision = INSUFFICIENT_BALANCE;
  }
  return withShadowMatches(decision, shadowMatches);
}

/**
 * The card's own policy, after the vault's: its shadow rules are evaluated whenever the vault's
 * are (whatever the vault's policy decided), its enforcing ones only when the vault's policy
 * approved. Its facts are the request's, with the card's own spend.
 */
function decideCardPolicy(
  input: DecisionInput,
  cardPolicy: CompiledPolicy,
  decision: Decision,
  shadowMatches: readonly ShadowMatch[],
): { decision: Decision; shadowMatches: readonly ShadowMatch[] } {
  assert(
    cardPolicy.currency.code === input.vault?.currency,
    "the card's policy was compiled for its vault's currency",
  );
  const cardInput = {
    request: input.request,
    spend: input.cardSpend ?? NO_SPEND,
    nowMs: input.nowMs,
  };
  const cardMatches = matchesOfCard(cardPolicy.shadowMatches(cardInput));
  return {
    decision:
      decision === APPROVED
        ? (declineOfCard(cardPolicy.firstDecline(cardInput)) ?? APPROVED)
        : decision,
    shadowMatches:
      cardMatches.length === 0
        ? shadowMatches
        : shadowMatches.length === 0
          ? cardMatches
          : [...shadowMatches, ...cardMatches],
  };
}

/** The aggregates `decide` will read for this policy: what the store must compute, no more. */
export function requiredAggregates(policy: CompiledPolicy | null): readonly AggregateSpec[] {
  return policy === null ? [] : policy.aggregates;
}
