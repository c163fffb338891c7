import type { Decision, DeclineCode, DeclineReason, ShadowMatch } from '../decision/result.js';
import type { CardStatus, VaultStatus } from '../decision/decide.js';
import type { RateRecord } from '../decision/price-feeds.js';
import type { CurrencyCode } from '../money/currencies.js';
import type { Decimal } from '../money/decimal.js';
import type { Merchant } from '../policy/evaluation-input.js';
import type { PolicyDocument } from '../policy/schema.js';

/*
 * The domain records the store reads and writes, amounts as core Decimals and times as epoch
 * milliseconds. `present*` (presenters.ts) turns each into the object the API answers.
 */

export type Mode = 'test' | 'live';

export interface Scope {
  readonly accountId: string;
  readonly mode: Mode;
}

export type Metadata = Readonly<Record<string, string>>;

export interface VaultRecord {
  readonly id: string;
  readonly accountId: string;
  readonly mode: Mode;
  readonly name: string;
  readonly currency: CurrencyCode;
  readonly network: 'solana';
  readonly status: VaultStatus;
  readonly metadata: Metadata;
  /** Posted funds. */
  readonly ledger: Decimal;
  /** Open holds. */
  readonly pending: Decimal;
  readonly freezeReason: string | null;
  readonly createdAtMs: number;
  readonly updatedAtMs: number;
  readonly frozenAtMs: number | null;
  readonly closedAtMs: number | null;
  /**
   * The Solana address that funds the vault (issue 15); null for a vault made before deposit
   * addresses until the deposit watcher gives it one. Optional for records built by hand.
   */
  readonly depositAddress?: string | null;
  /**
   * Since when `available` has been below 0 (contract v1.2, section 16): set by a posting the
   * network mandates, cleared once available is back at 0 or above. Optional for records built
   * by hand; absent reads as null.
   */
  readonly overdrawnAtMs?: number | null;
}

export interface CardRecord {
  readonly id: string;
  readonly accountId: string;
  readonly mode: Mode;
  readonly vaultId: string;
  readonly status: CardStatus;
  readonly last4: string;
  readonly expMonth: number;
  readonly expYear: number;
  readonly cardholderName: string;
  readonly metadata: Metadata;
  /** ISO 4217: the currency the network asks in (contract v1.2, section 16). */
  readonly billingCurrency: string;
  readonly createdAtMs: number;
  readonly cancelledAtMs: number | null;
  /** The processor's card this card answers for (contract v1.2, section 17); null: none. */
  readonly processorCard?: ProcessorCardRef | null;
}

/** A card of a processor connection: `cardId` is the processor's own id of the card. */
export interface ProcessorCardRef {
  readonly connectionId: string;
  readonly cardId: string;
}

export type TransactionType =
  | 'card_authorization'
  | 'transfer_in'
  | 'transfer_out'
  | 'external_transfer'
  | 'deposit'
  | 'withdrawal'
  // v1.2 (contract section 16): a posting with no authorization, and a merchant's credit.
  | 'force_capture'
  | 'refund';
export type TransactionStatus = 'pending' | 'completed' | 'failed' | 'declined';

/** The on-chain origin of a deposit credited by the deposit watcher. */
export interface ChainDepositSource {
  readonly signature: string;
  readonly sender: string;
  readonly slot: number;
}

export interface TransactionRecord {
  readonly id: string;
  readonly accountId: string;
  readonly mode: Mode;
  readonly vaultId: string;
  readonly type: TransactionType;
  readonly status: TransactionStatus;
  readonly currency: CurrencyCode;
  readonly amount: Decimal;
  readonly capturedAmount: Decimal;
  readonly holdRemaining: Decimal;
  readonly cardId: string | null;
  readonly transferId: string | null;
  readonly merchant: Merchant | null;
  readonly networkTransactionId: string | null;
  readonly declineCode: DeclineCode | null;
  readonly declineReason: DeclineReason | null;
  /**
   * The shadow rules of the vault's policy whose conditions held when a card authorization was
   * decided (reported, never declining); empty for every other transaction.
   */
  readonly shadowMatches: readonly ShadowMatch[];
  readonly failureReason: string | null;
  readonly standIn: boolean;
  readonly hasMetadata: boolean;
  readonly createdAtMs: number;
  readonly completedAtMs: number | null;
  /**
   * Where a deposit credited from the chain came from (issue 15); null (or absent) for every
   * other transaction.
   */
  readonly onChain?: ChainDepositSource | null;
  /**
   * The transaction's whole life (contract v1.2, section 16). Optional, so records built by
   * hand (the authorize path's) need not name them; absent reads as the column defaults.
   */
  readonly lifecycle?: TransactionLifecycle;
}

