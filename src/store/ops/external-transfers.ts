import {
  amountIn,
  assert,
  type Decimal,
  presentTransaction,
  presentTransfer,
  type Scope,
  SpendgateError,
  type TransactionRecord,
  type TransferRecord,
  type VaultRecord,
  ZERO,
} from '../../core/index.js';
import { newId } from '../../ids.js';
import { assertVaultActive, changeVaultTotals, lockVault, type StoreContext } from '../context.js';
import { post, systemAccountId, transferEntries } from '../ledger.js';
import { appendEvent } from '../outbox.js';
import {
  TRANSACTION_COLUMNS,
  transactionFromRow,
  TRANSFER_COLUMNS,
  transferFromRow,
  type TransactionRow,
  type TransferRow,
} from '../rows.js';
import { changeSpend, spendDayOf } from '../spend.js';
import { readSpend } from '../spend-window.js';
import type { SqlQueryable } from '../sql/client.js';
import { oneRow } from '../sql/one-row.js';
import { sealMetadata } from './metadata.js';
import { loadCompiledPolicy } from './policies.js';
import type { ExternalTransferInput } from '../port/transfers.js';

/**
 * createExternalTransfer: one transaction (contract section 12).
 * In: scope, source vault, address, amount > 0, memo.
 * Out: the pending transfer. The amount is held at once; the Solana worker sends it and then
 *   completes or fails it.
 * Writes: transfers (pending), a pending external_transfer transaction holding the amount,
 *   vaults.pending (and the hold journal), spend_counters (external transfers count as spend),
 *   outbox (transfer.created).
 * Fails: vault_not_found, vault_frozen, vault_closed, insufficient_balance, authorization_failed
 *   (a policy limit, with the limit in the message).
 */
export async function createExternalTransfer(
  ctx: StoreContext,
  tx: SqlQueryable,
  scope: Scope,
  input: ExternalTransferInput,
): Promise<TransferRecord> {
  const nowMs = ctx.clock();
  const vault = await lockVault(tx, scope, input.fromVaultId, 'fromVaultId');
  const amount = amountIn(input.amount, vault.currency, { param: 'amount', allowZero: false });
  assertVaultActive(vault, 'fromVaultId');
  if (vault.ledger.minus(vault.pending).lt(amount)) {
    throw new SpendgateError(
      'insufficient_balance',
      `Vault ${vault.id} does not have that much available.`,
      'amount',
    );
  }
  await checkPolicyLimits(ctx, tx, vault, amount, nowMs);
  const at = new Date(nowMs);
  const transferId = newId('transfer', nowMs);
  const { rows } = await tx.query<TransferRow>(
    `INSERT INTO transfers (id, account_id, mode, kind, from_vault_id, address, amount, currency, status, memo, created_at, updated_at)
     VALUES ($1, $2, $3, 'external', $4, $5, $6, $7, 'pending', $8, $9, $9)
     RETURNING ${TRANSFER_COLUMNS}`,
    [
      transferId,
      scope.accountId,
      scope.mode,
      vault.id,
      input.address,
      amount.toFixed(),
      vault.currency,
      input.memo,
      at,
    ],
  );
  const spendDay = spendDayOf(nowMs);
  const transactionId = newId('transaction', nowMs);
  await tx.query(
    `INSERT INTO transactions (id, account_id, mode, vault_id, type, status, currency, amount, hold_remaining,
                               transfer_id, spend_day, created_at, updated_at)
     VALUES ($1, $2, $3, $4, 'external_transfer', 'pending', $5, $6, $6, $7, $8, $9, $9)`,
    [
      transactionId,
      scope.accountId,
      scope.mode,
      vault.id,
      vault.currency,
      amount.toFixed(),
      transferId,
      spendDay,
      at,
    ],
  );
  await sealMetadata(ctx, tx, vault.id, transactionId, input.metadata ?? null);
  await changeVaultTotals(tx, vault.id, { ledger: ZERO, pending: amount }, transactionId, nowMs);
  await changeSpend(tx, {
    vaultId: vault.id,
    day: spendDay,
    mcc: null,
    amountDelta: amount,
    countDelta: 1,
  });
  const transfer = transferFromRow(oneRow(rows, 'the transfer INSERT'));
  await appendEvent(tx, scope, 'transfer.created', presentTransfer(transfer), nowMs);
  return transfer;
}

