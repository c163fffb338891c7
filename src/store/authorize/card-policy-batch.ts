import {
  assert,
  Decimal,
  type CompiledPolicy,
  type CurrencyCode,
  type TransactionRecord,
} from '../../core/index.js';
import {
  addApprovalDeltas,
  approvalOf,
  CARD_SPEND,
  counterUpsertSql,
  type CounterRowDelta,
} from '../spend.js';
import {
  readSpendCounters,
  SpendCounters,
  spendWindowOf,
  spendWindowRows,
} from '../spend-window.js';
import type { SqlQueryable } from '../sql/client.js';
import type { SqlParams } from '../sql/params.js';
import { loadCompiledCardPolicy } from '../ops/card-policies.js';
import type { CardPolicyState, CardReads, PolicyHint } from './batch.js';
import type { AuthorizeContext } from './memory.js';

/*
 * Card-level policies on the authorize path (two-trips.ts), kept apart from it. What
 * they cost a batch whose cards have no policy of their own: no round trip and no write. The
 * read after the lock, which the batch sends anyway, also reads the requests' cards' policy
 * versions (one probe of card_policies' primary key per card: about 1 us of PostgreSQL's time
 * for a batch of 16, measured with EXPLAIN ANALYZE beside the statement's 300 us) and, only
 * for the cards whose policy this process has seen, their counters. The one write statement
 * gains an upsert of card counters only when the batch approved on a card with a policy. A
 * card with a policy this process has not seen, or whose policy changed, costs one more read,
 * as a vault's does.
 */

/** A row of the read after the lock (lock-and-read.ts, ReadRow), of one of the kinds here. */
export interface CardReadRow {
  readonly kind: string;
  readonly key: string;
  readonly value: string | null;
  readonly mcc: string | null;
  readonly day: string | null;
  readonly amount: string | null;
  readonly count: number | null;
}

/** The kinds of row `cardPolicyReads` adds to the read after the lock. */
export const CARD_READ_KINDS: ReadonlySet<string> = new Set(['card_policy', 'card_counter']);

/**
 * The part of the read after the lock that reads `cardIds`' policy versions and the counters
 * of those with a hint, as SQL to append (`UNION ALL ...`) to that statement, binding its
 * parameters in `params`; and the reads its rows fill (takeCardRow). Two texts only (with
 * the counter part, or without when no card has a hint), so two prepared statements at most.
 */
export function cardPolicyReads(
  ctx: AuthorizeContext,
  params: SqlParams,
  cardIds: readonly string[],
  nowMs: number,
): { readonly sql: string; readonly reads: CardReads } {
  const hints = ctx.cardHints;
  const hinted = new Map<string, { hint: PolicyHint; counters: SpendCounters }>();
  for (const cardId of cardIds) {
    const hint = hints.get(cardId);
    if (hint !== undefined && hint.aggregates.length > 0)
      hinted.set(cardId, { hint, counters: new SpendCounters() });
  }
  const versionsSql = `UNION ALL
     SELECT 'card_policy', card_id, version::text, NULL, NULL, NULL, NULL
     FROM card_policies WHERE card_id = ANY(${params.texts(cardIds)}) AND document IS NOT NULL`;
  // No card with a hint (the common case: cards without a policy): no counter part at all.
  if (hinted.size === 0) return { sql: versionsSql, reads: { versions: new Map(), hinted } };
  const window = spendWindowOf(
    [...hinted.values()].map(({ hint }) => hint.aggregates),
    nowMs,
  );
  const sql = `${versionsSql}
     UNION ALL
     SELECT 'card_counter', w.owner_id, NULL, c.mcc, c.day::text, c.amount::text, c.count
     FROM ${spendWindowRows(params, [...hinted.keys()], window, CARD_SPEND)}`;
  return { sql, reads: { versions: new Map(), hinted } };
}

