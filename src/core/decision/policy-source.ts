import type { Decision, ShadowMatch } from './result.js';

/*
 * Reasons from a card's own policy name it (`policy: 'card'`); the vault's policy's reasons
 * are answered exactly as before card policies existed, so no existing client, stored decline
 * or event changes. A compiled policy's decisions and matches are built once per rule and know
 * no owner; each card-tagged copy is made once per rule object and kept beside it (a WeakMap:
 * it lives exactly as long as its compiled policy), so a decision allocates nothing more per
 * call than the shadow-match array it already had.
 */

const cardDecisions = new WeakMap<Decision, Decision>();
const cardMatches = new WeakMap<ShadowMatch, ShadowMatch>();

/** A card policy's decline, with `declineReason.policy: 'card'`; null stays null. */
export function declineOfCard(decision: Decision | null): Decision | null {
  if (decision === null || decision.declineReason === null) return decision;
  const known = cardDecisions.get(decision);
  if (known !== undefined) return known;
  const tagged: Decision = Object.freeze({
    ...decision,
    declineReason: Object.freeze({ ...decision.declineReason, policy: 'card' as const }),
  });
  cardDecisions.set(decision, tagged);
  return tagged;
}

/** A card policy's shadow matches, each with `policy: 'card'`; none is answered as it is. */
export function matchesOfCard(matches: readonly ShadowMatch[]): readonly ShadowMatch[] {
  if (matches.length === 0) return matches;
  return matches.map((match) => {
    const known = cardMatches.get(match);
    if (known !== undefined) return known;
    const tagged: ShadowMatch = Object.freeze({ ...match, policy: 'card' as const });
    cardMatches.set(match, tagged);
    return tagged;
  });
}
