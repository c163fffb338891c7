import { createRequire } from 'node:module';
import { Decimal as DefaultDecimal } from 'decimal.js';
import { describe, expect, it } from 'vitest';
import {
  amountIn,
  compilePolicy,
  decide,
  Decimal,
  parseAmount,
  SpendgateError,
  type AmountLike,
  type DecideInput,
} from '../../src/core/index.js';
import { compilePolicy as compileFromPackage } from '../../src/index.js';
import { refusalOf } from '../support/refusal.js';

/*
 * What an embedding user hands the library: amounts as spendgate's Decimal, as a decimal.js
 * Decimal of their own (the same version, or another copy of the package), as decimal strings
 * or as numbers; and inputs that are wrong in every way, each refused with a SpendgateError
 * that says which field and what was given.
 */

// The package's CommonJS build: a second copy of decimal.js, with its own constructor, as a
// caller's own dependency would be.
const OtherCopyDecimal = createRequire(import.meta.url)('decimal.js') as typeof DefaultDecimal;

const policy = compilePolicy(
  { limits: [{ interval: 'daily', amount: '100' }] },
  { currency: 'USDC', templates: new Map() },
);

function input(
  amount: unknown,
  spent: unknown = '90',
  overrides: Record<string, unknown> = {},
): DecideInput {
  return {
    card: { id: 'card_1', vaultId: 'vlt_1', status: 'active' },
    vault: { id: 'vlt_1', status: 'active', currency: 'USDC', available: '1000' },
    policy,
    spend: { 'amount:daily': spent as AmountLike },
    at: Date.UTC(2026, 10, 18, 12),
    request: {
      cardId: 'card_1',
      amount: amount as AmountLike,
      currency: 'USDC',
      merchant: { name: 'Cafe Rio', mcc: '5812', country: 'US' },
    },
    ...overrides,
  };
}

const ruleOf = (value: DecideInput) => decide(value).declineReason?.rule ?? null;

