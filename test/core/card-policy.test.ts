import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  compilePolicy,
  decide,
  Decimal,
  limitStatuses,
  windowEndMs,
  windowStartDay,
  type SpendTotals,
} from '../../src/core/index.js';
import { builtinRuleLibrary } from '../../src/rule-library/load.js';
import { decisionInput } from '../support/decision-input.js';

/**
 * Card-level policies in the pure core: `decide` passes an authorization through the vault's
 * policy and then the card's own, and a reason of the card's policy says so (`policy: 'card'`)
 * while the vault's answer as before; `limitStatuses` reports each limit with the decision's
 * own comparisons, so a purchase of exactly `remaining` passes and one unit more declines.
 */
const compile = (policy: unknown) =>
  compilePolicy(policy, { currency: 'USDC', templates: builtinRuleLibrary() });

const vaultPolicy = compile({
  limits: [{ interval: 'perTransaction', amount: '100' }],
  rules: [
    {
      name: 'vault-watch',
      mode: 'shadow',
      conditions: { all: [{ fact: 'amount', operator: 'greaterThan', value: 10 }] },
    },
  ],
});
const cardPolicy = compile({
  limits: [{ interval: 'daily', amount: '50' }],
  rules: [
    {
      name: 'card-watch',
      mode: 'shadow',
      conditions: { all: [{ fact: 'amount', operator: 'greaterThan', value: 20 }] },
    },
  ],
});

describe('decide with a card policy', () => {
  const at = (amount: string, cardSpent: string) => ({
    ...decisionInput({ amount, policy: vaultPolicy }),
    cardPolicy,
    cardSpend: { 'amount:daily': new Decimal(cardSpent) },
  });

  it("declines by the card's policy after the vault's passes, naming it", () => {
    const decision = decide(at('30', '25'));
    expect(decision).toEqual({
      approved: false,
      declineCode: 'authorization_failed',
      declineReason: {
        rule: 'limits[0]',
        message: 'Daily spend limit of 50.00 USDC would be exceeded',
        policy: 'card',
      },
      shadowMatches: [
        { rule: 'vault-watch', message: 'Declined by rule vault-watch' },
        { rule: 'card-watch', message: 'Declined by rule card-watch', policy: 'card' },
      ],
    });
    // The tagged reason is built once per rule: the same object every time.
    expect(decide(at('30', '25')).declineReason).toBe(decision.declineReason);
  });

  it("answers the vault's decline as before, with the card's shadow rules still reported", () => {
    const decision = decide(at('150', '0'));
    expect(decision.declineReason).toEqual({
      rule: 'limits[0]',
      message: 'Amount exceeds the per-transaction limit of 100.00 USDC',
    });
    expect(decision.shadowMatches.map((match) => match.policy ?? 'vault')).toEqual([
      'vault',
      'card',
    ]);
  });

  it('approves what both pass, and checks the balance after both', () => {
    expect(decide(at('25', '25')).approved).toBe(true);
    const poor = { ...decisionInput({ amount: '25', policy: vaultPolicy, available: '5' }) };
    expect(
      decide({ ...poor, cardPolicy, cardSpend: { 'amount:daily': new Decimal(0) } }),
    ).toMatchObject({
      declineCode: 'insufficient_balance',
    });
  });

  it("refuses a card policy compiled for another currency than the vault's", () => {
    const sol = compilePolicy({}, { currency: 'SOL' });
    // A caller's mistake, so a SpendgateError naming the field, as for the vault's policy.
    expect(() => decide({ ...decisionInput(), cardPolicy: sol })).toThrow(
      expect.objectContaining({ code: 'parameter_invalid', param: 'cardPolicy' }),
    );
  });
});

