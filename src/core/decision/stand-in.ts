import type { AuthorizationOutcome, TransactionRecord } from '../objects/records.js';
import { APPROVED, declined, type Decision } from './result.js';

/*
 * The stand-in decision (contract section 10), in one place: what the card network is told when
 * no decision is reached within the time budget (`STAND_IN=decline|approve`), and what a repeated
 * callback is told afterwards. Who does what with it:
 * - the HTTP adapter answers `standInOutcome` when the budget runs out or the store fails, and
 *   releases a late approval (http/authorize-budget.ts);
 * - the store records `STAND_IN_DECLINED` for a request it decides after its budget, so that no
 *   hold is placed (store/authorize/decide-in-memory.ts), and answers a replay with `replayedOutcome`,
 *   which agrees with what the network was first told.
 */

export const STAND_IN_RULE = 'stand_in';

export const STAND_IN_DECLINED: Decision = declined(
  'card_declined',
  STAND_IN_RULE,
  'No decision within the time budget: declined in stand-in.',
);

export const STAND_IN_APPROVED: Decision = APPROVED;

/** The answer given before the store decided: nothing recorded yet, nothing replayed. */
export function standInOutcome(standIn: 'decline' | 'approve'): AuthorizationOutcome {
  return {
    decision: standIn === 'approve' ? STAND_IN_APPROVED : STAND_IN_DECLINED,
    standIn: true,
    transaction: null,
    replayed: false,
  };
}

/** A repeated callback's answer: the decision the network was first told, from its record. */
export function replayedOutcome(transaction: TransactionRecord): AuthorizationOutcome {
  // An approval released because it came after its budget was answered as the stand-in decline.
  if (transaction.failureReason === STAND_IN_RULE) {
    return { decision: STAND_IN_DECLINED, standIn: true, transaction, replayed: true };
  }
  const decision: Decision = {
    approved: transaction.declineCode === null,
    declineCode: transaction.declineCode,
    declineReason: transaction.declineReason,
    // Recorded with the transaction (migration 0010): a replay reports what the first did.
    shadowMatches: transaction.shadowMatches,
  };
  return { decision, standIn: transaction.standIn, transaction, replayed: true };
}
