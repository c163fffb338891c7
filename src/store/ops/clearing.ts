import {
  amountIn,
  assetPriceOf,
  CURRENCIES,
  Decimal,
  isAtPar,
  NO_PRICING,
  rateRecordOf,
  presentTransaction,
  SpendgateError,
  ZERO,
  type RateRecord,
  type PolicyWouldDecline,
  type Scope,
  type TransactionRecord,
  type VaultRecord,
} from '../../core/index.js';
import { newId } from '../../ids.js';
import { changeVaultTotals, type StoreContext } from '../context.js';
import { BILLING_READ, addPostedSpend, recordMessage } from '../lifecycle.js';
import { post, systemAccountId, transferEntries } from '../ledger.js';
import { appendEvent, appendEvents } from '../outbox.js';
import { lockCardVault, type LockedCardVault } from '../card-vault-lock.js';
import { TRANSACTION_COLUMNS, transactionFromRow, type TransactionRow } from '../rows.js';
import type { SqlQueryable } from '../sql/client.js';
import { inPipeline } from '../sql/pipeline.js';
import { inScope } from '../sql/scoped-row.js';
import { spendDayOf } from '../spend.js';
import { decideAsAuthorize } from './policies.js';
import type { ClearingInput, ClearingOutcome, RefundInput } from '../port/authorizations.js';

/*
 * The network's clearing messages that have no authorization to capture (contract v1.2,
 * section 16): force captures (offline terminals, a stand-in never advised) and refunds. Money
 * the network has already moved is never refused: both post whatever the balance, the card's
 * state or the policy. Each is idempotent by its own networkTransactionId, per kind
 * (transactions_message_key, migration 0019): a repeat answers what was recorded.
 */

/**
 * A clearing message's card: its vault locked; `read`: the message of this kind and network id
 * recorded before, if any.
 */
type LockedClearing = LockedCardVault<TransactionRecord | null>;

/**
 * The card's vault locked, and the message recorded before under this networkTransactionId,
 * in one round trip (card-vault-lock.ts).
 * Fails: card_not_found (none, or another scope's), vault_closed.
 */
async function lockClearing(
  tx: SqlQueryable,
  scope: Scope,
  input: ClearingInput,
  type: 'force_capture' | 'refund',
): Promise<LockedClearing> {
  const locked = await lockCardVault(tx, scope, input.cardId, () =>
    recordedMessage(tx, scope, type, input.networkTransactionId),
  );
  const { vault } = locked;
  // A closed vault holds nothing and never will again (vaults_closed_empty): nothing posts.
  if (vault.status === 'closed') {
    throw new SpendgateError('vault_closed', `Vault ${vault.id} is closed.`, 'cardId');
  }
  return locked;
}

/** A clearing message's amount: in the asset, as billed, and the price between them. */
interface ClearingAmount {
  readonly amount: Decimal;
  readonly billed: Decimal;
  readonly rate: RateRecord | null;
}

/**
 * The amount in the vault's asset: the request is in the asset, or in a billing currency at
 * par with it (USD for USDC, 1:1), or in the card's billing currency converted at the price in
 * memory now (contract v1.2, section 16), rounded in the issuer's favour: a force capture up
 * (never collect less), a refund down (never credit more). Any other currency is
 * `currency_mismatch`; no usable price is `service_unavailable` (the network sends it again):
 * a message that cannot be declined is never posted at a guessed price.
 */
