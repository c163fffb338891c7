import { describe, expect, it } from 'vitest';
import { compilePolicy, decide, type CardInput, type VaultInput } from '../../src/core/index.js';
import { refusalOf } from '../support/refusal.js';

/*
 * An embedding user's SOL vault with a limit written in USD (issue 35): the billing amount is
 * handed to `decide` in any amount form and counted against the limit, exactly as the service
 * counts it; and statuses held in variables, which TypeScript widens to `string`, are taken
 * without `as const` (issue 40) and checked when read.
 */
const policy = compilePolicy(
  { limits: [{ interval: 'daily', amount: '500', currency: 'USD' }] },
  { currency: 'SOL', templates: new Map() },
);
const key = policy.aggregates[0]?.key ?? '';

// Plain object literals held in variables: `status` is a `string` to TypeScript here.
const card = { id: 'card_1', vaultId: 'vlt_1', status: 'active' };
const vault = { id: 'vlt_1', status: 'active', currency: 'SOL', available: '100' };

function ask(billing: unknown, spentUsd = '450') {
  return decide({
    card,
    vault,
    policy,
    spend: { [key]: spentUsd },
    at: Date.parse('2026-11-20T10:00:00Z'),
    request: {
      cardId: 'card_1',
      amount: '0.25',
      currency: 'SOL',
      merchant: { name: 'Cafe Rio', mcc: '5812', country: 'US' },
      billingCurrency: 'USD',
      ...(billing === undefined ? {} : { billing: billing as never }),
    },
  });
}

describe('a billing-currency limit, decided by the library', () => {
  it('counts the billing amount given, in any amount form', () => {
    expect(ask({ amount: '50.00', currency: 'USD' }).approved).toBe(true);
    expect(ask({ amount: 50, currency: 'USD' }).approved).toBe(true);
    const over = ask({ amount: '50.01', currency: 'USD' });
    expect([over.approved, over.declineReason?.rule]).toEqual([false, 'limits[0]']);
  });

  it('declines what it cannot count: no billing amount, or one in another currency', () => {
    expect(ask(undefined).declineReason?.rule).toBe('limits[0]');
    expect(ask({ amount: '1', currency: 'EUR' }).declineReason?.rule).toBe('limits[0]');
  });

  it('refuses a malformed billing amount, naming the field', () => {
    expect(refusalOf(() => ask({ amount: '1' }))).toMatchObject({
      code: 'parameter_missing',
      param: 'request.billing.currency',
    });
    expect(refusalOf(() => ask({ amount: 'ten', currency: 'USD' }))).toMatchObject({
      code: 'invalid_amount',
      param: 'request.billing.amount',
    });
    expect(refusalOf(() => ask('50 USD'))).toMatchObject({
      code: 'parameter_invalid',
      param: 'request.billing',
    });
  });
});

/** `decide` on a one-SOL request by the card given, with no policy. */
function askWith(card: CardInput) {
  return decide({
    card,
    vault,
    policy: null,
    at: 0,
    request: {
      cardId: 'card_1',
      amount: '1',
      currency: 'SOL',
      merchant: { name: 'n', mcc: '5812', country: 'US' },
    },
  });
}

describe('statuses as a caller holds them', () => {
  it('takes a widened string, and refuses one that is no status', () => {
    const typed: CardInput = card;
    const vaultTyped: VaultInput = vault;
    expect([typed.status, vaultTyped.status]).toEqual(['active', 'active']);
    expect(askWith(card).approved).toBe(true);
    const frozen = { ...card, status: 'frozen' };
    expect(askWith(frozen).declineReason?.rule).toBe('card_frozen');
    const paused = { ...card, status: 'paused' };
    expect(refusalOf(() => askWith(paused))).toMatchObject({
      code: 'parameter_invalid',
      param: 'card.status',
    });
  });
});
