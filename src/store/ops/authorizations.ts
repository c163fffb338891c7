import {
  amountIn,
  assert,
  formatAmount,
  presentTransaction,
  SpendgateError,
  ZERO,
  type AmountInput,
  type Decimal,
  type Scope,
  type TransactionRecord,
} from '../../core/index.js';
import { changeVaultTotals, lockVault, type StoreContext } from '../context.js';
import { post, systemAccountId, transferEntries } from '../ledger.js';
import { appendEvent } from '../outbox.js';
import { TRANSACTION_COLUMNS, transactionFromRow, type TransactionRow } from '../rows.js';
import { releaseKeysAndCardSpend } from '../card-spend.js';
import { changeSpend } from '../spend.js';
import type { SqlQueryable } from '../sql/client.js';
import { oneRow } from '../sql/one-row.js';

/*
 * What happens to a card authorization after its decision (decide-and-record.ts): capture,
 * reverse, and expiry of holds that were never captured.
 */

async function lockAuthorization(
  tx: SqlQueryable,
  scope: Scope,
  transactionId: string,
): Promise<TransactionRecord> {
  // Vault first, then the transaction: the order authorize uses, so the two never deadlock.
  const { rows: found } = await tx.query<{ vault_id: string }>(
    `SELECT vault_id FROM transactions WHERE id = $1 AND account_id = $2 AND mode = $3 AND type = 'card_authorization'`,
    [transactionId, scope.accountId, scope.mode],
  );
  const vaultId = found[0]?.vault_id;
  if (vaultId === undefined) {
    throw new SpendgateError(
      'transaction_not_found',
      `No authorization ${transactionId.slice(0, 64)} exists.`,
      'id',
    );
  }
  await lockVault(tx, { mode: scope.mode, accountId: null }, vaultId);
  const { rows } = await tx.query<TransactionRow>(
    `SELECT ${TRANSACTION_COLUMNS} FROM transactions WHERE id = $1 FOR UPDATE`,
    [transactionId],
  );
  const transaction = transactionFromRow(oneRow(rows, 'the locked transaction SELECT'));
  // Captured, reversed, expired or declined: a state conflict, not a malformed request
  // (contract section 3, amendments).
  if (transaction.status !== 'pending') {
    throw new SpendgateError(
      'transaction_not_pending',
      `Authorization ${transaction.id} is ${transaction.status}; only a pending authorization can be captured or reversed.`,
      'id',
    );
  }
  return transaction;
}

function amountWithinHold(transaction: TransactionRecord, requested: AmountInput | null): Decimal {
  // Read here, against the held currency: the caller need not read the authorization first.
  const amount =
    requested === null
      ? transaction.holdRemaining
      : amountIn(requested, transaction.currency, { param: 'amount', allowZero: false });
  if (amount.gt(transaction.holdRemaining)) {
    throw new SpendgateError(
      'invalid_amount',
      `amount exceeds the remaining hold of ${formatAmount(transaction.holdRemaining, transaction.currency)} ${transaction.currency}.`,
      'amount',
    );
  }
  if (amount.isZero())
    throw new SpendgateError('invalid_amount', 'amount must be greater than 0.', 'amount');
  return amount;
}

/**
 * capture: one transaction (contract section 9).
 * In: scope, authorization id, amount (null: the whole remaining hold).
 * Out: the completed transaction.
 * Writes: a posting vault -> card_settlement of the amount; vaults.ledger -= amount and
 *   vaults.pending -= the whole remaining hold (a partial capture releases the rest);
 *   spend_counters -= the released part (and the card's own counters, when it has a policy);
 *   transactions; outbox (transaction.completed).
 * Fails: transaction_not_found, transaction_not_pending, invalid_amount (above the
 *   remaining hold, or zero).
 */
