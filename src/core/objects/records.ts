import type { Decision, DeclineCode, DeclineReason } from '../decision/result.js';
import type { CardStatus, VaultStatus } from '../decision/decide.js';
import type { CurrencyCode } from '../money/currencies.js';
import type { Decimal } from '../money/decimal.js';
import type { Merchant } from '../policy/evaluation-input.js';

/**
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
  readonly createdAtMs: number;
  readonly cancelledAtMs: number | null;
}

export type TransactionType =
  | 'card_authorization'
  | 'transfer_in'
  | 'transfer_out'
  | 'external_transfer'
  | 'deposit'
  | 'withdrawal';
export type TransactionStatus = 'pending' | 'completed' | 'failed' | 'declined';

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
  readonly failureReason: string | null;
  readonly standIn: boolean;
  readonly hasMetadata: boolean;
  readonly createdAtMs: number;
  readonly completedAtMs: number | null;
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

/** An authorization's outcome as the store answers it: the decision and what it recorded. */
export interface AuthorizationOutcome {
  readonly decision: Decision;
  /** The recorded transaction; null only when the card is unknown (no vault to record on). */
  readonly transaction: TransactionRecord | null;
  /** True when a repeated callback (same networkTransactionId) got the first decision back. */
  readonly replayed: boolean;
}
