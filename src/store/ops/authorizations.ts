import {
  amountIn,
  assert,
  assetPriceOf,
  convertAtPrice,
  CURRENCIES,
  NO_PRICING,
  formatAmount,
  presentTransaction,
  rateRecordOf,
  Decimal,
  SpendgateError,
  ZERO,
  type AmountInput,
  type FiatAmount,
  type RateRecord,
  type Scope,
  type TransactionRecord,
  type VaultRecord,
} from '../../core/index.js';
import { changeVaultTotals, type StoreContext } from '../context.js';
import { post, systemAccountId, transferEntries } from '../ledger.js';
import { appendEvent, appendEvents } from '../outbox.js';
import {
  TRANSACTION_COLUMNS,
  transactionFromRow,
  vaultFromRow,
  type TransactionRow,
  type VaultRow,
} from '../rows.js';
import { releaseBillingSpend, releaseKeysAndCardSpend } from '../card-spend.js';
import {
  BILLING_READ,
  addPostedSpend,
  postedSpendTarget,
  recordMessage,
  type SpendCountKeys,
} from '../lifecycle.js';
import { changeSpend } from '../spend.js';
import type { SqlQueryable } from '../sql/client.js';
import { inPipeline } from '../sql/pipeline.js';
import { inScope } from '../sql/scoped-row.js';
import { lockedVaultSql, skipLocked, vaultKey } from '../vault-lock-sql.js';
import { oneRow } from '../sql/one-row.js';

/*
 * What happens to a card authorization after its decision (authorize/): captures
 * (which always post, contract v1.2 section 16), reverse, and expiry of holds that were never
 * captured. Force captures and refunds, which have no authorization: ops/clearing.ts.
 */

/** A locked authorization, its vault, and the keys its spend is counted under. */
export interface LockedAuthorization {
  readonly transaction: TransactionRecord;
  readonly vault: VaultRecord;
  /** Its spend_day and mcc as stored (addPostedSpend's `counted`): null before an approval. */
  readonly counted: SpendCountKeys | null;
}

/**
 * Locks an authorization and its vault in one round trip: the vault first, found by the
 * transaction's id in the locking statement itself, then the transaction, both taken by the
 * server in the order sent (the order authorize uses, so the two never deadlock).
 * The transaction is read by its primary key alone and its scope checked here
 * (sql/scoped-row.ts): the vault is locked only when it is the scope's, and another scope's
 * authorization, whose id is not guessable, is locked until the refusal ends the transaction
 * (a shared one's too). In a shared transaction (sql/shared-transaction.ts) a row another
 * transaction holds is skipped and the message leaves the batch; the vault is claimed for it.
 * Fails: transaction_not_found (none, not a card authorization, or another scope's).
 */
export async function lockAuthorization(
  tx: SqlQueryable,
  scope: Scope,
  transactionId: string,
): Promise<LockedAuthorization> {
  const [{ rows: vaults }, { rows }] = await inPipeline(tx, () => [
    tx.query<VaultRow>(
      lockedVaultSql(
        tx,
        `SELECT vault_id FROM transactions WHERE id = $1 AND type = 'card_authorization'`,
      ),
      [transactionId, scope.accountId, scope.mode],
    ),
    tx.query<TransactionRow>(
      `SELECT ${TRANSACTION_COLUMNS} FROM transactions WHERE id = $1 FOR UPDATE${skipLocked(tx)}`,
      [transactionId],
    ),
  ]);
  const vaultRow = vaults[0];
  const row = rows[0];
  if (row !== undefined && !inScope(row, scope)) throw authorizationNotFound(transactionId);
  // In a shared transaction, nothing may be a row another transaction has locked: run alone.
  if (tx.batch !== undefined && (vaultRow === undefined || row === undefined)) tx.batch.leave();
  if (vaultRow === undefined || row === undefined) throw authorizationNotFound(transactionId);
  tx.batch?.claim(vaultKey(vaultRow.id));
  const transaction = transactionFromRow(row);
  assert(transaction.vaultId === vaultRow.id, 'an authorization stays in its vault');
  const counted = row.spend_day === null ? null : { day: row.spend_day, mcc: row.mcc };
  return { transaction, vault: vaultFromRow(vaultRow), counted };
}

const authorizationNotFound = (transactionId: string) =>
  new SpendgateError(
    'transaction_not_found',
    `No authorization ${transactionId.slice(0, 64)} exists.`,
    'id',
  );

