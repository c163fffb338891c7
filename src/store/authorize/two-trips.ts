import {
  decisionVaultOf,
  assert,
  decide,
  Decimal,
  isCurrencyCode,
  presentTransaction,
  replayedOutcome,
  STAND_IN_DECLINED,
  NO_SPEND,
  ZERO,
  type AggregateSpec,
  type AuthorizationOutcome,
  type AuthorizationRequest,
  type CardStatus,
  type CompiledPolicy,
  type Decision,
  type Scope,
  type TransactionRecord,
  type VaultStatus,
} from '../../core/index.js';
import { newId } from '../../ids.js';
import type { StoreContext } from '../context.js';
import { eventPayload } from '../outbox.js';
import { RecentMap } from '../recent-map.js';
import { currencyFromRow } from '../rows.js';
import { spendDayOf, spendKeys, spendUpsertManySql, type SpendRowDelta } from '../spend.js';
import {
  readSpendCounters,
  SpendCounters,
  spendWindowOf,
  spendWindowRows,
} from '../spend-window.js';
import type { SqlQueryable, SqlTransaction } from '../sql/client.js';
import { SqlParams } from '../sql/params.js';
import { isRetryable } from '../sql/transaction.js';
import {
  CARD_READ_KINDS,
  cardPolicyReads,
  cardSpendUpsertCte,
  loadCardPolicies,
  takeCardRow,
  type CardPolicyState,
  type CardReads,
} from './card-policy-batch.js';
import type { KnownState } from './known-state.js';
import { loadCompiledPolicy } from '../ops/policies.js';
import { getTransaction } from '../ops/reads.js';

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
 * authorization. Two round trips in the steady state, BEGIN and COMMIT included (one, for a
 * batch whose cards and vaults the process knows: authorize-one-trip.ts decides it on what the
 * batch before it left, with decideEach, and writes it with recordAuthorizations):
 * 1. lockAndRead: lock every vault the requests' cards belong to, in vault id order (so
 *    batches, transfers and captures never deadlock), reading card and vault state; and, sent
 *    with it and run after it, with the locks held: the first outcome of any repeated
 *    networkTransactionId, the vaults' policy versions and the spend counters their policies
 *    need (for the vaults this process foresees: see readAfterLock and cardVaultsOf).
 * 2. loadPolicies: the compiled policies, from the cache; a vault not foreseen, or whose
 *    policy changed, costs one more read. Then the cards' own policies, read with the lock
 *    too (card-policy-batch.ts; a card without one costs no read and no write).
 * 3. decideInOrder: decide each request in order, in memory: a later request sees the holds
 *    and spend of the earlier ones on the same vault, exactly as if they had run one after
 *    another.
 * 4. recordAuthorizations: write everything in one statement: transactions, vault pending
 *    totals, the hold journal, the spend counters (the vaults', and the cards' own for cards
 *    with a policy) and the events; with `commit`, sent with the COMMIT.
 * In: `commit` when the batch owns its transaction (the batcher's), so nothing may follow it;
 *   `known`, where a committed batch leaves its state (known-state.ts).
 * Out: one outcome per request, in request order. A decline is a decision; an unknown card is
 *   decided without a record (no vault to record on). A request repeating an earlier
 *   networkTransactionId (in the database or earlier in the batch) gets the first decision.
 * Fails: only on database errors, for the whole batch (the caller retries requests one by one).
 */
export async function authorizeBatch(
  ctx: StoreContext,
  tx: SqlQueryable | SqlTransaction,
  requests: readonly AuthorizeRequest[],
  options: { readonly commit?: boolean; readonly known?: KnownState } = {},
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
  const spendDay = spendDayOf(nowMs);

  const batch = await lockAndRead(ctx, tx, requests, nowMs);
  await loadPolicies(ctx, tx, batch, nowMs);
  await loadCardPoliciesOf(ctx, tx, batch, nowMs);
  const { outcomes, recorded } = await decideInOrder(ctx, tx, requests, batch, spendDay, nowMs);
  if (recorded.length > 0) {
    await recordAuthorizations(commitWith ?? tx.query, recorded, batch, spendDay, nowMs);
    // Committed (the write went with the COMMIT): the state the batch left is the state the
    // database holds, for the next batch on these vaults to decide on (known-state.ts).
    if (commitWith !== undefined) options.known?.remember(batch, spendDay, nowMs);
  }
  assert(outcomes.length === requests.length, 'one outcome per request');
  return outcomes;
}

/** What the lock and the reads after it found: the state the batch decides on. */
export interface LockedBatch extends AfterLock {
  /** The requests' cards that exist, by cardKey, with their vault's state as locked. */
  readonly cards: Map<string, LockedRow>;
  /** The locked vaults by id, with what this batch adds to them as it decides. */
  readonly vaults: Map<string, VaultState>;
  /** The cards with a policy of their own, by card id (loadCardPoliciesOf fills it). */
  readonly cardPolicies: Map<string, CardPolicyState>;
}

/**
 * Locks the requests' vaults, reading their cards and state, and reads after the lock what the
 * decisions need (readAfterLock).
 */
async function lockAndRead(
  ctx: StoreContext,
  tx: SqlQueryable,
  requests: readonly AuthorizeRequest[],
  nowMs: number,
): Promise<LockedBatch> {
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
              v.status AS vault_status, v.currency, v.ledger, v.pending,
              c.xmin::text AS card_xmin, v.xmin::text AS vault_xmin
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
    readAfterLock(ctx, tx, hints, [...foreseen], requests, nowMs),
  ]);
  const cards = new Map<string, LockedRow>();
  const vaults = new Map<string, VaultState>();
  for (const row of lockedRows) {
    const key = cardKey(row.card_id, row.account_id, row.mode);
    cards.set(key, row);
    cardVaults.set(key, row.vault_id);
    if (!vaults.has(row.vault_id)) vaults.set(row.vault_id, vaultStateOf(row));
  }
  const unforeseen = [...vaults.keys()].filter((vaultId) => !foreseen.has(vaultId));
  if (unforeseen.length > 0) {
    const more = await readAfterLock(ctx, tx, hints, unforeseen, [], nowMs);
    for (const [vaultId, version] of more.versions) afterLock.versions.set(vaultId, version);
    for (const [vaultId, hinted] of more.hinted) afterLock.hinted.set(vaultId, hinted);
  }
  return { ...afterLock, cards, vaults, cardPolicies: new Map() };
}

