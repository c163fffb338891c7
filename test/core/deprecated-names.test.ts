import { describe, expect, it } from 'vitest';
import { compilePolicy, decide, evaluate } from '../../src/core/index.js';
import { refusalOf } from '../support/refusal.js';

/**
 * Issue 40: one name per concept. `decide` and `evaluate` both take spend as `spend` and the
 * time as `at`; the old names (`decide`'s `nowMs`, `evaluate`'s `spent`) are deprecated aliases
 * for one version: still read, refused when given beside the new name.
 */
const policy = compilePolicy({
  limits: [{ interval: 'daily', amount: '100' }],
  rules: [
    {
      name: 'night',
      conditions: { all: [{ fact: 'hourUtc', operator: 'lessThan', value: 6 }] },
    },
  ],
});
const merchant = { name: 'Le Bistro', mcc: '5812', country: 'FR' };
const NIGHT = Date.UTC(2026, 10, 18, 3);
const base = {
  card: { id: 'card_1', vaultId: 'vlt_1', status: 'active' },
  vault: { id: 'vlt_1', status: 'active', currency: 'USDC', available: '1000' },
  policy,
  spend: { 'amount:daily': '10' },
  request: { cardId: 'card_1', amount: '5', currency: 'USDC', merchant },
} as const;

describe('decide: at, and nowMs as its deprecated alias', () => {
  it('reads at as epoch milliseconds, a Date or an ISO timestamp, as evaluate does', () => {
    const declinedAt = (at: number | Date | string) => decide({ ...base, at }).declineReason?.rule;
    expect(declinedAt(NIGHT)).toBe('night');
    expect(declinedAt(new Date(NIGHT))).toBe('night');
    expect(declinedAt('2026-11-18T03:00:00Z')).toBe('night');
    expect(declinedAt('2026-11-18T12:00:00Z')).toBeUndefined();
  });

  it('still reads nowMs, to the same decision', () => {
    // eslint-disable-next-line @typescript-eslint/no-deprecated -- the alias is what is tested
    expect(decide({ ...base, nowMs: NIGHT })).toEqual(decide({ ...base, at: NIGHT }));
  });

  it('refuses both names at once, naming the deprecated one', () => {
    const error = refusalOf(() => decide({ ...base, at: NIGHT, nowMs: NIGHT } as never));
    expect([error.code, error.param]).toEqual(['parameter_invalid', 'nowMs']);
  });

  it('names the field the caller gave: at or nowMs', () => {
    const missing = refusalOf(() => decide(base as never));
    expect([missing.code, missing.param]).toEqual(['parameter_missing', 'at']);
    const badAt = refusalOf(() => decide({ ...base, at: 'yesterday' }));
    expect([badAt.code, badAt.param]).toEqual(['parameter_invalid', 'at']);
    const badNowMs = refusalOf(() => decide({ ...base, nowMs: 'yesterday' } as never));
    expect([badNowMs.code, badNowMs.param]).toEqual(['parameter_invalid', 'nowMs']);
  });
});

describe('evaluate: spend, and spent as its deprecated alias', () => {
  const facts = { amount: '95', merchant, at: NIGHT + 10 * 3_600_000 };

  it('reads spend, and spent to the same decision', () => {
    const viaSpend = evaluate(policy, { ...facts, spend: { 'amount:daily': '10' } });
    expect(viaSpend.approved).toBe(false);
    expect(evaluate(policy, { ...facts, spent: { 'amount:daily': '10' } })).toEqual(viaSpend);
    expect(evaluate(policy, { ...facts, spend: { 'amount:daily': '0' } }).approved).toBe(true);
  });

  it('refuses both names at once, naming the deprecated one', () => {
    const both = { ...facts, spend: { 'amount:daily': '1' }, spent: { 'amount:daily': '1' } };
    const error = refusalOf(() => evaluate(policy, both));
    expect([error.code, error.param]).toEqual(['parameter_invalid', 'spent']);
  });

  it('names the aggregate under the name the caller gave', () => {
    expect(refusalOf(() => evaluate(policy, { ...facts, spend: {} })).param).toBe(
      'spend["amount:daily"]',
    );
    expect(refusalOf(() => evaluate(policy, { ...facts, spent: {} })).param).toBe(
      'spent["amount:daily"]',
    );
  });
});
