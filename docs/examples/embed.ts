import { deepStrictEqual } from 'node:assert';
// With the whole service installed (`npm install spendgate`), import from 'spendgate' instead.
import { compilePolicy, evaluate } from '@spendgate/core';

const policy = { templates: [{ name: 'max-per-transaction', params: { amount: '500' } }] };
const merchant = { name: 'Cafe Rio', mcc: '5812', country: 'US' };

// The one line: a policy document and a transaction's facts in, the decision out.
const decision = evaluate(compilePolicy(policy), { amount: '612.40', merchant, at: Date.now() });

deepStrictEqual(decision.declineReason?.rule, 'max-per-transaction');
