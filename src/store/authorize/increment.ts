import {
  amountIn,
  isAtPar,
  presentTransaction,
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
import { addPostedSpend, recordMessage } from '../lifecycle.js';
import { lockAuthorization } from '../ops/authorizations.js';
import { simulatePolicy } from '../ops/policies.js';
import { appendEvent } from '../outbox.js';
import { TRANSACTION_COLUMNS, transactionFromRow, type TransactionRow } from '../rows.js';
import type { SqlQueryable } from '../sql/client.js';
import { oneRow } from '../sql/one-row.js';

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
 * Writes, approved: transactions.amount, billing_amount and hold_remaining += amount;
 *   vaults.pending += amount (hold journal); spend counters += amount, the vault's and the
 *   card's own (no count: the same authorization); transaction_messages (increment, with the
 *   decision); outbox (authorization.incremented).
 * Writes, declined: transaction_messages (increment, with the decision), nothing else.
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
  const { transaction: held, vault } = await lockAuthorization(tx, scope, transactionId);
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
  const amount = incrementAmount(held, vault.currency, input.amount);
  const { decision } = await simulatePolicy(ctx, tx, scope, vault.id, {
    draft: null,
    request: {
      cardId: held.cardId ?? '',
      amount,
      currency: vault.currency,
      merchant: held.merchant ?? { name: '', mcc: '0000', country: 'US' },
    },
  });
  const after = decision.approved ? await raiseHold(tx, held, amount, nowMs) : held;
  await recordMessage(tx, {
    transactionId: held.id,
    kind: 'increment',
    amount,
    holdAfter: after.holdRemaining,
    networkTransactionId: input.networkTransactionId,
    nowMs,
    decision: recordedOf(decision),
  });
  if (decision.approved) {
    await appendEvent(tx, scope, 'authorization.incremented', presentTransaction(after), nowMs);
  }
  return { decision, standIn: false, transaction: after, replayed: false };
}

/**
 * The increment's amount in the vault's asset: given in the authorization's billing currency
 * (or the asset), at par. An authorization billed at a price (a SOL vault) has none until the
 * price feed exists: `currency_mismatch`, as for a capture that cannot post in its currency.
 */
function incrementAmount(held: TransactionRecord, asset: string, given: AmountInput): Decimal {
  const billed = held.lifecycle?.billing?.currency ?? held.currency;
  if (billed !== asset && !isAtPar(billed, asset)) {
    throw new SpendgateError(
      'currency_mismatch',
      `Authorization ${held.id} is billed in ${billed}, which converts to ${asset} only at a price.`,
      'amount',
    );
  }
  return amountIn(given, held.currency, { param: 'amount', allowZero: false });
}

/** Raises the hold by `amount`: the transaction, the vault's pending total, the spend counted. */
async function raiseHold(
  tx: SqlQueryable,
  held: TransactionRecord,
  amount: Decimal,
  nowMs: number,
): Promise<TransactionRecord> {
  await changeVaultTotals(tx, held.vaultId, { ledger: ZERO, pending: amount }, held.id, nowMs);
  await addPostedSpend(tx, held.id, amount, 0, nowMs);
  const { rows } = await tx.query<TransactionRow>(
    `UPDATE transactions SET amount = amount + $2::numeric, hold_remaining = hold_remaining + $2::numeric,
       billing_amount = billing_amount + $2::numeric, updated_at = $3
     WHERE id = $1 RETURNING ${TRANSACTION_COLUMNS}`,
    [held.id, amount.toFixed(), new Date(nowMs)],
  );
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