async function lockPendingAuthorization(
  tx: SqlQueryable,
  scope: Scope,
  transactionId: string,
): Promise<TransactionRecord> {
  const { transaction } = await lockAuthorization(tx, scope, transactionId);
  // Captured, reversed, expired or declined: a state conflict, not a malformed request
  // (contract section 3, amendments).
  if (transaction.status !== 'pending') {
    throw new SpendgateError(
      'transaction_not_pending',
      `Authorization ${transaction.id} is ${transaction.status}; only a pending authorization can be reversed.`,
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
 * What a capture posts: the amount asked (any, above the hold too), or without one the whole
 * remaining hold. Refused only for what is malformed: a capture with nothing to name (no
 * amount and nothing held), an amount in another currency's form, or a transaction whose
 * money cannot post to its vault (its currency is not the vault's: a currency_mismatch
 * decline; a closed vault, which holds nothing and never will again).
 */
function captureAmount(
  held: TransactionRecord,
  vault: VaultRecord,
  requested: AmountInput | null,
): Decimal {
  if (held.currency !== vault.currency) {
    throw new SpendgateError(
      'currency_mismatch',
      `Authorization ${held.id} is in ${held.currency}; its vault holds ${vault.currency}.`,
      'id',
    );
  }
  if (vault.status === 'closed') {
    throw new SpendgateError('vault_closed', `Vault ${vault.id} is closed.`, 'id');
  }
  const open = held.status === 'pending';
  if (requested === null && !(open && held.holdRemaining.gt(0))) {
    throw new SpendgateError(
      'invalid_amount',
      `Authorization ${held.id} holds nothing; give the amount to capture.`,
      'amount',
    );
  }
  return requested === null
    ? held.holdRemaining
    : amountIn(requested, held.currency, { param: 'amount', allowZero: false });
}

/**
 * What a capture of an authorization converted at a price posts (contract v1.2, section 16:
 * the capture converts at its own time's price), or null for one that was not converted. The
 * network captures in the billing currency it asked in: the amount (without one, the billing
 * amount asked, while nothing is captured yet) is converted at the price in memory now,
 * rounded up. What the hold's buffer over-held is then released by the capture as any
 * unused hold is; a shortfall posts beyond the hold (mandated: it may overdraw).
 * The capture's own price is recorded on its timeline message beside what it captured in the
 * billing currency (`converted`): the transaction's `rate` stays the authorization's.
 * Fails: service_unavailable when no usable price is in memory (the network tries again).
 */
function pricedCapture(
  ctx: StoreContext,
  scope: Scope,
  held: TransactionRecord,
  requested: AmountInput | null,
  nowMs: number,
): { amount: Decimal; converted: { billing: FiatAmount; rate: RateRecord } } | null {
  const billing = held.lifecycle?.billing ?? null;
  if (held.lifecycle?.rate == null || billing === null || billing.currency === held.currency) {
    return null;
  }
  // Later captures of a split shipment, with no amount: the remaining hold, as it is.
  if (requested === null && held.capturedAmount.gt(0)) return null;
  const asset = CURRENCIES[held.currency];
  // Read to ISO 4217's finest minor units (3): the store keeps no table of them; the edge
  // read the authorization's own billing amount to its currency's.
  const billed =
    requested === null
      ? billing.amount
      : amountIn(requested, BILLING_READ, { param: 'amount', allowZero: false });
  const pricing = ctx.pricing ?? NO_PRICING;
  const price = assetPriceOf(
    pricing.book,
    scope.mode,
    asset.code,
    billing.currency,
    nowMs,
    pricing.bounds,
  );
  if (price === null) {
    throw new SpendgateError(
      'service_unavailable',
      `No usable price converts ${billing.currency} into ${asset.code} now: send the capture again later.`,
    );
  }
  return {
    amount: convertAtPrice(billed, price, asset.scale),
    converted: {
      billing: { amount: billed, currency: billing.currency },
      rate: rateRecordOf(price),
    },
  };
}

/**
 * capture: one transaction (contract v1.2, section 16: captures always post).
 * In: scope, authorization id, amount (null: the whole remaining hold), final (true: release
 *   what is left of the hold; false: keep it open for later captures).
 * Out: the transaction: completed, or still pending while a non-final capture leaves a hold.
 * Writes: a posting vault -> card_settlement of the amount, whatever the balance (a mandated
 *   posting: it may overdraw the vault, changeVaultTotals); vaults.ledger -= amount and
 *   vaults.pending -= the hold released (the amount, or all of it when final); the spend
 *   counters by what the transaction now counts (captured plus held: down for a release,
 *   up for a capture above the hold or a late one); transactions (a late capture of a reversed,
 *   expired or declined authorization completes it); transaction_messages (capture); outbox
 *   (transaction.captured, transaction.completed when it completes, vault.overdrawn).
 * Fails: transaction_not_found, invalid_amount (malformed, or none with nothing held),
 *   currency_mismatch (an authorization not in its vault's currency), vault_closed,
 *   service_unavailable (converted at a price, and no usable price now: pricedCapture).
 */
export async function capture(
  ctx: StoreContext,
  tx: SqlQueryable,
  scope: Scope,
  transactionId: string,
  requested: AmountInput | null,
  final = true,
): Promise<TransactionRecord> {
  const nowMs = ctx.clock();
  const { transaction: held, vault, counted } = await lockAuthorization(tx, scope, transactionId);
  const inAsset = captureAmount(held, vault, requested);
  const priced = pricedCapture(ctx, scope, held, requested, nowMs);
  const amount = priced?.amount ?? inAsset;
  const hold = held.status === 'pending' ? held.holdRemaining : ZERO;
  const holdAfter = final ? ZERO : Decimal.max(hold.minus(amount), ZERO);
  const completes = holdAfter.isZero();
  // Every write in one round trip but the timeline's and the events', which present the row
  // the UPDATE returns. The spend day is set (addPostedSpend) before the UPDATE reads it back.
  const [, , , { rows }] = await inPipeline(tx, () => [
    post(tx, {
      mode: scope.mode,
      currency: held.currency,
      transactionId: held.id,
      entries: transferEntries(
        held.vaultId,
        systemAccountId(scope.mode, held.currency, 'card_settlement'),
        amount,
      ),
      nowMs,
    }),
    changeVaultTotals(
      tx,
      held.vaultId,
      { ledger: amount.negated(), pending: holdAfter.minus(hold) },
      held.id,
      nowMs,
      { mandated: true },
    ),
    countCapturedSpend(
      tx,
      { held, counted },
      held.capturedAmount.plus(amount).plus(holdAfter),
      nowMs,
    ),
    updateCaptured(tx, held.id, { amount, holdAfter, nowMs }),
  ]);
  const captured = transactionFromRow(oneRow(rows, 'the capture UPDATE'));
  const presented = presentTransaction(captured);
  await inPipeline(tx, () => [
    recordMessage(tx, {
      transactionId: held.id,
      kind: 'capture',
      amount,
      holdAfter,
      networkTransactionId: null,
      nowMs,
      ...(priced === null ? {} : { converted: priced.converted }),
    }),
    appendEvents(
      tx,
      scope,
      completes && held.status !== 'completed'
        ? ['transaction.captured', 'transaction.completed']
        : ['transaction.captured'],
      presented,
      nowMs,
    ),
  ]);
  return captured;
}

/** The capture's own change to its authorization: what it captured, and what it still holds. */
function updateCaptured(
  tx: SqlQueryable,
  transactionId: string,
  change: { amount: Decimal; holdAfter: Decimal; nowMs: number },
) {
  const completes = change.holdAfter.isZero();
  return tx.query<TransactionRow>(
    `UPDATE transactions SET status = $2, captured_amount = captured_amount + $3::numeric,
       hold_remaining = $4, failure_reason = CASE WHEN $5 THEN NULL ELSE failure_reason END,
       completed_at = CASE WHEN $5 THEN coalesce(completed_at, $6) END, updated_at = $6
     WHERE id = $1 RETURNING ${TRANSACTION_COLUMNS}`,
    [
      transactionId,
      completes ? 'completed' : 'pending',
      change.amount.toFixed(),
      change.holdAfter.toFixed(),
      completes,
      new Date(change.nowMs),
    ],
  );
}

/**
 * Moves the spend counters to what a captured authorization counts now (`countedAfter`:
 * captured plus still held). What counts as spend: a card authorization's held and captured
 * amounts while it is pending or completed, with one count; a capture above the hold, or of an
 * authorization that was released or declined, is spend too (the money left the vault), and
 * a release of what was held but not captured gives it back.
 */
async function countCapturedSpend(
  tx: SqlQueryable,
  { held, counted: keys }: { held: TransactionRecord; counted: SpendCountKeys | null },
  countedAfter: Decimal,
  nowMs: number,
): Promise<void> {
  const counted = held.status === 'pending' || held.status === 'completed';
  const countedBefore = counted ? held.capturedAmount.plus(held.holdRemaining) : ZERO;
  const delta = countedAfter.minus(countedBefore);
  if (delta.isNegative()) {
    assert(counted, 'only a counted authorization gives spend back');
    await releaseSpend(tx, held, delta.negated(), 0);
    return;
  }
  // With its spend keys read under the lock, nothing is read again to count it.
  await addPostedSpend(tx, postedSpendTarget(held, keys), delta, counted ? 0 : 1, nowMs);
}

/**
 * reverse (and expiry): one transaction (contract section 9).
 * In: scope, authorization id, amount (null: the whole remaining hold), the failure reason.
 * Out: the transaction: still pending while a hold remains; else failed, or completed when
 *   earlier non-final captures posted part of it.
 * Writes: vaults.pending -= amount (which may restore an overdrawn vault); spend_counters -=
 *   amount (and the count, when the whole authorization fails), the card's own counters alike
 *   when it has a policy; transactions; transaction_messages (reversal, expiry); outbox
 *   (transaction.failed or transaction.completed when nothing remains held; vault.restored).
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
  const held = await lockPendingAuthorization(tx, scope, transactionId);
  const amount = amountWithinHold(held, requested);
  const remaining = held.holdRemaining.minus(amount);
  const ends = remaining.isZero();
  // Part of it captured already (final: false): what was captured stands, so it completes.
  const status = !ends ? 'pending' : held.capturedAmount.gt(0) ? 'completed' : 'failed';
  await changeVaultTotals(
    tx,
    held.vaultId,
    { ledger: ZERO, pending: amount.negated() },
    held.id,
    nowMs,
  );
  await releaseSpend(tx, held, amount, status === 'failed' ? 1 : 0);
  if (status === 'failed') await releaseBillingSpend(tx, held.id);
  const { rows } = await tx.query<TransactionRow>(
    `UPDATE transactions SET hold_remaining = $2, status = $3, failure_reason = $4, updated_at = $5,
       completed_at = CASE WHEN $3 = 'completed' THEN $5 ELSE completed_at END
     WHERE id = $1 RETURNING ${TRANSACTION_COLUMNS}`,
    [held.id, remaining.toFixed(), status, status === 'failed' ? reason : null, new Date(nowMs)],
  );
  const result = transactionFromRow(oneRow(rows, 'the reversal UPDATE'));
  await recordMessage(tx, {
    transactionId: held.id,
    kind: reason === 'expired' ? 'expiry' : 'reversal',
    amount,
    holdAfter: remaining,
    networkTransactionId: null,
    nowMs,
  });
  if (status === 'failed')
    await appendEvent(tx, scope, 'transaction.failed', presentTransaction(result), nowMs);
  if (status === 'completed')
    await appendEvent(tx, scope, 'transaction.completed', presentTransaction(result), nowMs);
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
 * Lists card holds past their expiry, at most `batchMax`, soonest due first: the work of one
 * expiry round. A hold expires at its `expires_at` (set at approval by merchant category,
 * core/holds/hold-expiry.ts); a hold written without one (before migration 0019) at its
 * created_at + `ageMsMax`, the default hold life. Each is then expired in a transaction of its
 * own (`reverse`, reason `expired`), so one failure cannot hold the others back. Each branch
 * reads an index of open holds in due order (transactions_hold_expiry, transactions_open_holds).
 */
export async function listExpiredHolds(
  ctx: StoreContext,
  tx: SqlQueryable,
  ageMsMax: number,
  batchMax: number,
): Promise<{ id: string; scope: Scope }[]> {
  assert(ageMsMax > 0 && batchMax > 0 && batchMax <= 10_000, 'positive, bounded expiry parameters');
  const nowMs = ctx.clock();
  const { rows } = await tx.query<{ id: string; account_id: string; mode: Scope['mode'] }>(
    `SELECT id, account_id, mode FROM (
       (SELECT id, account_id, mode, expires_at AS due FROM transactions
        WHERE hold_remaining > 0 AND type = 'card_authorization' AND expires_at <= $1
        ORDER BY expires_at LIMIT $3)
       UNION ALL
       (SELECT id, account_id, mode, created_at AS due FROM transactions
        WHERE hold_remaining > 0 AND type = 'card_authorization' AND expires_at IS NULL
          AND created_at < $2
        ORDER BY created_at LIMIT $3)
     ) AS due ORDER BY due LIMIT $3`,
    [new Date(nowMs), new Date(nowMs - ageMsMax), batchMax],
  );
  return rows.map((row) => ({ id: row.id, scope: { accountId: row.account_id, mode: row.mode } }));
}