/**
 * Locks the vault, then the pending transfer and its held transaction (the order of all holds).
 * A transfer of source `withdrawal` (closing a vault to an address) has no hold: its money
 * already waits in the withdrawals system account.
 */
async function lockPendingTransfer(
  tx: SqlQueryable,
  transferId: string,
): Promise<{
  transfer: TransferRecord;
  source: 'hold' | 'withdrawal';
  transaction: TransactionRecord | null;
}> {
  const { rows: found } = await tx.query<{ from_vault_id: string; mode: Scope['mode'] }>(
    `SELECT from_vault_id, mode FROM transfers WHERE id = $1 AND kind = 'external'`,
    [transferId],
  );
  const origin = found[0];
  if (origin === undefined) {
    throw new SpendgateError(
      'transfer_not_found',
      `No transfer ${transferId.slice(0, 64)} exists.`,
      'id',
    );
  }
  await lockVault(tx, { mode: origin.mode, accountId: null }, origin.from_vault_id);
  const { rows } = await tx.query<TransferRow & { source: 'hold' | 'withdrawal' }>(
    `SELECT ${TRANSFER_COLUMNS}, source FROM transfers WHERE id = $1 FOR UPDATE`,
    [transferId],
  );
  const row = oneRow(rows, 'the locked transfer SELECT');
  const transfer = transferFromRow(row);
  if (transfer.status !== 'pending') {
    throw new SpendgateError(
      'parameter_invalid',
      `Transfer ${transfer.id} is already ${transfer.status}.`,
      'id',
    );
  }
  if (row.source === 'withdrawal') return { transfer, source: 'withdrawal', transaction: null };
  const { rows: transactions } = await tx.query<TransactionRow>(
    `SELECT ${TRANSACTION_COLUMNS} FROM transactions WHERE transfer_id = $1 AND type = 'external_transfer' FOR UPDATE`,
    [transferId],
  );
  const transaction = transactions[0];
  assert(transaction !== undefined, 'a pending external transfer has its held transaction');
  return { transfer, source: 'hold', transaction: transactionFromRow(transaction) };
}

/**
 * completeExternalTransfer: one transaction, by the Solana worker once the chain confirms.
 * In: transfer id, the transaction signature.  Out: the completed transfer.
 * Writes: a posting vault -> solana_outbound, vaults.ledger and pending, the transaction
 *   (completed), the transfer (completed, signature), outbox (transfer.completed).
 * Fails: transfer_not_found, parameter_invalid (no longer pending).
 */
export async function completeExternalTransfer(
  ctx: StoreContext,
  tx: SqlQueryable,
  transferId: string,
  signature: string,
): Promise<TransferRecord> {
  const nowMs = ctx.clock();
  const { transfer, source, transaction } = await lockPendingTransfer(tx, transferId);
  const scope: Scope = { accountId: transfer.accountId, mode: transfer.mode };
  const at = new Date(nowMs);
  const from =
    source === 'hold'
      ? transfer.fromVaultId
      : systemAccountId(transfer.mode, transfer.currency, 'withdrawals');
  await post(tx, {
    mode: transfer.mode,
    currency: transfer.currency,
    transactionId: transaction?.id ?? null,
    entries: transferEntries(
      from,
      systemAccountId(transfer.mode, transfer.currency, 'solana_outbound'),
      transfer.amount,
    ),
    nowMs,
  });
  if (transaction !== null) {
    await changeVaultTotals(
      tx,
      transfer.fromVaultId,
      { ledger: transfer.amount.negated(), pending: transaction.holdRemaining.negated() },
      transaction.id,
      nowMs,
    );
    const { rows: completedRows } = await tx.query<TransactionRow>(
      `UPDATE transactions SET status = 'completed', captured_amount = amount, hold_remaining = 0, completed_at = $2, updated_at = $2
       WHERE id = $1 RETURNING ${TRANSACTION_COLUMNS}`,
      [transaction.id, at],
    );
    const completedTransaction = transactionFromRow(completedRows[0] as TransactionRow);
    await appendEvent(
      tx,
      scope,
      'transaction.completed',
      presentTransaction(completedTransaction),
      nowMs,
    );
  }
  const { rows } = await tx.query<TransferRow>(
    `UPDATE transfers SET status = 'completed', signature = $2, completed_at = $3, updated_at = $3
     WHERE id = $1 RETURNING ${TRANSFER_COLUMNS}`,
    [transfer.id, signature, at],
  );
  const completed = transferFromRow(oneRow(rows, 'the transfer completion UPDATE'));
  await appendEvent(tx, scope, 'transfer.completed', presentTransfer(completed), nowMs);
  return completed;
}

