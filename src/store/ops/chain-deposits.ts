import {
  assert,
  type ChainDepositRecord,
  Decimal,
  type Mode,
  presentTransaction,
  type Scope,
  type TransactionRecord,
} from '../../core/index.js';
import { newId } from '../../ids.js';

import { lockVault, vaultNotFound, type StoreContext } from '../context.js';
import { depositSeed, vaultKeySeed } from '../deposit-keys.js';
import { appendEvent } from '../outbox.js';
import type { SqlQueryable } from '../sql/client.js';
import { recordSignedSend, type SendTable, type SignedSend } from './signed-sends.js';
import { checkIdCursor, checkLimit } from './list-pages.js';
import type { Page, PageQuery } from '../port/pages.js';
import { readScoped } from './reads.js';
import { depositInto } from './vaults.js';
import { VAULT_COLUMNS, type VaultRow } from '../rows.js';
import {
  DEPOSIT_MINIMUMS,
  type FoundTransfer,
  type IgnoredReason,
  SWEEP_BATCH_MAX,
  type UnsweptDeposit,
} from '../port/deposits.js';

/*
 * Deposits found on chain (issue 15; table chain_deposits, migration 0011): each transfer into
 * a deposit address recorded once, and credited to its vault in the same transaction, or kept
 * as ignored with its reason.
 */

const DEPOSIT_COLUMNS = `id, vault_id, mode, currency, signature, instruction_index, inner_index,
  slot::text AS slot, sender, mint, amount::text AS amount, status, ignored_reason, transaction_id,
  found_at, credited_at, swept_at`;

interface DepositRow {
  id: string;
  vault_id: string;
  mode: Mode;
  currency: string;
  signature: string;
  instruction_index: number;
  inner_index: number;
  slot: string;
  sender: string;
  mint: string | null;
  amount: string;
  status: ChainDepositRecord['status'];
  ignored_reason: ChainDepositRecord['ignoredReason'];
  transaction_id: string | null;
  found_at: Date;
  credited_at: Date | null;
  swept_at: Date | null;
}

function depositFromRow(row: DepositRow): ChainDepositRecord {
  return {
    id: row.id,
    vaultId: row.vault_id,
    mode: row.mode,
    currency: row.currency,
    signature: row.signature,
    instructionIndex: row.instruction_index,
    innerIndex: row.inner_index,
    slot: Number(row.slot),
    sender: row.sender,
    mint: row.mint,
    amount: new Decimal(row.amount).toFixed(),
    status: row.status,
    ignoredReason: row.ignored_reason,
    transactionId: row.transaction_id,
    foundAtMs: row.found_at.getTime(),
    creditedAtMs: row.credited_at?.getTime() ?? null,
    sweptAtMs: row.swept_at?.getTime() ?? null,
  };
}

function ignoredReason(
  found: FoundTransfer,
  vault: { readonly currency: string; readonly status: string },
): IgnoredReason | null {
  if (found.currency === null) return 'other_mint';
  if (found.currency !== vault.currency) return 'other_currency';
  const minimum = DEPOSIT_MINIMUMS[found.currency];
  assert(minimum !== undefined, 'every chain currency has a minimum');
  if (new Decimal(found.amount).lt(minimum)) return 'below_minimum';
  if (vault.status === 'closed') return 'vault_closed';
  return null;
}

/**
 * recordChainDeposit: one transaction.
 * In: a finalized transfer into a vault's deposit address, as the watcher found it.
 * Out: the recorded deposit, and whether this call recorded it (false: it was recorded
 *   before, by this or another watcher, and nothing was written).
 * Writes: chain_deposits; when credited also a posting funding -> vault, vaults.ledger, a
 *   completed `deposit` transaction and the outbox (transaction.completed).
 * Fails: vault_not_found (a watch row names a vault that does not exist: a bug).
 *
 * Exactly once: the vault row is locked first, then the insert is conditional on the
 * transfer's unique key (signature, instruction, inner instruction); a second watcher waits on
 * the lock, then finds the row and writes nothing. A frozen vault is credited (the money has
 * arrived; freezing stops spending), a closed one is not (`vault_closed`: the money stays at
 * the address for an operator to return).
 */
