import {
  assert,
  decide,
  Decimal,
  isCurrencyCode,
  isoDate,
  presentTransaction,
  STAND_IN_DECLINED,
  STAND_IN_RULE,
  utcDayNumber,
  windowStartDay,
  ZERO,
  type AggregateSpec,
  type AuthorizationOutcome,
  type AuthorizationRequest,
  type CardStatus,
  type CompiledPolicy,
  type Decision,
  type Scope,
  type SpendTotals,
  type TransactionRecord,
  type VaultStatus,
} from '../../core/index.js';
import { newId } from '../../ids.js';
import type { StoreContext } from '../context.js';
import { eventRow } from '../outbox.js';
import { currencyFromRow } from '../rows.js';
import { ALL_TIME_DAY, spendDayOf, spendKeys, spendUpsertManySql } from '../spend.js';
import type { SqlQueryable, SqlTransaction } from '../sql/client.js';
import { isRetryable } from '../sql/transaction.js';
import { loadCompiledPolicy } from './policies.js';
import { getTransaction } from './reads.js';
import { RecentMap } from '../recent-map.js';

export interface AuthorizeInput extends AuthorizationRequest {
  /** The card network's id for this authorization: its idempotency key (contract section 5). */
  readonly networkTransactionId: string;
}

/**
 * A request's time budget (contract section 10): once `aborted`, the card network has been
 * answered the stand-in decline, so a decision reached later records that decline (and places
 * no hold) instead of its own. An AbortSignal is one; the HTTP adapter passes a plain flag,
 * since a signal (an EventTarget) per request cost it more than the flag's one field.
 */
export interface AuthorizeBudget {
  readonly aborted: boolean;
}

export interface AuthorizeRequest {
  readonly scope: Scope;
  readonly input: AuthorizeInput;
  readonly budget?: AuthorizeBudget;
}

/** Requests decided in one database transaction at most; bounds every statement's arrays. */
export const AUTHORIZE_BATCH_MAX = 64;

/**
 * authorizeBatch: one transaction for up to 64 authorizations (contract section 10), in a
 * fixed number of statements whatever their number, so that the per-transaction costs (round
 * trips, commit, statement overhead) are paid once per batch rather than once per
 * authorization. Two round trips in the steady state, BEGIN and COMMIT included:
 * 1. Lock every vault the requests' cards belong to, in vault id order (so batches, transfers
 *    and captures never deadlock), reading card and vault state; and, sent with it and run
 *    after it, with the locks held: the first outcome of any repeated networkTransactionId,
 *    the vaults' policy versions and the spend counters their policies need (for the vaults
 *    this process foresees: see readAfterLock and cardVaultsOf). A vault not foreseen, or
 *    whose policy changed, costs one more read.
 * 2. Decide each request in order, in memory: a later request sees the holds and spend of the
 *    earlier ones on the same vault, exactly as if they had run one after another.
 * 3. Write everything in one statement: transactions, vault pending totals, the hold journal,
 *    the spend counters and the events; with `commit`, sent with the COMMIT.
 * In: `commit` when the batch owns its transaction (the batcher's), so nothing may follow it.
 * Out: one outcome per request, in request order. A decline is a decision; an unknown card is
 *   decided without a record (no vault to record on). A request repeating an earlier
 *   networkTransactionId (in the database or earlier in the batch) gets the first decision.
 * Fails: only on database errors, for the whole batch (the caller retries requests one by one).
 */
