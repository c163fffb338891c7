import type { FastifyBaseLogger } from 'fastify';
import {
  assert,
  SpendgateError,
  standInOutcome,
  type AuthorizationOutcome,
  type Scope,
} from '../core/index.js';
import type { AuthorizeInput } from '../store/store.js';
import type { StandInJournal } from './stand-in-journal.js';

/** The store's advice operation, as the stand-in records use it (contract v1.2, section 16). */
export interface AdviceRecorder {
  advise(
    scope: Scope,
    input: AuthorizeInput & { readonly approved: boolean; readonly reason: string },
  ): Promise<AuthorizationOutcome>;
}

export interface StandInRecordSettings {
  /** Stand-in answers owed to the ledger at most; past it, the oldest is dropped, loudly. */
  readonly owedMax: number;
  /** The first wait before trying the owed records again; doubled up to `retryMsMax`. */
  readonly retryMsMin: number;
  readonly retryMsMax: number;
}

export const STAND_IN_RECORD_SETTINGS: StandInRecordSettings = {
  owedMax: 10_000,
  retryMsMin: 200,
  retryMsMax: 5_000,
};

/** The reason an advice of our own stand-in records; the network's own advice names its own. */
export const STAND_IN_REASON = 'stand_in';

interface Owed {
  readonly scope: Scope;
  readonly input: AuthorizeInput;
  readonly approved: boolean;
}

/**
 * What the network was told, kept until the ledger records it (issue 37, item 3: the network is
 * told what is recorded). A stand-in answer given while the database did not answer, or whose
 * late decision differs from it, is owed to the ledger as an advice of our own: an approved
 * stand-in places its hold (whatever the balance: the network approved, its capture will come),
 * a declined one records the decline. Until then a repeat of that callback is answered the
 * stand-in answer from here, never decided afresh. Bounded (`owedMax`) and retried with
 * backoff while the database is away.
 *
 * With a journal (stand-in-journal.ts, STAND_IN_JOURNAL_DIR), what is owed is on the disk before
 * the network is answered, and a process that starts records what a crashed one still owed. A
 * journal lost with its machine is what this does not survive.
 */
export class StandInRecords {
  readonly #owed = new Map<string, Owed>();
  #timer: NodeJS.Timeout | null = null;
  #waitMs: number;
  #flushing: Promise<void> | null = null;
  /** A flush was asked for while a round was under way. */
  #again = false;
  #closed = false;
  #journal: StandInJournal | null = null;

  constructor(
    private readonly store: AdviceRecorder,
    private readonly log: Pick<FastifyBaseLogger, 'warn' | 'error'>,
    private readonly settings: StandInRecordSettings = STAND_IN_RECORD_SETTINGS,
  ) {
    assert(settings.owedMax > 0 && settings.retryMsMin > 0, 'bounded, positive settings');
    assert(settings.retryMsMax >= settings.retryMsMin, 'the backoff grows');
    this.#waitMs = settings.retryMsMin;
  }