/**
 * The first decision (`t.id`) of each repeat key `n.key` (repeatKeyOf) the database holds, as a
 * join to put after a FROM item `n(key)`: the read after the lock and the one-round-trip path's
 * check (authorize-one-trip.ts) look up repeats alike. One probe of transactions_network_key
 * (migration 0012) per key, the only index on this expression: LIMIT keeps the subquery from
 * being flattened into a join the planner could answer with a scan, and the IS NOT NULL proves
 * the partial index usable.
 */
export const FIRST_DECISION_OF_KEY = `CROSS JOIN LATERAL (
       SELECT id FROM transactions
       WHERE account_id || ' ' || mode || ' ' || network_transaction_id = n.key
         AND network_transaction_id IS NOT NULL
       LIMIT 1
     ) AS t`;

/** What the reads after the lock found. */
export interface AfterLock {
  /** The first decision's transaction id of each repeated networkTransactionId, by repeat key. */
  readonly previous: Map<string, string>;
  /** The policy version of each vault read that has a policy. */
  readonly versions: Map<string, number>;
  /** The counters read for the vaults with a hint, and the hint they were read for. */
  readonly hinted: Map<string, { readonly hint: PolicyHint; readonly counters: SpendCounters }>;
  /** The requests' cards' own policy versions, and counters (card-policy-batch.ts). */
  readonly cardReads: CardReads;
}

