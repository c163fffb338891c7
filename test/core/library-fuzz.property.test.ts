import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  amountIn,
  CompiledPolicyCache,
  compilePolicy,
  decide,
  formatAmount,
  parseAmount,
  evaluate,
  isErrorCode,
  SpendgateError,
  type DecideInput,
  type Facts,
} from '../../src/core/index.js';
import { compilePolicy as compileFromPackage } from '../../src/index.js';
import { mutate } from '../support/policy-arbitraries.js';

/**
 * The library's promise to an embedding user: whatever JSON value goes into compilePolicy,
 * decide or evaluate, the call succeeds or throws a SpendgateError with a catalogue code and
 * the `param` at fault. Never a TypeError, a RangeError, an InvariantError or a zod error.
 */
function succeedsOrRefuses(run: () => unknown): void {
  try {
    run();
  } catch (error) {
    expect(error, String(error)).toBeInstanceOf(SpendgateError);
    const refusal = error as SpendgateError;
    expect(isErrorCode(refusal.code)).toBe(true);
    expect(refusal.param, refusal.message).toBeTypeOf('string');
    expect(refusal.param).not.toBe('');
    expect(refusal.message).toMatch(/\S\.$/);
  }
}

const policy = compilePolicy({
  limits: [
    { interval: 'daily', amount: '100' },
    { interval: 'monthly', count: 30 },
  ],
  rules: [
    {
      name: 'no-casino',
      conditions: { all: [{ fact: 'merchantName', operator: 'contains', value: 'Casino' }] },
    },
    {
      name: 'watch-night',
      mode: 'shadow',
      conditions: { any: [{ fact: 'hourUtc', operator: 'lessThan', value: 6 }] },
    },
  ],
});

/** A valid decide input in JSON (amounts as strings), for one node of it to be replaced. */
const VALID_DECISION = {
  card: { id: 'card_1', vaultId: 'vlt_1', status: 'active' },
  vault: { id: 'vlt_1', status: 'active', currency: 'USDC', available: '500' },
  spend: { 'amount:daily': '10', 'count:monthly': 3 },
  nowMs: Date.UTC(2026, 10, 18, 12),
  request: {
    cardId: 'card_1',
    amount: '12.50',
    currency: 'USDC',
    merchant: { name: 'Cafe Rio', mcc: '5812', country: 'US', city: 'Austin' },
  },
};

const VALID_FACTS = {
  amount: 12.5,
  merchant: { name: 'Cafe Rio', mcc: '5812', country: 'US' },
  spent: { 'amount:daily': 10, 'count:monthly': 3 },
  at: '2026-11-18T12:00:00Z',
  cardId: 'card_1',
};

describe('the public API throws nothing but SpendgateErrors', () => {
  it('compilePolicy, for any JSON value as the document and as the options', () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.option(fc.jsonValue(), { nil: undefined }), (doc, options) => {
        succeedsOrRefuses(() => compilePolicy(doc, options as never));
        succeedsOrRefuses(() => compileFromPackage(doc, options as never));
      }),
      { numRuns: 2000 },
    );
  });

  it('compilePolicy, for plausible options with arbitrary values', () => {
    const options = fc.record(
      {
        currency: fc.oneof(fc.constantFrom('USDC', 'SOL', 'EUR', ''), fc.jsonValue()),
        templates: fc.oneof(fc.constant(new Map()), fc.jsonValue({ maxDepth: 2 })),
      },
      { requiredKeys: [] },
    );
    fc.assert(
      fc.property(options, (given) => {
        succeedsOrRefuses(() =>
          compileFromPackage({ templates: [{ name: 'weekday-only' }] }, given as never),
        );
      }),
      { numRuns: 1000 },
    );
  });

  it('decide, for any JSON value', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (input) => {
        succeedsOrRefuses(() => decide(input as unknown as DecideInput));
      }),
      { numRuns: 2000 },
    );
  });

  it('decide, for a valid input with one node replaced by arbitrary JSON', () => {
    fc.assert(
      fc.property(
        fc.nat({ max: 40 }),
        fc.jsonValue({ maxDepth: 2 }),
        fc.boolean(),
        (pick, replacement, withPolicy) => {
          const mutated = mutate(VALID_DECISION, pick, replacement);
          const input =
            typeof mutated === 'object' && mutated !== null && !Array.isArray(mutated)
              ? { ...mutated, policy: withPolicy ? policy : null }
              : mutated;
          succeedsOrRefuses(() => decide(input as DecideInput));
        },
      ),
      { numRuns: 3000 },
    );
  });

  it('evaluate, for any JSON value as the facts or as the policy', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        succeedsOrRefuses(() => evaluate(policy, value as unknown as Facts));
        succeedsOrRefuses(() => evaluate(value as never, VALID_FACTS));
      }),
      { numRuns: 2000 },
    );
  });

  it('evaluate, for valid facts with one node replaced by arbitrary JSON', () => {
    fc.assert(
      fc.property(fc.nat({ max: 20 }), fc.jsonValue({ maxDepth: 2 }), (pick, replacement) => {
        succeedsOrRefuses(() => evaluate(policy, mutate(VALID_FACTS, pick, replacement) as Facts));
      }),
      { numRuns: 3000 },
    );
  });

  it('the amount functions and the policy cache, for any JSON values as their arguments', () => {
    const someJson = fc.jsonValue({ maxDepth: 2 });
    fc.assert(
      fc.property(someJson, someJson, someJson, (input, currency, options) => {
        succeedsOrRefuses(() => parseAmount(input, currency as never, options as never));
        succeedsOrRefuses(() => amountIn(input as never, currency as never, options as never));
        succeedsOrRefuses(() => formatAmount(input as never, currency as never));
        succeedsOrRefuses(() =>
          new CompiledPolicyCache(input as never).get(currency as never, options as never),
        );
      }),
      { numRuns: 2000 },
    );
  });

  it('accepts the valid inputs the mutations start from', () => {
    expect(decide({ ...VALID_DECISION, policy }).approved).toBe(true);
    expect(evaluate(policy, VALID_FACTS as Facts).approved).toBe(true);
  });
});
