import { deepStrictEqual } from 'node:assert';
// With the whole service installed (`npm install spendgate`), import from 'spendgate' instead.
import { compilePolicy, decide } from '@spendgate/core';

// Compile once per (vault, policy version); the result is a plain synchronous evaluator.
const policy = compilePolicy(
  {
    limits: [{ interval: 'daily', amount: '2000' }],
    merchantCategories: { block: ['7995'] },
    templates: [{ name: 'business-hours', params: { startHour: 8, endHour: 18 } }],
    rules: [
      {
        name: 'no-big-foreign',
        message: 'Foreign spend over 200 needs approval',
        conditions: {
          all: [
            { fact: 'amount', operator: 'greaterThan', value: 200 },
            { fact: 'merchantCountry', operator: 'notIn', value: ['US'] },
          ],
        },
      },
    ],
  },
  { currency: 'USDC' },
);

// The policy says which spend aggregates it reads, so a store computes only those.
deepStrictEqual(
  policy.aggregates.map((aggregate) => aggregate.key),
  ['amount:daily'],
);

const decision = decide({
  card: { id: 'card_1', vaultId: 'vlt_1', status: 'active' },
  // Amounts as decimal strings, numbers or Decimals (spendgate's or your own decimal.js).
  vault: { id: 'vlt_1', status: 'active', currency: 'USDC', available: '5000' },
  policy,
  spend: { 'amount:daily': 1900 },
  at: '2026-11-18T10:00:00Z',
  request: {
    cardId: 'card_1',
    amount: '150.00',
    currency: 'USDC',
    merchant: { name: 'Le Bistro', mcc: '5812', country: 'FR' },
  },
});

deepStrictEqual(decision, {
  approved: false,
  declineCode: 'authorization_failed',
  declineReason: {
    rule: 'limits[0]',
    message: 'Daily spend limit of 2000.00 USDC would be exceeded',
  },
  shadowMatches: [],
});