describe('limitStatuses', () => {
  const policy = compile({
    limits: [
      { interval: 'perTransaction', amount: '500' },
      { interval: 'daily', amount: '200' },
      { interval: 'monthly', amount: '300', merchantCategories: ['5812'] },
      { interval: 'weekly', count: 3 },
      { interval: 'allTime', amount: '1000' },
    ],
    templates: [{ name: 'daily-cap', params: { amount: '150' } }],
  });
  const nowMs = Date.parse('2026-11-18T12:00:00Z');

  it('reports every limit, its own and its templates', () => {
    const spend: SpendTotals = {
      'amount:daily': new Decimal('180.5'),
      'amount:monthly:5812': new Decimal('400'),
      'count:weekly': 2,
      'amount:allTime': new Decimal('10'),
    };
    const statuses = limitStatuses(policy.limits, spend, nowMs);
    expect(
      statuses.map((status) => ({
        rule: status.limit.rule,
        used: status.used === null ? null : String(status.used),
        remaining: String(status.remaining),
        resetsAt: status.resetsAtMs === null ? null : new Date(status.resetsAtMs).toISOString(),
      })),
    ).toEqual([
      { rule: 'limits[0]', used: null, remaining: '500', resetsAt: null },
      { rule: 'limits[1]', used: '180.5', remaining: '19.5', resetsAt: '2026-11-19T00:00:00.000Z' },
      // Over its limit already (a policy set after the spend): nothing remains, never less.
      { rule: 'limits[2]', used: '400', remaining: '0', resetsAt: '2026-12-01T00:00:00.000Z' },
      { rule: 'limits[3]', used: '2', remaining: '1', resetsAt: '2026-11-23T00:00:00.000Z' },
      { rule: 'limits[4]', used: '10', remaining: '990', resetsAt: null },
      { rule: 'daily-cap', used: '180.5', remaining: '0', resetsAt: '2026-11-19T00:00:00.000Z' },
    ]);
  });

  it('agrees with the decision: exactly `remaining` passes, a millionth more declines', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 30_000 }),
        fc.integer({ min: 1, max: 30_000 }),
        fc.integer({ min: 0, max: 6 }),
        fc.integer({ min: 1, max: 6 }),
        (spentCents, limitCents, count, countMax) => {
          const amountPolicy = compile({
            limits: [{ interval: 'daily', amount: new Decimal(limitCents).div(100).toFixed() }],
          });
          const countPolicy = compile({ limits: [{ interval: 'daily', count: countMax }] });
          const spend = { 'amount:daily': new Decimal(spentCents).div(100), 'count:daily': count };
          const [amountStatus] = limitStatuses(amountPolicy.limits, spend, nowMs);
          const [countStatus] = limitStatuses(countPolicy.limits, spend, nowMs);
          if (amountStatus === undefined || countStatus === undefined) throw new Error('no status');
          const remaining = amountStatus.remaining as Decimal;
          const decideAt = (amount: Decimal, cardPolicyToUse = amountPolicy) =>
            decide({
              ...decisionInput({ amount: amount.toFixed(), available: '1000000' }),
              cardPolicy: cardPolicyToUse,
              cardSpend: spend,
            }).approved;
          if (remaining.gt(0)) expect(decideAt(remaining)).toBe(true);
          expect(decideAt(remaining.plus('0.000001'))).toBe(false);
          expect(decideAt(new Decimal(1), countPolicy)).toBe((countStatus.remaining as number) > 0);
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe('windowEndMs', () => {
  it('is the first moment of the next window, for every interval and time', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: Date.UTC(1971, 0, 1), max: Date.UTC(2200, 0, 1) }),
        fc.constantFrom<'daily' | 'weekly' | 'monthly' | 'yearly'>(
          'daily',
          'weekly',
          'monthly',
          'yearly',
        ),
        (nowMs, interval) => {
          const endMs = windowEndMs(interval, nowMs);
          expect(endMs).not.toBeNull();
          const end = endMs as number;
          // After now, a window start itself, and the window just before it holds now.
          expect(end).toBeGreaterThan(nowMs);
          expect(windowStartDay(interval, end) * 86_400_000).toBe(end);
          expect(windowStartDay(interval, end - 1)).toBe(windowStartDay(interval, nowMs));
        },
      ),
      { numRuns: 2_000 },
    );
    expect(windowEndMs('perTransaction', 0)).toBeNull();
    expect(windowEndMs('allTime', 0)).toBeNull();
  });
});
