import {
  Decimal,
  isCurrencyCode,
  NO_SHADOW_MATCHES,
  type CardRecord,
  type ChainDepositSource,
  type CurrencyCode,
  type FiatAmount,
  type Merchant,
  type Metadata,
  type Mode,
  type PolicyWouldDecline,
  type ShadowMatch,
  type TransactionLifecycle,
  type TransactionRecord,
  type TransactionStatus,
  type TransactionType,
  type TransferRecord,
  type TransferStatus,
  type VaultRecord,
} from '../core/index.js';
import { assert } from '../core/index.js';

/*
 * Rows as the SQL adapters return them (numeric as text, timestamptz as Date) and their
 * mapping to the core's records. The column lists are the one place each table's read shape
 * is written down.
 */

export const VAULT_COLUMNS =
  'id, account_id, mode, name, currency, network, status, metadata, ledger, pending, freeze_reason, created_at, updated_at, frozen_at, closed_at, deposit_address, overdrawn_at';

export interface VaultRow {
  id: string;
  account_id: string;
  mode: Mode;
  name: string;
  currency: string;
  network: 'solana';
  status: VaultRecord['status'];
  metadata: Metadata;
  ledger: string;
  pending: string;
  freeze_reason: string | null;
  created_at: Date;
  updated_at: Date;
  frozen_at: Date | null;
  closed_at: Date | null;
  deposit_address: string | null;
  overdrawn_at: Date | null;
}

export function currencyFromRow(value: string): CurrencyCode {
  assert(isCurrencyCode(value), 'stored currencies are registered ones');
  return value;
}

const ms = (value: Date | null): number | null => (value === null ? null : value.getTime());

export function vaultFromRow(row: VaultRow): VaultRecord {
  return {
    id: row.id,
    accountId: row.account_id,
    mode: row.mode,
    name: row.name,
    currency: currencyFromRow(row.currency),
    network: row.network,
    status: row.status,
    metadata: row.metadata,
    ledger: new Decimal(row.ledger),
    pending: new Decimal(row.pending),
    freezeReason: row.freeze_reason,
    createdAtMs: row.created_at.getTime(),
    updatedAtMs: row.updated_at.getTime(),
    frozenAtMs: ms(row.frozen_at),
    closedAtMs: ms(row.closed_at),
    depositAddress: row.deposit_address,
    overdrawnAtMs: ms(row.overdrawn_at),
  };
}

export const CARD_COLUMNS =
  'id, account_id, mode, vault_id, status, last4, exp_month, exp_year, cardholder_name, metadata, billing_currency, created_at, cancelled_at, processor_connection_id, processor_card_id';

export interface CardRow {
  id: string;
  account_id: string;
  mode: Mode;
  vault_id: string;
  status: CardRecord['status'];
  last4: string;
  exp_month: number;
  exp_year: number;
  cardholder_name: string;
  metadata: Metadata;
  billing_currency: string;
  created_at: Date;
  cancelled_at: Date | null;
  processor_connection_id: string | null;
  processor_card_id: string | null;
}

export function cardFromRow(row: CardRow): CardRecord {
  return {
    id: row.id,
    accountId: row.account_id,
    mode: row.mode,
    vaultId: row.vault_id,
    status: row.status,
    last4: row.last4,
    expMonth: row.exp_month,
    expYear: row.exp_year,
    cardholderName: row.cardholder_name,
    metadata: row.metadata,
    billingCurrency: row.billing_currency,
    createdAtMs: row.created_at.getTime(),
    cancelledAtMs: ms(row.cancelled_at),
    processorCard:
      row.processor_connection_id === null || row.processor_card_id === null
        ? null
        : { connectionId: row.processor_connection_id, cardId: row.processor_card_id },
  };
}

/**
 * Every value of the type and status CHECK constraints of migration 0001 (the `satisfies` keeps
 * each list whole): a statement with a branch per value covers every row, which is how the
 * history reads the (owner, type, status, id) indexes in id order (ops/transaction-list.ts,
 * backtest-rows.ts).
 */
export const TRANSACTION_TYPES = Object.keys({
  card_authorization: true,
  transfer_in: true,
  transfer_out: true,
  external_transfer: true,
  deposit: true,
  withdrawal: true,
  force_capture: true,
  refund: true,
} satisfies Record<TransactionType, true>) as readonly TransactionType[];
export const TRANSACTION_STATUSES = Object.keys({
  pending: true,
  completed: true,
  failed: true,
  declined: true,
} satisfies Record<TransactionStatus, true>) as readonly TransactionStatus[];