export async function authorizeBatch(
  ctx: StoreContext,
  tx: SqlQueryable | SqlTransaction,
  requests: readonly AuthorizeRequest[],
  options: { readonly commit?: boolean } = {},
): Promise<AuthorizationOutcome[]> {
  assert(
    requests.length > 0 && requests.length <= AUTHORIZE_BATCH_MAX,
    'a batch holds 1 to 64 requests',
  );
  // The batch owns its transaction: its write goes with the COMMIT, one round trip fewer.
  const commitWith =
    options.commit === true && 'queryAndCommit' in tx ? tx.queryAndCommit : undefined;
  assert(options.commit !== true || commitWith !== undefined, 'commit needs a transaction');
  const nowMs = ctx.clock();

  // The lock and the reads after it leave together and are answered in one round trip (the
  // pool pipelines; the server runs them in order, the reads on a snapshot taken after the
  // locks are granted, so nothing they read can change before commit). The reads need the
  // vaults' ids before the lock has named them: a card's vault never changes, so the vault
  // this process saw for each card is right whenever it saw the card before. A vault it did
  // not foresee costs one more read below, nothing else.
  const cardVaults = cardVaultsOf(ctx);
  const foreseen = new Set<string>();
  for (const { scope, input } of requests) {
    const vaultId = cardVaults.get(cardKey(input.cardId, scope.accountId, scope.mode));
    if (vaultId !== undefined) foreseen.add(vaultId);
  }
  const hints = policyHintsOf(ctx);
  const [{ rows: lockedRows }, afterLock] = await Promise.all([
    tx.query<LockedRow>(
      `SELECT c.id AS card_id, c.account_id, c.mode, c.status AS card_status, c.vault_id,
              v.status AS vault_status, v.currency, v.ledger, v.pending
       FROM cards c JOIN vaults v ON v.id = c.vault_id
       WHERE (c.id, c.account_id, c.mode) IN (SELECT * FROM unnest($1::text[], $2::text[], $3::text[]))
       ORDER BY v.id
       FOR UPDATE OF v`,
      [
        requests.map((r) => r.input.cardId),
        requests.map((r) => r.scope.accountId),
        requests.map((r) => r.scope.mode),
      ],
    ),
    readAfterLock(tx, hints, [...foreseen], requests, nowMs),
  ]);
  const cards = new Map<string, LockedRow>();
  const vaults = new Map<string, VaultState>();
  for (const row of lockedRows) {
    const key = cardKey(row.card_id, row.account_id, row.mode);
    cards.set(key, row);
    cardVaults.set(key, row.vault_id);
    if (vaults.has(row.vault_id)) continue;
    vaults.set(row.vault_id, {
      id: row.vault_id,
      status: row.vault_status,
      currency: currencyFromRow(row.currency),
      ledger: new Decimal(row.ledger),
      pending: new Decimal(row.pending),
      pendingDelta: ZERO,
      policy: null,
      counters: new Map(),
    });
  }
  const readRows = afterLock.rows;
  const hintsUsed = afterLock.hintsUsed;
  const unforeseen = [...vaults.keys()].filter((vaultId) => !foreseen.has(vaultId));
  if (unforeseen.length > 0) {
    const more = await readAfterLock(tx, hints, unforeseen, [], nowMs);
    readRows.push(...more.rows);
    for (const [vaultId, hint] of more.hintsUsed) hintsUsed.set(vaultId, hint);
  }

  const previous = new Map<string, string>();
  const versions = new Map<string, number>();
  const counterRows: CounterRow[] = [];
  for (const row of readRows) {
    if (row.kind === 'previous') previous.set(row.key, row.value as string);
    else if (row.kind === 'policy') versions.set(row.key, Number(row.value));
    else {
      counterRows.push({
        vault_id: row.key,
        mcc: row.mcc as string,
        day: row.day as string,
        amount: row.amount as string,
        count: row.count as number,
      });
    }
  }
  for (const [vaultId, version] of versions) {
    const vault = vaults.get(vaultId);
    if (vault === undefined || vault.status !== 'active') continue;
    const policy =
      ctx.policyCache.get(vault.id, version) ??
      (await loadCompiledPolicy(ctx, tx, vault.id, vault.currency));
    vault.policy = policy;
    if (policy !== null && hints.get(vault.id)?.version !== version)
      hints.set(vault.id, { version, aggregates: policy.aggregates });
  }
  // A vault's counters were read for the policy version this process had last seen for it
  // when the read was sent (the hint); they are the right ones exactly when the version read
  // is that version.
  const rightlyHinted = new Set(
    [...vaults.values()].filter((vault) => {
      const hint = hintsUsed.get(vault.id);
      return hint !== undefined && versions.get(vault.id) === hint.version;
    }),
  );
  applyCounterRows([...rightlyHinted], counterRows);
  await readCounters(
    tx,
    [...vaults.values()].filter((vault) => !rightlyHinted.has(vault)),
    nowMs,
  );

  const spendDay = spendDayOf(nowMs);
  const outcomes: AuthorizationOutcome[] = [];
  const decidedInBatch = new Map<string, AuthorizationOutcome>();
  const recorded: TransactionRecord[] = [];
  for (const { scope, input, budget } of requests) {
    const repeatKey = `${scope.accountId} ${scope.mode} ${input.networkTransactionId}`;
    const earlier = decidedInBatch.get(repeatKey);
    if (earlier !== undefined) {
      outcomes.push(earlier.transaction === null ? earlier : replay(earlier.transaction));
      continue;
    }
    const card = cards.get(cardKey(input.cardId, scope.accountId, scope.mode));
    if (card === undefined) {
      const decision = decide({
        card: null,
        vault: null,
        policy: null,
        spend: {},
        nowMs,
        request: input,
      });
      outcomes.push({ decision, transaction: null, replayed: false });
      continue;
    }
    const previousId = previous.get(repeatKey);
    if (previousId !== undefined) {
      outcomes.push(replay(await getTransaction(ctx, tx, scope, previousId)));
      continue;
    }
    const vault = vaults.get(card.vault_id);
    assert(vault !== undefined, "a locked card's vault is locked");
    const policy = vault.policy;
    const lateForBudget = budget?.aborted === true;
    const decision = lateForBudget
      ? STAND_IN_DECLINED
      : decide({
          card: { id: input.cardId, vaultId: vault.id, status: card.card_status },
          vault: {
            id: vault.id,
            status: vault.status,
            currency: vault.currency,
            available: vault.ledger.minus(vault.pending),
          },
          policy,
          spend: policy === null ? {} : spendOf(vault, policy.aggregates, nowMs),
          nowMs,
          request: input,
        });
    const transaction = authorizationRecord(scope, vault, input, decision, lateForBudget, nowMs);
    if (decision.approved) {
      vault.pending = vault.pending.plus(input.amount);
      vault.pendingDelta = vault.pendingDelta.plus(input.amount);
      addToCounters(vault, spendDay, input.merchant.mcc, input.amount);
    }
    const outcome = { decision, transaction, replayed: false };
    decidedInBatch.set(repeatKey, outcome);
    recorded.push(transaction);
    outcomes.push(outcome);
  }
  if (recorded.length > 0) {
    await recordAuthorizations(
      commitWith ?? tx.query,
      recorded,
      [...vaults.values()],
      spendDay,
      nowMs,
    );
  }
  return outcomes;
}

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

