import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  compilePolicy,
  decide,
  Decimal,
  evaluate,
  readFacts,
  readInput,
  SpendgateError,
  type DecideInput,
  type Facts,
} from '../../src/core/index.js';
import {
  decimalString,
  facts as generatedFacts,
  mutate,
  rules,
} from '../support/policy-arbitraries.js';
import { refusalOf } from '../support/refusal.js';

/**
 * Issue 38: an input read once (`readInput`, `readFacts`) is decided without reading it again.
 * The fast path must answer exactly what the reading path answers: the same decision, or the
 * same refusal (code, field, message), on random policies and inputs, amounts in every form the
 * library takes, and inputs with one node replaced by arbitrary JSON.
 */

/** What a call answers: its decision, or its refusal; anything else fails the test. */
function outcome(run: () => unknown): unknown {
  try {
    return { decision: run() };
  } catch (error) {
    if (!(error instanceof SpendgateError)) throw error;
    return { refused: [error.code, error.param, error.message] };
  }
}

/** An amount as callers give it: a decimal string, a core Decimal, or a plain number. */
const amountForm = (text: string): fc.Arbitrary<unknown> =>
  fc.constantFrom<unknown>(text, new Decimal(text), Number(text));

const limits = fc.subarray([
  { interval: 'daily', amount: '500' },
  { interval: 'weekly', amount: '2500.5' },
  { interval: 'daily', count: 5 },
]);

const decideCase = fc
  .record({
    rules,
    limits,
    facts: generatedFacts,
    cardStatus: fc.constantFrom('active', 'active', 'frozen', 'cancelled'),
    vaultStatus: fc.constantFrom('active', 'active', 'frozen', 'closed'),
    available: decimalString,
    overdrawn: fc.boolean(),
    time: fc.constantFrom('at', 'nowMs', 'iso'),
    dropSpend: fc.boolean(),
  })
  .chain((base) =>
    fc.record({
      base: fc.constant(base),
      amount: amountForm(base.facts.amount),
      available: amountForm(`${base.overdrawn ? '-' : ''}${base.available}`),
      spentDaily: amountForm(base.facts.spentDaily),
    }),
  );

type DecideCase = typeof decideCase extends fc.Arbitrary<infer T> ? T : never;

function decideInputOf({ base, amount, available, spentDaily }: DecideCase): DecideInput {
  const { facts } = base;
  const currency = facts.currency === 'SOL' ? 'SOL' : 'USDC';
  const policy = compilePolicy({ rules: base.rules, limits: base.limits }, { currency });
  const spend = {
    'amount:daily': spentDaily,
    'amount:weekly': facts.spentWeekly,
    'amount:monthly': facts.spentMonthly,
    'count:daily': facts.countDaily,
  };
  const time =
    base.time === 'nowMs'
      ? { nowMs: facts.nowMs }
      : { at: base.time === 'iso' ? new Date(facts.nowMs).toISOString() : facts.nowMs };
  return {
    card: { id: facts.cardId, vaultId: 'vlt_1', status: base.cardStatus },
    vault: { id: 'vlt_1', status: base.vaultStatus, currency, available },
    policy,
    ...(base.dropSpend ? {} : { spend }),
    ...time,
    request: { cardId: facts.cardId, amount, currency, merchant: facts.merchant },
  } as DecideInput;
}

/** `decide` through `readInput`, or the refusal either of them answers. */
const viaReadOnce = (input: unknown) => outcome(() => decide(readInput(input as DecideInput)));
const viaReading = (input: unknown) => outcome(() => decide(input as DecideInput));

describe('decide on an input read once', () => {
  it('answers what decide answers reading it, on random policies and inputs', () => {
    fc.assert(
      fc.property(decideCase, (generated) => {
        const input = decideInputOf(generated);
        const read = outcome(() => readInput(input));
        expect(viaReadOnce(input)).toEqual(viaReading(input));
        // Read once, decided twice: the same again, the read input unchanged by deciding.
        if ('decision' in (read as object)) {
          const once = (read as { decision: ReturnType<typeof readInput> }).decision;
          expect(outcome(() => decide(once))).toEqual(outcome(() => decide(once)));
          expect(outcome(() => decide(once))).toEqual(viaReading(input));
        }
      }),
      { numRuns: 400 },
    );
  });

  it('answers what decide answers for a valid input with one node replaced by arbitrary JSON', () => {
    fc.assert(
      fc.property(decideCase, fc.nat(60), fc.jsonValue(), (generated, pick, replacement) => {
        const input = mutate(decideInputOf(generated), pick, replacement);
        expect(viaReadOnce(input)).toEqual(viaReading(input));
      }),
      { numRuns: 400 },
    );
  });

  it('keeps what was read: the read input and what it holds are frozen', () => {
    const policy = compilePolicy({ limits: [{ interval: 'daily', amount: '100' }] });
    const read = readInput({
      card: { id: 'card_1', vaultId: 'vlt_1', status: 'active' },
      vault: { id: 'vlt_1', status: 'active', currency: 'USDC', available: '1000' },
      policy,
      spend: { 'amount:daily': '90' },
      at: '2026-11-18T10:00:00Z',
      request: { cardId: 'card_1', amount: '5', currency: 'USDC', merchant: bistro },
    });
    for (const part of [read, read.request, read.request.merchant, read.vault, read.spend]) {
      expect(Object.isFrozen(part)).toBe(true);
    }
    expect(read.spend['amount:daily']).toBeInstanceOf(Decimal);
    expect(decide(read).approved).toBe(true);
    // A spread copy is a plain object again, read in full: a changed field is checked.
    // eslint-disable-next-line @typescript-eslint/no-misused-spread -- losing the class is the point
    const error = refusalOf(() => decide({ ...read, request: { ...read.request, amount: 'x' } }));
    expect([error.code, error.param]).toEqual(['invalid_amount', 'request.amount']);
  });
});

const bistro = { name: 'Le Bistro', mcc: '5812', country: 'FR' };

describe('evaluate on facts read once', () => {
  const factsCase = fc.record({
    rules,
    limits,
    facts: generatedFacts,
    spendName: fc.constantFrom('spend', 'spent'),
  });

  it('answers what evaluate answers reading them, on random policies and facts', () => {
    fc.assert(
      fc.property(
        factsCase,
        ({ rules: generatedRules, limits: generatedLimits, facts, spendName }) => {
          const policy = compilePolicy({ rules: generatedRules, limits: generatedLimits });
          const given = {
            amount: facts.amount,
            merchant: facts.merchant,
            [spendName]: {
              'amount:daily': facts.spentDaily,
              'amount:weekly': new Decimal(facts.spentWeekly),
              'count:daily': facts.countDaily,
            },
            at: facts.nowMs,
            cardId: facts.cardId,
          } as unknown as Facts;
          expect(outcome(() => evaluate(policy, readFacts(policy, given)))).toEqual(
            outcome(() => evaluate(policy, given)),
          );
        },
      ),
      { numRuns: 400 },
    );
  });

  it('refuses facts read in another currency than the policy', () => {
    const usdc = compilePolicy({}, { currency: 'USDC' });
    const sol = compilePolicy({}, { currency: 'SOL' });
    const read = readFacts(usdc, { amount: '5', merchant: bistro, at: 0 });
    const error = refusalOf(() => evaluate(sol, read));
    expect([error.code, error.param]).toEqual(['parameter_invalid', 'facts']);
  });
});
