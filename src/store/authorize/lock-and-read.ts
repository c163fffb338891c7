import { assert, Decimal, ZERO } from '../../core/index.js';
import { currencyFromRow } from '../rows.js';
import {
  readSpendCounters,
  SpendCounters,
  spendWindowOf,
  spendWindowRows,
} from '../spend-window.js';
import type { SqlQueryable } from '../sql/client.js';
import { SqlParams } from '../sql/params.js';
import { loadCompiledPolicy } from '../ops/policies.js';
import type {
  AfterLock,
  AuthorizeRequest,
  LockedBatch,
  LockedRow,
  PolicyHint,
  VaultState,
} from './batch.js';
import { cardKey, repeatKeyOf } from './batch.js';
import {
  CARD_READ_KINDS,
  cardPolicyReads,
  loadCardPolicies,
  takeCardRow,
} from './card-policy-batch.js';
import type { AuthorizeContext } from './memory.js';

/*
 * The first round trip of a batch that reads first (two-trips.ts): the lock of the requests'
 * vaults and the reads after it, then the policies those reads name.
 */

/**
 * Locks the requests' vaults, reading their cards and state, and reads after the lock what the
 * decisions need (readAfterLock).
 */
export async function lockAndRead(
  ctx: AuthorizeContext,
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
  const cardVaults = ctx.cardVaults;
  const foreseen = new Set<string>();
  for (const { scope, input } of requests) {
    const vaultId = cardVaults.get(cardKey(input.cardId, scope.accountId, scope.mode));
    if (vaultId !== undefined) foreseen.add(vaultId);
  }
  const [{ rows: lockedRows }, afterLock] = await Promise.all([
    tx.query<LockedRow>(
      `SELECT c.id AS card_id, c.account_id, c.mode, c.status AS card_status, c.billing_currency, c.vault_id,
              v.status AS vault_status, v.currency, v.ledger, v.pending,
              c.xmin::text AS card_xmin, v.xmin::text AS vault_xmin,
              c.processor_connection_id, c.processor_card_id
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
    readAfterLock(ctx, tx, [...foreseen], requests, nowMs),
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
    const more = await readAfterLock(ctx, tx, unforeseen, [], nowMs);
    for (const [vaultId, version] of more.versions) afterLock.versions.set(vaultId, version);
    for (const [vaultId, hinted] of more.hinted) afterLock.hinted.set(vaultId, hinted);
  }
  return { ...afterLock, cards, vaults, cardPolicies: new Map() };
}

/**
 * The first decision (`t.id`) of each repeat key `n.key` (repeatKeyOf) the database holds, as a
 * join to put after a FROM item `n(key)`: the read after the lock and the one-round-trip path's
 * check (one-trip.ts) look up repeats alike. One probe of transactions_network_key
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

/**
 * The reads after the lock, in one statement: the first outcome of each request's
 * networkTransactionId, the policy versions of `vaultIds`, and, for each of them whose policy
 * this process has seen, the counters that policy sums over (its hint: a version is never
 * reused, so the counters are the right ones exactly when the version read equals the hint's),
 * and the same of the requests' cards' own policies (cardPolicyReads).
 */
async function readAfterLock(
  ctx: AuthorizeContext,
  tx: SqlQueryable,
  vaultIds: readonly string[],
  requests: readonly AuthorizeRequest[],
  nowMs: number,
): Promise<AfterLock> {
  const hinted = new Map<string, { hint: PolicyHint; counters: SpendCounters }>();
  for (const vaultId of vaultIds) {
    const hint = ctx.policyHints.get(vaultId);
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
export async function loadPolicies(
  ctx: AuthorizeContext,
  tx: SqlQueryable,
  batch: LockedBatch,
  nowMs: number,
): Promise<void> {
  const hints = ctx.policyHints;
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
export async function loadCardPoliciesOf(
  ctx: AuthorizeContext,
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