/**
 * The reads after the lock, in one statement: the first outcome of each request's
 * networkTransactionId, the policy versions of `vaultIds`, and, for each of them whose policy
 * this process has seen, the counters that policy sums over (its hint: a version is never
 * reused, so the counters are the right ones exactly when the version read equals the hint's).
 * Returns the rows and the hints the counters were chosen by.
 */
async function readAfterLock(
  tx: SqlQueryable,
  hints: PolicyHints,
  vaultIds: readonly string[],
  requests: readonly AuthorizeRequest[],
  nowMs: number,
): Promise<{ rows: ReadRow[]; hintsUsed: Map<string, PolicyHint> }> {
  const hintsUsed = new Map<string, PolicyHint>();
  for (const vaultId of vaultIds) {
    const hint = hints.get(vaultId);
    if (hint !== undefined && hint.aggregates.length > 0) hintsUsed.set(vaultId, hint);
  }
  const window = counterWindow(
    [...hintsUsed.values()].map((hint) => hint.aggregates),
    nowMs,
  );
  const { rows } = await tx.query<ReadRow>(
    `SELECT 'previous' AS kind, account_id || ' ' || mode || ' ' || network_transaction_id AS key, id AS value,
            NULL::text AS mcc, NULL::text AS day, NULL::text AS amount, NULL::integer AS count
     FROM transactions
     WHERE (account_id, mode, network_transaction_id) IN (SELECT * FROM unnest($1::text[], $2::text[], $3::text[]))
     UNION ALL
     SELECT 'policy', vault_id, version::text, NULL, NULL, NULL, NULL
     FROM policies WHERE vault_id = ANY($4::text[]) AND document IS NOT NULL
     UNION ALL
     SELECT 'counter', vault_id, NULL, mcc, day::text, amount::text, count
     FROM spend_counters
     WHERE vault_id = ANY($5::text[]) AND mcc = ANY($6::text[])
       AND ((day >= $7::date AND day <= $8::date) OR day = '${ALL_TIME_DAY}')`,
    [
      requests.map((r) => r.scope.accountId),
      requests.map((r) => r.scope.mode),
      requests.map((r) => r.input.networkTransactionId),
      vaultIds,
      [...hintsUsed.keys()],
      window.mccs,
      window.firstDay,
      window.lastDay,
    ],
  );
  return { rows, hintsUsed };
}

