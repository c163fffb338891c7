import {
  assert,
  decide,
  Decimal,
  isCurrencyCode,
  ZERO,
  presentTransaction,
  SpendgateError,
  type AggregateSpec,
  type AuthorizationOutcome,
  type AuthorizationRequest,
  type CardStatus,
  type CompiledPolicy,
  type CurrencyCode,
  type Decision,
  type Scope,
  type TransactionRecord,
  type VaultStatus,
} from '../../core/index.js';
import { newId } from '../../ids.js';
import { changeVaultTotals, lockVault, type StoreContext } from '../context.js';
import { post, systemAccountId, transferEntries } from '../ledger.js';
import { appendEvent, eventRow } from '../outbox.js';
import {
  currencyFromRow,
  TRANSACTION_COLUMNS,
  transactionFromRow,
  type TransactionRow,
} from '../rows.js';
import {
  changeSpend,
  readSpend,
  spendColumns,
  spendDayOf,
  spendKeys,
  spendTotalsFrom,
  spendUpsertSql,
} from '../spend.js';
import type { SqlQueryable } from '../sql/client.js';
import { isRetryable } from '../sql/transaction.js';
import { loadCompiledPolicy } from './policies.js';

export interface AuthorizeInput extends AuthorizationRequest {
  /** The card network's id for this authorization: its idempotency key (contract section 5). */
  readonly networkTransactionId: string;
}

/**
 * authorize: one transaction (contract section 10).
 * In: scope, the request (amount parsed at the edge), its networkTransactionId.
 * Out: the decision and the recorded transaction (a pending hold or a declined record), or the
 *   first outcome again when the network repeats a networkTransactionId.
 * Reads: the card; the vault, locked (so concurrent authorizations on one vault are decided one
 *   after another against the latest balance); the compiled policy (cached by version); exactly
 *   the spend aggregates the policy lists.
 * Writes, on approval: transactions (pending, hold_remaining = amount), vaults.pending,
 *   spend_counters, outbox (authorization.approved). On decline: transactions (declined),
 *   outbox (authorization.declined). Nothing when the card is unknown (no vault to record on).
 * Fails: nothing: a decline is a decision. The vaults CHECK (available >= 0) would abort a hold
 *   that overdraws, which the locked balance check makes unreachable.
 */
/**
 * Two first callbacks with one networkTransactionId on different vaults race to the unique
 * index; the loser must run again (and then finds the winner's decision).
 */
export function isUniqueViolation(error: unknown): boolean {
  return (
    typeof error === 'object' &&
    error !== null &&
    'code' in error &&
    error.code === '23505' &&
    !isRetryable(error)
  );
}

export async function authorize(
  ctx: StoreContext,
  tx: SqlQueryable,
  scope: Scope,
  input: AuthorizeInput,
): Promise<AuthorizationOutcome> {
  const nowMs = ctx.clock();
  // Read and lock in one statement, with the aggregates the card's policy needed last time.
  const hint = ctx.authorizeHints.get(input.cardId);
  const params: unknown[] = [input.cardId, scope.accountId, scope.mode, input.networkTransactionId];
  const spendSql = spendColumns(hint?.aggregates ?? [], nowMs, params, 'v.id');
  const { rows } = await tx.query<LockedRow>(
    `SELECT c.status AS card_status, c.vault_id, v.status AS vault_status, v.currency, v.ledger, v.pending,
            v.xmin::text AS locked_xmin,
            (SELECT xmin::text FROM vaults WHERE id = v.id) AS snapshot_xmin,
            (SELECT version FROM policies WHERE vault_id = v.id AND document IS NOT NULL) AS policy_version,
            (SELECT id FROM transactions
             WHERE account_id = $2 AND mode = $3 AND network_transaction_id = $4) AS previous_id
            ${spendSql.map((column) => `, ${column}`).join('')}
     FROM cards c JOIN vaults v ON v.id = c.vault_id
     WHERE c.id = $1 AND c.account_id = $2 AND c.mode = $3
     FOR UPDATE OF v`,
    params,
  );
  const locked = rows[0];
  if (locked === undefined) {
    const decision = decide({
      card: null,
      vault: null,
      policy: null,
      spend: {},
      nowMs,
      request: input,
    });
    return { decision, transaction: null, replayed: false };
  }
  // The subqueries above read the statement's snapshot, taken before the lock was granted. If
  // another transaction changed the vault meanwhile (every change of its spend counters does),
  // the locked row is newer than that snapshot: read what depends on it again, now.
  const stale = locked.locked_xmin !== locked.snapshot_xmin;
  const previousId = stale ? await previousAuthorization(tx, scope, input) : locked.previous_id;
  if (previousId !== null) return replay(await readTransaction(tx, previousId));

  const vault = {
    id: locked.vault_id,
    status: locked.vault_status,
    currency: currencyFromRow(locked.currency),
  };
  const policy =
    vault.status === 'active' && locked.policy_version !== null
      ? await compiledPolicy(ctx, tx, vault.id, vault.currency, locked.policy_version)
      : null;
  const aggregates = policy?.aggregates ?? [];
  const spend =
    !stale && sameAggregates(hint?.aggregates ?? [], aggregates)
      ? spendTotalsFrom(aggregates, locked)
      : await readSpend(tx, vault.id, aggregates, nowMs);
  rememberHint(ctx, input.cardId, aggregates);

  const decision = decide({
    card: { id: input.cardId, vaultId: vault.id, status: locked.card_status },
    vault: { ...vault, available: new Decimal(locked.ledger).minus(locked.pending) },
    policy,
    spend,
    nowMs,
    request: input,
  });
  const transaction: TransactionRecord = {
    id: newId('transaction', nowMs),
    accountId: scope.accountId,
    mode: scope.mode,
    vaultId: vault.id,
    type: 'card_authorization',
    status: decision.approved ? 'pending' : 'declined',
    // The amount was parsed in the request's currency (a registered one, or the edge would
    // have refused it), so that is the row's currency, even on a currency-mismatch decline.
    currency: isCurrencyCode(input.currency) ? input.currency : vault.currency,
    amount: input.amount,
    capturedAmount: ZERO,
    holdRemaining: decision.approved ? input.amount : ZERO,
    cardId: input.cardId,
    transferId: null,
    merchant: input.merchant,
    networkTransactionId: input.networkTransactionId,
    declineCode: decision.declineCode,
    declineReason: decision.declineReason,
    failureReason: null,
    standIn: false,
    hasMetadata: false,
    createdAtMs: nowMs,
    completedAtMs: null,
  };
  await recordAuthorization(tx, scope, transaction, nowMs);
  return { decision, transaction, replayed: false };
}

