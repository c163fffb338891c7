import { describe, expect, it } from 'vitest';
import { Decimal, ZERO, type Scope } from '../../../src/core/index.js';
import {
  cardKey,
  type AuthorizeRequest,
  type LockedBatch,
} from '../../../src/store/authorize/batch.js';
import { KnownState } from '../../../src/store/authorize/known-state.js';
import { SpendCounters } from '../../../src/store/spend-window.js';
import { merchant } from '../../support/store.js';

/**
 * When known state keeps going stale (another process writing the same vaults), the store
 * stops guessing for a while, longer each time it is still stale, and as briefly as at first
 * once a window of guesses holds. Pure: the KnownState alone, with one card and one vault.
 */
const scope: Scope = { accountId: 'acct_1', mode: 'test' };
const DAY = '2026-11-25';
const NOW_MS = Date.UTC(2026, 10, 25, 12);

const request: AuthorizeRequest = {
  scope,
  input: {
    cardId: 'card_1',
    amount: new Decimal('1'),
    currency: 'USDC',
    merchant: merchant(),
    networkTransactionId: 'ntx_1',
  },
};

function committedBatch(): LockedBatch {
  const card = {
    card_id: 'card_1',
    account_id: scope.accountId,
    mode: scope.mode,
    card_status: 'active' as const,
    billing_currency: 'USD',
    vault_id: 'vault_1',
    vault_status: 'active' as const,
    currency: 'USDC',
    ledger: '100',
    pending: '0',
    card_xmin: '10',
    vault_xmin: '11',
    processor_connection_id: null,
    processor_card_id: null,
  };
  const vault = {
    id: 'vault_1',
    xmin: '11',
    status: 'active' as const,
    currency: 'USDC' as const,
    ledger: new Decimal('100'),
    pending: ZERO,
    pendingDelta: ZERO,
    policy: null,
    counters: new SpendCounters(),
  };
  return {
    cards: new Map([[cardKey('card_1', scope.accountId, scope.mode), card]]),
    vaults: new Map([['vault_1', vault]]),
    versions: new Map(),
    previous: new Map(),
    hinted: new Map(),
    cardReads: { versions: new Map(), hinted: new Map() },
    cardPolicies: new Map(),
  };
}

/**
 * One batch: the state a batch committed is known, the next is decided on it (or not, while
 * paused: then it reads first, as here) and ends `outcome`. Whether it was decided on it.
 */
function batch(known: KnownState, outcome: 'committed' | 'stale'): boolean {
  known.remember(committedBatch(), DAY, NOW_MS);
  const recalled = known.recall([request], DAY, NOW_MS);
  if (recalled === null) return false;
  known.settle(recalled, outcome);
  return true;
}

/** Batches until one is decided on known state again: how many read first. */
function pauseLength(known: KnownState): number {
  let paused = 0;
  while (!batch(known, 'committed')) paused += 1;
  return paused;
}

/** A window of 64 batches decided on known state, all ending `outcome`. */
function window(known: KnownState, outcome: 'committed' | 'stale'): void {
  for (let index = 0; index < 64; index++) expect(batch(known, outcome)).toBe(true);
}

describe('known state that goes stale', () => {
  it('is set aside 512 batches, then twice as long each window it is still stale', () => {
    const known = new KnownState();
    window(known, 'stale');
    // The batch that ends the pause counts as the first of the next window.
    expect(pauseLength(known)).toBe(512);
    for (let index = 0; index < 62; index++) batch(known, 'stale');
    expect(batch(known, 'stale')).toBe(true);
    expect(pauseLength(known)).toBe(1024);
    expect(known.stats).toMatchObject({ oneTrip: 64 + 1 + 63 + 1, stale: 127 });
  });

  it('is set aside as briefly as at first once a window holds', () => {
    const known = new KnownState();
    window(known, 'stale');
    expect(pauseLength(known)).toBe(512);
    // With the batch that ended the pause, a window that holds.
    for (let index = 0; index < 63; index++) expect(batch(known, 'committed')).toBe(true);
    window(known, 'stale');
    expect(pauseLength(known)).toBe(512);
  });

  it('is not set aside for one stale batch in eight', () => {
    const known = new KnownState();
    for (let index = 0; index < 64; index++)
      expect(batch(known, index % 8 === 0 ? 'stale' : 'committed')).toBe(true);
    expect(batch(known, 'committed')).toBe(true);
  });
});
