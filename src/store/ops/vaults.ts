import {
  amountIn,
  type AmountInput,
  assert,
  type ChainDepositSource,
  currencyOf,
  type Decimal,
  type Metadata,
  presentCard,
  presentTransaction,
  presentTransfer,
  presentVault,
  type Scope,
  SpendgateError,
  type TransactionRecord,
  type VaultRecord,
  ZERO,
} from '../../core/index.js';
import { newId } from '../../ids.js';
import {
  assertVaultActive,
  changeVaultTotals,
  lockVault,
  lockVaultPair,
  vaultNotFound,
  type StoreContext,
} from '../context.js';
import { post, systemAccountId, transferEntries } from '../ledger.js';
import { depositAddressOf } from '../deposit-keys.js';
import { appendEvent } from '../outbox.js';
import { applyMetadataChanges, type MetadataChanges } from '../metadata-changes.js';
import { watchDepositAddress } from './deposit-watch.js';
import { sealMetadata } from './metadata.js';
import {
  CARD_COLUMNS,
  cardFromRow,
  type CardRow,
  TRANSFER_COLUMNS,
  transferFromRow,
  type TransferRow,
  TRANSACTION_COLUMNS,
  transactionFromRow,
  VAULT_COLUMNS,
  vaultFromRow,
  type TransactionRow,
  type VaultRow,
} from '../rows.js';
import type { SqlQueryable } from '../sql/client.js';
import { oneRow } from '../sql/one-row.js';
import { readScoped } from './reads.js';
import type { CloseDestination, CreateVaultInput } from '../port/vaults.js';

/**
 * createVault: one transaction.
 * In: scope, name, currency, metadata, initialDeposit >= 0.
 * Out: the vault (and, when initialDeposit > 0, its completed `deposit` transaction).
 * Writes: vaults (with its deposit address: deposit-keys.ts), ledger_accounts, deposit_watch,
 *   a posting funding -> vault, transactions, outbox
 *   (vault.created, and transaction.completed for the deposit).
 * Fails: nothing a client can cause (inputs are validated at the edge).
 */
export async function createVault(
  ctx: StoreContext,
  tx: SqlQueryable,
  scope: Scope,
  input: CreateVaultInput,
): Promise<{ vault: VaultRecord; deposit: TransactionRecord | null }> {
  assert(!input.initialDeposit.isNegative(), 'initialDeposit is not negative');
  const info = currencyOf(input.currency);
  const nowMs = ctx.clock();
  const id = newId('vault', nowMs);
  const { wrapped } = ctx.keyring.newVaultKey(id);
  const depositAddress = await depositAddressOf(ctx, tx, id);
  const { rows } = await tx.query<VaultRow>(
    `INSERT INTO vaults (id, account_id, mode, name, currency, network, status, metadata, data_key_wrapped, created_at, updated_at, deposit_address)
     VALUES ($1, $2, $3, $4, $5, $6, 'active', $7, $8, $9, $9, $10)
     RETURNING ${VAULT_COLUMNS}`,
    [
      id,
      scope.accountId,
      scope.mode,
      input.name,
      info.code,
      info.network,
      JSON.stringify(input.metadata),
      wrapped,
      new Date(nowMs),
      depositAddress,
    ],
  );
  await tx.query(
    `INSERT INTO ledger_accounts (id, kind, mode, currency, vault_id) VALUES ($1, 'vault', $2, $3, $1)`,
    [id, scope.mode, info.code],
  );
  await watchDepositAddress(tx, { vaultId: id, address: depositAddress });
  let vault = vaultFromRow(oneRow(rows, 'the vault INSERT'));
  let deposit: TransactionRecord | null = null;
  if (input.initialDeposit.gt(0)) {
    ({ vault, deposit } = await depositInto(tx, scope, vault, input.initialDeposit, nowMs));
  }
  // The event shows the vault as created, initial deposit included: one event, one state.
  await appendEvent(tx, scope, 'vault.created', presentVault(vault), nowMs);
  if (deposit !== null)
    await appendEvent(tx, scope, 'transaction.completed', presentTransaction(deposit), nowMs);
  return { vault, deposit };
}

