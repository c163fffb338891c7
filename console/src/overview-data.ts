import Decimal from 'decimal.js';
import { api, query, type Page } from './api';
import type { PolicyLimits, Transaction, Vault } from './types';

/*
 * What the overview reads, from the routes the API already has (no summary route exists):
 * the account's vaults, today's card authorizations and the limits of the vaults' policies,
 * each read bounded (pages of 100, at most PAGES_MAX pages; limits of at most
 * LIMITS_VAULTS_MAX vaults), and what it computes from them. Amounts are summed as decimals.
 */

const PAGE_SIZE = 100;
export const PAGES_MAX = 3;
export const LIMITS_VAULTS_MAX = 20;
/** A limit counts as near when less than this share of it remains. */
export const NEAR_LIMIT_SHARE = new Decimal('0.2');

/** Up to PAGES_MAX pages of a list; `truncated` when more remained. */
export async function readPages<T>(
  path: string,
  filters: Record<string, string | undefined>,
  cursorOf: (row: T) => string,
): Promise<{ rows: T[]; truncated: boolean }> {
  const rows: T[] = [];
  let after: string | undefined;
  for (let index = 0; index < PAGES_MAX; index++) {
    const page = await api<Page<T>>(
      'GET',
      `${path}${query({ ...filters, limit: PAGE_SIZE, startingAfter: after })}`,
    );
    rows.push(...page.data);
    if (!page.hasMore) return { rows, truncated: false };
    const last = page.data.at(-1);
    if (last === undefined) return { rows, truncated: false };
    after = cursorOf(last);
  }
  return { rows, truncated: true };
}

export interface CurrencyTotal {
  currency: string;
  vaults: number;
  available: string;
  pending: string;
  ledger: string;
}

export function totalsOf(vaults: Vault[]): CurrencyTotal[] {
  const sums = new Map<
    string,
    { vaults: number; available: Decimal; pending: Decimal; ledger: Decimal }
  >();
  for (const vault of vaults) {
    const sum = sums.get(vault.currency) ?? {
      vaults: 0,
      available: new Decimal(0),
      pending: new Decimal(0),
      ledger: new Decimal(0),
    };
    sums.set(vault.currency, {
      vaults: sum.vaults + 1,
      available: sum.available.plus(vault.balance.available),
      pending: sum.pending.plus(vault.balance.pending),
      ledger: sum.ledger.plus(vault.balance.ledger),
    });
  }
  return [...sums.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([currency, sum]) => ({
      currency,
      vaults: sum.vaults,
      available: sum.available.toFixed(2),
      pending: sum.pending.toFixed(2),
      ledger: sum.ledger.toFixed(2),
    }));
}

export interface DeclineReasonCount {
  message: string;
  rules: string[];
  count: number;
}

/** Declines grouped by the message written for people, most frequent first. */
export function topReasons(transactions: Transaction[], max: number): DeclineReasonCount[] {
  const byMessage = new Map<string, { rules: Set<string>; count: number }>();
  for (const transaction of transactions) {
    if (transaction.status !== 'declined') continue;
    const message = transaction.declineReason?.message ?? transaction.declineCode ?? 'declined';
    const entry = byMessage.get(message) ?? { rules: new Set<string>(), count: 0 };
    if (transaction.declineReason !== null) entry.rules.add(transaction.declineReason.rule);
    byMessage.set(message, { rules: entry.rules, count: entry.count + 1 });
  }
  return [...byMessage.entries()]
    .map(([message, entry]) => ({ message, rules: [...entry.rules], count: entry.count }))
    .sort((a, b) => b.count - a.count || a.message.localeCompare(b.message))
    .slice(0, max);
}

export interface VaultWarning {
  vault: Vault;
  text: string;
  /** A moment the text ends with, shown in the console's one time format. */
  since?: string;
}

/** A vault's limits with less than NEAR_LIMIT_SHARE remaining, as sentences. */
export function nearLimits(vault: Vault, limits: PolicyLimits): VaultWarning[] {
  const warnings: VaultWarning[] = [];
  for (const limit of limits.limits) {
    if (limit.amount === null || limit.remaining === null || limit.used === null) continue;
    const amount = new Decimal(limit.amount);
    if (amount.lte(0) || new Decimal(limit.remaining).gte(amount.times(NEAR_LIMIT_SHARE))) continue;
    warnings.push({
      vault,
      text: `${limit.rule} (${limit.interval}): ${limit.used} of ${limit.amount} ${limits.currency} used, ${limit.remaining} left`,
    });
  }
  return warnings;
}

/** The UTC midnight that began the day of `nowMs`, as an ISO time. */
export function startOfUtcDay(nowMs: number): string {
  return `${new Date(nowMs).toISOString().slice(0, 10)}T00:00:00.000Z`;
}