/** Takes one row of a kind of CARD_READ_KINDS into `reads`. */
export function takeCardRow(reads: CardReads, row: CardReadRow): void {
  assert(CARD_READ_KINDS.has(row.kind), 'a card read row');
  if (row.kind === 'card_policy') {
    reads.versions.set(row.key, Number(row.value));
    return;
  }
  // Rows of the cards with a hint, in the window of their hinted policies.
  const counters = reads.hinted.get(row.key)?.counters;
  counters?.add(
    row.mcc as string,
    row.day as string,
    new Decimal(row.amount as string),
    Number(row.count),
  );
}

/**
 * Each locked card's own policy (from the cache by the version read, compiled on a miss) and
 * its counters: those read with the lock when the hint they were read for is the version read,
 * else read now for all such cards in one more statement. Only cards of active vaults: any
 * other is declined before a policy is reached.
 */
export async function loadCardPolicies(
  ctx: AuthorizeContext,
  tx: SqlQueryable,
  reads: CardReads,
  cards: Iterable<{ readonly card_id: string; readonly vault_id: string }>,
  vaults: ReadonlyMap<string, { readonly status: string; readonly currency: CurrencyCode }>,
  nowMs: number,
): Promise<Map<string, CardPolicyState>> {
  const states = new Map<string, CardPolicyState>();
  if (reads.versions.size === 0) return states;
  const hints = ctx.cardHints;
  const unread: { cardId: string; policy: CompiledPolicy }[] = [];
  for (const card of cards) {
    const version = reads.versions.get(card.card_id);
    const vault = vaults.get(card.vault_id);
    if (version === undefined || vault?.status !== 'active') continue;
    const policy =
      ctx.policyCache.get(card.card_id, version) ??
      (await loadCompiledCardPolicy(ctx, tx, card.card_id, vault.currency))?.policy;
    // Its vault is locked, and every change of a card's policy locks it: the version stands.
    assert(policy !== undefined, 'a card policy read after the lock is there until commit');
    if (hints.get(card.card_id)?.version !== version)
      hints.set(card.card_id, { version, aggregates: policy.aggregates });
    const hinted = reads.hinted.get(card.card_id);
    if (hinted !== undefined && hinted.hint.version === version)
      states.set(card.card_id, { policy, counters: hinted.counters });
    else if (policy.aggregates.length > 0) unread.push({ cardId: card.card_id, policy });
    else states.set(card.card_id, { policy, counters: new SpendCounters() });
  }
  if (unread.length === 0) return states;
  const window = spendWindowOf(
    unread.map(({ policy }) => policy.aggregates),
    nowMs,
  );
  const counters = await readSpendCounters(
    tx,
    unread.map(({ cardId }) => cardId),
    window,
    CARD_SPEND,
  );
  for (const { cardId, policy } of unread) {
    const read = counters.get(cardId);
    assert(read !== undefined, 'every card read has counters');
    states.set(cardId, { policy, counters: read });
  }
  return states;
}

/**
 * The part of the batch's one write statement that adds the batch's approvals on cards with a
 * policy to their counters (binding in `params`): a CTE `card_counters AS (upsert), ` to put
 * among the statement's others, one delta per row however many approvals touch it. No such
 * approval: nothing, and the statement is the one it was before card policies (its own
 * prepared statement; an upsert of no rows cost 20 us of PostgreSQL's time per batch).
 */
export function cardSpendUpsertCte(
  params: SqlParams,
  approved: readonly TransactionRecord[],
  cardPolicies: ReadonlyMap<string, CardPolicyState>,
  spendDay: string,
): string {
  if (cardPolicies.size === 0) return '';
  const deltas = new Map<string, CounterRowDelta>();
  for (const transaction of approved) {
    const cardId = transaction.cardId;
    if (cardId === null || !cardPolicies.has(cardId)) continue;
    addApprovalDeltas(deltas, cardId, approvalOf(transaction), spendDay);
  }
  if (deltas.size === 0) return '';
  return `card_counters AS (${counterUpsertSql(params, CARD_SPEND, [...deltas.values()])}),`;
}