export async function recordChainDeposit(
  ctx: StoreContext,
  tx: SqlQueryable,
  found: FoundTransfer,
): Promise<{ deposit: ChainDepositRecord; recorded: boolean }> {
  assert(/^\d+(\.\d+)?$/.test(found.amount), 'a found amount is a plain decimal');
  assert(Number.isSafeInteger(found.slot) && found.slot >= 0, 'a slot');
  const nowMs = ctx.clock();
  const vault = await lockVaultById(tx, found.vaultId);
  const known = await depositAt(tx, found);
  if (known !== null) return { deposit: known, recorded: false };
  const scope: Scope = { accountId: vault.accountId, mode: vault.mode };
  const reason = ignoredReason(found, vault);
  let transaction: TransactionRecord | null = null;
  if (reason === null) {
    const onChain = { signature: found.signature, sender: found.sender, slot: found.slot };
    const credited = await depositInto(tx, scope, vault, new Decimal(found.amount), nowMs, onChain);
    transaction = credited.deposit;
  }
  const at = new Date(nowMs);
  const { rows } = await tx.query<DepositRow>(
    `INSERT INTO chain_deposits (id, vault_id, account_id, mode, currency, signature,
       instruction_index, inner_index, slot, sender, mint, amount, status, ignored_reason,
       transaction_id, found_at, credited_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17)
     RETURNING ${DEPOSIT_COLUMNS}`,
    [
      newId('deposit', nowMs),
      vault.id,
      vault.accountId,
      vault.mode,
      vault.currency,
      found.signature,
      found.instructionIndex,
      found.innerIndex,
      found.slot,
      found.sender,
      found.mint,
      found.amount,
      reason === null ? 'credited' : 'ignored',
      reason,
      transaction?.id ?? null,
      at,
      reason === null ? at : null,
    ],
  );
  const row = rows[0];
  assert(row !== undefined, 'the deposit INSERT returns its row');
  if (transaction !== null) {
    await appendEvent(tx, scope, 'transaction.completed', presentTransaction(transaction), nowMs);
  }
  return { deposit: depositFromRow(row), recorded: true };
}

async function lockVaultById(tx: SqlQueryable, vaultId: string) {
  const { rows } = await tx.query<VaultRow>(`SELECT ${VAULT_COLUMNS} FROM vaults WHERE id = $1`, [
    vaultId,
  ]);
  const row = rows[0];
  if (row === undefined) throw vaultNotFound(vaultId, 'vaultId');
  return lockVault(tx, { mode: row.mode, accountId: row.account_id }, vaultId);
}

async function depositAt(tx: SqlQueryable, found: FoundTransfer) {
  const { rows } = await tx.query<DepositRow>(
    `SELECT ${DEPOSIT_COLUMNS} FROM chain_deposits
     WHERE signature = $1 AND instruction_index = $2 AND inner_index = $3`,
    [found.signature, found.instructionIndex, found.innerIndex],
  );
  return rows[0] === undefined ? null : depositFromRow(rows[0]);
}

/**
 * listChainDeposits: one read. In: scope, vault id, a page query (contract section 4).
 * Out: the transfers found at the vault's address, newest first, credited, swept and ignored.
 * Fails: vault_not_found, parameter_invalid (limit, startingAfter).
 */
export async function listChainDeposits(
  tx: SqlQueryable,
  scope: Scope,
  vaultId: string,
  query: PageQuery,
): Promise<Page<ChainDepositRecord>> {
  checkLimit(query.limit);
  checkIdCursor('deposit', query.startingAfter);
  await readScoped(tx, { table: 'vaults', columns: 'id' }, scope, vaultId, () =>
    vaultNotFound(vaultId, 'id'),
  );
  const { rows } = await tx.query<DepositRow>(
    `SELECT ${DEPOSIT_COLUMNS} FROM chain_deposits
     WHERE vault_id = $1 AND ($2::text IS NULL OR id < $2) ORDER BY vault_id, id DESC LIMIT $3`,
    [vaultId, query.startingAfter ?? null, query.limit + 1],
  );
  const hasMore = rows.length > query.limit;
  const data = rows.slice(0, query.limit).map(depositFromRow);
  return { data, hasMore, nextCursor: hasMore ? (data.at(-1)?.id ?? null) : null };
}

/**
 * unsweptDeposits: one read. Up to `batchMax` credited deposits whose sweep has not failed,
 * oldest first, with their recorded sweep sends.
 */
