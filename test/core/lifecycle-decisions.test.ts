import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  compilePolicy,
  decide,
  Decimal,
  isDecision,
  toVaultAsset,
  withPartialApproval,
  type AssetAmount,
  type DecisionInput,
} from '../../src/core/index.js';
import { builtinRuleLibrary } from '../../src/rule-library/load.js';
import { decisionInput, decisionState } from '../support/decision-input.js';

/*
 * The pure parts of a card transaction's whole life (contract v1.2, section 16): a request in
 * the card's billing currency converted to the vault's asset, partial approval, and the 0.00
 * account verification.
 */

const USDC = { code: 'USDC', scale: 6 };
const SOL = { code: 'SOL', scale: 9 };
const price = (value: string) => ({ value: new Decimal(value), source: 'feed', atMs: 0 });

function converted(result: ReturnType<typeof toVaultAsset>): AssetAmount {
  if (isDecision(result)) throw new Error(`declined: ${String(result.declineReason?.rule)}`);
  return result;
}

describe('toVaultAsset', () => {
  it('takes a request in the asset as it is, and USD to USDC at par with no rate', () => {
    const amount = new Decimal('18.25');
    for (const currency of ['USDC', 'USD']) {
      const result = converted(
        toVaultAsset({ amount, currency, billingCurrency: 'USD', asset: USDC, price: null }),
      );
      expect(result.amount.toFixed()).toBe('18.25');
      expect(result.billing).toEqual({ amount, currency });
      expect(result.rate).toBeNull();
    }
  });

  it('declines another currency as currency_mismatch, and SOL without a price as rate_unavailable', () => {
    const amount = new Decimal('10');
    const euro = toVaultAsset({
      amount,
      currency: 'EUR',
      billingCurrency: 'USD',
      asset: USDC,
      price: null,
    });
    expect(isDecision(euro) && euro.declineReason?.rule).toBe('currency_mismatch');
    const sol = toVaultAsset({
      amount,
      currency: 'USD',
      billingCurrency: 'USD',
      asset: SOL,
      price: null,
    });
    expect(isDecision(sol) && [sol.declineCode, sol.declineReason?.rule]).toEqual([
      'card_declined',
      'rate_unavailable',
    ]);
  });

  it('converts at a price rounded up to the asset scale, never holding less than asked', () => {
    fc.assert(
      fc.property(
        fc.bigInt({ min: 1n, max: 10n ** 12n }),
        fc.bigInt({ min: 1n, max: 10n ** 10n }),
        (cents, priceMicros) => {
          const amount = new Decimal(cents.toString()).dividedBy(100);
          const value = new Decimal(priceMicros.toString()).dividedBy(10 ** 6);
          const result = converted(
            toVaultAsset({
              amount,
              currency: 'USD',
              billingCurrency: 'USD',
              asset: SOL,
              price: price(value.toFixed()),
            }),
          );
          expect(result.amount.decimalPlaces()).toBeLessThanOrEqual(9);
          // Worth at least what was asked, and less than one lamport more.
          expect(result.amount.times(value).gte(amount)).toBe(true);
          expect(result.amount.minus('0.000000001').times(value).lt(amount)).toBe(true);
          expect(result.rate?.value.eq(value)).toBe(true);
        },
      ),
    );
  });
});

const compile = (policy: unknown) =>
  compilePolicy(policy, { currency: 'USDC', templates: builtinRuleLibrary() });

function partial(input: DecisionInput, scale = 2) {
  return withPartialApproval(input, decide(input), scale, decide);
}

describe('partial approval', () => {
  it('approves what the balance allows, rounded down to the scale, and says what was asked', () => {
    const input = decisionState({ amount: '60', available: '42.129' });
    const result = partial(input);
    expect([result.decision.approved, result.partial, result.amount.toFixed()]).toEqual([
      true,
      true,
      '42.12',
    ]);
  });

  it('approves what an amount limit for the category still allows, and no more', () => {
    const policy = compile({
      limits: [
        { interval: 'daily', amount: '100', merchantCategories: ['5542'] },
        { interval: 'perTransaction', amount: '75' },
      ],
    });
    const fuel = decisionState({
      amount: '90',
      policy,
      merchant: { mcc: '5542' },
      spend: { 'amount:daily:5542': new Decimal('40') },
    });
    const at = partial(fuel);
    expect([at.decision.approved, at.partial, at.amount.toFixed()]).toEqual([true, true, '60']);
    // At another category only the per-transaction limit applies.
    const food = decisionState({
      amount: '90',
      policy,
      spend: { 'amount:daily:5542': new Decimal('40') },
    });
    const other = partial(food);
    expect([other.partial, other.amount.toFixed()]).toEqual([true, '75']);
  });

  it('answers the first decline when nothing is left, or when a rule declines the smaller amount', () => {
    const empty = partial(decisionState({ amount: '10', available: '0' }));
    expect([empty.decision.approved, empty.partial, empty.amount.toFixed()]).toEqual([
      false,
      false,
      '10',
    ]);
    const blocked = compile({
      merchantCategories: { block: ['7995'] },
      limits: [{ interval: 'perTransaction', amount: '50' }],
    });
    const gambling = partial(
      decisionState({ amount: '80', policy: blocked, merchant: { mcc: '7995' } }),
    );
    expect([gambling.decision.approved, gambling.decision.declineReason?.rule]).toEqual([
      false,
      'merchantCategories',
    ]);
    const rule = compile({
      limits: [{ interval: 'perTransaction', amount: '50' }],
      rules: [
        {
          name: 'no-small',
          conditions: { all: [{ fact: 'amount', operator: 'lessThan', value: 60 }] },
        },
      ],
    });
    const smaller = partial(decisionState({ amount: '80', policy: rule }));
    expect([smaller.decision.approved, smaller.decision.declineReason?.rule]).toEqual([
      false,
      'limits[0]',
    ]);
  });

  it('never approves more than asked, nor more than available, nor anything a full decision would not', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 100_000 }),
        fc.integer({ min: -1_000, max: 100_000 }),
        fc.integer({ min: 1, max: 100_000 }),
        (askedCents, availableCents, limitCents) => {
          const policy = compile({
            limits: [{ interval: 'perTransaction', amount: String(limitCents / 100) }],
          });
          const input = decisionState({
            amount: String(askedCents / 100),
            available: String(availableCents / 100),
            policy,
          });
          const result = partial(input);
          if (!result.decision.approved) return;
          expect(result.amount.lte(input.request.amount)).toBe(true);
          expect(result.amount.lte(input.vault?.available ?? 0)).toBe(true);
          expect(result.amount.gt(0)).toBe(true);
          expect(
            decide({ ...input, request: { ...input.request, amount: result.amount } }).approved,
          ).toBe(true);
        },
      ),
    );
  });
});

describe('account verification (0.00)', () => {
  it('approves an active card and vault with no policy check, and declines an overdrawn vault', () => {
    const blockEverything = compile({ merchantCategories: { allow: ['0001'] } });
    expect(decide(decisionInput({ amount: '0', policy: blockEverything })).approved).toBe(true);
    const overdrawn = decide(decisionInput({ amount: '0', available: '-0.01' }));
    expect([overdrawn.approved, overdrawn.declineCode]).toEqual([false, 'insufficient_balance']);
    const frozen = decide(decisionInput({ amount: '0', vault: { status: 'frozen' } }));
    expect(frozen.declineReason?.rule).toBe('vault_frozen');
  });
});
