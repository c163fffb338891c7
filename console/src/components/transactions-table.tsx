import { useEffect, useState } from 'preact/hooks';
import { api, messageOf, query, type Page } from '../api';
import { Alert } from './alert';
import { Time } from './time';
import { TransactionDetails } from './transaction-details';
import { TransactionStatus } from './transaction-status';
import type { Transaction } from '../types';

/*
 * A vault's transactions, filtered as List Transactions filters (status, type, card, amount
 * range, dates), 25 a page, newest first; a row opens what its decision saw.
 */

const STATUSES = ['', 'pending', 'completed', 'failed', 'declined'];
const TYPES = [
  '',
  'card_authorization',
  'transfer_in',
  'transfer_out',
  'external_transfer',
  'deposit',
  'withdrawal',
];
type FilterName =
  'status' | 'type' | 'cardId' | 'minAmount' | 'maxAmount' | 'startDate' | 'endDate';
type Filters = Partial<Record<FilterName, string>>;

export function TransactionsTable({ vaultId }: { vaultId: string }) {
  const [filters, setFilters] = useState<Filters>({});
  const [applied, setApplied] = useState<Filters>({});
  const [pages, setPages] = useState<string[]>([]);
  const [page, setPage] = useState<Page<Transaction> | null>(null);
  const [open, setOpen] = useState<Transaction | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    setError(null);
    const path = `/v1/transactions${query({ vaultId, limit: 25, ...applied, startingAfter: pages.at(-1) })}`;
    api<Page<Transaction>>('GET', path)
      .then(setPage)
      .catch((failure: unknown) => {
        setError(messageOf(failure));
      });
  }, [vaultId, applied, pages]);
  const field = (name: FilterName, label: string) => (
    <label>
      {label}
      <input
        name={name}
        value={filters[name] ?? ''}
        onInput={(event) => {
          setFilters({ ...filters, [name]: event.currentTarget.value });
        }}
      />
    </label>
  );
  const choice = (name: 'status' | 'type', label: string, values: string[]) => (
    <label>
      {label}
      <select
        name={name}
        value={filters[name] ?? ''}
        onChange={(event) => {
          setFilters({ ...filters, [name]: event.currentTarget.value });
        }}
      >
        {values.map((value) => (
          <option key={value} value={value}>
            {value === '' ? 'any' : value}
          </option>
        ))}
      </select>
    </label>
  );
  return (
    <>
      <details>
        <summary>Filters</summary>
        <form
          class="filters"
          onSubmit={(event) => {
            event.preventDefault();
            setPages([]);
            setApplied({ ...filters });
          }}
        >
          <div class="grid">
            {choice('status', 'Status', STATUSES)}
            {choice('type', 'Type', TYPES)}
            {field('cardId', 'Card id')}
          </div>
          <div class="grid">
            {field('minAmount', 'Min amount')}
            {field('maxAmount', 'Max amount')}
            {field('startDate', 'From (YYYY-MM-DD)')}
            {field('endDate', 'To (YYYY-MM-DD)')}
          </div>
          <button type="submit">Apply filters</button>
        </form>
      </details>
      <Alert message={error} />
      <div class="overflow-auto">
        <table class="striped transactions">
          <thead>
            <tr>
              <th scope="col">When</th>
              <th scope="col">Type</th>
              <th scope="col">Status</th>
              <th scope="col" class="amount">
                Amount
              </th>
              <th scope="col">Merchant</th>
              <th scope="col">Reason</th>
            </tr>
          </thead>
          <tbody>
            {page?.data.length === 0 ? (
              <tr>
                <td colSpan={6}>No transaction matches.</td>
              </tr>
            ) : null}
            {page?.data.map((transaction) => (
              <tr key={transaction.id}>
                <td>
                  <button
                    type="button"
                    class="link"
                    aria-expanded={open?.id === transaction.id}
                    onClick={() => {
                      setOpen(open?.id === transaction.id ? null : transaction);
                    }}
                  >
                    <Time at={transaction.createdAt} />
                  </button>
                </td>
                <td>{transaction.type}</td>
                <td>
                  <TransactionStatus transaction={transaction} />
                </td>
                <td class="amount">
                  {transaction.amount} {transaction.currency}
                </td>
                <td>{transaction.merchant?.name ?? ''}</td>
                <td title={transaction.declineReason?.rule}>
                  {transaction.declineReason?.message ??
                    transaction.declineCode ??
                    transaction.failureReason ??
                    ''}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {open === null ? null : <TransactionDetails transaction={open} />}
      <div class="pager">
        <button
          type="button"
          class="secondary"
          disabled={pages.length === 0}
          onClick={() => {
            setPages(pages.slice(0, -1));
          }}
        >
          Newer
        </button>
        <button
          type="button"
          class="secondary"
          disabled={page?.hasMore !== true}
          onClick={() => {
            const last = page?.data.at(-1);
            if (last !== undefined) setPages([...pages, last.id]);
          }}
        >
          Older
        </button>
      </div>
    </>
  );
}
