/**
 * The local chain's transaction history: what getSignaturesForAddress and getTransaction read.
 * bankrun keeps no history a client can query, so the chain records each landed transaction
 * here (its signed bytes, slot, time, fee, error and the lamport balances of its accounts
 * before and after), indexed by every account it names, like a node with history. Bounded:
 * the oldest transactions are forgotten first (a node's history is bounded too).
 */
import type { TransactionErrorJson } from './transaction-error.js';

/** Transactions remembered at most (the oldest forgotten first). */
export const HISTORY_TRANSACTIONS_MAX = 20_000;

export interface LandedTransaction {
  readonly signature: string;
  readonly slot: number;
  /** Unix seconds, as a node's blockTime. */
  readonly blockTime: number;
  /** The signed wire transaction. */
  readonly bytes: Buffer;
  /** The accounts it names, base58, in the message's static order. */
  readonly accountKeys: readonly string[];
  readonly err: TransactionErrorJson | null;
  readonly fee: number;
  readonly preBalances: readonly number[];
  readonly postBalances: readonly number[];
  readonly logMessages: readonly string[];
}

export interface SignaturesQuery {
  /** Start searching backwards from (and excluding) this signature. */
  readonly before?: string;
  /** Stop at (and exclude) this signature. */
  readonly until?: string;
  readonly limit: number;
}

export class TransactionHistory {
  /** Insertion order is landing order: the first key is the oldest. */
  readonly #bySignature = new Map<string, LandedTransaction>();
  /** Per address, its transactions' signatures, oldest first. */
  readonly #byAddress = new Map<string, string[]>();

  constructor(private readonly transactionsMax = HISTORY_TRANSACTIONS_MAX) {}

  get size(): number {
    return this.#bySignature.size;
  }

  record(landed: LandedTransaction): void {
    if (this.#bySignature.has(landed.signature)) return;
    this.#bySignature.set(landed.signature, landed);
    for (const address of new Set(landed.accountKeys)) {
      let list = this.#byAddress.get(address);
      if (list === undefined) {
        list = [];
        this.#byAddress.set(address, list);
      }
      list.push(landed.signature);
    }
    while (this.#bySignature.size > this.transactionsMax) this.#forgetOldest();
  }

  get(signature: string): LandedTransaction | null {
    return this.#bySignature.get(signature) ?? null;
  }

  /** The address's transactions, newest first, between `before` and `until` (both excluded). */
  signaturesFor(address: string, query: SignaturesQuery): LandedTransaction[] {
    const list = this.#byAddress.get(address) ?? [];
    let end = list.length;
    if (query.before !== undefined) {
      const at = list.lastIndexOf(query.before);
      // A node answers nothing older than a signature it does not know for this address.
      if (at === -1) return [];
      end = at;
    }
    const found: LandedTransaction[] = [];
    for (let i = end - 1; i >= 0 && found.length < query.limit; i -= 1) {
      const signature = list[i];
      if (signature === undefined || signature === query.until) break;
      const landed = this.#bySignature.get(signature);
      if (landed !== undefined) found.push(landed);
    }
    return found;
  }

  #forgetOldest(): void {
    const oldest = this.#bySignature.keys().next();
    if (oldest.done === true) return;
    const landed = this.#bySignature.get(oldest.value);
    this.#bySignature.delete(oldest.value);
    if (landed === undefined) return;
    for (const address of new Set(landed.accountKeys)) {
      const list = this.#byAddress.get(address);
      // The oldest transaction overall is the oldest of each of its addresses.
      if (list?.[0] === landed.signature) list.shift();
      if (list?.length === 0) this.#byAddress.delete(address);
    }
  }
}
