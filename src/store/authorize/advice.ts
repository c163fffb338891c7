import {
  assetPriceOf,
  CURRENCIES,
  holdExpiresAtMs,
  isAtPar,
  isDecision,
  NO_PRICING,
  rateRecordOf,
  presentTransaction,
  SpendgateError,
  toVaultAsset,
  ZERO,
  type AuthorizationOutcome,
  type Decimal,
  type Decision,
  type RateRecord,
  type Scope,
  type TransactionRecord,
  type VaultRecord,
} from '../../core/index.js';
import { newId } from '../../ids.js';
import { lockCardVault } from '../card-vault-lock.js';
import { changeVaultTotals, type StoreContext } from '../context.js';
import { addPostedSpend, recordMessage } from '../lifecycle.js';
import { reverse } from '../ops/authorizations.js';
import { appendEvent } from '../outbox.js';
import { TRANSACTION_COLUMNS, transactionFromRow, type TransactionRow } from '../rows.js';
import type { SqlQueryable } from '../sql/client.js';
import { oneRow } from '../sql/one-row.js';
import { inPipeline } from '../sql/pipeline.js';
import type { AuthorizeInput } from './batch.js';

/*
 * Advice (contract v1.2, section 16): a decision the network took on spendgate's behalf, in
 * stand-in while spendgate was not answering, or a decline of its own. Money the network has
 * moved is never refused, so an approved advice places its hold whatever the balance and the
 * policy (it may overdraw the vault), and the advice wins over a decision already recorded for
 * the same networkTransactionId: a hold spendgate placed is released when the network
 * declined, and placed when the network approved. spendgate's own stand-in answers are
 * recorded the same way (http/stand-in-records.ts), so the ledger always says what the network
 * was told.
 */

export interface AdviceInput extends AuthorizeInput {
  /** What the network decided. */
  readonly approved: boolean;
  /** Why, in the network's words (`stand_in` for spendgate's own stand-in answer). */
  readonly reason: string;
}

/** The reason spendgate's own stand-in answers are advised with. */
export const STAND_IN_ADVICE = 'stand_in';

interface AdvisedCard {
  readonly vault: VaultRecord;
  readonly billingCurrency: string;
}

/**
 * advise: one transaction.
 * In: scope, the authorize request's fields, approved, reason.
 * Out: the decision as now recorded (`replayed` when this advice was recorded before).
 * Writes: with no record of the networkTransactionId, a card_authorization (pending with its
 *   hold, or declined), advice = true; over a recorded approval the network declined, its hold
 *   released and the record declined; over a recorded decline the network approved, the hold
 *   placed; vaults.pending (hold journal), spend counters, overdrawn_at; transaction_messages
 *   (advice); outbox (authorization.advised, and vault.overdrawn when it overdraws).
 * Fails: card_not_found, currency_mismatch (neither the asset nor the card's billing
 *   currency), service_unavailable (a billing currency converted only at a price, with no
 *   usable price in memory: the network tries again), invalid_amount.
 */
export async function advise(
  ctx: StoreContext,
  tx: SqlQueryable,
  scope: Scope,
  input: AdviceInput,
): Promise<AuthorizationOutcome> {
  const nowMs = ctx.clock();
  const card = await lockCardVault(tx, scope, input.cardId, () =>
    recordedAuthorization(tx, scope, input.networkTransactionId),
  );
  const { amount, rate } = advisedAmount(ctx, scope, card, input, nowMs);
  const recorded = card.read;
  if (recorded === null) {
    const created = await insertAdvised(ctx, tx, scope, card.vault, input, { amount, rate }, nowMs);
    return adviced(scope, tx, { transaction: created, amount, overrode: null }, nowMs);
  }
  const agrees = (recorded.declineCode === null) === input.approved;
  // A repeat of this advice; or our own stand-in answer, which the late decision already
  // recorded as told (the budget's stand-in decline): nothing to change.
  if (agrees && (recorded.lifecycle?.advice === true || input.reason === STAND_IN_ADVICE)) {
    return outcomeOf(recorded, true);
  }
  const changed =
    recorded.status === 'pending' && !input.approved
      ? await releaseAdvised(ctx, tx, scope, recorded, input)
      : recorded.status === 'declined' && input.approved
        ? await placeAdvised(ctx, tx, recorded, input, amount, nowMs)
        : await markAdvised(tx, recorded.id, nowMs);
  const overrode = { approved: recorded.declineCode === null, amount: recorded.amount.toFixed() };
  return adviced(scope, tx, { transaction: changed, amount, overrode }, nowMs);
}

/**
 * The advised amount in the vault's asset, converted as authorize converts it (at the price in
 * memory, with the hold buffer: the network placed a hold, and the capture settles it).
 */
