/*
 * What `decide` answers. Decisions are frozen and, where nothing varies per call, built once
 * (per compiled rule, or here for the fixed checks) so that deciding allocates nothing more.
 */

export type DeclineCode = 'authorization_failed' | 'insufficient_balance' | 'card_declined';

/**
 * A reason given by a card's own policy (a card-level policy, which an authorization must pass
 * after the vault's) says so in `policy`. Absent everywhere else: the vault's policy and the
 * fixed checks (card and vault state, currency, balance) answer as they did before card
 * policies existed, so no existing client sees a change.
 */
export type PolicySource = 'card';

export interface DeclineReason {
  /** What declined: a rule's name, a template's name, `limits[2]`, `card_frozen`, ... */
  readonly rule: string;
  readonly message: string;
  /** `'card'` when the card's own policy declined; absent otherwise. */
  readonly policy?: PolicySource;
}

/** A shadow rule whose conditions held: reported, never declining. */
export interface ShadowMatch {
  readonly rule: string;
  readonly message: string;
  /** `'card'` when the rule is in the card's own policy; absent otherwise. */
  readonly policy?: PolicySource;
}

export interface Decision {
  readonly approved: boolean;
  readonly declineCode: DeclineCode | null;
  readonly declineReason: DeclineReason | null;
  readonly shadowMatches: readonly ShadowMatch[];
}

export const NO_SHADOW_MATCHES: readonly ShadowMatch[] = Object.freeze([]);

export const APPROVED: Decision = Object.freeze({
  approved: true,
  declineCode: null,
  declineReason: null,
  shadowMatches: NO_SHADOW_MATCHES,
});

export function declined(code: DeclineCode, rule: string, message: string): Decision {
  return Object.freeze({
    approved: false,
    declineCode: code,
    declineReason: Object.freeze({ rule, message }),
    shadowMatches: NO_SHADOW_MATCHES,
  });
}

/** The same decision with shadow matches attached; the only per-call allocation of `decide`. */
export function withShadowMatches(decision: Decision, matches: readonly ShadowMatch[]): Decision {
  return matches.length === 0 ? decision : Object.freeze({ ...decision, shadowMatches: matches });
}