/** An amount in an ISO 4217 currency (billing, merchant): exact, the code as recorded. */
export interface FiatAmount {
  readonly amount: Decimal;
  readonly currency: string;
}

/** What a force capture's policy would have said: the decline it would have given. */
export interface PolicyWouldDecline {
  readonly declineCode: DeclineCode;
  readonly declineReason: DeclineReason | null;
}

/** A transaction's section 16 fields (migration 0019). */
export interface TransactionLifecycle {
  /** null on rows written without billing columns: billing is then the amount as recorded. */
  readonly billing: FiatAmount | null;
  readonly merchantAmount: FiatAmount | null;
  /** null: at par, or no conversion. */
  readonly rate: RateRecord | null;
  readonly requestedAmount: Decimal | null;
  readonly partial: boolean;
  readonly advice: boolean;
  readonly expiresAtMs: number | null;
  readonly refundedAmount: Decimal;
  readonly policyWouldDecline: PolicyWouldDecline | null;
  /** The transaction a linked refund credits. */
  readonly originalTransactionId: string | null;
}

export type TransferStatus = 'pending' | 'completed' | 'failed';

export interface TransferRecord {
  readonly id: string;
  readonly accountId: string;
  readonly mode: Mode;
  readonly kind: 'internal' | 'external';
  readonly fromVaultId: string;
  readonly toVaultId: string | null;
  readonly address: string | null;
  readonly amount: Decimal;
  readonly currency: CurrencyCode;
  readonly status: TransferStatus;
  readonly description: string | null;
  readonly memo: string | null;
  readonly signature: string | null;
  readonly failureReason: string | null;
  readonly createdAtMs: number;
  readonly completedAtMs: number | null;
}

/**
 * An authorization's complete answer: the decision, whether it is the stand-in one, and what
 * was recorded. The store answers it for what it decided; the HTTP adapter, for a callback it
 * answered with the stand-in decision before the store did (core/decision/stand-in.ts).
 */
export interface AuthorizationOutcome {
  readonly decision: Decision;
  /**
   * True when the card network was told the stand-in decision for this authorization: now
   * (the budget ran out, or the store failed), or when it was first answered (a replay).
   */
  readonly standIn: boolean;
  /**
   * The recorded transaction; null when the card is unknown (no vault to record on), or when
   * the stand-in answer went out before the store had recorded anything.
   */
  readonly transaction: TransactionRecord | null;
  /** True when a repeated callback (same networkTransactionId) got the first decision back. */
  readonly replayed: boolean;
}

export interface AccountRecord {
  readonly id: string;
  readonly name: string;
  readonly twoFactorEnabled: boolean;
}

/**
 * A vault's balances of one UTC day: the end-of-day figures the snapshot job wrote (final), or
 * today's live figures, which change until the day is over (not final).
 */
export interface BalanceSnapshotRecord {
  readonly vaultId: string;
  /** `YYYY-MM-DD`. */
  readonly day: string;
  readonly currency: CurrencyCode;
  readonly ledger: Decimal;
  readonly pending: Decimal;
  readonly available: Decimal;
  readonly final: boolean;
}

export interface PolicyRecord {
  /** The vault whose policy this is, or the card's vault for a card's own policy. */
  readonly vaultId: string;
  /** Set on a card's own policy (a card-level policy) only. */
  readonly cardId?: string | undefined;
  readonly version: number;
  readonly document: PolicyDocument;
  readonly createdAtMs: number;
  readonly updatedAtMs: number;
}

/** A policy change as its history keeps it: what Set, Delete and Restore left behind. */
export interface PolicyVersionRecord {
  readonly vaultId: string;
  /** The card, for a card's own policy; null for the vault's. */
  readonly cardId: string | null;
  /** The policy's version after the change. */
  readonly version: number;
  readonly change: 'set' | 'delete' | 'restore';
  /** The version a restore put back; null otherwise. */
  readonly restoredFrom: number | null;
  /** The id of the API key that made the change; null when made without one. */
  readonly keyId: string | null;
  /** The document from this version on; null for a delete. */
  readonly document: PolicyDocument | null;
  readonly createdAtMs: number;
}

export interface SettlementError {
  readonly position: number;
  readonly type: 'capture' | 'force_capture' | 'refund';
  /** A capture's authorization; null for a force capture or a refund. */
  readonly authorizationId: string | null;
  /** A force capture's or refund's network id; null for a capture. */
  readonly networkTransactionId: string | null;
  readonly code: string;
  readonly message: string;
}

