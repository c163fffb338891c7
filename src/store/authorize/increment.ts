import {
  amountIn,
  APPROVED,
  assetPriceOf,
  CURRENCIES,
  isAtPar,
  isCurrencyCode,
  isDecision,
  NO_PRICING,
  presentTransaction,
  RATE_UNAVAILABLE,
  toVaultAsset,
  SpendgateError,
  ZERO,
  type AmountInput,
  type AuthorizationOutcome,
  type Decimal,
  type Decision,
  type Scope,
  type TransactionRecord,
} from '../../core/index.js';
import { changeVaultTotals, type StoreContext } from '../context.js';
import {
  BILLING_READ,
  addPostedSpend,
  postedSpendTarget,
  recordMessage,
  type SpendCountKeys,
} from '../lifecycle.js';
import { lockAuthorization } from '../ops/authorizations.js';
import { simulatePolicy } from '../ops/policies.js';
import { appendEvent } from '../outbox.js';
import { TRANSACTION_COLUMNS, transactionFromRow, type TransactionRow } from '../rows.js';
import type { SqlQueryable } from '../sql/client.js';
import { oneRow } from '../sql/one-row.js';
import { inPipeline } from '../sql/pipeline.js';

/*
 * Increments (contract v1.2, section 16): a hotel, a car rental or a fuel pump raises a pending
 * hold. An increment is decided as an authorization of its own amount: the card and vault must
 * be active, the vault's and the card's policies see it (their limits count it), the available
 * balance must cover it. Approved, the hold grows; declined, nothing changes. Its
 * networkTransactionId is its idempotency key, per authorization (migration 0020).
 */

export interface IncrementInput {
  readonly amount: AmountInput;
  readonly networkTransactionId: string;
  /**
   * An advice: the network already approved the increment without asking (its stand-in, a
   * processor's timeout setting). Recorded as approved, not decided: the hold grows whatever
   * the balance and the policies (a mandated change: it may take available below 0), as an
   * approved authorization advice is recorded (advice.ts). Absent: decided as an authorization.
   */
  readonly advice?: boolean | undefined;
}

/** An increment's decision as recorded with its message (transaction_messages.decision). */
interface RecordedDecision {
  readonly approved: boolean;
  readonly declineCode: Decision['declineCode'];
  readonly declineReason: Decision['declineReason'];
}

/**
 * incrementAuthorization: one transaction.
 * In: scope, authorization id, amount (in the authorization's billing currency, or its asset),
 *   networkTransactionId.
 * Out: the decision on the increment, with the authorization after it; a repeat of the same
 *   networkTransactionId answers the recorded decision (`replayed`).
 * Writes, approved: transactions.amount and hold_remaining += amount (in the asset: at a
 *   price, converted with the hold buffer), billing_amount += the amount as billed;
 *   vaults.pending += amount (hold journal); spend counters += amount, the vault's and the
 *   card's own (no count: the same authorization); transaction_messages (increment, with the
 *   decision); outbox (authorization.incremented).
 * Writes, declined: transaction_messages (increment, with the decision), nothing else.
 * An advice (`input.advice`): approved without a decision, the hold raised whatever the
 *   balance (mandated: vaults.overdrawn_since may be set, as for an approved advice).
 * Fails: transaction_not_found; transaction_not_pending (captured, reversed, expired or
 *   declined: nothing is held to raise); invalid_amount.
 */
export async function incrementAuthorization(
  ctx: StoreContext,
  tx: SqlQueryable,
  scope: Scope,
  transactionId: string,
  input: IncrementInput,
): Promise<AuthorizationOutcome> {
  const nowMs = ctx.clock();
  const { transaction: held, vault, counted } = await lockAuthorization(tx, scope, transactionId);
  const recorded = await recordedIncrement(tx, held.id, input.networkTransactionId);
  if (recorded !== null) {
    return { decision: decisionOf(recorded), standIn: false, transaction: held, replayed: true };
  }
  if (held.status !== 'pending') {
    throw new SpendgateError(
      'transaction_not_pending',
      `Authorization ${held.id} is ${held.status}; only a pending hold can be raised.`,
      'id',
    );
  }
  const priced = incrementAmount(ctx, scope, held, vault.currency, input.amount, nowMs);
  // No usable price: declined at once, like an authorization (rate_unavailable).
  const amount = isDecision(priced) ? ZERO : priced.amount;
  const decision = isDecision(priced)
    ? priced
    : input.advice === true
      ? APPROVED
      : (
          await simulatePolicy(ctx, tx, scope, vault.id, {
            draft: null,
            request: {
              cardId: held.cardId ?? '',
              amount,
              currency: vault.currency,
              merchant: held.merchant ?? { name: '', mcc: '0000', country: 'US' },
            },
          })
        ).decision;
  const after =
    decision.approved && !isDecision(priced)
      ? await raiseHold(tx, { held, counted }, priced, nowMs, input.advice === true)
      : held;
  await inPipeline(tx, () => [
    recordMessage(tx, {
      transactionId: held.id,
      kind: 'increment',
      amount,
      holdAfter: after.holdRemaining,
      networkTransactionId: input.networkTransactionId,
      nowMs,
      decision: recordedOf(decision),
    }),
    ...(decision.approved
      ? [appendEvent(tx, scope, 'authorization.incremented', presentTransaction(after), nowMs)]
      : []),
  ]);
  return { decision, standIn: false, transaction: after, replayed: false };
}