function advisedAmount(
  ctx: StoreContext,
  scope: Scope,
  card: AdvisedCard,
  input: AdviceInput,
  nowMs: number,
): { amount: Decimal; rate: RateRecord | null } {
  const asset = CURRENCIES[card.vault.currency];
  const pricing = ctx.pricing ?? NO_PRICING;
  const priced =
    input.currency !== asset.code &&
    input.currency === card.billingCurrency &&
    !isAtPar(input.currency, asset.code);
  const converted = toVaultAsset({
    amount: input.amount,
    currency: input.currency,
    billingCurrency: card.billingCurrency,
    asset,
    price: priced
      ? assetPriceOf(pricing.book, scope.mode, asset.code, input.currency, nowMs, pricing.bounds)
      : null,
    holdBuffer: pricing.holdBuffer,
  });
  if (!isDecision(converted)) {
    const rate = converted.rate === null ? null : rateRecordOf(converted.rate);
    return { amount: converted.amount, rate };
  }
  if (converted.declineReason?.rule === 'rate_unavailable') {
    throw new SpendgateError(
      'service_unavailable',
      `No price converts ${input.currency} into ${asset.code} yet: send the advice again later.`,
    );
  }
  throw new SpendgateError(
    'currency_mismatch',
    `currency ${input.currency.slice(0, 16)} is neither the vault's ${asset.code} nor the card's billing currency.`,
    'currency',
  );
}

async function recordedAuthorization(
  tx: SqlQueryable,
  scope: Scope,
  networkTransactionId: string,
): Promise<TransactionRecord | null> {
  // The expression of transactions_network_key (migration 0012), so the lookup probes it.
  const { rows } = await tx.query<TransactionRow>(
    `SELECT ${TRANSACTION_COLUMNS} FROM transactions
     WHERE account_id || ' ' || mode || ' ' || network_transaction_id = $1
       AND network_transaction_id IS NOT NULL FOR UPDATE`,
    [`${scope.accountId} ${scope.mode} ${networkTransactionId}`],
  );
  const row = rows[0];
  return row === undefined ? null : transactionFromRow(row);
}

function declineOf(input: AdviceInput): { code: 'card_declined'; reason: object } {
  const rule = input.reason === STAND_IN_ADVICE ? STAND_IN_ADVICE : 'advice';
  const message =
    input.reason === STAND_IN_ADVICE
      ? 'No decision within the time budget: declined in stand-in.'
      : `Declined by the network: ${input.reason.slice(0, 200)}`;
  return { code: 'card_declined', reason: { rule, message } };
}

/** A new record of the advised decision: its hold placed, however far it overdraws. */
async function insertAdvised(
  ctx: StoreContext,
  tx: SqlQueryable,
  scope: Scope,
  vault: VaultRecord,
  input: AdviceInput,
  { amount, rate }: { amount: Decimal; rate: RateRecord | null },
  nowMs: number,
): Promise<TransactionRecord> {
  const decline = input.approved ? null : declineOf(input);
  const at = new Date(nowMs);
  const { rows } = await tx.query<TransactionRow>(
    `INSERT INTO transactions (id, account_id, mode, vault_id, type, status, currency, amount, hold_remaining,
       card_id, merchant, mcc, network_transaction_id, decline_code, decline_reason, stand_in,
       billing_amount, billing_currency, merchant_amount, merchant_currency, advice, expires_at,
       created_at, updated_at, rate)
     VALUES ($1, $2, $3, $4, 'card_authorization', $5, $6, $7, $8, $9, $10, $11, $12, $13, $14,
       $15, $16, $17, $18, $19, true, $20, $21, $21, $22::jsonb)
     RETURNING ${TRANSACTION_COLUMNS}`,
    [
      newId('transaction', nowMs),
      scope.accountId,
      scope.mode,
      vault.id,
      input.approved ? 'pending' : 'declined',
      vault.currency,
      amount.toFixed(),
      input.approved ? amount.toFixed() : '0',
      input.cardId,
      JSON.stringify(input.merchant),
      input.merchant.mcc,
      input.networkTransactionId,
      decline?.code ?? null,
      decline === null ? null : JSON.stringify(decline.reason),
      input.reason === STAND_IN_ADVICE,
      input.amount.toFixed(),
      input.currency,
      input.merchantAmount?.amount.toFixed() ?? null,
      input.merchantAmount?.currency ?? null,
      input.approved ? new Date(holdExpiresAtMs(input.merchant.mcc, nowMs, ctx.holdExpiry)) : null,
      at,
      rate === null ? null : JSON.stringify(rate),
    ],
  );
  const created = transactionFromRow(oneRow(rows, 'the advice INSERT'));
  if (input.approved) await holdPlaced(tx, created, amount, nowMs);
  return created;
}