export interface SettlementRecord {
  readonly id: string;
  readonly status: 'pending' | 'completed';
  readonly recordCount: number;
  readonly capturedCount: number;
  readonly failedCount: number;
  readonly errors: readonly SettlementError[];
  readonly createdAtMs: number;
  readonly completedAtMs: number | null;
}

export interface WebhookEndpointRecord {
  readonly id: string;
  readonly accountId: string;
  readonly mode: Mode;
  readonly url: string;
  readonly events: readonly string[];
  readonly description: string | null;
  readonly status: 'enabled' | 'disabled';
  readonly createdAtMs: number;
}

export interface WebhookDeliveryRecord {
  readonly id: string;
  readonly endpointId: string;
  readonly eventId: string;
  readonly eventType: string;
  readonly attempt: number;
  readonly succeeded: boolean;
  readonly statusCode: number | null;
  readonly durationMs: number;
  readonly error: string | null;
  readonly createdAtMs: number;
}

export type BacktestStatus = 'queued' | 'running' | 'completed' | 'failed';

/** A decision as a backtest's example shows it (recorded, or the draft's). */
export interface BacktestExampleDecision {
  readonly approved: boolean;
  readonly declineCode: DeclineCode | null;
  readonly declineReason: DeclineReason | null;
}

/**
 * A backtest's result as stored (backtests.result, JSON). Amounts are decimal strings in the
 * vault's currency. Made from the core's BacktestResult by backtestResultRecord
 * (backtest-results.ts); the API answers it through presentBacktestResult.
 */
export interface BacktestResultRecord {
  readonly authorizations: number;
  readonly replayed: number;
  readonly notReplayed: {
    readonly cardDeclined: number;
    readonly standIn: number;
    readonly otherPolicy: number;
  };
  readonly unchanged: number;
  readonly approvedToDeclined: number;
  readonly declinedToApproved: number;
  readonly byRule: {
    readonly rule: string;
    readonly declineCode: DeclineCode;
    readonly approvedToDeclined: number;
    readonly declinedToApproved: number;
    readonly unchanged: number;
  }[];
  readonly shadowMatches: {
    readonly rule: string;
    readonly message: string;
    readonly count: number;
  }[];
  readonly examples: {
    readonly transactionId: string;
    readonly createdAt: string;
    readonly cardId: string;
    readonly amount: string;
    readonly currency: string;
    readonly merchant: {
      readonly name: string;
      readonly mcc: string;
      readonly country: string;
      readonly city: string | null;
      readonly id: string | null;
    };
    readonly change: 'approved_to_declined' | 'declined_to_approved';
    readonly recorded: BacktestExampleDecision;
    readonly backtest: BacktestExampleDecision;
  }[];
}

/**
 * A backtest of a draft policy (issue 14): over a vault's recorded card authorizations, or one
 * card's, in a window of whole UTC days. `result` is kept as a run stored it; every read
 * answers it through presentBacktest.
 */
export interface BacktestRecord {
  readonly id: string;
  readonly accountId: string;
  readonly mode: Mode;
  readonly vaultId: string;
  /** A card backtest's card: its authorizations alone, under the draft alone. */
  readonly cardId: string | null;
  /** The draft as compiled, defaults applied. */
  readonly policy: PolicyDocument;
  /** `YYYY-MM-DD`, both included. */
  readonly startDate: string;
  readonly endDate: string;
  readonly status: BacktestStatus;
  /** Authorizations replayed so far by the current run. */
  readonly replayed: number;
  /** Authorizations in the window, counted when a run starts; null before. */
  readonly total: number | null;
  readonly result: BacktestResultRecord | null;
  readonly failureMessage: string | null;
  readonly createdAtMs: number;
  readonly completedAtMs: number | null;
}

/** A transfer found at a vault's deposit address (issue 15; table chain_deposits). */
export interface ChainDepositRecord {
  readonly id: string;
  readonly vaultId: string;
  readonly mode: Mode;
  readonly currency: string;
  readonly signature: string;
  readonly instructionIndex: number;
  readonly innerIndex: number;
  readonly slot: number;
  readonly sender: string;
  readonly mint: string | null;
  /** Exact, in the transferred token's own units. */
  readonly amount: string;
  readonly status: 'credited' | 'ignored' | 'swept';
  /** Why it was not credited (status `ignored`), else null. */
  readonly ignoredReason: 'other_mint' | 'other_currency' | 'below_minimum' | 'vault_closed' | null;
  readonly transactionId: string | null;
  readonly foundAtMs: number;
  readonly creditedAtMs: number | null;
  readonly sweptAtMs: number | null;
}