/**
 * The vault of each card this process has seen, by cardKey: a card never changes vault. The
 * batch learns it from its lock's rows; the batcher reads it to keep lanes apart (store.ts).
 */
const CARD_VAULTS_MAX = 100_000;
const cardVaultsByStore = new WeakMap<StoreContext, RecentMap<string>>();

export function cardVaultsOf(ctx: StoreContext): RecentMap<string> {
  let cardVaults = cardVaultsByStore.get(ctx);
  if (cardVaults === undefined) {
    cardVaults = new RecentMap(CARD_VAULTS_MAX);
    cardVaultsByStore.set(ctx, cardVaults);
  }
  return cardVaults;
}

interface LockedRow {
  card_id: string;
  account_id: string;
  mode: Scope['mode'];
  card_status: CardStatus;
  vault_id: string;
  vault_status: VaultStatus;
  currency: string;
  ledger: string;
  pending: string;
}

interface ReadRow {
  kind: 'previous' | 'policy' | 'counter';
  /** The repeat key, or the vault id of a policy or counter row. */
  key: string;
  /** The first decision's transaction id, or the policy version. */
  value: string | null;
  mcc: string | null;
  day: string | null;
  amount: string | null;
  count: number | null;
}

/**
 * What a vault's policy sums over, as of the version this process last read: the hint that
 * lets the batch read counters in the same statement as the policy version. Bounded: past the
 * limit the oldest hint goes, and a vault without one costs one more statement, nothing else.
 */
const POLICY_HINTS_MAX = 100_000;
type PolicyHint = { readonly version: number; readonly aggregates: readonly AggregateSpec[] };
type PolicyHints = RecentMap<PolicyHint>;
const policyHintsByStore = new WeakMap<StoreContext, PolicyHints>();

function policyHintsOf(ctx: StoreContext): PolicyHints {
  let hints = policyHintsByStore.get(ctx);
  if (hints === undefined) {
    hints = new RecentMap(POLICY_HINTS_MAX);
    policyHintsByStore.set(ctx, hints);
  }
  return hints;
}

interface VaultState {
  readonly id: string;
  readonly status: VaultStatus;
  readonly currency: TransactionRecord['currency'];
  readonly ledger: Decimal;
  pending: Decimal;
  /** What this batch adds to the vault's pending total. */
  pendingDelta: Decimal;
  policy: CompiledPolicy | null;
  /** Spend counter rows read for the policy, by `mcc|day`, kept current through the batch. */
  readonly counters: Map<string, { amount: Decimal; count: number }>;
}

export const cardKey = (cardId: string, accountId: string, mode: string) =>
  `${cardId} ${accountId} ${mode}`;
const counterKey = (mcc: string, day: string) => `${mcc}|${day}`;

interface CounterRow {
  vault_id: string;
  mcc: string;
  day: string;
  amount: string;
  count: number;
}

/** The MCCs and days whose counter rows the given policies' aggregates sum over, together. */
function counterWindow(
  policies: readonly (readonly AggregateSpec[])[],
  nowMs: number,
): { mccs: string[]; firstDay: string; lastDay: string } {
  let firstDay = utcDayNumber(nowMs);
  const mccs = new Set<string>(['']);
  for (const aggregates of policies) {
    for (const spec of aggregates) {
      if (spec.interval !== 'allTime')
        firstDay = Math.min(firstDay, windowStartDay(spec.interval, nowMs));
      for (const mcc of spec.merchantCategories ?? []) mccs.add(mcc);
    }
  }
  return { mccs: [...mccs], firstDay: isoDate(firstDay), lastDay: isoDate(utcDayNumber(nowMs)) };
}

/** Puts counter rows into the vaults they belong to (rows of other vaults are ignored). */
function applyCounterRows(vaults: readonly VaultState[], rows: readonly CounterRow[]): void {
  const byId = new Map(vaults.map((vault) => [vault.id, vault]));
  for (const row of rows) {
    byId.get(row.vault_id)?.counters.set(counterKey(row.mcc, row.day), {
      amount: new Decimal(row.amount),
      count: row.count,
    });
  }
}

