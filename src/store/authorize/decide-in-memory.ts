import {
  assert,
  decide,
  decisionVaultOf,
  isCurrencyCode,
  NO_SPEND,
  replayedOutcome,
  STAND_IN_DECLINED,
  ZERO,
  type AuthorizationOutcome,
  type Decision,
  type Scope,
  type TransactionRecord,
} from '../../core/index.js';
import { newId } from '../../ids.js';
import {
  cardKey,
  repeatKeyOf,
  type AuthorizeInput,
  type AuthorizeRequest,
  type CardPolicyState,
  type LockedBatch,
  type LockedRow,
  type VaultState,
} from './batch.js';

/*
 * The decision over a batch, in memory and nothing else: no statement, no await, no state but
 * the batch's. Both ways of running a batch end here, on what the lock read (two-trips.ts) or
 * on what known state recalls (one-trip.ts), and then write what it recorded (write.ts).
 */

/** What decideEach reads of a batch, and adds its approvals to (the vaults, the card policies). */
export type BatchState = Pick<LockedBatch, 'cards' | 'vaults' | 'previous' | 'cardPolicies'>;

/**
 * Decides each request in order, in memory: a later request sees the holds and spend of the
 * earlier ones on the same vault, exactly as if they had run one after another. Synchronous,
 * so the one-round-trip path (one-trip.ts) sends its write before any await. Returns,
 * in request order, each outcome, or the id of the first decision of a networkTransactionId
 * the database holds (batch.previous), and the transactions to record.
 */
export function decideEach(
  requests: readonly AuthorizeRequest[],
  batch: BatchState,
  spendDay: string,
  nowMs: number,
): { decided: (AuthorizationOutcome | string)[]; recorded: TransactionRecord[] } {
  const outcomes: (AuthorizationOutcome | string)[] = [];
  const decidedInBatch = new Map<string, AuthorizationOutcome>();
  const recorded: TransactionRecord[] = [];
  for (const request of requests) {
    const { scope, input } = request;
    const repeatKey = repeatKeyOf(scope, input);
    const earlier = decidedInBatch.get(repeatKey);
    if (earlier !== undefined) {
      outcomes.push(earlier.transaction === null ? earlier : replayedOutcome(earlier.transaction));
      continue;
    }
    const card = batch.cards.get(cardKey(input.cardId, scope.accountId, scope.mode));
    if (card === undefined) {
      const decision = decide({
        card: null,
        vault: null,
        policy: null,
        spend: {},
        nowMs,
        request: input,
      });
      outcomes.push({ decision, standIn: false, transaction: null, replayed: false });
      continue;
    }
    const previousId = batch.previous.get(repeatKey);
    if (previousId !== undefined) {
      outcomes.push(previousId);
      continue;
    }
    const vault = batch.vaults.get(card.vault_id);
    assert(vault !== undefined, "a locked card's vault is locked");
    const cardPolicy = batch.cardPolicies.get(card.card_id);
    const outcome = decideOne(request, card, vault, cardPolicy, spendDay, nowMs);
    decidedInBatch.set(repeatKey, outcome);
    recorded.push(outcome.transaction);
    outcomes.push(outcome);
  }
  return { decided: outcomes, recorded };
}

/**
 * Decides a request for a locked card against its vault as this batch has left it, and adds an
 * approval's hold and spend to the vault in memory, for the requests after it.
 */
function decideOne(
  request: AuthorizeRequest,
  card: LockedRow,
  vault: VaultState,
  cardPolicy: CardPolicyState | undefined,
  spendDay: string,
  nowMs: number,
): AuthorizationOutcome & { readonly transaction: TransactionRecord } {
  const { scope, input, budget } = request;
  const policy = vault.policy;
  const lateForBudget = budget?.aborted === true;
  const decision = lateForBudget
    ? STAND_IN_DECLINED
    : decide({
        card: { id: input.cardId, vaultId: vault.id, status: card.card_status },
        vault: decisionVaultOf(vault),
        policy,
        spend: policy === null ? {} : vault.counters.totals(policy.aggregates, nowMs),
        cardPolicy: cardPolicy?.policy ?? null,
        cardSpend:
          cardPolicy === undefined
            ? NO_SPEND
            : cardPolicy.counters.totals(cardPolicy.policy.aggregates, nowMs),
        nowMs,
        request: input,
      });
  const transaction = authorizationRecord(scope, vault, input, decision, lateForBudget, nowMs);
  if (decision.approved) {
    vault.pending = vault.pending.plus(input.amount);
    vault.pendingDelta = vault.pendingDelta.plus(input.amount);
    vault.counters.addApproval(spendDay, input.merchant.mcc, input.amount);
    cardPolicy?.counters.addApproval(spendDay, input.merchant.mcc, input.amount);
  }
  return { decision, standIn: lateForBudget, transaction, replayed: false };
}

function authorizationRecord(
  scope: Scope,
  vault: VaultState,
  input: AuthorizeInput,
  decision: Decision,
  standIn: boolean,
  nowMs: number,
): TransactionRecord {
  return {
    id: newId('transaction', nowMs),
    accountId: scope.accountId,
    mode: scope.mode,
    vaultId: vault.id,
    type: 'card_authorization',
    status: decision.approved ? 'pending' : 'declined',
    // The amount was parsed in the request's currency (a registered one, or the edge would
    // have refused it), so that is the row's currency, even on a currency-mismatch decline.
    currency: isCurrencyCode(input.currency) ? input.currency : vault.currency,
    amount: input.amount,
    capturedAmount: ZERO,
    holdRemaining: decision.approved ? input.amount : ZERO,
    cardId: input.cardId,
    transferId: null,
    merchant: input.merchant,
    networkTransactionId: input.networkTransactionId,
    declineCode: decision.declineCode,
    declineReason: decision.declineReason,
    shadowMatches: decision.shadowMatches,
    failureReason: null,
    standIn,
    hasMetadata: false,
    createdAtMs: nowMs,
    completedAtMs: null,
  };
}
