import type { HoldExpirySettings, Pricing } from '../../core/index.js';
import { assert, type AuthorizationOutcome } from '../../core/index.js';
import type { SqlTransaction } from '../sql/client.js';
import type { SqlParams } from '../sql/params.js';
import { repeatKeyOf, type AuthorizeRequest, type LockedBatch } from './batch.js';
import { decideEach } from './decide-in-memory.js';
import type { KnownState } from './known-state.js';
import { FIRST_DECISION_OF_KEY } from './lock-and-read.js';
import { recordAuthorizations, STALE_KNOWN_STATE } from './write.js';

/**
 * The known state of a batch was no longer the database's: nothing was written, and the
 * batch runs again the two-round-trip way (authorizeBatch).
 */
export class StaleKnownState extends Error {
  constructor() {
    super('the state the batch decided on has changed');
  }
}

/**
 * authorizeOnKnownState: a batch decided on what this process last saw of its vaults and cards
 * (known-state.ts), written in one round trip: BEGIN, the write, and COMMIT leave in one write
 * to the socket and are answered together, where authorizeBatch waits for its lock and reads
 * before it can decide.
 *
 * Why it is right without a lock before the write: the write checks, on its own snapshot, that
 * the database holds the state decided on (`freshSql`): each vault's row version (its totals,
 * status and counters: every change of those updates the row), each card's row version
 * (status, vault), each vault's policy version, no card policy, and no earlier decision of any
 * networkTransactionId. That is everything authorizeBatch reads after its lock. What commits
 * after that snapshot is caught by the vaults' update, which names the row version decided on:
 * a vault another transaction has written meanwhile is rechecked on its new version, left
 * alone, and the statement fails as stale (its count of vaults updated falls short). Every
 * writer that holds a vault's lock writes a new version of its row to take it (lockVault,
 * context.ts), so a writer of what the check reads (a policy, a card's policy and the counters
 * it fills) cannot commit beside the batch unseen. What is left outside the vaults' update: a
 * card frozen by a transaction that commits after the snapshot (no vault lock; the freeze
 * applies from the next decision, as it would had it committed a moment later), the vaults of
 * a batch's declines (a decline moves no money and counts no spend), and a networkTransactionId
 * another process decides at the same moment (its unique index fails the write; the batcher
 * then answers one request at a time, the first decision replayed).
 *
 * In: requests whose every card and vault `batch` holds (KnownState.recall), all decided now.
 * Out: one outcome per request, committed; the state the batch left is known again.
 * Fails: StaleKnownState when the check finds the state changed (nothing written); any other
 *   error as authorizeBatch fails (the batcher runs the requests one by one).
 */
export async function authorizeOnKnownState(
  tx: SqlTransaction,
  requests: readonly AuthorizeRequest[],
  batch: LockedBatch,
  known: KnownState,
  spendDay: string,
  nowMs: number,
  holdExpiry?: HoldExpirySettings,
  pricing?: Pricing,
): Promise<AuthorizationOutcome[]> {
  const { decided, recorded } = decideEach(requests, batch, spendDay, nowMs, holdExpiry, pricing);
  const outcomes = decided.map((outcome) => {
    // Known state holds no earlier decisions: the check finds them, and the batch runs again.
    assert(typeof outcome !== 'string', 'a batch on known state replays nothing it read');
    return outcome;
  });
  // Every request's card is known (an unknown card is never recalled), so each first use of a
  // networkTransactionId is decided and recorded.
  assert(recorded.length > 0, 'a batch on known state records a decision');
  const repeatKeys = requests.map(({ scope, input }) => repeatKeyOf(scope, input));
  try {
    await recordAuthorizations(tx.queryAndCommit, recorded, batch, spendDay, nowMs, (params) =>
      freshSql(params, batch, repeatKeys),
    );
  } catch (error) {
    if (isStale(error)) {
      known.settle(batch, 'stale');
      throw new StaleKnownState();
    }
    throw error;
  }
  known.settle(batch, 'committed');
  known.remember(batch, spendDay, nowMs);
  return outcomes;
}

/**
 * The check of the write's statement: true when the database, as the statement sees it, holds
 * the state `batch` was decided on (authorizeOnKnownState says why these are all of it). The
 * vaults, cards, policies and repeat keys are probed by index, one row per vault, card or
 * request: a LATERAL subquery with LIMIT 1 (or, for the policies, a scalar subquery) cannot be
 * turned into a join, so the planner cannot choose a scan of the whole table and a hash join
 * instead. With plain joins it did, for the
 * vaults, cards and policies of a small fleet (200 vaults: a few pages each), and every batch
 * however small read all their rows (docs/performance.md, "The check's probes"). Card policies
 * stay a plain `= ANY`, probed by their primary key as the transaction's settings ask
 * (GENERIC_PLAN_SETTINGS, sql/pg-client.ts).
 */
function freshSql(params: SqlParams, batch: LockedBatch, repeatKeys: readonly string[]): string {
  const vaults = [...batch.vaults.values()];
  const cards = [...batch.cards.values()];
  const knownVaults = params.unnest('k', {
    id: params.texts(vaults.map((vault) => vault.id)),
    xmin: params.texts(vaults.map((vault) => vault.xmin)),
    version: params.texts(vaults.map((vault) => batch.versions.get(vault.id)?.toString() ?? null)),
  });
  const cardIds = params.texts(cards.map((card) => card.card_id));
  // With its vault: a card is found by its distribution column (src/store/distribution.ts).
  const knownCards = params.unnest('k', {
    id: cardIds,
    vault_id: params.texts(cards.map((card) => card.vault_id)),
    xmin: params.texts(cards.map((card) => card.card_xmin)),
  });
  const probe = (from: string, lookup: string) =>
    `(SELECT count(*) FROM ${from} CROSS JOIN LATERAL (${lookup} LIMIT 1) AS hit)`;
  // The policy's version, or NULL for none: a scalar subquery, which the planner runs as one
  // probe per known vault and cannot turn into a join either.
  const policyVersion = `(SELECT p.version FROM policies p WHERE p.vault_id = k.id AND p.document IS NOT NULL)`;
  const vaultCount = params.value(vaults.length, 'integer');
  return `${probe(knownVaults, 'SELECT FROM vaults v WHERE v.id = k.id AND v.xmin::text = k.xmin')} = ${vaultCount}
       AND (SELECT count(*) FROM ${knownVaults} WHERE ${policyVersion} IS NOT DISTINCT FROM k.version::integer) = ${vaultCount}
       AND ${probe(knownCards, 'SELECT FROM cards c WHERE c.vault_id = k.vault_id AND c.id = k.id AND c.xmin::text = k.xmin')} = ${params.value(cards.length, 'integer')}
       AND NOT EXISTS (SELECT FROM card_policies WHERE card_id = ANY(${cardIds}) AND document IS NOT NULL)
       AND NOT EXISTS (SELECT FROM unnest(${params.texts(repeatKeys)}) AS n(key) ${FIRST_DECISION_OF_KEY})`;
}

function isStale(error: unknown): boolean {
  return error instanceof Error && error.message.includes(STALE_KNOWN_STATE);
}