/** Reads, for each vault with a policy, the counter rows its aggregates sum over. */
async function readCounters(
  tx: SqlQueryable,
  vaults: readonly VaultState[],
  nowMs: number,
): Promise<void> {
  const needing = vaults.filter((vault) => (vault.policy?.aggregates.length ?? 0) > 0);
  if (needing.length === 0) return;
  const window = counterWindow(
    needing.map((vault) => vault.policy?.aggregates ?? []),
    nowMs,
  );
  const { rows } = await tx.query<CounterRow>(
    `SELECT vault_id, mcc, day, amount, count FROM spend_counters
     WHERE vault_id = ANY($1::text[]) AND mcc = ANY($2::text[])
       AND ((day >= $3::date AND day <= $4::date) OR day = '${ALL_TIME_DAY}')`,
    [needing.map((vault) => vault.id), window.mccs, window.firstDay, window.lastDay],
  );
  applyCounterRows(needing, rows);
}

/** The spend aggregates of a policy from the counters in memory (read, plus this batch). */
function spendOf(vault: VaultState, specs: readonly AggregateSpec[], nowMs: number): SpendTotals {
  const today = isoDate(utcDayNumber(nowMs));
  const totals: Record<string, Decimal | number> = {};
  for (const spec of specs) {
    const mccs = spec.merchantCategories ?? [''];
    const first =
      spec.interval === 'allTime' ? ALL_TIME_DAY : isoDate(windowStartDay(spec.interval, nowMs));
    const last = spec.interval === 'allTime' ? ALL_TIME_DAY : today;
    let amount = ZERO;
    let count = 0;
    for (const [key, value] of vault.counters) {
      const [mcc = '', day = ''] = key.split('|');
      // Day strings compare as dates; the all-time row sorts before every real day.
      if (!mccs.includes(mcc) || day < first || day > last) continue;
      amount = amount.plus(value.amount);
      count += value.count;
    }
    totals[spec.key] = spec.measure === 'amount' ? amount : count;
  }
  return totals;
}

function addToCounters(vault: VaultState, day: string, mcc: string, amount: Decimal): void {
  const { mccs, days } = spendKeys({ day, mcc });
  mccs.forEach((keyMcc, index) => {
    const key = counterKey(keyMcc, days[index] as string);
    const row = vault.counters.get(key) ?? { amount: ZERO, count: 0 };
    vault.counters.set(key, { amount: row.amount.plus(amount), count: row.count + 1 });
  });
}

function authorizationRecord(
  scope: Scope,
  vault: VaultState,
  input: AuthorizeInput,
  decision: Decision,
  standIn: boolean,
  nowMs: number,
): TransactionRecord {
  return {
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
    standIn,
    hasMetadata: false,
    createdAtMs: nowMs,
    completedAtMs: null,
  };
}

/**
 * Writes the batch in one statement: the transactions; for the approvals, each vault's pending
 * total (one update per vault), the hold journal and the spend counters (one upsert per row);
 * and one event per transaction. The same rows changeVaultTotals, changeSpend and appendEvent
 * write, sharing their SQL pieces.
 */