/**
 * The reads after the lock, in one statement: the first outcome of each request's
 * networkTransactionId, the policy versions of `vaultIds`, and, for each of them whose policy
 * this process has seen, the counters that policy sums over (its hint: a version is never
 * reused, so the counters are the right ones exactly when the version read equals the hint's),
 * and the same of the requests' cards' own policies (cardPolicyReads).
 */
async function readAfterLock(
  ctx: StoreContext,
  tx: SqlQueryable,
  hints: PolicyHints,
  vaultIds: readonly string[],
  requests: readonly AuthorizeRequest[],
  nowMs: number,
): Promise<AfterLock> {
  const hinted = new Map<string, { hint: PolicyHint; counters: SpendCounters }>();
  for (const vaultId of vaultIds) {
    const hint = hints.get(vaultId);
    if (hint !== undefined && hint.aggregates.length > 0)
      hinted.set(vaultId, { hint, counters: new SpendCounters() });
  }
  const window = spendWindowOf(
    [...hinted.values()].map(({ hint }) => hint.aggregates),
    nowMs,
  );
  const params = new SqlParams();
  const repeatKeys = requests.map(({ scope, input }) => repeatKeyOf(scope, input));
  const cards = cardPolicyReads(
    ctx,
    params,
    requests.map((r) => r.input.cardId),
    nowMs,
  );
  const { rows } = await tx.query<ReadRow>(
    `SELECT 'previous' AS kind, n.key, t.id AS value,
            NULL::text AS mcc, NULL::text AS day, NULL::text AS amount, NULL::integer AS count
     FROM unnest(${params.texts(repeatKeys)}) AS n(key) ${FIRST_DECISION_OF_KEY}
     UNION ALL
     SELECT 'policy', vault_id, version::text, NULL, NULL, NULL, NULL
     FROM policies WHERE vault_id = ANY(${params.texts(vaultIds)}) AND document IS NOT NULL
     UNION ALL
     SELECT 'counter', w.owner_id, NULL, c.mcc, c.day::text, c.amount::text, c.count
     FROM ${spendWindowRows(params, [...hinted.keys()], window)}
     ${cards.sql}`,
    params.values,
  );
  const previous = new Map<string, string>();
  const versions = new Map<string, number>();
  for (const row of rows) {
    if (row.kind === 'previous') previous.set(row.key, row.value as string);
    else if (row.kind === 'policy') versions.set(row.key, Number(row.value));
    else if (CARD_READ_KINDS.has(row.kind)) takeCardRow(cards.reads, row);
    else {
      // Rows of the vaults with a hint, in the window of their hinted policies.
      const counters = hinted.get(row.key)?.counters;
      const amount = new Decimal(row.amount as string);
      counters?.add(row.mcc as string, row.day as string, amount, Number(row.count));
    }
  }
  return { previous, versions, hinted, cardReads: cards.reads };
}

/**
 * Each active vault's compiled policy (from the cache by the version read, compiled on a miss)
 * and its spend counters: those read with the lock when the hint they were read for is the
 * version read, else read now for all such vaults in one more statement.
 */
async function loadPolicies(
  ctx: StoreContext,
  tx: SqlQueryable,
  batch: LockedBatch,
  nowMs: number,
): Promise<void> {
  const hints = policyHintsOf(ctx);
  for (const [vaultId, version] of batch.versions) {
    const vault = batch.vaults.get(vaultId);
    if (vault === undefined || vault.status !== 'active') continue;
    const policy =
      ctx.policyCache.get(vault.id, version) ??
      (await loadCompiledPolicy(ctx, tx, vault.id, vault.currency));
    vault.policy = policy;
    if (policy !== null && hints.get(vault.id)?.version !== version)
      hints.set(vault.id, { version, aggregates: policy.aggregates });
  }
  const unread: VaultState[] = [];
  for (const vault of batch.vaults.values()) {
    const hinted = batch.hinted.get(vault.id);
    if (hinted !== undefined && batch.versions.get(vault.id) === hinted.hint.version)
      vault.counters = hinted.counters;
    else if ((vault.policy?.aggregates.length ?? 0) > 0) unread.push(vault);
  }
  if (unread.length === 0) return;
  const window = spendWindowOf(
    unread.map((vault) => vault.policy?.aggregates ?? []),
    nowMs,
  );
  const counters = await readSpendCounters(
    tx,
    unread.map((vault) => vault.id),
    window,
  );
  for (const vault of unread) {
    const read = counters.get(vault.id);
    assert(read !== undefined, 'every vault read has counters');
    vault.counters = read;
  }
}