describe('amounts in every form the public API takes', () => {
  it.each([
    ['a core Decimal', (text: string) => new Decimal(text)],
    ["decimal.js's default Decimal", (text: string) => new DefaultDecimal(text)],
    ['a Decimal of another copy of decimal.js', (text: string) => new OtherCopyDecimal(text)],
    ['a decimal string', (text: string) => text],
    ['a number', (text: string) => Number(text)],
  ])('reads %s exactly, as the amount and as spend', (_form, make) => {
    expect(ruleOf(input(make('10'), make('90')))).toBeNull();
    expect(ruleOf(input(make('10.000001'), make('90')))).toBe('limits[0]');
    expect(ruleOf(input(make('10'), make('90.000001')))).toBe('limits[0]');
    // 0.1 + 0.2 of spend and 99.7 of amount is exactly the limit: no float drift either way.
    expect(ruleOf(input(make('99.7'), new DefaultDecimal('0.1').plus('0.2')))).toBeNull();
  });

  it("keeps a SOL sum of 22 digits exact when spend is decimal.js's default Decimal (20 digits)", () => {
    // The default constructor shares the core's prototype, so `instanceof` took it for a core
    // Decimal, and `spent.plus(amount)` rounded to 20 digits: 1000000000000.000000001 became
    // the limit itself, and the decline an approval.
    const sol = compilePolicy(
      { limits: [{ interval: 'daily', amount: '1000000000000' }] },
      { currency: 'SOL', templates: new Map() },
    );
    const decision = decide({
      ...input('1.000000002'),
      vault: { id: 'vlt_1', status: 'active', currency: 'SOL', available: '2000000000000' },
      policy: sol,
      spend: { 'amount:daily': new DefaultDecimal('999999999998.999999999') },
      request: {
        ...input('1').request,
        amount: new DefaultDecimal('1.000000002'),
        currency: 'SOL',
      },
    });
    expect(decision.declineReason?.rule).toBe('limits[0]');
  });

  it('reads a balance in any form, and a total above one amount’s bound', () => {
    const balance = (available: unknown) =>
      input('10', '0', {
        vault: { id: 'vlt_1', status: 'active', currency: 'USDC', available },
      });
    expect(decide(balance('9.999999')).declineCode).toBe('insufficient_balance');
    expect(decide(balance(new OtherCopyDecimal('10'))).approved).toBe(true);
    expect(decide(balance('5000000000000')).approved).toBe(true);
  });

  it('reads -0 as 0, as the HTTP edge reads a JSON -0, and refuses "-0" as it does', () => {
    expect(decide(input(new Decimal('-0'))).approved).toBe(true);
    expect(decide(input(new OtherCopyDecimal('-0'))).approved).toBe(true);
    expect(decide(input(-0)).approved).toBe(true);
    expect(decide(input('0', new Decimal('-0'))).approved).toBe(true);
    const text = refusalOf(() => decide(input('-0')));
    const edge = refusalOf(() => parseAmount('-0', 'USDC', { param: 'request.amount' }));
    expect([text.code, text.param, text.message]).toEqual([
      'invalid_amount',
      'request.amount',
      'amount must not be negative.',
    ]);
    expect([edge.code, edge.message]).toEqual([text.code, text.message]);
    // The value a -0 is read as carries no sign into sums.
    expect(amountIn(new Decimal('-0'), 'USDC').isNegative()).toBe(false);
  });

  it.each([
    [
      {},
      'invalid_amount',
      'request.amount',
      'amount must be a Decimal, a decimal string or a number, not an object.',
    ],
    [
      null,
      'invalid_amount',
      'request.amount',
      'amount must be a Decimal, a decimal string or a number, not null.',
    ],
    [undefined, 'parameter_missing', 'request.amount', 'amount is required.'],
    [Number.NaN, 'invalid_amount', 'request.amount', 'amount must be a finite number.'],
    [
      new DefaultDecimal(Number.NaN),
      'invalid_amount',
      'request.amount',
      'amount must be a finite amount, not NaN.',
    ],
    [
      new OtherCopyDecimal('-Infinity'),
      'invalid_amount',
      'request.amount',
      'amount must be a finite amount, not -Infinity.',
    ],
    [new Decimal('-5'), 'invalid_amount', 'request.amount', 'amount must not be negative.'],
    [
      new OtherCopyDecimal('1e-7'),
      'invalid_amount',
      'request.amount',
      'amount has more than 6 decimal places, the scale of USDC.',
    ],
    [
      new OtherCopyDecimal('1e999999999'),
      'invalid_amount',
      'request.amount',
      'amount must not exceed 1000000000000.00.',
    ],
    [
      new DefaultDecimal('1e-999999999'),
      'invalid_amount',
      'request.amount',
      'amount has more than 6 decimal places, the scale of USDC.',
    ],
    [
      0.1 + 0.2,
      'invalid_amount',
      'request.amount',
      'amount has more than 15 significant digits; send it as a decimal string.',
    ],
    [
      '12,50',
      'invalid_amount',
      'request.amount',
      'amount must be a decimal string such as "125.50".',
    ],
  ])('refuses the amount %s, saying what was wrong', (amount, code, param, message) => {
    const error = refusalOf(() => decide(input(amount)));
    expect([error.code, error.param, error.message]).toEqual([code, param, message]);
  });

  it('refuses spend aggregates for what they are, never as "not supplied" when they were', () => {
    const wrong = refusalOf(() => decide(input('1', { value: 90 })));
    expect([wrong.code, wrong.param, wrong.message]).toEqual([
      'invalid_amount',
      'spend["amount:daily"]',
      '"amount:daily" must be a Decimal, a decimal string or a number, not an object.',
    ]);
    const negative = refusalOf(() => decide(input('1', new DefaultDecimal(-1))));
    expect([negative.param, negative.message]).toEqual([
      'spend["amount:daily"]',
      '"amount:daily" must not be negative.',
    ]);
    const missing = refusalOf(() => decide({ ...input('1'), spend: {} }));
    expect([missing.code, missing.param]).toEqual(['parameter_missing', 'spend["amount:daily"]']);
    const counted = compilePolicy(
      { limits: [{ interval: 'daily', count: 3 }] },
      { currency: 'USDC', templates: new Map() },
    );
    const count = refusalOf(() =>
      decide({ ...input('1'), policy: counted, spend: { 'count:daily': '2' as never } }),
    );
    expect([count.code, count.param, count.message]).toEqual([
      'parameter_invalid',
      'spend["count:daily"]',
      '"count:daily" must be a count of transactions, an integer of 0 or more, not a string.',
    ]);
    expect(decide({ ...input('1'), policy: counted, spend: { 'count:daily': 3 } }).approved).toBe(
      false,
    );
  });
});

