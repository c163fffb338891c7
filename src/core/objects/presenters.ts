import { formatAmount } from '../money/amount.js';
import { isoTimestamp } from '../time.js';
import type { CardRecord, TransactionRecord, TransferRecord, VaultRecord } from './records.js';

/**
 * Records as the API answers them (contract section 8): amounts as decimal strings, times as
 * ISO 8601 UTC. Events carry exactly these objects, so a webhook receiver sees what a GET sees.
 * Deliberately absent: card numbers and CVVs, transaction metadata (contract section 14).
 */
function iso(epochMs: number): string;
function iso(epochMs: number | null): string | null;
function iso(epochMs: number | null): string | null {
  return epochMs === null ? null : isoTimestamp(epochMs);
}

export function presentVault(vault: VaultRecord) {
  return {
    id: vault.id,
    object: 'vault' as const,
    name: vault.name,
    currency: vault.currency,
    network: vault.network,
    status: vault.status,
    balance: {
      available: formatAmount(vault.ledger.minus(vault.pending), vault.currency),
      pending: formatAmount(vault.pending, vault.currency),
      ledger: formatAmount(vault.ledger, vault.currency),
    },
    metadata: vault.metadata,
    createdAt: iso(vault.createdAtMs),
    updatedAt: iso(vault.updatedAtMs),
    frozenAt: iso(vault.frozenAtMs),
    closedAt: iso(vault.closedAtMs),
  };
}

export function presentCard(card: CardRecord) {
  return {
    id: card.id,
    object: 'card' as const,
    vaultId: card.vaultId,
    status: card.status,
    last4: card.last4,
    expMonth: card.expMonth,
    expYear: card.expYear,
    cardholderName: card.cardholderName,
    metadata: card.metadata,
    createdAt: iso(card.createdAtMs),
    cancelledAt: iso(card.cancelledAtMs),
  };
}

export function presentTransaction(transaction: TransactionRecord) {
  const amount = (value: typeof transaction.amount) => formatAmount(value, transaction.currency);
  return {
    id: transaction.id,
    object: 'transaction' as const,
    type: transaction.type,
    status: transaction.status,
    vaultId: transaction.vaultId,
    cardId: transaction.cardId,
    transferId: transaction.transferId,
    amount: amount(transaction.amount),
    capturedAmount: amount(transaction.capturedAmount),
    heldAmount: amount(transaction.holdRemaining),
    currency: transaction.currency,
    merchant:
      transaction.merchant === null
        ? null
        : {
            name: transaction.merchant.name,
            mcc: transaction.merchant.mcc,
            country: transaction.merchant.country,
            city: transaction.merchant.city ?? null,
            id: transaction.merchant.id ?? null,
          },
    declineCode: transaction.declineCode,
    declineReason: transaction.declineReason,
    failureReason: transaction.failureReason,
    createdAt: iso(transaction.createdAtMs),
    completedAt: iso(transaction.completedAtMs),
    hasMetadata: transaction.hasMetadata,
  };
}

export function presentTransfer(transfer: TransferRecord) {
  return {
    id: transfer.id,
    object: 'transfer' as const,
    fromVaultId: transfer.fromVaultId,
    ...(transfer.kind === 'internal'
      ? { toVaultId: transfer.toVaultId }
      : { address: transfer.address }),
    amount: formatAmount(transfer.amount, transfer.currency),
    currency: transfer.currency,
    status: transfer.status,
    description: transfer.description,
    memo: transfer.memo,
    signature: transfer.signature,
    failureReason: transfer.failureReason,
    createdAt: iso(transfer.createdAtMs),
    completedAt: iso(transfer.completedAtMs),
  };
}