/** The batch's cards' own policies and counters (card-policy-batch.ts), after the vaults'. */
async function loadCardPoliciesOf(
  ctx: StoreContext,
  tx: SqlQueryable,
  batch: LockedBatch,
  nowMs: number,
): Promise<void> {
  const loaded = await loadCardPolicies(
    ctx,
    tx,
    batch.cardReads,
    batch.cards.values(),
    batch.vaults,
    nowMs,
  );
  for (const [cardId, state] of loaded) batch.cardPolicies.set(cardId, state);
}

/**
 * Decides each request in order (decideEach), reading the first decision of each
 * networkTransactionId the database already holds.
 */
async function decideInOrder(
  ctx: StoreContext,
  tx: SqlQueryable,
  requests: readonly AuthorizeRequest[],
  batch: LockedBatch,
  spendDay: string,
  nowMs: number,
): Promise<{ outcomes: AuthorizationOutcome[]; recorded: TransactionRecord[] }> {
  const { decided, recorded } = decideEach(requests, batch, spendDay, nowMs);
  const outcomes: AuthorizationOutcome[] = [];
  for (const [index, outcome] of decided.entries()) {
    if (typeof outcome !== 'string') {
      outcomes.push(outcome);
      continue;
    }
    const scope = requests[index]?.scope;
    assert(scope !== undefined, 'one decision per request');
    outcomes.push(replayedOutcome(await getTransaction(tx, scope, outcome)));
  }
  return { outcomes, recorded };
}

/**
 * Decides each request in order, in memory: a later request sees the holds and spend of the
 * earlier ones on the same vault, exactly as if they had run one after another. Synchronous,
 * so the one-round-trip path (authorize-one-trip.ts) sends its write before any await. Returns,
 * in request order, each outcome, or the id of the first decision of a networkTransactionId
 * the database holds (batch.previous), and the transactions to record.
 */
export function decideEach(
  requests: readonly AuthorizeRequest[],
  batch: LockedBatch,
  spendDay: string,
  nowMs: number,
): { decided: (AuthorizationOutcome | string)[]; recorded: TransactionRecord[] } {
  const outcomes: (AuthorizationOutcome | string)[] = [];
  const decidedInBatch = new Map<string, AuthorizationOutcome>();
  const recorded: TransactionRecord[] = [];
  for (const request of requests) {
    const { scope, input } = request;
    const repeatKey = repeatKeyOf(scope, input);
    const earlier = decidedInBatch.get(repeatKey);
    if (earlier !== undefined) {
      outcomes.push(earlier.transaction === null ? earlier : replayedOutcome(earlier.transaction));
      continue;
    }
    const card = batch.cards.get(cardKey(input.cardId, scope.accountId, scope.mode));
    if (card === undefined) {
      const decision = decide({
        card: null,
        vault: null,
        policy: null,
        spend: {},
        nowMs,
        request: input,
      });
      outcomes.push({ decision, standIn: false, transaction: null, replayed: false });
      continue;
    }
    const previousId = batch.previous.get(repeatKey);
    if (previousId !== undefined) {
      outcomes.push(previousId);
      continue;
    }
    const vault = batch.vaults.get(card.vault_id);
    assert(vault !== undefined, "a locked card's vault is locked");
    const cardPolicy = batch.cardPolicies.get(card.card_id);
    const outcome = decideOne(request, card, vault, cardPolicy, spendDay, nowMs);
    decidedInBatch.set(repeatKey, outcome);
    recorded.push(outcome.transaction);
    outcomes.push(outcome);
  }
  return { decided: outcomes, recorded };
}