export const TRANSACTION_COLUMNS =
  'id, account_id, mode, vault_id, type, status, currency, amount, captured_amount, hold_remaining, card_id, transfer_id, merchant, mcc, network_transaction_id, decline_code, decline_reason, shadow_matches, failure_reason, stand_in, spend_day, metadata_enc IS NOT NULL AS has_metadata, created_at, completed_at, chain_deposit, ' +
  // Contract v1.2, section 16 (migration 0019).
  'billing_amount, billing_currency, merchant_amount, merchant_currency, rate, requested_amount, partial, advice, expires_at, refunded_amount, policy_would_decline, original_transaction_id, message_network_transaction_id';

export interface TransactionRow {
  id: string;
  account_id: string;
  mode: Mode;
  vault_id: string;
  type: TransactionType;
  status: TransactionStatus;
  currency: string;
  amount: string;
  captured_amount: string;
  hold_remaining: string;
  card_id: string | null;
  transfer_id: string | null;
  merchant: Merchant | null;
  mcc: string | null;
  network_transaction_id: string | null;
  decline_code: TransactionRecord['declineCode'];
  decline_reason: TransactionRecord['declineReason'];
  /** NULL when no shadow rule matched (migration 0010). */
  shadow_matches: ShadowMatch[] | null;
  failure_reason: string | null;
  stand_in: boolean;
  spend_day: string | null;
  has_metadata: boolean;
  created_at: Date;
  completed_at: Date | null;
  chain_deposit: ChainDepositSource | null;
  billing_amount: string | null;
  billing_currency: string | null;
  merchant_amount: string | null;
  merchant_currency: string | null;
  rate: { value: string; source: string; atMs: number } | null;
  requested_amount: string | null;
  partial: boolean;
  advice: boolean;
  expires_at: Date | null;
  refunded_amount: string;
  policy_would_decline: PolicyWouldDecline | null;
  original_transaction_id: string | null;
  /** A force capture's or refund's network id (its key: transactions_message_key). */
  message_network_transaction_id: string | null;
}

function fiatFromRow(amount: string | null, currency: string | null): FiatAmount | null {
  return amount === null || currency === null ? null : { amount: new Decimal(amount), currency };
}

function lifecycleFromRow(row: TransactionRow): TransactionLifecycle {
  return {
    billing: fiatFromRow(row.billing_amount, row.billing_currency),
    merchantAmount: fiatFromRow(row.merchant_amount, row.merchant_currency),
    rate: row.rate,
    requestedAmount: row.requested_amount === null ? null : new Decimal(row.requested_amount),
    partial: row.partial,
    advice: row.advice,
    expiresAtMs: ms(row.expires_at),
    refundedAmount: new Decimal(row.refunded_amount),
    policyWouldDecline: row.policy_would_decline,
    originalTransactionId: row.original_transaction_id,
  };
}

export function transactionFromRow(row: TransactionRow): TransactionRecord {
  return {
    id: row.id,
    accountId: row.account_id,
    mode: row.mode,
    vaultId: row.vault_id,
    type: row.type,
    status: row.status,
    currency: currencyFromRow(row.currency),
    amount: new Decimal(row.amount),
    capturedAmount: new Decimal(row.captured_amount),
    holdRemaining: new Decimal(row.hold_remaining),
    cardId: row.card_id,
    transferId: row.transfer_id,
    merchant: row.merchant,
    networkTransactionId: row.network_transaction_id ?? row.message_network_transaction_id,
    declineCode: row.decline_code,
    declineReason: row.decline_reason,
    shadowMatches: row.shadow_matches ?? NO_SHADOW_MATCHES,
    failureReason: row.failure_reason,
    standIn: row.stand_in,
    hasMetadata: row.has_metadata,
    createdAtMs: row.created_at.getTime(),
    completedAtMs: ms(row.completed_at),
    onChain: row.chain_deposit,
    lifecycle: lifecycleFromRow(row),
  };
}

export const TRANSFER_COLUMNS =
  'id, account_id, mode, kind, from_vault_id, to_vault_id, address, amount, currency, status, description, memo, signature, failure_reason, created_at, completed_at';

export interface TransferRow {
  id: string;
  account_id: string;
  mode: Mode;
  kind: 'internal' | 'external';
  from_vault_id: string;
  to_vault_id: string | null;
  address: string | null;
  amount: string;
  currency: string;
  status: TransferStatus;
  description: string | null;
  memo: string | null;
  signature: string | null;
  failure_reason: string | null;
  created_at: Date;
  completed_at: Date | null;
}

export function transferFromRow(row: TransferRow): TransferRecord {
  return {
    id: row.id,
    accountId: row.account_id,
    mode: row.mode,
    kind: row.kind,
    fromVaultId: row.from_vault_id,
    toVaultId: row.to_vault_id,
    address: row.address,
    amount: new Decimal(row.amount),
    currency: currencyFromRow(row.currency),
    status: row.status,
    description: row.description,
    memo: row.memo,
    signature: row.signature,
    failureReason: row.failure_reason,
    createdAtMs: row.created_at.getTime(),
    completedAtMs: ms(row.completed_at),
  };
}