/** What an increment adds: to the hold, in the asset, and to the billing amount. */
interface IncrementAmounts {
  readonly amount: Decimal;
  readonly billed: Decimal;
}

/**
 * The increment's amount, given in the authorization's billing currency (or its asset): at
 * par, as it is; at a price (a SOL vault billed in USD, a EUR card), converted as authorize
 * converts, at the price in memory now, with the hold buffer; `rate_unavailable` without one.
 */
function incrementAmount(
  ctx: StoreContext,
  scope: Scope,
  held: TransactionRecord,
  asset: string,
  given: AmountInput,
  nowMs: number,
): IncrementAmounts | Decision {
  const billed = held.lifecycle?.billing?.currency ?? held.currency;
  if (billed === asset || isAtPar(billed, asset) || !isCurrencyCode(asset)) {
    const amount = amountIn(given, held.currency, { param: 'amount', allowZero: false });
    return { amount, billed: amount };
  }
  const billedAmount = amountIn(given, BILLING_READ, { param: 'amount', allowZero: false });
  const pricing = ctx.pricing ?? NO_PRICING;
  const price = assetPriceOf(pricing.book, scope.mode, asset, billed, nowMs, pricing.bounds);
  if (price === null) return RATE_UNAVAILABLE;
  const converted = toVaultAsset({
    amount: billedAmount,
    currency: billed,
    billingCurrency: billed,
    asset: CURRENCIES[asset],
    price,
    holdBuffer: pricing.holdBuffer,
  });
  return isDecision(converted) ? converted : { amount: converted.amount, billed: billedAmount };
}

/**
 * Raises the hold by `amount`: the transaction, the vault's pending total, the spend counted,
 * in one round trip (sql/pipeline.ts); the spend day is set before the UPDATE reads it back.
 * `mandated`: an increment the network approved (advice), which may overdraw the vault.
 */
async function raiseHold(
  tx: SqlQueryable,
  { held, counted }: { held: TransactionRecord; counted: SpendCountKeys | null },
  { amount, billed }: IncrementAmounts,
  nowMs: number,
  mandated: boolean,
): Promise<TransactionRecord> {
  const transaction = postedSpendTarget(held, counted);
  const [, , { rows }] = await inPipeline(tx, () => [
    changeVaultTotals(tx, held.vaultId, { ledger: ZERO, pending: amount }, held.id, nowMs, {
      mandated,
    }),
    addPostedSpend(tx, transaction, amount, 0, nowMs),
    tx.query<TransactionRow>(
      `UPDATE transactions SET amount = amount + $2::numeric, hold_remaining = hold_remaining + $2::numeric,
         billing_amount = billing_amount + $4::numeric, updated_at = $3
       WHERE id = $1 RETURNING ${TRANSACTION_COLUMNS}`,
      [held.id, amount.toFixed(), new Date(nowMs), billed.toFixed()],
    ),
  ]);
  return transactionFromRow(oneRow(rows, 'the increment UPDATE'));
}

async function recordedIncrement(
  tx: SqlQueryable,
  transactionId: string,
  networkTransactionId: string,
): Promise<RecordedDecision | null> {
  const { rows } = await tx.query<{ decision: RecordedDecision | null }>(
    `SELECT decision FROM transaction_messages
     WHERE transaction_id = $1 AND kind = 'increment' AND network_transaction_id = $2`,
    [transactionId, networkTransactionId],
  );
  return rows[0]?.decision ?? null;
}

function recordedOf(decision: Decision): RecordedDecision {
  return {
    approved: decision.approved,
    declineCode: decision.declineCode,
    declineReason: decision.declineReason,
  };
}

function decisionOf(recorded: RecordedDecision): Decision {
  return { ...recorded, shadowMatches: [] };
}
