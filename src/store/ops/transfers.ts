import {
  assert,
  presentTransaction,
  presentTransfer,
  SpendgateError,
  type Decimal,
  type Metadata,
  type Scope,
  type TransferRecord,
  type VaultRecord,
} from '../../core/index.js';
import { newId } from '../../ids.js';
import type { SqlQueryable } from '../sql/client.js';
import { oneRow } from '../sql/one-row.js';
import { assertVaultActive, lockVault, type StoreContext } from '../context.js';
import { appendEvent } from '../outbox.js';
import { TRANSFER_COLUMNS, transferFromRow, type TransferRow } from '../rows.js';
import { moveBetweenVaults } from './vaults.js';

export interface InternalTransferInput {
  readonly fromVaultId: string;
  readonly toVaultId: string;
  readonly amount: Decimal;
  readonly description: string | null;
  readonly metadata?: Metadata | null;
}

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
  assert(input.amount.gt(0), 'a transfer is positive (refused at the edge otherwise)');
  if (input.fromVaultId === input.toVaultId) {
    throw new SpendgateError(
      'parameter_invalid',
      'A transfer needs two different vaults.',
      'toVaultId',
    );
  }
  const nowMs = ctx.clock();
  const locked = new Map<string, VaultRecord>();
  for (const id of [input.fromVaultId, input.toVaultId].sort()) {
    const isSource = id === input.fromVaultId;
    locked.set(
      id,
      await lockVault(
        tx,
        { mode: scope.mode, accountId: isSource ? scope.accountId : null },
        id,
        isSource ? 'fromVaultId' : 'toVaultId',
      ),
    );
  }
  const from = locked.get(input.fromVaultId);
  const to = locked.get(input.toVaultId);
  assert(from !== undefined && to !== undefined, 'both vaults are locked');
  assertVaultActive(from, 'fromVaultId');
  assertVaultActive(to, 'toVaultId');
  if (from.currency !== to.currency) {
    throw new SpendgateError(
      'currency_mismatch',
      `Vault ${from.id} holds ${from.currency}, vault ${to.id} holds ${to.currency}.`,
      'toVaultId',
    );
  }
  if (from.ledger.minus(from.pending).lt(input.amount)) {
    throw new SpendgateError(
      'insufficient_balance',
      `Vault ${from.id} does not have that much available.`,
      'amount',
    );
  }
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
      input.amount.toFixed(),
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
    input.amount,
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
