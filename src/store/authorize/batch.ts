import type {
  AggregateSpec,
  AuthorizationRequest,
  CardStatus,
  CompiledPolicy,
  Decimal,
  MoneyAmount,
  Scope,
  TransactionRecord,
  VaultStatus,
} from '../../core/index.js';
import type { SpendCounters } from '../spend-window.js';
import type { RequestTrace } from './trace.js';

/*
 * The shapes one authorization batch passes between the engine's steps: what is asked, what
 * the lock and the reads after it found (or what known state recalls instead), and what the
 * decisions add to it before the write.
 */

export interface AuthorizeInput extends AuthorizationRequest {
  /** The card network's id for this authorization: its idempotency key (contract section 5). */
  readonly networkTransactionId: string;
  /** What the merchant charged, in its own currency (contract v1.2, section 16); recorded. */
  readonly merchantAmount?: MoneyAmount | null | undefined;
  /** Whether a decline for the balance or an amount limit may become a smaller approval. */
  readonly partialApprovalAllowed?: boolean | undefined;
  /** The scale of `currency` the edge read the amount at (USD 2); default the asset's. */
  readonly amountScale?: number | undefined;
  /**
   * A processor's door: the tie the card must still have (contract v1.2, section 17). The
   * door may have found the card in a cache; checked against the row locked, so a card re-tied
   * since is declined as unknown (card_not_found, nothing recorded) and never decided on.
   */
  readonly processorCard?: { readonly connectionId: string; readonly cardId: string } | undefined;
}

/**
 * A request's time budget (contract section 10): once `aborted`, the card network has been
 * answered the stand-in decline, so a decision reached later records that decline (and places
 * no hold) instead of its own. An AbortSignal is one; the HTTP adapter passes a plain flag,
 * since a signal (an EventTarget) per request cost it more than the flag's one field.
 */
export interface AuthorizeBudget {
  readonly aborted: boolean;
}

export interface AuthorizeRequest {
  readonly scope: Scope;
  readonly input: AuthorizeInput;
  readonly budget?: AuthorizeBudget;
  /** Present only when the request is traced (trace.ts): its batch and decision get spans. */
  readonly trace?: RequestTrace;
}

/** Requests decided in one database transaction at most; bounds every statement's arrays. */
export const AUTHORIZE_BATCH_MAX = 64;

/** What the lock and the reads after it found: the state the batch decides on. */
export interface LockedBatch extends AfterLock {
  /** The requests' cards that exist, by cardKey, with their vault's state as locked. */
  readonly cards: Map<string, LockedRow>;
  /** The locked vaults by id, with what this batch adds to them as it decides. */
  readonly vaults: Map<string, VaultState>;
  /** The cards with a policy of their own, by card id (loadCardPoliciesOf fills it). */
  readonly cardPolicies: Map<string, CardPolicyState>;
}

/** What the reads after the lock found. */
export interface AfterLock {
  /** The first decision's transaction id of each repeated networkTransactionId, by repeat key. */
  readonly previous: Map<string, string>;
  /** The policy version of each vault read that has a policy. */
  readonly versions: Map<string, number>;
  /** The counters read for the vaults with a hint, and the hint they were read for. */
  readonly hinted: Map<string, { readonly hint: PolicyHint; readonly counters: SpendCounters }>;
  /** The requests' cards' own policy versions, and counters (card-policy-batch.ts). */
  readonly cardReads: CardReads;
}

/** A card and its vault as the batch's lock read them. */
export interface LockedRow {
  card_id: string;
  account_id: string;
  mode: Scope['mode'];
  card_status: CardStatus;
  /** ISO 4217: what the network asks in (contract v1.2, section 16). */
  billing_currency: string;
  vault_id: string;
  vault_status: VaultStatus;
  currency: string;
  ledger: string;
  pending: string;
  /** The row versions locked (the vault) and read (the card): what known-state.ts checks. */
  card_xmin: string;
  vault_xmin: string;
  /** The card's processor tie (null: none); part of the card row card_xmin versions. */
  processor_connection_id: string | null;
  processor_card_id: string | null;
}

export interface VaultState {
  readonly id: string;
  /**
   * The version of the vault's row this state is of (its xmin): as locked, then the one this
   * batch's write made. Every change of a vault's totals or of its counters updates the row
   * (changeVaultTotals, recordAuthorizations), so an equal xmin means both are as here.
   */
  xmin: string;
  readonly status: VaultStatus;
  readonly currency: TransactionRecord['currency'];
  readonly ledger: Decimal;
  pending: Decimal;
  /** What this batch adds to the vault's pending total. */
  pendingDelta: Decimal;
  policy: CompiledPolicy | null;
  /** The spend counter rows its policy sums over, as read, plus this batch's approvals. */
  counters: SpendCounters;
}

/**
 * What a vault's (or a card's own) policy sums over, as of the version this process last read:
 * the hint that lets the batch read counters in the same statement as the policy version (a
 * version is never reused, so the counters are the right ones exactly when the version read
 * equals the hint's).
 */
export interface PolicyHint {
  readonly version: number;
  readonly aggregates: readonly AggregateSpec[];
}

/** A card's own policy as a batch decides with it, and its counters as the batch leaves them. */
export interface CardPolicyState {
  readonly policy: CompiledPolicy;
  /** The rows its policy sums over, as read, plus this batch's approvals on the card. */
  readonly counters: SpendCounters;
}

/** What the read after the lock found of the requests' cards' own policies. */
export interface CardReads {
  /** The policy version of each card read that has a policy. */
  readonly versions: Map<string, number>;
  /** The counters read for the cards with a hint, and the hint they were read for. */
  readonly hinted: Map<string, { readonly hint: PolicyHint; readonly counters: SpendCounters }>;
}

export const cardKey = (cardId: string, accountId: string, mode: string) =>
  `${cardId} ${accountId} ${mode}`;

/**
 * An authorization's idempotency key, exactly as the expression of the unique index
 * transactions_network_key (migration 0012) spells it, so the lookup can probe that index.
 */
export function repeatKeyOf(scope: Scope, input: AuthorizeInput): string {
  return `${scope.accountId} ${scope.mode} ${input.networkTransactionId}`;
}
