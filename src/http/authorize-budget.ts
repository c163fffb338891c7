import type { FastifyBaseLogger } from 'fastify';
import type { AuthorizeSettings } from '../config/env.js';
import type { AuthorizationOutcome, Scope } from '../core/index.js';
import type { AuthorizeInput } from '../store/ops/decide-and-record.js';
import type { Store } from '../store/store.js';

/**
 * The authorization time budget (contract section 10). The card network waits 2-3 s at most,
 * so a decision not reached within `budgetMs` (or not reached at all: the database is down) is
 * answered with the stand-in decision at once, and the late decision is settled so that what
 * the store keeps agrees with what the network was told:
 * - STAND_IN=decline: the store is handed the budget's flag, and a request it decides after
 *   the budget records the stand-in decline, with no hold. A decision reached just before the
 *   budget ran out but committed after it is an approval the network never heard of: its hold
 *   is released at once (reason `stand_in`), so no hold is left behind.
 * - STAND_IN=approve: the network approved on our behalf; the late decision stands as decided
 *   (an approval keeps its hold for the capture to come).
 */
export type BudgetedOutcome =
  | { readonly kind: 'decided'; readonly outcome: AuthorizationOutcome }
  | { readonly kind: 'stand_in' };

export async function authorizeWithinBudget(
  store: Store,
  scope: Scope,
  input: AuthorizeInput,
  settings: AuthorizeSettings,
  log: FastifyBaseLogger,
): Promise<BudgetedOutcome> {
  // A flag and a promise, not an AbortController: a signal (an EventTarget, with a listener)
  // per request was about 1.5% of the server's CPU under the authorize bench.
  const budget = { aborted: false };
  let expire: () => void = () => undefined;
  const expired = new Promise<'expired'>((resolve) => {
    expire = () => {
      resolve('expired');
    };
  });
  const timer = setTimeout(() => {
    budget.aborted = true;
    expire();
  }, settings.budgetMs);
  const decision = store.authorize(
    scope,
    input,
    settings.standIn === 'decline' ? budget : undefined,
  );
  try {
    const first = await Promise.race([decision, expired]);
    if (first !== 'expired') return { kind: 'decided', outcome: first };
  } catch (error) {
    // The network must get a decision whatever failed: the stand-in one.
    log.error({ err: error }, 'authorization failed: answered the stand-in decision');
    budget.aborted = true;
    return { kind: 'stand_in' };
  } finally {
    clearTimeout(timer);
  }
  log.warn({ budgetMs: settings.budgetMs }, 'authorization past its budget: stand-in decision');
  void decision.then(
    (late) => releaseLateApproval(store, scope, late, settings, log),
    (error: unknown) => {
      log.error({ err: error }, 'a late authorization failed after its stand-in answer');
    },
  );
  return { kind: 'stand_in' };
}

async function releaseLateApproval(
  store: Store,
  scope: Scope,
  late: AuthorizationOutcome,
  settings: AuthorizeSettings,
  log: FastifyBaseLogger,
): Promise<void> {
  const held = late.transaction;
  if (settings.standIn !== 'decline' || late.replayed || held?.status !== 'pending') return;
  try {
    await store.reverse(scope, held.id, null, 'stand_in');
  } catch (error) {
    // Captured or reversed meanwhile: nothing is left held. Anything else is for the operator.
    log.error({ err: error, transactionId: held.id }, 'could not release a late approval');
  }
}