/** Posts a deposit from the funding account into a locked or new vault. */
export async function depositInto(
  tx: SqlQueryable,
  scope: Scope,
  vault: VaultRecord,
  amount: Decimal,
  nowMs: number,
  onChain: ChainDepositSource | null = null,
): Promise<{ vault: VaultRecord; deposit: TransactionRecord }> {
  const transactionId = newId('transaction', nowMs);
  const { rows } = await tx.query<TransactionRow>(
    `INSERT INTO transactions (id, account_id, mode, vault_id, type, status, currency, amount, created_at, updated_at, completed_at, chain_deposit)
     VALUES ($1, $2, $3, $4, 'deposit', 'completed', $5, $6, $7, $7, $7, $8)
     RETURNING ${TRANSACTION_COLUMNS}`,
    [
      transactionId,
      scope.accountId,
      scope.mode,
      vault.id,
      vault.currency,
      amount.toFixed(),
      new Date(nowMs),
      onChain === null ? null : JSON.stringify(onChain),
    ],
  );
  await post(tx, {
    mode: scope.mode,
    currency: vault.currency,
    transactionId,
    entries: transferEntries(
      systemAccountId(scope.mode, vault.currency, 'funding'),
      vault.id,
      amount,
    ),
    nowMs,
  });
  const updated = await changeVaultTotals(
    tx,
    vault.id,
    { ledger: amount, pending: ZERO },
    transactionId,
    nowMs,
  );
  return { vault: updated, deposit: transactionFromRow(oneRow(rows, 'the deposit INSERT')) };
}

/**
 * deposit (Simulate Deposit in test mode, and funding generally): one transaction.
 * In: scope, vaultId, amount > 0.  Out: the updated vault and the completed deposit.
 * Writes: a posting funding -> vault, vaults.ledger, transactions, outbox (transaction.completed).
 * Fails: vault_not_found, vault_frozen, vault_closed.
 */
export async function deposit(
  ctx: StoreContext,
  tx: SqlQueryable,
  scope: Scope,
  vaultId: string,
  requested: AmountInput,
  metadata: Metadata | null = null,
): Promise<{ vault: VaultRecord; deposit: TransactionRecord }> {
  const nowMs = ctx.clock();
  const vault = await lockVault(tx, scope, vaultId);
  const amount = amountIn(requested, vault.currency, { param: 'amount', allowZero: false });
  assertVaultActive(vault);
  const result = await depositInto(tx, scope, vault, amount, nowMs);
  await sealMetadata(ctx, tx, vault.id, result.deposit.id, metadata);
  const deposited = {
    ...result,
    deposit: {
      ...result.deposit,
      hasMetadata: metadata !== null && Object.keys(metadata).length > 0,
    },
  };
  await appendEvent(
    tx,
    scope,
    'transaction.completed',
    presentTransaction(deposited.deposit),
    nowMs,
  );
  return deposited;
}

export async function getVault(
  tx: SqlQueryable,
  scope: Scope,
  vaultId: string,
): Promise<VaultRecord> {
  const row = await readScoped<VaultRow>(
    tx,
    { table: 'vaults', columns: VAULT_COLUMNS },
    scope,
    vaultId,
    () => vaultNotFound(vaultId, 'id'),
  );
  return vaultFromRow(row);
}

/**
 * updateVault: one transaction.
 * In: scope, vaultId, a new name and/or metadata changes (a key set to null is removed).
 * Out: the vault.  Writes: vaults.name, vaults.metadata, outbox (vault.updated).
 * Fails: vault_not_found, vault_closed, parameter_invalid (more than 50 metadata keys after
 *   the change).
 */
export async function updateVault(
  ctx: StoreContext,
  tx: SqlQueryable,
  scope: Scope,
  vaultId: string,
  changes: {
    readonly name?: string | undefined;
    readonly metadata?: MetadataChanges | undefined;
  },
): Promise<VaultRecord> {
  const nowMs = ctx.clock();
  const vault = await lockVault(tx, scope, vaultId, 'id');
  if (vault.status === 'closed')
    throw new SpendgateError('vault_closed', `Vault ${vault.id} is closed.`, 'id');
  const metadata = applyMetadataChanges(vault.metadata, changes.metadata, 'vault');
  const { rows } = await tx.query<VaultRow>(
    `UPDATE vaults SET name = $2, metadata = $3, updated_at = $4 WHERE id = $1 RETURNING ${VAULT_COLUMNS}`,
    [vault.id, changes.name ?? vault.name, JSON.stringify(metadata), new Date(nowMs)],
  );
  const updated = vaultFromRow(oneRow(rows, 'the vault UPDATE'));
  await appendEvent(tx, scope, 'vault.updated', presentVault(updated), nowMs);
  return updated;
}

/**
 * freezeVault / unfreezeVault: one transaction each (contract section 9).
 * In: scope, vaultId (and a reason for freeze).  Out: the vault.
 * Writes: vaults.status, outbox (vault.frozen / vault.unfrozen) unless already in that state.
 * Fails: vault_not_found, vault_closed.
 */