interface LockedRow extends Record<string, unknown> {
  card_status: CardStatus;
  vault_id: string;
  vault_status: VaultStatus;
  currency: string;
  ledger: string;
  pending: string;
  locked_xmin: string;
  snapshot_xmin: string | null;
  policy_version: number | null;
  previous_id: string | null;
}

/** Hints kept per card; the oldest is dropped past this (cards per process, not per vault). */
const AUTHORIZE_HINTS_MAX = 100_000;

function rememberHint(
  ctx: StoreContext,
  cardId: string,
  aggregates: readonly AggregateSpec[],
): void {
  ctx.authorizeHints.delete(cardId);
  ctx.authorizeHints.set(cardId, { aggregates });
  if (ctx.authorizeHints.size > AUTHORIZE_HINTS_MAX) {
    const oldest = ctx.authorizeHints.keys().next();
    if (oldest.done !== true) ctx.authorizeHints.delete(oldest.value);
  }
}

function sameAggregates(a: readonly AggregateSpec[], b: readonly AggregateSpec[]): boolean {
  return a.length === b.length && a.every((spec, index) => spec.key === b[index]?.key);
}

async function previousAuthorization(
  tx: SqlQueryable,
  scope: Scope,
  input: AuthorizeInput,
): Promise<string | null> {
  const { rows } = await tx.query<{ id: string }>(
    'SELECT id FROM transactions WHERE account_id = $1 AND mode = $2 AND network_transaction_id = $3',
    [scope.accountId, scope.mode, input.networkTransactionId],
  );
  return rows[0]?.id ?? null;
}

async function readTransaction(tx: SqlQueryable, id: string): Promise<TransactionRecord> {
  const { rows } = await tx.query<TransactionRow>(
    `SELECT ${TRANSACTION_COLUMNS} FROM transactions WHERE id = $1`,
    [id],
  );
  return transactionFromRow(rows[0] as TransactionRow);
}

/** The compiled policy of this version, from the cache, or read and compiled on a miss. */
async function compiledPolicy(
  ctx: StoreContext,
  tx: SqlQueryable,
  vaultId: string,
  currency: CurrencyCode,
  version: number,
): Promise<CompiledPolicy | null> {
  return (
    ctx.policyCache.get(vaultId, version) ?? (await loadCompiledPolicy(ctx, tx, vaultId, currency))
  );
}

/**
 * Writes a decided authorization in one statement: the transaction, and for an approval the
 * hold (vault pending and its journal row) and the spend counters; the event either way. The
 * same rows changeVaultTotals, changeSpend and appendEvent write, sharing their SQL pieces.
 */