function clearingAmount(
  ctx: StoreContext,
  scope: Scope,
  card: { vault: VaultRecord; billingCurrency: string },
  input: ClearingInput,
  rounding: typeof Decimal.ROUND_UP | typeof Decimal.ROUND_DOWN,
): ClearingAmount {
  const { vault } = card;
  if (input.currency === vault.currency || isAtPar(input.currency, vault.currency)) {
    const amount = amountIn(input.amount, vault.currency, { param: 'amount', allowZero: false });
    return { amount, billed: amount, rate: null };
  }
  if (input.currency !== card.billingCurrency) {
    throw new SpendgateError(
      'currency_mismatch',
      `currency ${input.currency.slice(0, 16)} is neither the vault's ${vault.currency} nor the card's billing currency.`,
      'currency',
    );
  }
  const billed = amountIn(input.amount, BILLING_READ, { param: 'amount', allowZero: false });
  const pricing = ctx.pricing ?? NO_PRICING;
  const at = ctx.clock();
  const price = assetPriceOf(
    pricing.book,
    scope.mode,
    vault.currency,
    input.currency,
    at,
    pricing.bounds,
  );
  if (price === null) {
    throw new SpendgateError(
      'service_unavailable',
      `No usable price converts ${input.currency} into ${vault.currency} now: send it again later.`,
    );
  }
  const exact =
    price.usdPerAsset === undefined || price.usdPerBilling === undefined
      ? billed.dividedBy(price.value)
      : billed.times(price.usdPerBilling).dividedBy(price.usdPerAsset);
  const amount = exact.toDecimalPlaces(CURRENCIES[vault.currency].scale, rounding);
  if (amount.isZero()) {
    throw new SpendgateError(
      'invalid_amount',
      "amount is worth less than the asset's smallest unit.",
      'amount',
    );
  }
  return { amount, billed, rate: rateRecordOf(price) };
}

/** The recorded message of this kind and networkTransactionId, if any. */
async function recordedMessage(
  tx: SqlQueryable,
  scope: Scope,
  type: 'force_capture' | 'refund',
  networkTransactionId: string,
): Promise<TransactionRecord | null> {
  const { rows } = await tx.query<TransactionRow>(
    `SELECT ${TRANSACTION_COLUMNS} FROM transactions
     WHERE account_id = $1 AND mode = $2 AND type = $3 AND message_network_transaction_id = $4`,
    [scope.accountId, scope.mode, type, networkTransactionId],
  );
  const row = rows[0];
  return row === undefined ? null : transactionFromRow(row);
}

interface NewClearingRow {
  readonly type: 'force_capture' | 'refund';
  readonly vault: VaultRecord;
  readonly input: ClearingInput;
  readonly amount: Decimal;
  /** What the network billed, in its currency (the amount itself at par or in the asset). */
  readonly billed: Decimal;
  readonly rate: RateRecord | null;
  readonly policyWouldDecline: PolicyWouldDecline | null;
  readonly originalTransactionId: string | null;
  readonly nowMs: number;
}

/**
 * Inserts the message's completed transaction, or nothing when its key is taken (a concurrent
 * repeat that committed first: the insert waits for it, then returns null).
 */
async function insertClearingRow(
  tx: SqlQueryable,
  scope: Scope,
  row: NewClearingRow,
): Promise<TransactionRecord | null> {
  const { input, amount, nowMs } = row;
  const at = new Date(nowMs);
  const { rows } = await tx.query<TransactionRow>(
    `INSERT INTO transactions (id, account_id, mode, vault_id, type, status, currency, amount,
       captured_amount, card_id, merchant, mcc, message_network_transaction_id, billing_amount,
       billing_currency, policy_would_decline, original_transaction_id, spend_day, created_at,
       updated_at, completed_at, rate)
     VALUES ($1, $2, $3, $4, $5, 'completed', $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16,
       $17, $18, $18, $18, $19::jsonb)
     ON CONFLICT (account_id, mode, type, message_network_transaction_id)
       WHERE message_network_transaction_id IS NOT NULL DO NOTHING
     RETURNING ${TRANSACTION_COLUMNS}`,
    [
      newId('transaction', nowMs),
      scope.accountId,
      scope.mode,
      row.vault.id,
      row.type,
      row.vault.currency,
      amount.toFixed(),
      row.type === 'force_capture' ? amount.toFixed() : '0',
      input.cardId,
      JSON.stringify(input.merchant),
      input.merchant.mcc,
      input.networkTransactionId,
      // What was billed, as asked (at par, the amount itself: contract section 16).
      row.billed.toFixed(),
      input.currency,
      row.policyWouldDecline === null ? null : JSON.stringify(row.policyWouldDecline),
      row.originalTransactionId,
      row.type === 'force_capture' ? spendDayOf(nowMs) : null,
      at,
      row.rate === null ? null : JSON.stringify(row.rate),
    ],
  );
  const inserted = rows[0];
  return inserted === undefined ? null : transactionFromRow(inserted);
}

