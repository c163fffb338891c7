import type { HoldExpirySettings, Pricing } from '../../core/index.js';
import {
  assert,
  replayedOutcome,
  type AuthorizationOutcome,
  type TransactionRecord,
} from '../../core/index.js';
import { getTransaction } from '../ops/reads.js';
import { spendDayOf } from '../spend.js';
import type { SqlQueryable, SqlTransaction } from '../sql/client.js';
import { AUTHORIZE_BATCH_MAX, type AuthorizeRequest, type LockedBatch } from './batch.js';
import { decideEach } from './decide-in-memory.js';
import type { KnownState } from './known-state.js';
import { loadCardPoliciesOf, loadPolicies, lockAndRead } from './lock-and-read.js';
import type { AuthorizeContext } from './memory.js';
import { recordAuthorizations } from './write.js';

/**
 * authorizeBatch: one transaction for up to 64 authorizations (contract section 10), in a
 * fixed number of statements whatever their number, so that the per-transaction costs (round
 * trips, commit, statement overhead) are paid once per batch rather than once per
 * authorization. Two round trips in the steady state, BEGIN and COMMIT included (one, for a
 * batch whose cards and vaults the process knows: one-trip.ts decides it on what the batch
 * before it left, with decideEach, and writes it with recordAuthorizations):
 * 1. lockAndRead (lock-and-read.ts): lock every vault the requests' cards belong to, in vault id order (so
 *    batches, transfers and captures never deadlock), reading card and vault state; and, sent
 *    with it and run after it, with the locks held: the first outcome of any repeated
 *    networkTransactionId, the vaults' policy versions and the spend counters their policies
 *    need (for the vaults this process foresees: see readAfterLock and ctx.cardVaults).
 * 2. loadPolicies: the compiled policies, from the cache; a vault not foreseen, or whose
 *    policy changed, costs one more read. Then the cards' own policies, read with the lock
 *    too (card-policy-batch.ts; a card without one costs no read and no write).
 * 3. decideInOrder: decide each request in order, in memory (decide-in-memory.ts): a later request sees the holds
 *    and spend of the earlier ones on the same vault, exactly as if they had run one after
 *    another.
 * 4. recordAuthorizations (write.ts): write everything in one statement: transactions, vault pending
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
  ctx: AuthorizeContext,
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
  const { outcomes, recorded } = await decideInOrder(
    tx,
    requests,
    batch,
    spendDay,
    nowMs,
    ctx.holdExpiry,
    ctx.pricing,
  );
  if (recorded.length > 0) {
    await recordAuthorizations(commitWith ?? tx.query, recorded, batch, spendDay, nowMs);
    // Committed (the write went with the COMMIT): the state the batch left is the state the
    // database holds, for the next batch on these vaults to decide on (known-state.ts).
    if (commitWith !== undefined) options.known?.remember(batch, spendDay, nowMs);
  }
  assert(outcomes.length === requests.length, 'one outcome per request');
  return outcomes;
}

/**
 * Decides each request in order (decideEach), reading the first decision of each
 * networkTransactionId the database already holds.
 */
async function decideInOrder(
  tx: SqlQueryable,
  requests: readonly AuthorizeRequest[],
  batch: LockedBatch,
  spendDay: string,
  nowMs: number,
  holdExpiry: HoldExpirySettings | undefined,
  pricing: Pricing | undefined,
): Promise<{ outcomes: AuthorizationOutcome[]; recorded: TransactionRecord[] }> {
  const { decided, recorded } = decideEach(requests, batch, spendDay, nowMs, holdExpiry, pricing);
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