export async function capture(
  ctx: StoreContext,
  tx: SqlQueryable,
  scope: Scope,
  transactionId: string,
  requested: AmountInput | null,
): Promise<TransactionRecord> {
  const nowMs = ctx.clock();
  const held = await lockAuthorization(tx, scope, transactionId);
  const amount = amountWithinHold(held, requested);
  const released = held.holdRemaining.minus(amount);
  await post(tx, {
    mode: scope.mode,
    currency: held.currency,
    transactionId: held.id,
    entries: transferEntries(
      held.vaultId,
      systemAccountId(scope.mode, held.currency, 'card_settlement'),
      amount,
    ),
    nowMs,
  });
  await changeVaultTotals(
    tx,
    held.vaultId,
    { ledger: amount.negated(), pending: held.holdRemaining.negated() },
    held.id,
    nowMs,
  );
  if (released.gt(0)) await releaseSpend(tx, held, released, 0);
  const { rows } = await tx.query<TransactionRow>(
    `UPDATE transactions SET status = 'completed', captured_amount = $2, hold_remaining = 0, completed_at = $3, updated_at = $3
     WHERE id = $1 RETURNING ${TRANSACTION_COLUMNS}`,
    [held.id, amount.toFixed(), new Date(nowMs)],
  );
  const completed = transactionFromRow(oneRow(rows, 'the capture UPDATE'));
  await appendEvent(tx, scope, 'transaction.completed', presentTransaction(completed), nowMs);
  return completed;
}

/**
 * reverse (and expiry): one transaction (contract section 9).
 * In: scope, authorization id, amount (null: the whole remaining hold), the failure reason.
 * Out: the transaction: failed when nothing remains held, else still pending, smaller.
 * Writes: vaults.pending -= amount; spend_counters -= amount (and the count, when the whole
 *   authorization fails), the card's own counters alike when it has a policy; transactions;
 *   outbox (transaction.failed when it fails).
 * Fails: transaction_not_found, transaction_not_pending, invalid_amount.
 */
export async function reverse(
  ctx: StoreContext,
  tx: SqlQueryable,
  scope: Scope,
  transactionId: string,
  requested: AmountInput | null,
  reason: 'reversed' | 'expired' | 'stand_in' = 'reversed',
): Promise<TransactionRecord> {
  const nowMs = ctx.clock();
  const held = await lockAuthorization(tx, scope, transactionId);
  const amount = amountWithinHold(held, requested);
  const remaining = held.holdRemaining.minus(amount);
  const fails = remaining.isZero();
  await changeVaultTotals(
    tx,
    held.vaultId,
    { ledger: ZERO, pending: amount.negated() },
    held.id,
    nowMs,
  );
  await releaseSpend(tx, held, amount, fails ? 1 : 0);
  const { rows } = await tx.query<TransactionRow>(
    `UPDATE transactions SET hold_remaining = $2, status = $3, failure_reason = $4, updated_at = $5
     WHERE id = $1 RETURNING ${TRANSACTION_COLUMNS}`,
    [
      held.id,
      remaining.toFixed(),
      fails ? 'failed' : 'pending',
      fails ? reason : null,
      new Date(nowMs),
    ],
  );
  const result = transactionFromRow(oneRow(rows, 'the reversal UPDATE'));
  if (fails) await appendEvent(tx, scope, 'transaction.failed', presentTransaction(result), nowMs);
  return result;
}

async function releaseSpend(
  tx: SqlQueryable,
  held: TransactionRecord,
  amount: Decimal,
  count: number,
): Promise<void> {
  // The card's own counters (kept while it has a policy) go down in the statement that reads
  // the keys: no round trip more than before card policies.
  const { day, mcc } = await releaseKeysAndCardSpend(tx, held.id, amount.negated(), -count);
  await changeSpend(tx, {
    vaultId: held.vaultId,
    day,
    mcc,
    amountDelta: amount.negated(),
    countDelta: -count,
  });
}

/**
 * Lists card holds older than `ageMsMax`, at most `batchMax`, oldest first: the work of one
 * expiry round. Each is then expired in a transaction of its own (`reverse`, reason
 * `expired`), so one failure cannot hold the others back.
 */
export async function listExpiredHolds(
  ctx: StoreContext,
  tx: SqlQueryable,
  ageMsMax: number,
  batchMax: number,
): Promise<{ id: string; scope: Scope }[]> {
  assert(ageMsMax > 0 && batchMax > 0 && batchMax <= 10_000, 'positive, bounded expiry parameters');
  const { rows } = await tx.query<{ id: string; account_id: string; mode: Scope['mode'] }>(
    `SELECT id, account_id, mode FROM transactions
     WHERE hold_remaining > 0 AND type = 'card_authorization' AND created_at < $1
     ORDER BY created_at LIMIT $2`,
    [new Date(ctx.clock() - ageMsMax), batchMax],
  );
  return rows.map((row) => ({ id: row.id, scope: { accountId: row.account_id, mode: row.mode } }));
}