async function recordAuthorization(
  tx: SqlQueryable,
  scope: Scope,
  transaction: TransactionRecord,
  nowMs: number,
): Promise<void> {
  const approved = transaction.status === 'pending';
  const event = eventRow(
    scope,
    approved ? 'authorization.approved' : 'authorization.declined',
    presentTransaction(transaction),
    nowMs,
  );
  const spendDay = spendDayOf(nowMs);
  const keys = spendKeys({ day: spendDay, mcc: transaction.merchant?.mcc ?? null });
  const { rows } = await tx.query<{ updated: number }>(
    `WITH counters AS (${spendUpsertSql('$19::boolean')}),
     inserted AS (
       INSERT INTO transactions (id, account_id, mode, vault_id, type, status, currency, amount, hold_remaining, card_id,
                                 merchant, mcc, network_transaction_id, decline_code, decline_reason, spend_day,
                                 created_at, updated_at)
       VALUES ($6, $7, $8, $1, 'card_authorization', $9, $10, $11, $4::numeric, $12, $13, $14, $15, $16, $17,
               CASE WHEN $19::boolean THEN $18::date END, $20, $20)
     ),
     totals AS (
       UPDATE vaults SET pending = pending + $4::numeric, updated_at = $20
       WHERE id = $1 AND $19::boolean RETURNING id
     ),
     journal AS (
       INSERT INTO hold_changes (vault_id, transaction_id, delta, created_at)
       SELECT $1, $6, $4::numeric, $20 WHERE $19::boolean
     ),
     event AS (
       INSERT INTO outbox_events (id, account_id, mode, type, payload, created_at) VALUES ($21, $7, $8, $22, $23, $20)
     )
     SELECT count(*)::int AS updated FROM totals`,
    [
      transaction.vaultId,
      keys.mccs,
      keys.days,
      transaction.holdRemaining.toFixed(),
      1,
      transaction.id,
      scope.accountId,
      scope.mode,
      transaction.status,
      transaction.currency,
      transaction.amount.toFixed(),
      transaction.cardId,
      JSON.stringify(transaction.merchant),
      transaction.merchant?.mcc ?? null,
      transaction.networkTransactionId,
      transaction.declineCode,
      transaction.declineReason === null ? null : JSON.stringify(transaction.declineReason),
      spendDay,
      approved,
      new Date(nowMs),
      event.id,
      approved ? 'authorization.approved' : 'authorization.declined',
      event.payload,
    ],
  );
  assert(
    rows[0]?.updated === (approved ? 1 : 0),
    'an approval updates its vault, a decline does not',
  );
}

function replay(transaction: TransactionRecord): AuthorizationOutcome {
  const approved = transaction.declineCode === null;
  const decision: Decision = {
    approved,
    declineCode: transaction.declineCode,
    declineReason: transaction.declineReason,
    shadowMatches: [],
  };
  return { decision, transaction, replayed: true };
}

async function lockAuthorization(
  ctx: StoreContext,
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
  const transaction = transactionFromRow(rows[0] as TransactionRow);
  if (transaction.status !== 'pending') {
    throw new SpendgateError(
      'parameter_invalid',
      `Authorization ${transaction.id} is ${transaction.status}; only a pending authorization can change.`,
      'id',
    );
  }
  return transaction;
}

function amountWithinHold(transaction: TransactionRecord, requested: Decimal | null): Decimal {
  const amount = requested ?? transaction.holdRemaining;
  if (amount.gt(transaction.holdRemaining)) {
    throw new SpendgateError(
      'invalid_amount',
      `amount exceeds the remaining hold of ${transaction.holdRemaining.toFixed()}.`,
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
 *   spend_counters -= the released part; transactions; outbox (transaction.completed).
 * Fails: transaction_not_found, parameter_invalid (not pending), invalid_amount (above the
 *   remaining hold, or zero).
 */
export async function capture(
  ctx: StoreContext,
  tx: SqlQueryable,
  scope: Scope,
  transactionId: string,
  requested: Decimal | null,
): Promise<TransactionRecord> {
  const nowMs = ctx.clock();
  const held = await lockAuthorization(ctx, tx, scope, transactionId);
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
  const completed = transactionFromRow(rows[0] as TransactionRow);
  await appendEvent(tx, scope, 'transaction.completed', presentTransaction(completed), nowMs);
  return completed;
}

/**
 * reverse (and expiry): one transaction (contract section 9).
 * In: scope, authorization id, amount (null: the whole remaining hold), the failure reason.
 * Out: the transaction: failed when nothing remains held, else still pending, smaller.
 * Writes: vaults.pending -= amount; spend_counters -= amount (and the count, when the whole
 *   authorization fails); transactions; outbox (transaction.failed when it fails).
 * Fails: transaction_not_found, parameter_invalid (not pending), invalid_amount.
 */
export async function reverse(
  ctx: StoreContext,
  tx: SqlQueryable,
  scope: Scope,
  transactionId: string,
  requested: Decimal | null,
  reason: 'reversed' | 'expired' = 'reversed',
): Promise<TransactionRecord> {
  const nowMs = ctx.clock();
  const held = await lockAuthorization(ctx, tx, scope, transactionId);
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
  const result = transactionFromRow(rows[0] as TransactionRow);
  if (fails) await appendEvent(tx, scope, 'transaction.failed', presentTransaction(result), nowMs);
  return result;
}

async function releaseSpend(
  tx: SqlQueryable,
  held: TransactionRecord,
  amount: Decimal,
  count: number,
): Promise<void> {
  const { rows } = await tx.query<{ spend_day: string | null; mcc: string | null }>(
    'SELECT spend_day, mcc FROM transactions WHERE id = $1',
    [held.id],
  );
  const day = rows[0]?.spend_day ?? null;
  assert(day !== null, 'an approved authorization has a spend day');
  await changeSpend(tx, {
    vaultId: held.vaultId,
    day,
    mcc: rows[0]?.mcc ?? null,
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
