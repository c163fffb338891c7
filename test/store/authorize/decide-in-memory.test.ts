import { describe, expect, it } from 'vitest';
import {
  compilePolicy,
  Decimal,
  ZERO,
  type AuthorizationOutcome,
  type Scope,
} from '../../../src/core/index.js';
import {
  cardKey,
  type AuthorizeRequest,
  type LockedRow,
  type VaultState,
} from '../../../src/store/authorize/batch.js';
import { decideEach, type BatchState } from '../../../src/store/authorize/decide-in-memory.js';
import { SpendCounters } from '../../../src/store/spend-window.js';

/**
 * The decision over a batch, alone: no database, the batch's state made by hand as the lock
 * (or known state) would leave it. Each request is decided on what the ones before it left.
 */
const scope: Scope = { accountId: 'acct_1', mode: 'test' };
const DAY = '2026-11-25';
const NOW_MS = Date.UTC(2026, 10, 25, 12);
const CAFE = { name: 'Cafe Rio', mcc: '5812', country: 'US' };

function request(
  cardId: string,
  amount: string,
  networkTransactionId: string,
  aborted = false,
): AuthorizeRequest {
  return {
    scope,
    input: {
      cardId,
      amount: new Decimal(amount),
      currency: 'USDC',
      merchant: CAFE,
      networkTransactionId,
    },
    ...(aborted ? { budget: { aborted } } : {}),
  };
}

function lockedCard(cardId: string, vaultId: string): LockedRow {
  return {
    card_id: cardId,
    account_id: scope.accountId,
    mode: scope.mode,
    card_status: 'active',
    billing_currency: 'USD',
    vault_id: vaultId,
    vault_status: 'active',
    currency: 'USDC',
    ledger: '100',
    pending: '0',
    card_xmin: '10',
    vault_xmin: '11',
    processor_connection_id: null,
    processor_card_id: null,
  };
}

function vaultState(id: string, ledger: string, policy: VaultState['policy'] = null): VaultState {
  return {
    id,
    xmin: '11',
    status: 'active',
    currency: 'USDC',
    ledger: new Decimal(ledger),
    pending: ZERO,
    pendingDelta: ZERO,
    policy,
    counters: new SpendCounters(),
  };
}

/** One card on one vault of `ledger`, with `policy`, and nothing decided before. */
function batchOf(ledger: string, policy: VaultState['policy'] = null): BatchState {
  const card = lockedCard('card_1', 'vault_1');
  return {
    cards: new Map([[cardKey('card_1', scope.accountId, scope.mode), card]]),
    vaults: new Map([['vault_1', vaultState('vault_1', ledger, policy)]]),
    previous: new Map(),
    cardPolicies: new Map(),
  };
}

const outcomeOf = (decided: AuthorizationOutcome | string): AuthorizationOutcome => {
  expect(typeof decided).not.toBe('string');
  return decided as AuthorizationOutcome;
};

describe('decideEach', () => {
  it('decides each request on the holds of the ones before it, on the same vault', () => {
    const batch = batchOf('100');
    const { decided, recorded } = decideEach(
      [request('card_1', '40', 'n1'), request('card_1', '40', 'n2'), request('card_1', '40', 'n3')],
      batch,
      DAY,
      NOW_MS,
    );
    expect(decided.map((d) => outcomeOf(d).decision.approved)).toEqual([true, true, false]);
    expect(outcomeOf(decided[2] as AuthorizationOutcome).decision.declineCode).toBe(
      'insufficient_balance',
    );
    expect(recorded.map((t) => t.status)).toEqual(['pending', 'pending', 'declined']);
    expect(recorded.map((t) => t.networkTransactionId)).toEqual(['n1', 'n2', 'n3']);
    const vault = batch.vaults.get('vault_1');
    expect(vault?.pending.toFixed()).toBe('80');
    expect(vault?.pendingDelta.toFixed()).toBe('80');
  });

  it('counts the approvals before a request in its policy’s spend', () => {
    const policy = compilePolicy(
      { limits: [{ interval: 'daily', count: 1 }] },
      { currency: 'USDC' },
    );
    const batch = batchOf('100', policy);
    const { decided, recorded } = decideEach(
      [request('card_1', '1', 'n1'), request('card_1', '1', 'n2')],
      batch,
      DAY,
      NOW_MS,
    );
    expect(decided.map((d) => outcomeOf(d).decision.approved)).toEqual([true, false]);
    expect(recorded).toHaveLength(2);
    expect(batch.vaults.get('vault_1')?.counters.rowCount).toBeGreaterThan(0);
  });

  it('answers a networkTransactionId repeated in the batch with the first decision', () => {
    const { decided, recorded } = decideEach(
      [request('card_1', '5', 'same'), request('card_1', '5', 'same')],
      batchOf('100'),
      DAY,
      NOW_MS,
    );
    const [first, again] = decided.map(outcomeOf);
    expect(again?.replayed).toBe(true);
    expect(again?.transaction?.id).toBe(first?.transaction?.id);
    expect(recorded).toHaveLength(1);
  });

  it('hands back the id of a decision the database holds, and records nothing for it', () => {
    const batch = batchOf('100');
    batch.previous.set(`${scope.accountId} ${scope.mode} n1`, 'txn_earlier');
    const { decided, recorded } = decideEach([request('card_1', '5', 'n1')], batch, DAY, NOW_MS);
    expect(decided).toEqual(['txn_earlier']);
    expect(recorded).toEqual([]);
  });

  it('declines an unknown card without a record', () => {
    const { decided, recorded } = decideEach(
      [request('card_unknown', '5', 'n1')],
      batchOf('100'),
      DAY,
      NOW_MS,
    );
    const outcome = outcomeOf(decided[0] as AuthorizationOutcome);
    expect(outcome.decision.declineCode).toBe('card_declined');
    expect(outcome.transaction).toBeNull();
    expect(recorded).toEqual([]);
  });

  it('records the stand-in decline, and places no hold, for a request past its budget', () => {
    const batch = batchOf('100');
    const { decided, recorded } = decideEach(
      [request('card_1', '5', 'n1', true)],
      batch,
      DAY,
      NOW_MS,
    );
    const outcome = outcomeOf(decided[0] as AuthorizationOutcome);
    expect(outcome.standIn).toBe(true);
    expect(outcome.decision.approved).toBe(false);
    expect(recorded[0]?.standIn).toBe(true);
    expect(batch.vaults.get('vault_1')?.pending.isZero()).toBe(true);
  });
});
