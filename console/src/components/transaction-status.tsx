import type { Transaction } from '../types';

/*
 * A transaction's status as one word, with why when the API says why: a reversed purchase is
 * `failed (reversed)`, never a bare `failed` beside a blank reason.
 */

export function statusText(transaction: Pick<Transaction, 'status' | 'failureReason'>): string {
  return transaction.failureReason === null || transaction.failureReason === undefined
    ? transaction.status
    : `${transaction.status} (${transaction.failureReason})`;
}

export function TransactionStatus({ transaction }: { transaction: Transaction }) {
  return <span data-status={transaction.status}>{statusText(transaction)}</span>;
}