  /**
   * Keeps what is owed in `journal` from now on, and takes over what crashed processes' journals
   * still owed (recorded in the next round).
   */
  async useJournal(journal: StandInJournal): Promise<number> {
    assert(this.#journal === null, 'one journal');
    this.#journal = journal;
    const adopted = await journal.adoptOrphans();
    for (const owed of adopted) {
      this.#owed.set(owed.key, { scope: owed.scope, input: owed.input, approved: owed.approved });
    }
    if (adopted.length > 0) {
      this.log.warn(
        { owed: adopted.length },
        'stand-in answers a stopped process owed: taken over',
      );
      this.#schedule(0);
    }
    return adopted.length;
  }

  get owedCount(): number {
    return this.#owed.size;
  }

  /** The stand-in answer still owed to the ledger for this callback, or null. */
  answerFor(scope: Scope, networkTransactionId: string): AuthorizationOutcome | null {
    const owed = this.#owed.get(keyOf(scope, networkTransactionId));
    if (owed === undefined) return null;
    return { ...standInOutcome(owed.approved ? 'approve' : 'decline'), replayed: true };
  }

  /**
   * Records `approved` for this callback as soon as the database takes it, and not before
   * `settled` (the late decision still on its way) has ended, so that the advice comes after it
   * rather than racing it.
   */
  async owe(
    scope: Scope,
    input: AuthorizeInput,
    approved: boolean,
    settled?: Promise<unknown>,
  ): Promise<void> {
    if (this.#closed) return;
    const key = keyOf(scope, input.networkTransactionId);
    this.#owed.delete(key);
    this.#owed.set(key, { scope, input, approved });
    if (this.#owed.size > this.settings.owedMax) {
      const [oldest] = this.#owed.keys();
      if (oldest !== undefined) this.#owed.delete(oldest);
      this.log.error(
        { owedMax: this.settings.owedMax },
        'stand-in answers owed to the ledger passed their bound: the oldest was dropped',
      );
    }
    try {
      await this.#journal?.owe({ key, scope, input, approved });
    } catch (error) {
      // The answer is given all the same (the network must have one); only a crash before the
      // database is back would now lose its record.
      this.log.error({ err: error }, 'a stand-in answer could not be written to its journal');
    }
    if (settled === undefined) {
      this.#schedule(0);
      return;
    }
    const later = (): void => {
      this.#schedule(0);
    };
    settled.then(later, later);
  }

  /** Tries every owed record once now; resolves when the round ends. */
  flush(): Promise<void> {
    if (this.#flushing !== null) {
      // A round under way took its list when it began: one owed since must have a round too.
      this.#again = true;
      return this.#flushing;
    }
    this.#flushing = this.#round().finally(() => {
      this.#flushing = null;
      if (this.#again) {
        this.#again = false;
        this.#schedule(0);
      }
    });
    return this.#flushing;
  }

  /** Stops retrying; what is still owed stays unrecorded (the network's advice records it). */
  async close(): Promise<void> {
    this.#closed = true;
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#timer = null;
    await this.#flushing;
    if (this.#owed.size > 0) {
      this.log.warn(
        { owed: this.#owed.size, journaled: this.#journal !== null },
        'closing with stand-in answers the ledger has not recorded',
      );
    }
    await this.#journal?.close();
  }

  #schedule(waitMs: number): void {
    if (this.#closed || this.#timer !== null) return;
    this.#timer = setTimeout(() => {
      this.#timer = null;
      void this.flush();
    }, waitMs);
    this.#timer.unref();
  }

  async #round(): Promise<void> {
    for (const [key, owed] of [...this.#owed]) {
      try {
        await this.store.advise(owed.scope, {
          ...owed.input,
          approved: owed.approved,
          reason: STAND_IN_REASON,
        });
        // Owed again meanwhile (a later answer to the same callback) stays owed.
        if (this.#owed.get(key) === owed) {
          this.#owed.delete(key);
          await this.#recorded(key);
        }
      } catch (error) {
        if (error instanceof SpendgateError && error.status < 500) {
          // Refused for good (the card is gone from this database): retrying cannot help.
          this.#owed.delete(key);
          await this.#recorded(key);
          this.log.error({ err: error }, 'a stand-in answer could not be recorded');
          continue;
        }
        // The database is still away: the rest waits for the next round.
        this.log.warn({ err: error, owed: this.#owed.size }, 'stand-in records wait');
        this.#schedule(this.#waitMs);
        this.#waitMs = Math.min(this.#waitMs * 2, this.settings.retryMsMax);
        return;
      }
    }
    this.#waitMs = this.settings.retryMsMin;
  }

  async #recorded(key: string): Promise<void> {
    try {
      await this.#journal?.recorded(key);
    } catch (error) {
      // A `done` line lost records the advice again after a crash: answered as recorded.
      this.log.warn({ err: error }, 'the stand-in journal could not note a record');
    }
  }
}

function keyOf(scope: Scope, networkTransactionId: string): string {
  return `${scope.accountId} ${scope.mode} ${networkTransactionId}`;
}