export async function setVaultFrozen(
  ctx: StoreContext,
  tx: SqlQueryable,
  scope: Scope,
  vaultId: string,
  frozen: boolean,
  reason: string | null,
): Promise<VaultRecord> {
  const nowMs = ctx.clock();
  const vault = await lockVault(tx, scope, vaultId, 'id');
  if (vault.status === 'closed')
    throw new SpendgateError('vault_closed', `Vault ${vault.id} is closed.`, 'id');
  if ((vault.status === 'frozen') === frozen) return vault;
  const { rows } = await tx.query<VaultRow>(
    `UPDATE vaults SET status = $2, freeze_reason = $3, frozen_at = $4, updated_at = $5
     WHERE id = $1 RETURNING ${VAULT_COLUMNS}`,
    [
      vault.id,
      frozen ? 'frozen' : 'active',
      frozen ? reason : null,
      frozen ? new Date(nowMs) : null,
      new Date(nowMs),
    ],
  );
  const updated = vaultFromRow(oneRow(rows, 'the vault status UPDATE'));
  await appendEvent(
    tx,
    scope,
    frozen ? 'vault.frozen' : 'vault.unfrozen',
    presentVault(updated),
    nowMs,
  );
  return updated;
}

export async function closeVault(
  ctx: StoreContext,
  tx: SqlQueryable,
  scope: Scope,
  vaultId: string,
  destination: CloseDestination,
): Promise<VaultRecord> {
  const nowMs = ctx.clock();
  const destinationVaultId =
    destination !== null && 'vaultId' in destination ? destination.vaultId : null;
  let vault: VaultRecord;
  let target: VaultRecord | null = null;
  if (destinationVaultId === null || destinationVaultId === vaultId) {
    vault = await lockVault(tx, scope, vaultId, 'id');
  } else {
    const pair = await lockVaultPair(
      tx,
      scope,
      { vaultId, param: 'id' },
      { vaultId: destinationVaultId, param: 'destination.vaultId' },
    );
    vault = pair.own;
    target = pair.other;
  }
  if (vault.status === 'closed')
    throw new SpendgateError('vault_closed', `Vault ${vault.id} is closed.`, 'id');
  if (vault.pending.gt(0)) {
    throw new SpendgateError(
      'vault_has_pending_transactions',
      `Vault ${vault.id} has open holds.`,
      'id',
    );
  }
  if (vault.ledger.gt(0)) {
    if (destination === null) {
      throw new SpendgateError(
        'parameter_missing',
        'A vault with a balance needs a destination to close.',
        'destination',
      );
    }
    if ('address' in destination) {
      await withdrawToAddress(tx, scope, vault, destination.address, nowMs);
    } else {
      await withdrawToVault(tx, scope, vault, target, nowMs);
    }
  }
  assert(!vault.ledger.isNegative(), 'a vault ledger is never negative');
  const cancelled = await tx.query<CardRow>(
    `UPDATE cards SET status = 'cancelled', cancelled_at = $2, updated_at = $2
     WHERE vault_id = $1 AND status <> 'cancelled' RETURNING ${CARD_COLUMNS}`,
    [vault.id, new Date(nowMs)],
  );
  const { rows } = await tx.query<VaultRow>(
    `UPDATE vaults SET status = 'closed', closed_at = $2, updated_at = $2 WHERE id = $1 RETURNING ${VAULT_COLUMNS}`,
    [vault.id, new Date(nowMs)],
  );
  const closed = vaultFromRow(oneRow(rows, 'the vault close UPDATE'));
  assert(closed.ledger.isZero() && closed.pending.isZero(), 'a closed vault holds nothing');
  for (const row of cancelled.rows) {
    await appendEvent(tx, scope, 'card.cancelled', presentCard(cardFromRow(row)), nowMs);
  }
  await appendEvent(tx, scope, 'vault.closed', presentVault(closed), nowMs);
  return closed;
}

/** Closing onto another vault: all of the ledger moves there, refused at `destination.vaultId`. */
async function withdrawToVault(
  tx: SqlQueryable,
  scope: Scope,
  vault: VaultRecord,
  target: VaultRecord | null,
  nowMs: number,
): Promise<void> {
  // closeVault locks a destination other than the vault itself; none means it named itself.
  if (target === null) {
    throw new SpendgateError(
      'parameter_invalid',
      'A vault cannot be its own destination.',
      'destination.vaultId',
    );
  }
  assertVaultActive(target, 'destination.vaultId');
  if (target.currency !== vault.currency) {
    throw new SpendgateError(
      'currency_mismatch',
      'The destination vault holds another currency.',
      'destination.vaultId',
    );
  }
  await moveBetweenVaults(tx, scope, vault, target, vault.ledger, 'withdrawal', nowMs);
}

/**
 * Moves `amount` between two locked vaults: one posting, both totals, a debit transaction of
 * `debitType` on the source and a `transfer_in` on the destination (owned by its account).
 */
