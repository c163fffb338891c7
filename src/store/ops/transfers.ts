import {
  amountIn,
  type Decimal,
  presentTransaction,
  presentTransfer,
  type Scope,
  SpendgateError,
  type TransferRecord,
  type VaultRecord,
} from '../../core/index.js';
import { newId } from '../../ids.js';
import type { SqlQueryable } from '../sql/client.js';
import { oneRow } from '../sql/one-row.js';
import { assertVaultActive, lockVault, lockVaultPair, type StoreContext } from '../context.js';
import { appendEvent } from '../outbox.js';
import { TRANSFER_COLUMNS, transferFromRow, type TransferRow } from '../rows.js';
import { moveBetweenVaults } from './vaults.js';
import type { InternalTransferInput } from '../port/transfers.js';

/** A transfer moves more than nothing, in the source vault's currency. */
const AMOUNT_OPTIONS = { param: 'amount', allowZero: false } as const;

/**
 * createInternalTransfer: one transaction (contract section 12).
 * In: scope (owning the source), source and destination vault ids (the destination may belong
 *   to another account of the same mode: the counterparty), amount > 0.
 * Out: the completed transfer.
 * Locks both vaults in id order, so transfers in opposite directions never deadlock.
 * Writes: a posting source -> destination, both vaults' ledgers, a transfer_out and a
 *   transfer_in transaction, transfers, outbox (transfer.completed to the source account,
 *   transaction.completed of the credit to the destination account).
 * Fails: parameter_invalid (same vault), vault_not_found, vault_frozen, vault_closed,
 *   currency_mismatch, insufficient_balance.
 */
export async function createInternalTransfer(
  ctx: StoreContext,
  tx: SqlQueryable,
  scope: Scope,
  input: InternalTransferInput,
): Promise<TransferRecord> {
  const nowMs = ctx.clock();
  const { from, to, amount } = await lockTransferVaults(tx, scope, input);
  const transferId = newId('transfer', nowMs);
  const at = new Date(nowMs);
  const { rows } = await tx.query<TransferRow>(
    `INSERT INTO transfers (id, account_id, mode, kind, from_vault_id, to_vault_id, amount, currency, status,
                            description, counterparty_account_id, created_at, updated_at, completed_at)
     VALUES ($1, $2, $3, 'internal', $4, $5, $6, $7, 'completed', $8, $9, $10, $10, $10)
     RETURNING ${TRANSFER_COLUMNS}`,
    [
      transferId,
      scope.accountId,
      scope.mode,
      from.id,
      to.id,
      amount.toFixed(),
      from.currency,
      input.description,
      to.accountId,
      at,
    ],
  );
  const { credit } = await moveBetweenVaults(
    tx,
    scope,
    from,
    to,
    amount,
    'transfer_out',
    nowMs,
    transferId,
    {
      ctx,
      metadata: input.metadata ?? null,
    },
  );
  const transfer = transferFromRow(oneRow(rows, 'the transfer INSERT'));
  await appendEvent(tx, scope, 'transfer.completed', presentTransfer(transfer), nowMs);
  await appendEvent(
    tx,
    { accountId: to.accountId, mode: scope.mode },
    'transaction.completed',
    presentTransaction(credit),
    nowMs,
  );
  return transfer;
}

/**
 * Locks a transfer's two vaults and reads its amount, refusing what cannot move: in the order
 * the API always has, the source vault, its amount, then the pair (same vault, state,
 * currency, balance).
 */
async function lockTransferVaults(
  tx: SqlQueryable,
  scope: Scope,
  input: InternalTransferInput,
): Promise<{ from: VaultRecord; to: VaultRecord; amount: Decimal }> {
  if (input.fromVaultId === input.toVaultId) {
    // Refused in the order the API always has: the source vault, its amount, then the pair.
    const from = await lockVault(tx, scope, input.fromVaultId, 'fromVaultId');
    amountIn(input.amount, from.currency, AMOUNT_OPTIONS);
    throw new SpendgateError(
      'parameter_invalid',
      'A transfer needs two different vaults.',
      'toVaultId',
    );
  }
  const { own: from, other: to } = await lockVaultPair(
    tx,
    scope,
    { vaultId: input.fromVaultId, param: 'fromVaultId' },
    { vaultId: input.toVaultId, param: 'toVaultId' },
  );
  const amount = amountIn(input.amount, from.currency, AMOUNT_OPTIONS);
  assertVaultActive(from, 'fromVaultId');
  assertVaultActive(to, 'toVaultId');
  if (from.currency !== to.currency) {
    throw new SpendgateError(
      'currency_mismatch',
      `Vault ${from.id} holds ${from.currency}, vault ${to.id} holds ${to.currency}.`,
      'toVaultId',
    );
  }
  if (from.ledger.minus(from.pending).lt(amount)) {
    throw new SpendgateError(
      'insufficient_balance',
      `Vault ${from.id} does not have that much available.`,
      'amount',
    );
  }
  return { from, to, amount };
}