/** The vault's side of a hold the network placed: pending, spend, maybe overdrawn. */
async function holdPlaced(
  tx: SqlQueryable,
  transaction: TransactionRecord,
  amount: Decimal,
  nowMs: number,
): Promise<void> {
  await inPipeline(tx, () => [
    changeVaultTotals(
      tx,
      transaction.vaultId,
      { ledger: ZERO, pending: amount },
      transaction.id,
      nowMs,
      {
        mandated: true,
      },
    ),
    addPostedSpend(tx, transaction.id, amount, 1, nowMs),
  ]);
}

/** A recorded approval the network declined: its hold released, the record a decline. */
async function releaseAdvised(
  ctx: StoreContext,
  tx: SqlQueryable,
  scope: Scope,
  recorded: TransactionRecord,
  input: AdviceInput,
): Promise<TransactionRecord> {
  if (recorded.holdRemaining.gt(0)) await reverse(ctx, tx, scope, recorded.id, null, 'stand_in');
  // Money the network already captured stands (a capture always posts): the rest of the hold
  // is released, and the record keeps its captures rather than becoming a decline.
  if (recorded.capturedAmount.gt(0)) return markAdvised(tx, recorded.id, ctx.clock());
  const decline = declineOf(input);
  const { rows } = await tx.query<TransactionRow>(
    `UPDATE transactions SET status = 'declined', decline_code = $2, decline_reason = $3, advice = true,
       stand_in = $4, failure_reason = NULL, updated_at = $5
     WHERE id = $1 RETURNING ${TRANSACTION_COLUMNS}`,
    [
      recorded.id,
      decline.code,
      JSON.stringify(decline.reason),
      input.reason === STAND_IN_ADVICE,
      new Date(ctx.clock()),
    ],
  );
  return transactionFromRow(oneRow(rows, 'the advice UPDATE'));
}

/** A recorded decline the network approved: the hold placed, however far it overdraws. */
async function placeAdvised(
  ctx: StoreContext,
  tx: SqlQueryable,
  recorded: TransactionRecord,
  input: AdviceInput,
  amount: Decimal,
  nowMs: number,
): Promise<TransactionRecord> {
  const { rows } = await tx.query<TransactionRow>(
    `UPDATE transactions SET status = 'pending', amount = $2, hold_remaining = $2, decline_code = NULL,
       decline_reason = NULL, advice = true, stand_in = $3, expires_at = $4, updated_at = $5
     WHERE id = $1 RETURNING ${TRANSACTION_COLUMNS}`,
    [
      recorded.id,
      amount.toFixed(),
      input.reason === STAND_IN_ADVICE,
      new Date(holdExpiresAtMs(input.merchant.mcc, nowMs, ctx.holdExpiry)),
      new Date(nowMs),
    ],
  );
  const placed = transactionFromRow(oneRow(rows, 'the advice UPDATE'));
  await holdPlaced(tx, placed, amount, nowMs);
  return placed;
}

/** A decision the network confirms, or one whose life moved on (captured, reversed, expired). */
async function markAdvised(
  tx: SqlQueryable,
  transactionId: string,
  nowMs: number,
): Promise<TransactionRecord> {
  const { rows } = await tx.query<TransactionRow>(
    `UPDATE transactions SET advice = true, updated_at = $2 WHERE id = $1 RETURNING ${TRANSACTION_COLUMNS}`,
    [transactionId, new Date(nowMs)],
  );
  return transactionFromRow(oneRow(rows, 'the advice UPDATE'));
}

/** The advice's message and event, and the decision it leaves recorded. */
async function adviced(
  scope: Scope,
  tx: SqlQueryable,
  advised: {
    readonly transaction: TransactionRecord;
    readonly amount: Decimal;
    /** The decision recorded before this advice (the timeline's opening); null: none was. */
    readonly overrode: { readonly approved: boolean; readonly amount: string } | null;
  },
  nowMs: number,
): Promise<AuthorizationOutcome> {
  const { transaction } = advised;
  await inPipeline(tx, () => [
    recordMessage(tx, {
      transactionId: transaction.id,
      kind: 'advice',
      amount: advised.amount,
      holdAfter: transaction.holdRemaining,
      networkTransactionId: transaction.networkTransactionId,
      nowMs,
      decision: { approved: transaction.declineCode === null, overrode: advised.overrode },
    }),
    appendEvent(tx, scope, 'authorization.advised', presentTransaction(transaction), nowMs),
  ]);
  return outcomeOf(transaction, false);
}

function outcomeOf(transaction: TransactionRecord, replayed: boolean): AuthorizationOutcome {
  const decision: Decision = {
    approved: transaction.declineCode === null,
    declineCode: transaction.declineCode,
    declineReason: transaction.declineReason,
    shadowMatches: [],
  };
  return { decision, standIn: transaction.standIn, transaction, replayed };
}