export async function moveBetweenVaults(
  tx: SqlQueryable,
  scope: Scope,
  from: VaultRecord,
  to: VaultRecord,
  amount: Decimal,
  debitType: 'transfer_out' | 'withdrawal',
  nowMs: number,
  transferId: string | null = null,
  sealing: { ctx: StoreContext; metadata: Metadata | null } | null = null,
): Promise<{ debit: TransactionRecord; credit: TransactionRecord }> {
  assert(amount.gt(0) && from.currency === to.currency, 'a positive amount in one currency');
  const debitId = newId('transaction', nowMs);
  const creditId = newId('transaction', nowMs);
  const insert = `INSERT INTO transactions (id, account_id, mode, vault_id, type, status, currency, amount, transfer_id,
                    counterparty_account_id, counterparty_vault_id, created_at, updated_at, completed_at)
                  VALUES ($1, $2, $3, $4, $5, 'completed', $6, $7, $8, $9, $10, $11, $11, $11)
                  RETURNING ${TRANSACTION_COLUMNS}`;
  const at = new Date(nowMs);
  const debit = await tx.query<TransactionRow>(insert, [
    debitId,
    from.accountId,
    scope.mode,
    from.id,
    debitType,
    from.currency,
    amount.toFixed(),
    transferId,
    to.accountId,
    to.id,
    at,
  ]);
  const credit = await tx.query<TransactionRow>(insert, [
    creditId,
    to.accountId,
    scope.mode,
    to.id,
    'transfer_in',
    to.currency,
    amount.toFixed(),
    transferId,
    from.accountId,
    from.id,
    at,
  ]);
  await post(tx, {
    mode: scope.mode,
    currency: from.currency,
    transactionId: debitId,
    entries: transferEntries(from.id, to.id, amount),
    nowMs,
  });
  await changeVaultTotals(tx, from.id, { ledger: amount.negated(), pending: ZERO }, debitId, nowMs);
  await changeVaultTotals(tx, to.id, { ledger: amount, pending: ZERO }, creditId, nowMs);
  let debitRecord = transactionFromRow(oneRow(debit.rows, 'the debit INSERT'));
  let creditRecord = transactionFromRow(oneRow(credit.rows, 'the credit INSERT'));
  if (sealing !== null && sealing.metadata !== null && Object.keys(sealing.metadata).length > 0) {
    // Each side under its own vault's key, so each account reads it with what it owns.
    await sealMetadata(sealing.ctx, tx, from.id, debitId, sealing.metadata);
    await sealMetadata(sealing.ctx, tx, to.id, creditId, sealing.metadata);
    debitRecord = { ...debitRecord, hasMetadata: true };
    creditRecord = { ...creditRecord, hasMetadata: true };
  }
  return { debit: debitRecord, credit: creditRecord };
}

/**
 * Closing to an address: the balance leaves the vault at once (a completed `withdrawal`,
 * posted to the withdrawals system account) and a pending external transfer of source
 * `withdrawal` carries it on chain; the Solana worker completes it from that account.
 */
async function withdrawToAddress(
  tx: SqlQueryable,
  scope: Scope,
  vault: VaultRecord,
  address: string,
  nowMs: number,
): Promise<void> {
  const amount = vault.ledger;
  const at = new Date(nowMs);
  const transferId = newId('transfer', nowMs);
  const transactionId = newId('transaction', nowMs);
  const { rows } = await tx.query<TransferRow>(
    `INSERT INTO transfers (id, account_id, mode, kind, source, from_vault_id, address, amount, currency, status, created_at, updated_at)
     VALUES ($1, $2, $3, 'external', 'withdrawal', $4, $5, $6, $7, 'pending', $8, $8)
     RETURNING ${TRANSFER_COLUMNS}`,
    [
      transferId,
      scope.accountId,
      scope.mode,
      vault.id,
      address,
      amount.toFixed(),
      vault.currency,
      at,
    ],
  );
  await tx.query(
    `INSERT INTO transactions (id, account_id, mode, vault_id, type, status, currency, amount, transfer_id, created_at, updated_at, completed_at)
     VALUES ($1, $2, $3, $4, 'withdrawal', 'completed', $5, $6, $7, $8, $8, $8)`,
    [
      transactionId,
      scope.accountId,
      scope.mode,
      vault.id,
      vault.currency,
      amount.toFixed(),
      transferId,
      at,
    ],
  );
  await post(tx, {
    mode: scope.mode,
    currency: vault.currency,
    transactionId,
    entries: transferEntries(
      vault.id,
      systemAccountId(scope.mode, vault.currency, 'withdrawals'),
      amount,
    ),
    nowMs,
  });
  await changeVaultTotals(
    tx,
    vault.id,
    { ledger: amount.negated(), pending: ZERO },
    transactionId,
    nowMs,
  );
  await appendEvent(
    tx,
    scope,
    'transfer.created',
    presentTransfer(transferFromRow(oneRow(rows, 'the withdrawal transfer INSERT'))),
    nowMs,
  );
}
