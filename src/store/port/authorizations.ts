import type {
  AmountInput,
  AuthorizationOutcome,
  Metadata,
  Scope,
  TransactionRecord,
} from '../../core/index.js';
import type { AuthorizeBudget, AuthorizeInput } from '../authorize/two-trips.js';
import type { ListTransactionsQuery, Page } from '../ops/lists.js';

export {
  AUTHORIZE_BATCH_MAX,
  type AuthorizeBudget,
  type AuthorizeInput,
} from '../authorize/two-trips.js';

/** Why a hold is released: asked for, expired, or an approval answered as the stand-in decline. */
export type ReleaseReason = 'reversed' | 'expired' | 'stand_in';

/** The card network's money path (contract section 10) and the transactions it records. */
export interface AuthorizationOperations {
  /**
   * Decides and records one authorization. On `Store`, it joins a batch (store/authorize-
   * lanes.ts, store/ops/decide-and-record.ts); a repeated networkTransactionId gets the first
   * decision back.
   */
  authorize(
    scope: Scope,
    input: AuthorizeInput,
    budget?: AuthorizeBudget,
  ): Promise<AuthorizationOutcome>;
  /** Captures `amount` (read in the hold's currency) of a pending hold (null: all of it). */
  capture(
    scope: Scope,
    transactionId: string,
    amount: AmountInput | null,
  ): Promise<TransactionRecord>;
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
}