async function recordAuthorizations(
  query: SqlQueryable['query'],
  transactions: readonly TransactionRecord[],
  vaults: readonly VaultState[],
  spendDay: string,
  nowMs: number,
): Promise<void> {
  const approved = transactions.filter((transaction) => transaction.status === 'pending');
  const changed = vaults.filter((vault) => !vault.pendingDelta.isZero());
  // One counter row per key however many approvals touch it: an upsert may not touch a row twice.
  const deltas = new Map<string, { amount: Decimal; count: number }>();
  for (const transaction of approved) {
    const { mccs, days } = spendKeys({ day: spendDay, mcc: transaction.merchant?.mcc ?? null });
    mccs.forEach((mcc, index) => {
      const key = `${transaction.vaultId}|${mcc}|${days[index] as string}`;
      const delta = deltas.get(key) ?? { amount: ZERO, count: 0 };
      deltas.set(key, { amount: delta.amount.plus(transaction.amount), count: delta.count + 1 });
    });
  }
  const counterRows = [...deltas].map(
    ([key, delta]) => [...key.split('|'), delta.amount.toFixed(), delta.count] as const,
  );
  const events = transactions.map((transaction) => {
    const type =
      transaction.status === 'pending' ? 'authorization.approved' : 'authorization.declined';
    return {
      type,
      ...eventRow(
        { accountId: transaction.accountId, mode: transaction.mode },
        type,
        presentTransaction(transaction),
        nowMs,
      ),
    };
  });
  const at = new Date(nowMs);
  const { rows } = await query<{ updated: number }>(
    `WITH inserted AS (
       INSERT INTO transactions (id, account_id, mode, vault_id, type, status, currency, amount, hold_remaining, card_id,
                                 merchant, mcc, network_transaction_id, decline_code, decline_reason, stand_in,
                                 spend_day, created_at, updated_at)
       SELECT id, account_id, mode, vault_id, 'card_authorization', status, currency, amount::numeric, hold::numeric, card_id,
              merchant::jsonb, mcc, ntx, decline_code, decline_reason::jsonb, stand_in,
              CASE WHEN status = 'pending' THEN $16::date END, $17, $17
       FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[],
                   $9::text[], $10::text[], $11::text[], $12::text[], $13::text[], $14::text[], $32::boolean[])
         AS r(id, account_id, mode, vault_id, status, currency, amount, hold, card_id, merchant, mcc, ntx, decline_code, decline_reason, stand_in)
     ),
     totals AS (
       UPDATE vaults SET pending = vaults.pending + d.delta::numeric, updated_at = $17
       FROM unnest($15::text[], $18::text[]) AS d(id, delta) WHERE vaults.id = d.id RETURNING vaults.id
     ),
     journal AS (
       INSERT INTO hold_changes (vault_id, transaction_id, delta, created_at)
       SELECT vault_id, id, delta::numeric, $17 FROM unnest($19::text[], $20::text[], $21::text[]) AS h(vault_id, id, delta)
     ),
     counters AS (${spendUpsertManySql(22)}),
     events AS (
       INSERT INTO outbox_events (id, account_id, mode, type, payload, created_at)
       SELECT id, account_id, mode, type, payload::jsonb, $17
       FROM unnest($27::text[], $28::text[], $29::text[], $30::text[], $31::text[]) AS e(id, account_id, mode, type, payload)
     )
     -- The postcondition, checked here rather than after the statement: the COMMIT may already
     -- be on its way behind it, and a failed statement turns that COMMIT into a ROLLBACK. The
     -- cast of a sentence to integer is the error PostgreSQL raises (evaluated only when due).
     SELECT CASE WHEN count(*) = $33 THEN count(*)::int
                 ELSE ('postcondition failed: ' || count(*) || ' vaults updated of ' || $33)::int END AS updated
     FROM totals`,
    [
      transactions.map((t) => t.id),
      transactions.map((t) => t.accountId),
      transactions.map((t) => t.mode),
      transactions.map((t) => t.vaultId),
      transactions.map((t) => t.status),
      transactions.map((t) => t.currency),
      transactions.map((t) => t.amount.toFixed()),
      transactions.map((t) => t.holdRemaining.toFixed()),
      transactions.map((t) => t.cardId),
      transactions.map((t) => JSON.stringify(t.merchant)),
      transactions.map((t) => t.merchant?.mcc ?? null),
      transactions.map((t) => t.networkTransactionId),
      transactions.map((t) => t.declineCode),
      transactions.map((t) => (t.declineReason === null ? null : JSON.stringify(t.declineReason))),
      changed.map((vault) => vault.id),
      spendDay,
      at,
      changed.map((vault) => vault.pendingDelta.toFixed()),
      approved.map((t) => t.vaultId),
      approved.map((t) => t.id),
      approved.map((t) => t.amount.toFixed()),
      counterRows.map((row) => row[0]),
      counterRows.map((row) => row[1]),
      counterRows.map((row) => row[2]),
      counterRows.map((row) => row[3]),
      counterRows.map((row) => row[4]),
      events.map((event) => event.id),
      transactions.map((t) => t.accountId),
      transactions.map((t) => t.mode),
      events.map((event) => event.type),
      events.map((event) => event.payload),
      transactions.map((t) => t.standIn),
      changed.length,
    ],
  );
  assert(rows[0]?.updated === changed.length, 'every vault with new holds is updated once');
}

function replay(transaction: TransactionRecord): AuthorizationOutcome {
  // An approval released because it came after its budget was answered as the stand-in decline.
  if (transaction.failureReason === STAND_IN_RULE) {
    return { decision: STAND_IN_DECLINED, transaction, replayed: true };
  }
  const decision: Decision = {
    approved: transaction.declineCode === null,
    declineCode: transaction.declineCode,
    declineReason: transaction.declineReason,
    shadowMatches: [],
  };
  return { decision, transaction, replayed: true };
}