describe('the rest of a decision input', () => {
  it.each([
    ['not an object', 'x', 'parameter_invalid', 'input', 'input must be an object, not a string.'],
    [
      'a request without a merchant',
      { ...input('1'), request: { cardId: 'card_1', amount: '1', currency: 'USDC' } },
      'parameter_missing',
      'request.merchant',
      'merchant is required.',
    ],
    [
      'a merchant name of another type',
      {
        ...input('1'),
        request: { ...input('1').request, merchant: { name: 5, mcc: '5812', country: 'US' } },
      },
      'parameter_invalid',
      'request.merchant.name',
      'name must be a string, not an integer.',
    ],
    [
      'an unsupported currency',
      { ...input('1'), request: { ...input('1').request, currency: 'EUR' } },
      'invalid_currency',
      'request.currency',
      'Currency "EUR" is not supported; use one of USDC, SOL.',
    ],
    [
      'an unknown card status',
      { ...input('1'), card: { id: 'card_1', vaultId: 'vlt_1', status: 'open' } },
      'parameter_invalid',
      'card.status',
      'status must be one of active, frozen, cancelled.',
    ],
    [
      'another card than the request names',
      { ...input('1'), card: { id: 'card_2', vaultId: 'vlt_1', status: 'active' } },
      'parameter_invalid',
      'card.id',
      'id must be the card the request names (its cardId).',
    ],
    [
      'a card without its vault',
      { ...input('1'), vault: null },
      'parameter_missing',
      'vault',
      "vault is required: the card's vault.",
    ],
    [
      'a policy that compilePolicy did not make',
      { ...input('1'), policy: { ...policy } },
      'parameter_invalid',
      'policy',
      'policy must be a policy from compilePolicy of this spendgate, not an object.',
    ],
    [
      'a time that is not a timestamp with a zone',
      { ...input('1'), at: '2026-11-18' },
      'parameter_invalid',
      'at',
      'at must be a Date, epoch milliseconds or an ISO 8601 timestamp such as "2026-11-18T10:00:00Z", not a string.',
    ],
  ])('refuses %s', (_what, value, code, param, message) => {
    const error = refusalOf(() => decide(value as DecideInput));
    expect(error).toBeInstanceOf(SpendgateError);
    expect([error.code, error.param, error.message]).toEqual([code, param, message]);
  });

  it('hands an input already in the core form to the evaluators as it is', () => {
    const value = {
      ...input(new Decimal('10'), new Decimal('90')),
      vault: { id: 'vlt_1', status: 'active', currency: 'USDC', available: new Decimal('1000') },
    } as const;
    let reads = 0;
    // The request is read once and not copied: a getter on it counts the reads of amount.
    const request = {
      ...value.request,
      get amount() {
        reads += 1;
        return new Decimal('10');
      },
    };
    expect(decide({ ...value, request }).approved).toBe(true);
    expect(reads).toBeGreaterThan(1);
  });
});

describe('compilePolicy options', () => {
  const doc = { limits: [{ interval: 'perTransaction', amount: '1.5' }] };

  it('defaults the currency to USDC and, from the package entry, the templates to rules/', () => {
    expect(compilePolicy(doc).currency.code).toBe('USDC');
    expect(compilePolicy(doc, {}).currency.code).toBe('USDC');
    // The core has no library of its own (no file reads); the package entry brings rules/.
    expect(refusalOf(() => compilePolicy({ templates: [{ name: 'weekday-only' }] })).param).toBe(
      'templates[0].name',
    );
    expect(compileFromPackage({ templates: [{ name: 'weekday-only' }] }).checks).toHaveLength(1);
    expect(compileFromPackage(doc, { currency: 'SOL' }).currency.code).toBe('SOL');
  });

  it.each([
    [
      5,
      'parameter_invalid',
      'options',
      "options must be an object such as { currency: 'USDC' }, not an integer.",
    ],
    [
      [],
      'parameter_invalid',
      'options',
      "options must be an object such as { currency: 'USDC' }, not a list.",
    ],
    [
      { currency: 'EUR' },
      'invalid_currency',
      'options.currency',
      'Currency "EUR" is not supported; use one of USDC, SOL.',
    ],
    [
      { currency: { code: 'USDC', scale: 64 } },
      'invalid_currency',
      'options.currency',
      'Currency an object is not supported; use one of USDC, SOL.',
    ],
    [
      { templates: {} },
      'parameter_invalid',
      'options.templates',
      'templates must be a Map of template names to templates, not an object.',
    ],
    [
      { templates: new Map([['x', { name: 'y' }]]) },
      'parameter_invalid',
      'options.templates',
      'templates must hold each template under its own name.',
    ],
    [
      { templates: new Map([['x', { name: 'x' }]]) },
      'parameter_invalid',
      'options.templates',
      'templates holds an invalid template "x" at description: description is required.',
    ],
  ])('refuses the options %j, naming them', (options, code, param, message) => {
    for (const compile of [compilePolicy, compileFromPackage]) {
      const error = refusalOf(() => compile(doc, options as never));
      expect([error.code, error.param, error.message]).toEqual([code, param, message]);
    }
  });

  it("reads a caller's template library once, defaults applied", () => {
    const library = new Map([
      [
        'tiny-cap',
        {
          name: 'tiny-cap',
          description: 'Declines any single transaction above one unit.',
          limits: [{ interval: 'perTransaction', amount: '1' }],
        },
      ],
    ]);
    const policy = compilePolicy(
      { templates: [{ name: 'tiny-cap' }] },
      { templates: library as never },
    );
    expect(policy.checks.map((check) => check.rule)).toEqual(['tiny-cap']);
    expect(decide({ ...input('1.000001', '0'), policy }).declineReason?.rule).toBe('tiny-cap');
  });
});
