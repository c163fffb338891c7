import type { StoreContext } from '../context.js';
import { RecentMap } from '../recent-map.js';
import type { PolicyHint } from './batch.js';

/**
 * What the engine remembers of each card, vault and card policy, at most; past it the least
 * recently seen is forgotten, which costs a read (or, for the lanes, a batch that may wait on
 * another's lock), never a wrong answer.
 */
const CARD_VAULTS_MAX = 100_000;
const POLICY_HINTS_MAX = 100_000;
const CARD_HINTS_MAX = 100_000;
const AUTHORIZATION_VAULTS_MAX = 100_000;

/**
 * The store's context with the hints the authorize engine keeps between batches, one set per
 * store (AuthorizeEngine makes it): each only saves a read, since the lock and the reads after
 * it have the last word. Known state, which decides without reading, is apart (known-state.ts).
 */
export interface AuthorizeContext extends StoreContext {
  /**
   * The vault of each card this process has seen, by cardKey: a card never changes vault. The
   * batch learns it from its lock's rows and reads it to name the vaults before the lock does;
   * the lanes read it to keep batches apart by vault (lanes.ts).
   */
  readonly cardVaults: RecentMap<string>;
  /** Each vault's policy hint, by vault id: which counters to read with the lock. */
  readonly policyHints: RecentMap<PolicyHint>;
  /** Each card's own policy hint, by card id, as a vault's (card-policy-batch.ts). */
  readonly cardHints: RecentMap<PolicyHint>;
  /**
   * The vault of each hold this process approved, by transaction id: the shared transactions
   * of lifecycle messages keep a capture out of a batch that holds its vault (Store.message).
   */
  readonly authorizationVaults: RecentMap<string>;
}

export function authorizeContextOf(ctx: StoreContext): AuthorizeContext {
  return {
    ...ctx,
    cardVaults: new RecentMap(CARD_VAULTS_MAX),
    policyHints: new RecentMap(POLICY_HINTS_MAX),
    cardHints: new RecentMap(CARD_HINTS_MAX),
    authorizationVaults: new RecentMap(AUTHORIZATION_VAULTS_MAX),
  };
}
