import type {
  AmountInput,
  AuthorizationOutcome,
  Decimal,
  FiatAmount,
  Merchant,
  Metadata,
  RateRecord,
  Scope,
  TransactionRecord,
  TransactionStatus,
  TransactionType,
} from '../../core/index.js';
import type { AdviceInput } from '../authorize/advice.js';
import type { AuthorizeBudget, AuthorizeInput } from '../authorize/batch.js';
import type { IncrementInput } from '../authorize/increment.js';
import type { RequestTrace } from '../authorize/trace.js';
import type { Page, PageQuery } from './pages.js';

/** A force capture or refund as the network sends it. */
export interface ClearingInput {
  readonly cardId: string;
  readonly amount: AmountInput;
  /** The vault's asset, or a billing currency at par with it (USD for USDC). */
  readonly currency: string;
  readonly merchant: Merchant;
  readonly networkTransactionId: string;
}

export interface RefundInput extends ClearingInput {
  /** The captured transaction the refund credits; absent for an unlinked refund. */
  readonly transactionId?: string | null | undefined;
}

/** A recorded clearing message; `replayed` when its networkTransactionId was recorded before. */
export interface ClearingOutcome {
  readonly transaction: TransactionRecord;
  readonly replayed: boolean;
}

export type TimelineKind =
  'authorization' | 'increment' | 'capture' | 'reversal' | 'expiry' | 'advice' | 'refund';

export interface TimelineEntry {
  readonly kind: TimelineKind;
  /** What the message moved (raised, captured, released or refunded), in the vault's asset. */
  readonly amount: Decimal;
  /** The hold the transaction kept after it. */
  readonly holdAfter: Decimal;
  /** For a decided message (authorization, increment, advice): approved or not; null otherwise. */
  readonly approved: boolean | null;
  readonly networkTransactionId: string | null;
  readonly atMs: number;
  /**
   * A capture converted at its own time's price (migration 0023): what it captured in the
   * billing currency and the rate it used. Null for every other message (the authorization's
   * are the transaction's own `billing` and `rate`).
   */
  readonly billing: FiatAmount | null;
  readonly rate: RateRecord | null;
}

export interface Timeline {
  readonly transaction: TransactionRecord;
  readonly entries: readonly TimelineEntry[];
  readonly truncated: boolean;
}

export interface ListTransactionsQuery extends PageQuery {
  readonly vaultId?: string | undefined;
  readonly cardId?: string | undefined;
  readonly status?: TransactionStatus | undefined;
  readonly type?: TransactionType | undefined;
  /** Inclusive. */
  readonly minAmount?: Decimal | undefined;
  /** Inclusive. */
  readonly maxAmount?: Decimal | undefined;
  /** Epoch milliseconds on created_at, inclusive. */
  readonly startDate?: number | undefined;
  /** Epoch milliseconds on created_at, exclusive. */
  readonly endDate?: number | undefined;
}

export {
  AUTHORIZE_BATCH_MAX,
  type AuthorizeBudget,
  type AuthorizeInput,
} from '../authorize/batch.js';
export type { AdviceInput } from '../authorize/advice.js';
export type { IncrementInput } from '../authorize/increment.js';
export type { BatchTrace, RequestTrace } from '../authorize/trace.js';

/** Why a hold is released: asked for, expired, or an approval answered as the stand-in decline. */
export type ReleaseReason = 'reversed' | 'expired' | 'stand_in';

/** The card network's money path (contract section 10) and the transactions it records. */
export interface AuthorizationOperations {
  /**
   * Decides and records one authorization. On `Store`, it joins a batch (store/authorize/,
   * engine.ts); a repeated networkTransactionId gets the first decision back. `trace`: the
   * request is traced (src/http/tracing), and its batch and decision get spans.
   */
  authorize(
    scope: Scope,
    input: AuthorizeInput,
    budget?: AuthorizeBudget,
    trace?: RequestTrace,
  ): Promise<AuthorizationOutcome>;
  /**
   * Captures `amount` (read in the hold's currency; null: the whole remaining hold). Captures
   * always post (contract v1.2, section 16): above the hold, late, on any balance. `final`
   * (default true) releases what is left of the hold; false keeps it open.
   */
  capture(
    scope: Scope,
    transactionId: string,
    amount: AmountInput | null,
    final?: boolean,
  ): Promise<TransactionRecord>;
  /**
   * Decides an increment of a pending hold as an authorization of its own amount (contract
   * v1.2, section 16); approved, the hold grows. A repeated networkTransactionId gets the
   * recorded decision back.
   */
  incrementAuthorization(
    scope: Scope,
    transactionId: string,
    input: IncrementInput,
  ): Promise<AuthorizationOutcome>;
  /**
   * Records a decision the network took (advice): it wins over one already recorded for the
   * networkTransactionId; an approval places its hold whatever the balance and the policy.
   */
  advise(scope: Scope, input: AdviceInput): Promise<AuthorizationOutcome>;
  /** Records a posting with no authorization (POST /v1/captures); may overdraw the vault. */
  forceCapture(scope: Scope, input: ClearingInput): Promise<ClearingOutcome>;
  /** Records a merchant's credit (POST /v1/refunds), linked to a card transaction or not. */
  refund(scope: Scope, input: RefundInput): Promise<ClearingOutcome>;
  /** Releases `amount` of a pending hold (null: all of it). */
  reverse(
    scope: Scope,
    transactionId: string,
    amount: AmountInput | null,
    reason?: ReleaseReason,
  ): Promise<TransactionRecord>;
  getTransaction(scope: Scope, transactionId: string): Promise<TransactionRecord>;
  listTransactions(scope: Scope, query: ListTransactionsQuery): Promise<Page<TransactionRecord>>;
  readTransactionMetadata(scope: Scope, transactionId: string): Promise<Metadata>;
  /** Every lifecycle message of a transaction, oldest first, with the hold after each. */
  transactionTimeline(scope: Scope, transactionId: string): Promise<Timeline>;
}