/**
 * failExternalTransfer: one transaction, by the Solana worker on a definite failure.
 * In: transfer id, the reason.  Out: the failed transfer.
 * Writes: vaults.pending (the hold released), spend_counters back down, the transaction and the
 *   transfer (failed, reason), outbox (transfer.failed).
 * Fails: transfer_not_found, parameter_invalid (no longer pending).
 */
export async function failExternalTransfer(
  ctx: StoreContext,
  tx: SqlQueryable,
  transferId: string,
  reason: string,
): Promise<TransferRecord> {
  const nowMs = ctx.clock();
  const { transfer, transaction } = await lockPendingTransfer(tx, transferId);
  const scope: Scope = { accountId: transfer.accountId, mode: transfer.mode };
  if (transaction === null) {
    // A withdrawal of a closed vault: its money stays in the withdrawals account, for an
    // operator to send again or return (transfer.failed tells the account).
    return markFailed(tx, scope, transfer.id, reason, nowMs);
  }
  await changeVaultTotals(
    tx,
    transfer.fromVaultId,
    { ledger: ZERO, pending: transaction.holdRemaining.negated() },
    transaction.id,
    nowMs,
  );
  const { rows: spendRows } = await tx.query<{ spend_day: string }>(
    'SELECT spend_day FROM transactions WHERE id = $1',
    [transaction.id],
  );
  const day = spendRows[0]?.spend_day;
  assert(day !== undefined, 'a held transfer has a spend day');
  await changeSpend(tx, {
    vaultId: transfer.fromVaultId,
    day,
    mcc: null,
    amountDelta: transaction.holdRemaining.negated(),
    countDelta: -1,
  });
  await tx.query(
    `UPDATE transactions SET status = 'failed', hold_remaining = 0, failure_reason = $2, updated_at = $3 WHERE id = $1`,
    [transaction.id, reason, new Date(nowMs)],
  );
  return markFailed(tx, scope, transfer.id, reason, nowMs);
}

async function markFailed(
  tx: SqlQueryable,
  scope: Scope,
  transferId: string,
  reason: string,
  nowMs: number,
): Promise<TransferRecord> {
  const { rows } = await tx.query<TransferRow>(
    `UPDATE transfers SET status = 'failed', failure_reason = $2, updated_at = $3 WHERE id = $1 RETURNING ${TRANSFER_COLUMNS}`,
    [transferId, reason, new Date(nowMs)],
  );
  const failed = transferFromRow(oneRow(rows, 'the transfer failure UPDATE'));
  await appendEvent(tx, scope, 'transfer.failed', presentTransfer(failed), nowMs);
  return failed;
}

/**
 * Refuses (authorization_failed) an external transfer a limit of the vault's policy declines:
 * external transfers count as spend, like card authorizations.
 */
async function checkPolicyLimits(
  ctx: StoreContext,
  tx: SqlQueryable,
  vault: VaultRecord,
  amount: Decimal,
  nowMs: number,
): Promise<void> {
  const policy = await loadCompiledPolicy(ctx, tx, vault.id, vault.currency);
  if (policy !== null) {
    const spend = await readSpend(tx, vault.id, policy.aggregates, nowMs);
    const decline = policy.firstLimitDecline({
      // Limits read the amount and the spend aggregates only; there is no card or merchant.
      request: {
        cardId: '',
        amount: amount,
        currency: vault.currency,
        merchant: { name: '', mcc: '', country: '' },
      },
      spend,
      nowMs,
    });
    if (decline !== null) {
      throw new SpendgateError(
        'authorization_failed',
        decline.declineReason?.message ?? 'A policy limit refuses this transfer.',
        'amount',
      );
    }
  }
}
