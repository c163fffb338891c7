import { assert, ZERO } from '../../core/index.js';
import { RecentMap } from '../recent-map.js';
import {
  cardKey,
  type AuthorizeRequest,
  type LockedBatch,
  type LockedRow,
  type VaultState,
} from './batch.js';

/*
 * What this process last saw of the vaults and cards its authorize batches committed on: the
 * state as each batch left it (pending totals with its holds, counters with its spend, the row
 * versions its write made). A batch whose every card and vault is known decides on that state
 * before it reads anything, and its one statement checks in the database that the state still
 * holds (one-trip.ts): one round trip instead of two. What is known is only ever a
 * guess the database confirms; a guess gone stale costs the batch one more round trip, never a
 * wrong answer.
 *
 * A vault's entry is taken out while a batch decides on it and put back by the batch that
 * commits on it (the lanes never run two batches on a vault, and taking it out makes sure):
 * the counters a batch adds its spend to are never another's.
 */

/**
 * Vaults and cards known at most; past it the least recently committed on are forgotten (it
 * only costs a read). A vault's entry holds its counter rows (its policy's windows, and two
 * rows per MCC approved on that day), at most COUNTER_ROWS_MAX: a vault of the bench's policy
 * (daily and monthly limits) holds about 35. Each row is about 250 bytes in memory (its key,
 * the row, a Decimal), so the vaults' entries take 130 MB at the very most, and a few MB
 * as the bench runs them. A card's entry is its row as locked, about 500 bytes.
 */
const VAULTS_MAX = 2_048;
const COUNTER_ROWS_MAX = 256;
const CARDS_MAX = 100_000;
/**
 * How long what a batch saw may be decided on. The check compares row versions (xmin, 32 bits,
 * which wrap after about four billion transactions): a minute is far inside that, and an
 * entry older than a minute belongs to a vault too quiet for a round trip to matter.
 */
const KNOWN_AGE_MS_MAX = 60_000;
/**
 * When known state goes stale in more than one batch of `STALE_SHARE_MAX` over a window of
 * `WINDOW_BATCHES`, other writers (another server process on the same vaults, captures) change
 * the vaults faster than this process sees them, and each stale guess costs a round trip and a
 * rollback: the next batches read first, as without known state, `PAUSE_BATCHES_MIN` of them,
 * twice as many after each window that goes stale again, up to `PAUSE_BATCHES_MAX` (so two
 * processes on the same vaults spend about one batch in a thousand finding that out), and
 * back to the least after a window that does not.
 */
export const WINDOW_BATCHES = 64;
export const STALE_SHARE_MAX = 8;
export const PAUSE_BATCHES_MIN = 512;
export const PAUSE_BATCHES_MAX = 65_536;

interface KnownVault {
  readonly state: VaultState;
  /** The vault's policy version as the batch read it; undefined: it had none. */
  readonly version: number | undefined;
  /** The UTC day of the batch: its counters are the rows of that day's windows. */
  readonly spendDay: string;
  readonly seenAtMs: number;
}

export class KnownState {
  readonly #vaults = new RecentMap<KnownVault>(VAULTS_MAX);
  /** Cards without a policy of their own, by cardKey, as a batch's lock read them. */
  readonly #cards = new RecentMap<LockedRow>(CARDS_MAX);
  #windowBatches = 0;
  #windowStale = 0;
  #pausedBatches = 0;
  /** The pause after the next window that goes stale. */
  #pauseBatches = PAUSE_BATCHES_MIN;
  /** Batches decided on known state, and those of them whose state had gone stale. */
  readonly stats = { oneTrip: 0, stale: 0 };

  /**
   * After a batch has committed: the state it left, for the next batch on these vaults. A card
   * with a policy of its own is not kept (its counters are the two-round-trip path's alone).
   */
  remember(batch: LockedBatch, spendDay: string, nowMs: number): void {
    for (const vault of batch.vaults.values()) {
      // A policy over long windows or many MCCs: read each time rather than held.
      if (vault.counters.rowCount > COUNTER_ROWS_MAX) {
        this.#vaults.delete(vault.id);
        continue;
      }
      this.#vaults.set(vault.id, {
        state: vault,
        version: batch.versions.get(vault.id),
        spendDay,
        seenAtMs: nowMs,
      });
    }
    for (const [key, card] of batch.cards) {
      if (batch.cardReads.versions.has(card.card_id)) this.#cards.delete(key);
      else this.#cards.set(key, card);
    }
  }

  /**
   * The batch's state as known, taken out of what is known; null (and nothing taken) when a
   * card or vault of the batch is not known, or known from another day or too long ago, or
   * while known state is paused.
   */
  recall(
    requests: readonly AuthorizeRequest[],
    spendDay: string,
    nowMs: number,
  ): LockedBatch | null {
    if (this.#pausedBatches > 0) {
      this.#pausedBatches -= 1;
      return null;
    }
    const cards = new Map<string, LockedRow>();
    const known = new Map<string, KnownVault>();
    for (const { scope, input } of requests) {
      const key = cardKey(input.cardId, scope.accountId, scope.mode);
      const card = this.#cards.get(key);
      if (card === undefined) return null;
      cards.set(key, card);
      if (known.has(card.vault_id)) continue;
      const vault = this.#vaults.get(card.vault_id);
      if (vault === undefined || vault.spendDay !== spendDay) return null;
      if (nowMs - vault.seenAtMs > KNOWN_AGE_MS_MAX || nowMs < vault.seenAtMs) return null;
      known.set(card.vault_id, vault);
    }
    const vaults = new Map<string, VaultState>();
    const versions = new Map<string, number>();
    for (const [vaultId, { state, version }] of known) {
      this.#vaults.delete(vaultId);
      vaults.set(vaultId, { ...state, pendingDelta: ZERO });
      if (version !== undefined) versions.set(vaultId, version);
    }
    assert(
      vaults.size > 0 && vaults.size <= requests.length,
      'a batch has a vault per card at most',
    );
    return {
      cards,
      vaults,
      versions,
      previous: new Map(),
      hinted: new Map(),
      cardReads: { versions: new Map(), hinted: new Map() },
      cardPolicies: new Map(),
    };
  }

  /**
   * A batch decided on known state has ended: committed (its state is remembered) or found
   * stale (its cards are forgotten too, and the batch runs again, reading first).
   */
  settle(batch: LockedBatch, outcome: 'committed' | 'stale'): void {
    this.stats.oneTrip += 1;
    this.#windowBatches += 1;
    if (outcome === 'stale') {
      this.stats.stale += 1;
      this.#windowStale += 1;
      for (const key of batch.cards.keys()) this.#cards.delete(key);
    }
    if (this.#windowBatches < WINDOW_BATCHES) return;
    if (this.#windowStale * STALE_SHARE_MAX > this.#windowBatches) {
      this.#pausedBatches = this.#pauseBatches;
      this.#pauseBatches = Math.min(PAUSE_BATCHES_MAX, this.#pauseBatches * 2);
    } else {
      this.#pauseBatches = PAUSE_BATCHES_MIN;
    }
    this.#windowBatches = 0;
    this.#windowStale = 0;
  }
}
