import { describe, expect, it } from 'vitest';
import { compilePolicy, evaluate, type Facts } from '../../src/core/index.js';
import type { GeneratedFacts } from '../support/policy-arbitraries.js';
import { referenceEngine, referenceOutcomes } from '../support/reference-engine.js';

/**
 * Conditions json-rules-engine accepts that spendgate once refused: each is accepted now with
 * json-rules-engine's meaning (and the reference engine of the differential test answers the
 * same). rules/README.md lists the differences that remain, each with its reason.
 */
const facts: GeneratedFacts = {
  amount: '150.25',
  spentDaily: '0',
  spentWeekly: '0',
  spentMonthly: '0',
  countDaily: 3,
  nowMs: Date.parse('2026-11-18T08:30:00Z'),
  currency: 'USDC',
  cardId: 'card_a',
  merchant: { name: 'Cafe Rio', mcc: '5812', country: 'US' },
};

const evaluationFacts: Facts = {
  amount: facts.amount,
  merchant: facts.merchant,
  spend: { 'amount:daily': '0', 'count:daily': facts.countDaily },
  at: facts.nowMs,
  cardId: facts.cardId,
};

async function bothAnswer(conditions: unknown): Promise<[boolean, boolean]> {
  const rules = [{ name: 'r', mode: 'enforce' as const, conditions }];
  const policy = compilePolicy({ rules });
  const spendgate = !evaluate(policy, evaluationFacts).approved;
  const reference = (await referenceOutcomes(referenceEngine(rules), facts)).get('r') === true;
  return [spendgate, reference];
}

describe('json-rules-engine conditions spendgate accepts with their meaning', () => {
  it.each([
    ['in an empty list: never', { fact: 'mcc', operator: 'in', value: [] }, false],
    ['notIn an empty list: always', { fact: 'mcc', operator: 'notIn', value: [] }, true],
    ['a money fact in an empty list', { fact: 'amount', operator: 'in', value: [] }, false],
    [
      'an integer fact notIn an empty list',
      { fact: 'hourUtc', operator: 'notIn', value: [] },
      true,
    ],
    [
      'money against an integer fact',
      { fact: 'amount', operator: 'greaterThan', value: { fact: 'countDaily' } },
      true,
    ],
    [
      'an integer fact against money',
      { fact: 'countDaily', operator: 'greaterThanInclusive', value: { fact: 'amount' } },
      false,
    ],
    [
      'an integer fact equal to money',
      { fact: 'countDaily', operator: 'equal', value: { fact: 'spentDaily' } },
      false,
    ],
    ['a count above -1: always', { fact: 'countDaily', operator: 'greaterThan', value: -1 }, true],
    ['an hour of 24: never', { fact: 'hourUtc', operator: 'equal', value: 24 }, false],
    ['an hour below 8.5', { fact: 'hourUtc', operator: 'lessThan', value: 8.5 }, true],
    ['an amount above -1: always', { fact: 'amount', operator: 'greaterThan', value: -1 }, true],
    ['an amount above "-0.5"', { fact: 'amount', operator: 'greaterThan', value: '-0.5' }, true],
    [
      'an amount finer than USDC',
      { fact: 'amount', operator: 'lessThan', value: '150.2500001' },
      true,
    ],
    [
      'an amount equal to a finer constant: never',
      { fact: 'amount', operator: 'equal', value: '150.2500001' },
      false,
    ],
  ])('%s', async (_what, leaf, holds) => {
    expect(await bothAnswer({ all: [leaf] })).toEqual([holds, holds]);
  });
});