/**
 * Decides a request for a locked card against its vault as this batch has left it, and adds an
 * approval's hold and spend to the vault in memory, for the requests after it.
 */
function decideOne(
  request: AuthorizeRequest,
  card: LockedRow,
  vault: VaultState,
  cardPolicy: CardPolicyState | undefined,
  spendDay: string,
  nowMs: number,
): AuthorizationOutcome & { readonly transaction: TransactionRecord } {
  const { scope, input, budget } = request;
  const policy = vault.policy;
  const lateForBudget = budget?.aborted === true;
  const decision = lateForBudget
    ? STAND_IN_DECLINED
    : decide({
        card: { id: input.cardId, vaultId: vault.id, status: card.card_status },
        vault: decisionVaultOf(vault),
        policy,
        spend: policy === null ? {} : vault.counters.totals(policy.aggregates, nowMs),
        cardPolicy: cardPolicy?.policy ?? null,
        cardSpend:
          cardPolicy === undefined
            ? NO_SPEND
            : cardPolicy.counters.totals(cardPolicy.policy.aggregates, nowMs),
        nowMs,
        request: input,
      });
  const transaction = authorizationRecord(scope, vault, input, decision, lateForBudget, nowMs);
  if (decision.approved) {
    vault.pending = vault.pending.plus(input.amount);
    vault.pendingDelta = vault.pendingDelta.plus(input.amount);
    vault.counters.addApproval(spendDay, input.merchant.mcc, input.amount);
    cardPolicy?.counters.addApproval(spendDay, input.merchant.mcc, input.amount);
  }
  return { decision, standIn: lateForBudget, transaction, replayed: false };
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

export interface LockedRow {
  card_id: string;
  account_id: string;
  mode: Scope['mode'];
  card_status: CardStatus;
  vault_id: string;
  vault_status: VaultStatus;
  currency: string;
  ledger: string;
  pending: string;
  /** The row versions locked (the vault) and read (the card): what known-state.ts checks. */
  card_xmin: string;
  vault_xmin: string;
}

interface ReadRow {
  kind: 'previous' | 'policy' | 'counter' | 'card_policy' | 'card_counter';
  /** The repeat key, or the vault (card) id of a (card) policy or counter row. */
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

export interface VaultState {
  readonly id: string;
  /**
   * The version of the vault's row this state is of (its xmin): as locked, then the one this
   * batch's write made. Every change of a vault's totals or of its counters updates the row
   * (changeVaultTotals, recordAuthorizations), so an equal xmin means both are as here.
   */
  xmin: string;
  readonly status: VaultStatus;
  readonly currency: TransactionRecord['currency'];
  readonly ledger: Decimal;
  pending: Decimal;
  /** What this batch adds to the vault's pending total. */
  pendingDelta: Decimal;
  policy: CompiledPolicy | null;
  /** The spend counter rows its policy sums over, as read, plus this batch's approvals. */
  counters: SpendCounters;
}

function vaultStateOf(row: LockedRow): VaultState {
  return {
    id: row.vault_id,
    xmin: row.vault_xmin,
    status: row.vault_status,
    currency: currencyFromRow(row.currency),
    ledger: new Decimal(row.ledger),
    pending: new Decimal(row.pending),
    pendingDelta: ZERO,
    policy: null,
    counters: new SpendCounters(),
  };
}

export const cardKey = (cardId: string, accountId: string, mode: string) =>
  `${cardId} ${accountId} ${mode}`;

/**
 * An authorization's idempotency key, exactly as the expression of the unique index
 * transactions_network_key (migration 0012) spells it, so the lookup can probe that index.
 */
export function repeatKeyOf(scope: Scope, input: AuthorizeInput): string {
  return `${scope.accountId} ${scope.mode} ${input.networkTransactionId}`;
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
    shadowMatches: decision.shadowMatches,
    failureReason: null,
    standIn,
    hasMetadata: false,
    createdAtMs: nowMs,
    completedAtMs: null,
  };
}

/**
 * Writes the batch in one statement: the transactions; for the approvals, each vault's pending
 * total (one update per vault), the hold journal and the spend counters (one upsert per row;
 * and the card counters of cards with a policy, card-policy-batch.ts);
 * and one event per transaction. The same rows changeVaultTotals, changeSpend and
 * appendEvent write, sharing their SQL pieces. Parameters are bound by name (SqlParams), in an
 * order fixed by the code, so the text is the same every batch (one prepared statement).
 * In: `fresh`, the one-round-trip path's check (authorize-one-trip.ts): a condition on the
 *   database as the statement sees it, bound in the same `params`; false fails the statement
 *   with STALE_KNOWN_STATE, so nothing is written.
 * Out: the batch's vaults' `xmin` set to the row versions this write made.
 */
export async function recordAuthorizations(
  query: SqlQueryable['query'],
  transactions: readonly TransactionRecord[],
  batch: Pick<LockedBatch, 'vaults' | 'cardPolicies'>,
  spendDay: string,
  nowMs: number,
  fresh?: (params: SqlParams) => string,
): Promise<void> {
  const approved = transactions.filter((transaction) => transaction.status === 'pending');
  const changed = vaultsApprovedOn(batch.vaults, approved);
  const params = new SqlParams();
  const check = freshCheck(fresh?.(params));
  const at = params.value(new Date(nowMs));
  const inserted = transactionRows(params, transactions);
  const pendingDeltas = params.unnest('d', {
    id: params.texts(changed.map((vault) => vault.id)),
    delta: params.texts(changed.map((vault) => vault.pendingDelta.toFixed())),
    ...(fresh === undefined ? {} : { xmin: params.texts(changed.map((vault) => vault.xmin)) }),
  });
  const holdChanges = params.unnest('h', {
    vault_id: params.texts(approved.map((t) => t.vaultId)),
    id: params.texts(approved.map((t) => t.id)),
    delta: params.texts(approved.map((t) => t.amount.toFixed())),
  });
  const events = authorizationEvents(params, transactions, nowMs);
  const vaultsChanged = params.value(changed.length, 'integer');
  const { rows } = await query<{ updated: number; ids: string[] | null; xmins: string[] | null }>(
    `WITH ${check.cte}
     inserted AS (
       INSERT INTO transactions (id, account_id, mode, vault_id, type, status, currency, amount, hold_remaining, card_id,
                                 merchant, mcc, network_transaction_id, decline_code, decline_reason, shadow_matches,
                                 stand_in, spend_day, created_at, updated_at)
       SELECT id, account_id, mode, vault_id, 'card_authorization', status, currency, amount::numeric, hold::numeric, card_id,
              merchant::jsonb, mcc, ntx, decline_code, decline_reason::jsonb, shadow_matches::jsonb, stand_in,
              CASE WHEN status = 'pending' THEN ${params.value(spendDay, 'date')} END, ${at}, ${at}
       FROM ${inserted}
     ),
     totals AS (
       UPDATE vaults SET pending = vaults.pending + d.delta::numeric, updated_at = ${at}
       FROM ${pendingDeltas} WHERE vaults.id = d.id${check.andHolds}
       RETURNING vaults.id, vaults.xmin::text AS xmin
     ),
     journal AS (
       INSERT INTO hold_changes (vault_id, transaction_id, delta, created_at)
       SELECT vault_id, id, delta::numeric, ${at} FROM ${holdChanges}
     ),
     counters AS (${spendUpsertManySql(params, spendRowDeltas(approved, spendDay))}),
     ${cardSpendUpsertCte(params, approved, batch.cardPolicies, spendDay)}
     events AS (
       INSERT INTO outbox_events (id, account_id, mode, type, payload, created_at)
       SELECT payload->>'id', account_id, payload->>'mode', payload->>'type', payload, ${at} FROM ${events}
       RETURNING id
     ),
     queued AS (INSERT INTO outbox_unrelayed (id) SELECT id FROM events)
     -- The postcondition, checked here rather than after the statement: the COMMIT may already
     -- be on its way behind it, and a failed statement turns that COMMIT into a ROLLBACK. The
     -- cast of a sentence to integer is the error PostgreSQL raises (evaluated only when due).
     SELECT CASE ${check.whenNot}WHEN count(*) = ${vaultsChanged} THEN count(*)::int
                 ELSE ('${check.shortBecause}: ' || count(*) || ' vaults updated of ' || ${vaultsChanged})::int END AS updated,
            array_agg(id) AS ids, array_agg(xmin) AS xmins
     FROM totals`,
    params.values,
  );
  const row = rows[0];
  assert(row?.updated === changed.length, 'every vault with approvals is updated once');
  keepRowVersions(batch.vaults, row.ids ?? [], row.xmins ?? []);
}

/**
 * The batch's vaults with an approval, their pending totals changed or not (their rows'
 * versions then tell whether their counters changed, VaultState.xmin), in id order: the order
 * every vault lock is taken in (context.ts, lockVaultPair), since on known state the update of
 * these rows takes their locks itself (authorize-one-trip.ts).
 */
function vaultsApprovedOn(
  vaults: ReadonlyMap<string, VaultState>,
  approved: readonly TransactionRecord[],
): VaultState[] {
  const approvedVaults = new Set(approved.map((transaction) => transaction.vaultId));
  return [...vaults.values()]
    .filter((vault) => approvedVaults.has(vault.id))
    .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

/** The row versions the write made, on the batch's vaults it updated (VaultState.xmin). */
function keepRowVersions(
  vaults: ReadonlyMap<string, VaultState>,
  vaultIds: readonly string[],
  xmins: readonly string[],
): void {
  assert(vaultIds.length === xmins.length, 'a version per vault updated');
  vaultIds.forEach((vaultId, index) => {
    const vault = vaults.get(vaultId);
    assert(vault !== undefined, 'a vault updated is of the batch');
    vault.xmin = xmins[index] as string;
  });
}

/**
 * The pieces of recordAuthorizations' statement that make its writes depend on `freshSql`
 * (none without it): the check as a CTE, made once on the statement's snapshot (before its
 * writes), and the condition (FRESH_OR_FAIL) of the pending totals' update and of the result.
 * The update also names the row version it decided on (`d.xmin`): the statement runs without a
 * lock before it (authorize-one-trip.ts), so a row another transaction wrote since its
 * snapshot is rechecked on its new version and left alone, and the count of vaults updated
 * falls short: stale (`shortBecause`), where without the check a short count is a bug.
 */
function freshCheck(freshSql: string | undefined): {
  cte: string;
  andHolds: string;
  whenNot: string;
  shortBecause: string;
} {
  if (freshSql === undefined) {
    return { cte: '', andHolds: '', whenNot: '', shortBecause: 'postcondition failed' };
  }
  return {
    cte: `fresh AS MATERIALIZED (SELECT ${freshSql} AS ok),`,
    andHolds: ` AND vaults.xmin::text = d.xmin AND ${FRESH_OR_FAIL}`,
    whenNot: `WHEN NOT ${FRESH_OR_FAIL} THEN 0 `,
    shortBecause: STALE_KNOWN_STATE,
  };
}

/**
 * What the one-round-trip path's statement fails with when the database no longer holds the
 * state it decided on: the cast of this sentence to boolean is the error PostgreSQL raises
 * (22P02, its text quoted in the message), as the postcondition's is.
 */
export const STALE_KNOWN_STATE = 'spendgate: the known state is stale';
/**
 * The check, true or the error: a condition of the pending totals' update, so that it fails
 * before the first row is written (a stale guess could otherwise trip the available-balance
 * CHECK first), and of the statement's result, so that it is made even when nothing is
 * approved. `f.ok` joined to the sentence keeps the cast from being a constant, which the
 * planner would fold, and fail, at once.
 */
const FRESH_OR_FAIL = `(SELECT CASE WHEN f.ok THEN true ELSE ('${STALE_KNOWN_STATE}: ' || f.ok)::boolean END FROM fresh f)`;

/** The transactions' rows, for the INSERT of recordAuthorizations. */
function transactionRows(params: SqlParams, transactions: readonly TransactionRecord[]): string {
  const column = <T>(value: (transaction: TransactionRecord) => T): T[] => transactions.map(value);
  return params.unnest('r', {
    id: params.texts(column((t) => t.id)),
    account_id: params.texts(column((t) => t.accountId)),
    mode: params.texts(column((t) => t.mode)),
    vault_id: params.texts(column((t) => t.vaultId)),
    status: params.texts(column((t) => t.status)),
    currency: params.texts(column((t) => t.currency)),
    amount: params.texts(column((t) => t.amount.toFixed())),
    hold: params.texts(column((t) => t.holdRemaining.toFixed())),
    card_id: params.texts(column((t) => t.cardId)),
    merchant: params.texts(column((t) => JSON.stringify(t.merchant))),
    mcc: params.texts(column((t) => t.merchant?.mcc ?? null)),
    ntx: params.texts(column((t) => t.networkTransactionId)),
    decline_code: params.texts(column((t) => t.declineCode)),
    decline_reason: params.texts(
      column((t) => (t.declineReason === null ? null : JSON.stringify(t.declineReason))),
    ),
    // NULL for none, nearly every row: no JSON is made or stored for it (migration 0010).
    shadow_matches: params.texts(
      column((t) => (t.shadowMatches.length === 0 ? null : JSON.stringify(t.shadowMatches))),
    ),
    stand_in: params.booleans(column((t) => t.standIn)),
  });
}

/**
 * One event per transaction (approved or declined), for the INSERT of recordAuthorizations:
 * the payloads as one JSON array (SqlParams.jsons), their id, mode and type read from them.
 */
function authorizationEvents(
  params: SqlParams,
  transactions: readonly TransactionRecord[],
  nowMs: number,
): string {
  const payloads = transactions.map((transaction) => {
    const type =
      transaction.status === 'pending' ? 'authorization.approved' : 'authorization.declined';
    const scope = { accountId: transaction.accountId, mode: transaction.mode };
    return eventPayload(scope, type, presentTransaction(transaction), nowMs);
  });
  return params.unnest('e', {
    account_id: params.texts(transactions.map((transaction) => transaction.accountId)),
    payload: params.jsons(payloads),
  });
}

/**
 * What the approvals add to the spend counters, one delta per row however many approvals
 * touch it: an upsert may not touch a row twice.
 */
function spendRowDeltas(approved: readonly TransactionRecord[], spendDay: string): SpendRowDelta[] {
  const deltas = new Map<
    string,
    { vaultId: string; mcc: string; day: string; amount: Decimal; count: number }
  >();
  for (const transaction of approved) {
    const { mccs, days } = spendKeys({ day: spendDay, mcc: transaction.merchant?.mcc ?? null });
    mccs.forEach((mcc, index) => {
      const day = days[index] as string;
      const key = `${transaction.vaultId}|${mcc}|${day}`;
      const delta = deltas.get(key) ?? {
        vaultId: transaction.vaultId,
        mcc,
        day,
        amount: ZERO,
        count: 0,
      };
      delta.amount = delta.amount.plus(transaction.amount);
      delta.count += 1;
      deltas.set(key, delta);
    });
  }
  return [...deltas.values()];
}
