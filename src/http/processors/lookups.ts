import type { Scope } from '../../core/index.js';
import {
  PROCESSORS,
  type Processor,
  type ProcessorConnectionSecrets,
  type Store,
} from '../../store/store.js';
import { RecentMap } from '../../store/recent-map.js';

/*
 * What every processor message read from PostgreSQL before the shared authorize path, kept in
 * memory per process (issue 36: an adapter's authorize cost 2.2-2.6x the REST route's, most of
 * it these two reads and the secrets' decryption):
 *
 * - A connection's decrypted secrets, for `connectionCacheMs` (5 s by default). A rotation or
 *   a delete through this process forgets them at once (routes/processors.ts calls `forget`
 *   after its transaction commits); one through another process is seen within
 *   `connectionCacheMs`. The previous secrets of a rotation are dropped when their grace ends,
 *   whichever comes first. docs/processors.md states the bound.
 * - Which card a processor's card is tied to, for `cardCacheMs` (60 s by default), for the
 *   authorize only. A remembered tie is never trusted alone: the authorize hands the tie it
 *   expects to the store, which checks it against the card row it locks (a card re-tied or
 *   untied since is declined as unknown, nothing recorded); the dispatcher then forgets the
 *   entry and asks PostgreSQL once. So a stale entry costs one retry, never a wrong card.
 *
 * Both bounded (oldest out first); refusals (unknown connection, untied card) are never kept.
 */

export const PROCESSOR_CONNECTION_CACHE_MS_DEFAULT = 5_000;
export const PROCESSOR_CARD_CACHE_MS_DEFAULT = 60_000;
const CONNECTIONS_MAX = 1_000;
const CARDS_MAX = 100_000;

export interface ProcessorLookupSettings {
  /** How long a connection's secrets are kept; 0: read each message. */
  readonly connectionCacheMs?: number;
  /** How long a processor card's tie is kept; 0: read each message. */
  readonly cardCacheMs?: number;
}

interface Kept<Value> {
  readonly value: Value;
  readonly untilMs: number;
}

export class ProcessorLookups {
  readonly #connections = new RecentMap<Kept<ProcessorConnectionSecrets>>(CONNECTIONS_MAX);
  readonly #cards = new RecentMap<Kept<string>>(CARDS_MAX);
  readonly #connectionCacheMs: number;
  readonly #cardCacheMs: number;
  /**
   * Bumped by every `forget`: a read that began before a forget is not kept, so a read of the
   * row as it was before a rotation committed cannot outlive the rotation's forget.
   */
  #epoch = 0;

  constructor(
    private readonly store: Store,
    settings: ProcessorLookupSettings = {},
    private readonly wallClock: () => number = Date.now,
  ) {
    this.#connectionCacheMs = settings.connectionCacheMs ?? PROCESSOR_CONNECTION_CACHE_MS_DEFAULT;
    this.#cardCacheMs = settings.cardCacheMs ?? PROCESSOR_CARD_CACHE_MS_DEFAULT;
  }

  /** The connection and its secrets (the current first): kept, or read and kept. */
  async connection(
    processor: Processor,
    connectionId: string,
  ): Promise<ProcessorConnectionSecrets> {
    const key = `${processor} ${connectionId}`;
    const nowMs = this.wallClock();
    const kept = this.#connections.get(key);
    if (kept !== undefined && kept.untilMs > nowMs) return kept.value;
    const epoch = this.#epoch;
    const read = await this.store.processorConnectionSecrets(processor, connectionId);
    if (this.#connectionCacheMs > 0 && epoch === this.#epoch) {
      const { previousSecretsUntilMs } = read.connection;
      // The grace is in the store's time; what is left of it is kept as wall time.
      const graceLeftMs =
        previousSecretsUntilMs === null ? Infinity : previousSecretsUntilMs - read.readAtMs;
      this.#connections.set(key, {
        value: read,
        untilMs: nowMs + Math.min(this.#connectionCacheMs, graceLeftMs),
      });
    } else this.#connections.delete(key);
    return read;
  }

  /**
   * Forgets a connection's secrets: after a rotation or a delete. The ties kept of its cards
   * may stay: the store checks each against the card row (a delete unties them all there).
   */
  forget(connectionId: string): void {
    this.#epoch += 1;
    for (const processor of PROCESSORS) this.#connections.delete(`${processor} ${connectionId}`);
  }

  /**
   * The card a processor card is tied to, maybe as kept: `kept` says so, and the caller has
   * the store check the tie (authorize). Null: tied to none (never kept).
   */
  async cardOf(
    scope: Scope,
    connectionId: string,
    processorCardId: string,
  ): Promise<{ readonly cardId: string; readonly kept: boolean } | null> {
    const key = `${scope.accountId} ${scope.mode} ${connectionId} ${processorCardId}`;
    const nowMs = this.wallClock();
    const kept = this.#cards.get(key);
    if (kept !== undefined && kept.untilMs > nowMs) return { cardId: kept.value, kept: true };
    const cardId = await this.freshCardOf(scope, connectionId, processorCardId);
    if (cardId !== null && this.#cardCacheMs > 0)
      this.#cards.set(key, { value: cardId, untilMs: nowMs + this.#cardCacheMs });
    return cardId === null ? null : { cardId, kept: false };
  }

  /** The tie as PostgreSQL holds it now; forgets what was kept of it. */
  async freshCardOf(
    scope: Scope,
    connectionId: string,
    processorCardId: string,
  ): Promise<string | null> {
    this.#cards.delete(`${scope.accountId} ${scope.mode} ${connectionId} ${processorCardId}`);
    return this.store.cardOfProcessorCard(scope, connectionId, processorCardId);
  }
}