/** What authorize would have answered: the decline it would have given, or null. */
async function wouldDecline(
  ctx: StoreContext,
  tx: SqlQueryable,
  card: LockedClearing,
  input: ClearingInput,
  amount: Decimal,
): Promise<PolicyWouldDecline | null> {
  const { vault } = card;
  const decision = await decideAsAuthorize(ctx, tx, {
    vault,
    cardStatus: card.cardStatus,
    draft: null,
    request: { cardId: input.cardId, amount, currency: vault.currency, merchant: input.merchant },
    nowMs: ctx.clock(),
  });
  if (decision.approved || decision.declineCode === null) return null;
  return { declineCode: decision.declineCode, declineReason: decision.declineReason };
}

/**
 * forceCapture: one transaction (POST /v1/captures).
 * In: scope, the card, amount and currency, merchant, networkTransactionId.
 * Out: the completed force_capture transaction (its policyWouldDecline: what authorize would
 *   have said, against the balance before it), or the one recorded under that id (replayed).
 * Writes: transactions (the force capture); a posting vault -> card_settlement of the amount,
 *   whatever the balance (mandated: it may overdraw the vault); vaults.ledger; the spend
 *   counters (a force capture is card spend, one count); transaction_messages (capture);
 *   outbox (transaction.captured, transaction.completed, vault.overdrawn).
 * Fails: card_not_found, vault_closed, currency_mismatch, invalid_amount.
 */
export async function forceCapture(
  ctx: StoreContext,
  tx: SqlQueryable,
  scope: Scope,
  input: ClearingInput,
): Promise<ClearingOutcome> {
  const nowMs = ctx.clock();
  const type = 'force_capture';
  const card = await lockClearing(tx, scope, input, type);
  const { vault, read: earlier } = card;
  if (earlier !== null) return { transaction: earlier, replayed: true };
  const { amount, billed, rate } = clearingAmount(ctx, scope, card, input, Decimal.ROUND_UP);
  const policyWouldDecline = await wouldDecline(ctx, tx, card, input, amount);
  const row = { type, vault, input, amount, billed, rate, policyWouldDecline, nowMs } as const;
  const recorded = await insertClearingRow(tx, scope, { ...row, originalTransactionId: null });
  if (recorded === null) return replayOf(tx, scope, type, input.networkTransactionId);
  const settlement = systemAccountId(scope.mode, vault.currency, 'card_settlement');
  // Its writes in one round trip; the events in the next, after vault.overdrawn if any.
  const counted = { day: spendDayOf(nowMs), mcc: input.merchant.mcc };
  await inPipeline(tx, () => [
    post(tx, {
      mode: scope.mode,
      currency: vault.currency,
      transactionId: recorded.id,
      entries: transferEntries(vault.id, settlement, amount),
      nowMs,
    }),
    changeVaultTotals(
      tx,
      vault.id,
      { ledger: amount.negated(), pending: ZERO },
      recorded.id,
      nowMs,
      {
        mandated: true,
      },
    ),
    addPostedSpend(
      tx,
      { id: recorded.id, vaultId: vault.id, cardId: input.cardId, counted },
      amount,
      1,
      nowMs,
    ),
    recordMessage(tx, {
      transactionId: recorded.id,
      kind: 'capture',
      amount,
      holdAfter: ZERO,
      networkTransactionId: input.networkTransactionId,
      nowMs,
    }),
  ]);
  const presented = presentTransaction(recorded);
  await appendEvents(
    tx,
    scope,
    ['transaction.captured', 'transaction.completed'],
    presented,
    nowMs,
  );
  return { transaction: recorded, replayed: false };
}

async function replayOf(
  tx: SqlQueryable,
  scope: Scope,
  type: 'force_capture' | 'refund',
  networkTransactionId: string,
): Promise<ClearingOutcome> {
  const recorded = await recordedMessage(tx, scope, type, networkTransactionId);
  if (recorded === null) throw new Error('a taken key names a recorded transaction');
  return { transaction: recorded, replayed: true };
}

/**
 * The transaction a linked refund credits, locked (its vault is the card's, locked first): a
 * card transaction of the same card. Its state is not checked: a merchant may refund what was
 * captured in any way, and the network has moved the money already.
 */
