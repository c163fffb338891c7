import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  compilePolicy,
  Decimal,
  isDecision,
  toVaultAsset,
  ZERO,
  type AssetPrice,
  type EvaluationInput,
} from '../../src/core/index.js';

/*
 * Limits written in a billing currency (issue 35): a SOL vault's "at most L USD a day" counts
 * what the network asked in USD, never what the SOL hold was worth, so no sequence of prices
 * lets approvals exceed L, and every decline is one that would have exceeded it. The compiled
 * evaluator is exercised exactly as the authorize path calls it: the request in SOL at the
 * price (with the hold buffer), its billing amount beside it, and the day's billing spend.
 */

const SOL = { code: 'SOL', scale: 9 };
const NOW = Date.UTC(2026, 10, 29, 12, 0, 0);
const MERCHANT = { name: 'Cafe', mcc: '5812', country: 'US' };

const cents = (value: number) => new Decimal(value).dividedBy(100);
const priceOf = (value: Decimal): AssetPrice => ({ value, source: 'test', atMs: NOW });

describe('a daily limit in USD on a SOL vault', () => {
  it('is never exceeded, and declines only what would exceed it, across random prices', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 100_000 }),
        fc.array(
          fc.record({
            usdCents: fc.integer({ min: 1, max: 50_000 }),
            // SOL/USD from 0.01 to 10,000, two decimals.
            priceCents: fc.integer({ min: 1, max: 1_000_000 }),
          }),
          { minLength: 1, maxLength: 40 },
        ),
        (limitCents, requests) => {
          const limit = cents(limitCents);
          const policy = compilePolicy(
            { limits: [{ interval: 'daily', amount: limit.toFixed(), currency: 'USD' }] },
            { currency: 'SOL' },
          );
          const [aggregate] = policy.aggregates;
          expect(aggregate?.currency).toBe('USD');
          let spentUsd = ZERO;
          let heldSol = ZERO;
          for (const { usdCents, priceCents } of requests) {
            const usd = cents(usdCents);
            const converted = toVaultAsset({
              amount: usd,
              currency: 'USD',
              billingCurrency: 'USD',
              asset: SOL,
              price: priceOf(cents(priceCents)),
              holdBuffer: new Decimal('0.05'),
            });
            if (isDecision(converted)) throw new Error('a usable price converts');
            const input: EvaluationInput = {
              request: {
                cardId: 'card_1',
                amount: converted.amount,
                currency: 'SOL',
                merchant: MERCHANT,
                billingCurrency: 'USD',
                billing: { amount: usd, currency: 'USD' },
              },
              spend: { [aggregate?.key ?? '']: spentUsd },
              nowMs: NOW,
            };
            const decline = policy.firstDecline(input);
            const wouldExceed = spentUsd.plus(usd).gt(limit);
            expect(decline?.declineReason?.rule ?? null).toBe(wouldExceed ? 'limits[0]' : null);
            if (decline === null) {
              spentUsd = spentUsd.plus(usd);
              heldSol = heldSol.plus(converted.amount);
            }
            expect(spentUsd.lte(limit)).toBe(true);
          }
          // Whatever SOL was held, the USD counted is exact: a sum of cents.
          expect(spentUsd.decimalPlaces()).toBeLessThanOrEqual(2);
          expect(heldSol.isNegative()).toBe(false);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('declines a request with no USD billing amount, which it cannot count', () => {
    const policy = compilePolicy(
      { limits: [{ interval: 'daily', amount: '500', currency: 'USD' }] },
      { currency: 'SOL' },
    );
    const key = policy.aggregates[0]?.key ?? '';
    const request = {
      cardId: 'card_1',
      amount: new Decimal('0.1'),
      currency: 'SOL',
      merchant: MERCHANT,
    };
    const spend = { [key]: ZERO };
    expect(policy.firstDecline({ request, spend, nowMs: NOW })?.declineReason?.rule).toBe(
      'limits[0]',
    );
    const inEur = { ...request, billing: { amount: new Decimal('1'), currency: 'EUR' } };
    expect(policy.firstDecline({ request: inEur, spend, nowMs: NOW })?.declineReason?.rule).toBe(
      'limits[0]',
    );
    const inUsd = { ...request, billing: { amount: new Decimal('1'), currency: 'USD' } };
    expect(policy.firstDecline({ request: inUsd, spend, nowMs: NOW })).toBeNull();
  });
});