export async function unsweptDeposits(
  tx: SqlQueryable,
  batchMax: number,
): Promise<UnsweptDeposit[]> {
  assert(Number.isInteger(batchMax) && batchMax > 0 && batchMax <= SWEEP_BATCH_MAX, 'bounded');
  const { rows } = await tx.query<{
    id: string;
    vault_id: string;
    mode: Mode;
    currency: string;
    amount: string;
    deposit_address: string;
    signed_transaction: string | null;
    signature: string | null;
    last_valid_block_height: string | null;
  }>(
    `SELECT d.id, d.vault_id, d.mode, d.currency, d.amount::text AS amount, v.deposit_address,
            s.signed_transaction, s.signature, s.last_valid_block_height::text AS last_valid_block_height
     FROM chain_deposits d JOIN vaults v ON v.id = d.vault_id
     LEFT JOIN deposit_sweeps s ON s.deposit_id = d.id
     WHERE d.status = 'credited' AND s.failed_reason IS NULL
     ORDER BY d.id LIMIT $1`,
    [batchMax],
  );
  return rows.map((row) => ({
    depositId: row.id,
    vaultId: row.vault_id,
    mode: row.mode,
    currency: row.currency,
    amount: new Decimal(row.amount).toFixed(),
    depositAddress: row.deposit_address,
    send:
      row.signed_transaction === null || row.signature === null
        ? null
        : {
            signedTransaction: row.signed_transaction,
            signature: row.signature,
            lastValidBlockHeight: Number(row.last_valid_block_height),
          },
  }));
}

/**
 * recordSweepSend: one statement. Records (or, after an expired blockhash, replaces,
 * conditionally on `previousSignature`) a sweep's signed transaction before it is sent. Out:
 * whether it was recorded (false: another sweeper signed first, or the deposit is swept).
 * A sweep is re-signed at most SIGNINGS_MAX times, as a transfer is (chain-sends.ts).
 */
export async function recordSweepSend(
  ctx: StoreContext,
  tx: SqlQueryable,
  depositId: string,
  send: SignedSend,
  previousSignature: string | null,
): Promise<boolean> {
  const at = new Date(ctx.clock());
  return recordSignedSend(tx, SWEEP_SENDS, depositId, send, previousSignature, at);
}

const SWEEP_SENDS: SendTable = {
  table: 'deposit_sweeps',
  key: 'deposit_id',
  needs: "chain_deposits WHERE id = $1 AND status = 'credited'",
  replaceWhen: 'AND confirmed_at IS NULL',
};

/**
 * completeSweep: one transaction. In: the deposit and the signature that landed.
 * Writes: chain_deposits (status swept, swept_at), deposit_sweeps.confirmed_at. No ledger
 *   change: the vault was credited when the deposit was found; the sweep moves the money
 *   between two addresses the service holds. Out: whether this call marked it.
 */
export async function completeSweep(
  ctx: StoreContext,
  tx: SqlQueryable,
  depositId: string,
  signature: string,
): Promise<boolean> {
  const at = new Date(ctx.clock());
  const { rowCount } = await tx.query(
    `UPDATE deposit_sweeps SET confirmed_at = $3
     WHERE deposit_id = $1 AND signature = $2 AND confirmed_at IS NULL`,
    [depositId, signature, at],
  );
  if (rowCount !== 1) return false;
  const marked = await tx.query(
    `UPDATE chain_deposits SET status = 'swept', swept_at = $2 WHERE id = $1 AND status = 'credited'`,
    [depositId, at],
  );
  assert(marked.rowCount === 1, 'a sweep confirms a credited deposit');
  return true;
}

/** failSweep: one statement. A sweep that failed on chain stops being retried; the deposit
 *  stays credited at its address, visible to the reconciliation and to an operator. */
export async function failSweep(
  tx: SqlQueryable,
  depositId: string,
  reason: string,
): Promise<void> {
  await tx.query(
    `UPDATE deposit_sweeps SET failed_reason = $2 WHERE deposit_id = $1 AND confirmed_at IS NULL`,
    [depositId, reason.slice(0, 200)],
  );
}

/**
 * depositKeySeed: one read (or the seed's creation). The 32-byte seed of a vault's deposit
 * keypair, for the sweeper to sign as the address's owner. Secret: never logged.
 */
export async function depositKeySeed(
  ctx: StoreContext,
  tx: SqlQueryable,
  vaultId: string,
): Promise<Buffer> {
  return vaultKeySeed(await depositSeed(ctx, tx), vaultId);
}
