import type { FastifyBaseLogger } from 'fastify';
import type { AuthorizeSettings } from '../config/env.js';
import { standInOutcome, type AuthorizationOutcome, type Scope } from '../core/index.js';
import type { AuthorizeInput, RequestTrace, Store } from '../store/store.js';
import type { StandInRecords } from './stand-in-records.js';

/**
 * authorizeWithinBudget: the complete answer to an authorize callback, the stand-in one
 * included (contract section 10; the stand-in rules are in core/decision/stand-in.ts). The
 * card network waits 2-3 s at most, so a decision not reached within `budgetMs` (or not reached
 * at all: the database is down) is answered with the stand-in decision at once, and the network
 * is then told what the ledger records (issue 37, item 3):
 * - STAND_IN=decline: the store is handed the budget's flag, and a request it decides after the
 *   budget records the stand-in decline, with no hold.
 * - Either way, the stand-in answer is owed to the ledger (stand-in-records.ts) as an advice of
 *   our own, on the disk first where a journal is kept (stand-in-journal.ts), then recorded
 *   once the late decision has settled (or the database is back): an
 *   approved stand-in places its hold whatever the balance, a declined one releases an approval
 *   committed after the budget. Until then a repeat of the callback is answered the stand-in.
 */
export async function authorizeWithinBudget(
  store: Store,
  scope: Scope,
  input: AuthorizeInput,
  settings: AuthorizeSettings,
  log: FastifyBaseLogger,
  records: StandInRecords,
  // The request's trace when it is sampled (tracing/request-spans.ts): the store's spans join it.
  trace?: RequestTrace,
): Promise<AuthorizationOutcome> {
  const owed = records.answerFor(scope, input.networkTransactionId);
  if (owed !== null) return owed;
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
    trace,
  );
  const told = settings.standIn === 'approve';
  try {
    const first = await Promise.race([decision, expired]);
    if (first !== 'expired') return first;
  } catch (error) {
    // The network must get a decision whatever failed: the stand-in one, owed to the ledger.
    log.error({ err: error }, 'authorization failed: answered the stand-in decision');
    budget.aborted = true;
    await records.owe(scope, input, told);
    return standInOutcome(settings.standIn);
  } finally {
    clearTimeout(timer);
  }
  log.warn({ budgetMs: settings.budgetMs }, 'authorization past its budget: stand-in decision');
  await records.owe(scope, input, told, decision);
  return standInOutcome(settings.standIn);
}