async function lockOriginal(
  tx: SqlQueryable,
  scope: Scope,
  input: RefundInput,
  transactionId: string,
): Promise<TransactionRecord> {
  const { rows } = await tx.query<TransactionRow>(
    `SELECT ${TRANSACTION_COLUMNS} FROM transactions
     WHERE id = $1 FOR UPDATE`,
    [transactionId],
  );
  // By the primary key alone, the scope checked here (sql/scoped-row.ts says why).
  const row = rows[0];
  if (row === undefined || !inScope(row, scope)) {
    throw new SpendgateError(
      'transaction_not_found',
      `No transaction ${transactionId.slice(0, 64)} exists.`,
      'transactionId',
    );
  }
  const original = transactionFromRow(row);
  const cardTransaction =
    original.type === 'card_authorization' || original.type === 'force_capture';
  if (!cardTransaction || original.cardId !== input.cardId) {
    throw new SpendgateError(
      'parameter_invalid',
      `transactionId ${original.id} is not a card transaction of card ${input.cardId.slice(0, 64)}.`,
      'transactionId',
    );
  }
  return original;
}

/**
 * refund: one transaction (POST /v1/refunds).
 * In: scope, the card, amount and currency, merchant, networkTransactionId, and the captured
 *   transaction it credits (optional).
 * Out: the completed refund transaction, or the one recorded under that id (replayed).
 * Writes: transactions (the refund; a linked one adds to the original's refunded_amount,
 *   whatever it captured: a refund above the capture is recorded, never refused, for the
 *   operations team to see); a posting card_settlement -> vault of the amount; vaults.ledger
 *   (which may restore an overdrawn vault); no spend counter (a refund gives no limit back);
 *   transaction_messages (refund, on the refund and on the original); outbox
 *   (transaction.refunded, vault.restored).
 * Fails: card_not_found, vault_closed, currency_mismatch, invalid_amount,
 *   transaction_not_found and parameter_invalid (transactionId: not a card transaction of
 *   this card).
 */
export async function refund(
  ctx: StoreContext,
  tx: SqlQueryable,
  scope: Scope,
  input: RefundInput,
): Promise<ClearingOutcome> {
  const nowMs = ctx.clock();
  const type = 'refund';
  const card = await lockClearing(tx, scope, input, type);
  const { vault, read: earlier } = card;
  if (earlier !== null) return { transaction: earlier, replayed: true };
  const { amount, billed, rate } = clearingAmount(ctx, scope, card, input, Decimal.ROUND_DOWN);
  const linked = input.transactionId ?? null;
  const original = linked === null ? null : await lockOriginal(tx, scope, input, linked);
  const row = {
    type,
    vault,
    input,
    amount,
    billed,
    rate,
    policyWouldDecline: null,
    nowMs,
  } as const;
  const recorded = await insertClearingRow(tx, scope, { ...row, originalTransactionId: linked });
  if (recorded === null) return replayOf(tx, scope, type, input.networkTransactionId);
  const settlement = systemAccountId(scope.mode, vault.currency, 'card_settlement');
  const message = {
    kind: 'refund',
    amount,
    networkTransactionId: input.networkTransactionId,
  } as const;
  // Its writes in one round trip; the event in the next, after vault.restored if any.
  await inPipeline(tx, () => [
    post(tx, {
      mode: scope.mode,
      currency: vault.currency,
      transactionId: recorded.id,
      entries: transferEntries(settlement, vault.id, amount),
      nowMs,
    }),
    changeVaultTotals(tx, vault.id, { ledger: amount, pending: ZERO }, recorded.id, nowMs),
    recordMessage(tx, { ...message, transactionId: recorded.id, holdAfter: ZERO, nowMs }),
    ...(original === null ? [] : creditOriginal(tx, original, message, nowMs)),
  ]);
  await appendEvent(tx, scope, 'transaction.refunded', presentTransaction(recorded), nowMs);
  return { transaction: recorded, replayed: false };
}

/** A linked refund's mark on the transaction it credits: its refunded amount and timeline. */
function creditOriginal(
  tx: SqlQueryable,
  original: TransactionRecord,
  message: { kind: 'refund'; amount: Decimal; networkTransactionId: string },
  nowMs: number,
): Promise<unknown>[] {
  return [
    tx.query(
      `UPDATE transactions SET refunded_amount = refunded_amount + $2::numeric, updated_at = $3
       WHERE id = $1`,
      [original.id, message.amount.toFixed(), new Date(nowMs)],
    ),
    recordMessage(tx, {
      ...message,
      transactionId: original.id,
      holdAfter: original.holdRemaining,
      nowMs,
    }),
  ];
}
