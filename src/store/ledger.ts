import {
  assert,
  CURRENCY_CODES,
  Decimal,
  ZERO,
  type CurrencyCode,
  type Mode,
} from '../core/index.js';
import { newId } from '../ids.js';
import type { SqlQueryable } from './sql/client.js';

/*
 * Postings: the only way money moves. A posting is a set of immutable entries that sum to
 * zero (asserted here, and checked again by the database at commit). Vault ledger accounts
 * share their vault's id; the system accounts are one per mode, currency and kind.
 */

export type SystemAccountKind = 'funding' | 'card_settlement' | 'solana_outbound' | 'withdrawals';
const SYSTEM_KINDS: readonly SystemAccountKind[] = [
  'funding',
  'card_settlement',
  'solana_outbound',
  'withdrawals',
];
const MODES: readonly Mode[] = ['test', 'live'];

/** Entries one posting may have; every posting spendgate makes has two. */
const ENTRIES_MAX = 8;

export function systemAccountId(
  mode: Mode,
  currency: CurrencyCode,
  kind: SystemAccountKind,
): string {
  return `sys_${mode}_${currency}_${kind}`;
}

/** Creates the system accounts of every registered currency; idempotent, run at store start. */
export async function ensureSystemAccounts(tx: SqlQueryable): Promise<void> {
  const ids: string[] = [];
  const kinds: string[] = [];
  const modes: string[] = [];
  const currencies: string[] = [];
  for (const mode of MODES) {
    for (const currency of CURRENCY_CODES) {
      for (const kind of SYSTEM_KINDS) {
        ids.push(systemAccountId(mode, currency, kind));
        kinds.push(kind);
        modes.push(mode);
        currencies.push(currency);
      }
    }
  }
  await tx.query(
    `INSERT INTO ledger_accounts (id, kind, mode, currency)
     SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[])
     ON CONFLICT (id) DO NOTHING`,
    [ids, kinds, modes, currencies],
  );
}

export interface Entry {
  readonly ledgerAccountId: string;
  readonly amount: Decimal;
}

export interface Posting {
  readonly mode: Mode;
  readonly currency: CurrencyCode;
  readonly transactionId: string | null;
  readonly entries: readonly Entry[];
  readonly nowMs: number;
}

export async function post(tx: SqlQueryable, posting: Posting): Promise<string> {
  const { entries } = posting;
  assert(entries.length >= 2 && entries.length <= ENTRIES_MAX, 'a posting has 2 to 8 entries');
  const total = entries.reduce((sum, entry) => sum.plus(entry.amount), ZERO);
  assert(total.isZero(), 'a posting sums to zero');
  assert(
    entries.every((entry) => !entry.amount.isZero()),
    'no entry is zero',
  );
  const postingId = newId('posting', posting.nowMs);
  await tx.query(
    `INSERT INTO ledger_entries (posting_id, ledger_account_id, transaction_id, mode, currency, amount, created_at)
     SELECT $1, account_id, $2, $3, $4, amount, $5
     FROM unnest($6::text[], $7::numeric[]) AS e(account_id, amount)`,
    [
      postingId,
      posting.transactionId,
      posting.mode,
      posting.currency,
      new Date(posting.nowMs),
      entries.map((entry) => entry.ledgerAccountId),
      entries.map((entry) => entry.amount.toFixed()),
    ],
  );
  return postingId;
}

/** Two entries: `amount` leaves `from` and arrives at `to`. */
export function transferEntries(from: string, to: string, amount: Decimal): Entry[] {
  assert(amount.gt(0), 'a transfer of money is positive');
  return [
    { ledgerAccountId: from, amount: amount.negated() },
    { ledgerAccountId: to, amount: new Decimal(amount) },
  ];
}
