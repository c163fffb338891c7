import { assert, SpendgateError } from '../../core/index.js';
import type { SqlQueryable, SqlTransaction } from './client.js';
import type { Corkable } from './pipeline.js';

/*
 * Lifecycle messages (captures, reversals, increments, force captures, refunds, advice) share
 * database transactions: the messages waiting when a lane frees run together, each its own
 * code unchanged, on one connection in one transaction, and their statements of each round
 * trip leave in one socket write. Why: each message alone was a transaction of its own, 4 to 8
 * round trips, and the service's CPU went to those round trips (writev to the database was a
 * third of it, bench:http `--only capture`, docs/performance.md); authorizations had long shared
 * theirs in batches (store/authorize/). Here nothing about a message is rewritten for the
 * batch: what makes running them together right is below.
 *
 * Invariants, each held by the code here or by the two lock functions (lockAuthorization,
 * lockCardVault), which are the first statements of every message:
 * - One member at a time per vault. A member claims the vault it locked (`claim`) before it
 *   writes; a member that finds the vault claimed by another member stops. Its statements so
 *   far only locked and read. When the other has finished, it starts again from nothing in
 *   this batch, after the other's last statement, and so reads what the other wrote; while
 *   the other still runs, it goes to the front of the queue for the next batch rather than
 *   make this one as long as both (a batch takes as long as its longest chain). So the
 *   messages of one vault run one after another, as separate transactions would.
 * - The batch never waits for a row lock another transaction holds: in a batch, the lock
 *   functions skip a locked vault (SKIP LOCKED), and the member leaves the batch (`leave`) to
 *   run alone, where it waits as before. A batch holding many vaults and waiting for one more
 *   could otherwise close a cycle with an authorize batch that locks many.
 * - All or nothing. A member refused before it wrote anything (a SpendgateError at its lock,
 *   or right after) is answered its refusal, and the rest commit. Any other failure (an error
 *   after it wrote, a statement the database refused, which fails every statement behind it)
 *   rolls the whole batch back, and every member runs again alone: nothing of the batch was
 *   committed, so running again is safe, and the answers are those of the runs alone.
 * - A failure of the COMMIT is every member's answer, not a run again: a COMMIT that failed
 *   may have committed (as for a transaction alone, the caller learns it failed). A BEGIN
 *   that failed fails every statement behind it: a rollback, and every member runs alone.
 * - Every member has settled before the transaction ends: none sends a statement after the
 *   COMMIT or the ROLLBACK.
 */

/** What a message's lock functions see of the batch it runs in (SqlQueryable.batch). */
export interface BatchMember {
  /**
   * Claims `key` (a vault: `vault:<id>`) for this member, after the statements that locked and
   * read it and before any write. Throws, to stop the member and start it again later, when
   * another member of the batch holds it.
   */
  claim(key: string): void;
  /** Leaves the batch, to run alone (a row locked by another transaction). Throws. */
  leave(): never;
}

/** Thrown by `claim`: `holder` has the key. */
class ClaimedInBatch extends Error {
  constructor(readonly holder: MemberRun) {
    super('another member of the batch holds this vault');
  }
}

/** Thrown by `leave`. */
class LeftBatch extends Error {
  constructor() {
    super('the member runs alone');
  }
}

/** Thrown by a batch's work to roll it back when a member failed after it wrote. */
class BatchRolledBack extends Error {
  constructor() {
    super('a member of the batch failed after it wrote');
  }
}

/** A member's answer from the batch: its result, its refusal, to run alone, or in the next. */
type Verdict =
  | { readonly kind: 'done'; readonly value: unknown }
  | { readonly kind: 'refused'; readonly error: unknown }
  | { readonly kind: 'alone' }
  | { readonly kind: 'next' };

/**
 * Batches a message is sent on to (its vault held by another member) before it runs alone: it
 * goes first in the next, so it claims before the others, but a bound is a bound.
 */
const NEXT_BATCHES_MAX = 4;

type Work = (tx: SqlQueryable) => Promise<unknown>;

interface Member {
  readonly work: Work;
  readonly answer: (verdict: Verdict) => void;
  /** The key the member is expected to claim (its vault, as last seen), if known. */
  readonly claimHint: string | undefined;
}

/** A member in its batch: what its current attempt has sent, claimed and written. */
interface MemberRun {
  readonly member: Member;
  /** The batch's statement count at this attempt's first statement; null before it. */
  attemptFirstSent: number | null;
  /** The batch's statement count at this member's last statement. */
  lastSent: number;
  claimed: boolean;
  /** A statement was sent after a claim: a failure now rolls the batch back. */
  wrote: boolean;
  finished: boolean;
}

type Outcome =
  | { readonly kind: 'done'; readonly value: unknown }
  | { readonly kind: 'refused'; readonly error: unknown }
  | { readonly kind: 'failed' }
  | { readonly kind: 'left' };

export interface SharedTransactionsOptions {
  /** Batches in flight at once; each holds one connection (and one write slot). */
  readonly lanesMax: number;
  /** Members of one batch, at most. */
  readonly membersMax: number;
  /** Messages waiting for a lane, at most; past it, service_unavailable. */
  readonly waitingMax: number;
  /** Runs one batch's transaction (committed when `work` resolves, rolled back when it throws). */
  readonly runShared: <T>(work: (tx: SqlTransaction) => Promise<T>) => Promise<T>;
}

/** Counts since start, for /metrics and the bench (each only grows). */
export interface SharedTransactionStats {
  readonly batches: number;
  readonly members: number;
  /** Members started again after another member of their batch held their vault. */
  readonly restarts: number;
  /** Members sent on to the next batch: another member of theirs held their vault. */
  readonly deferred: number;
  /** Members that left a batch to run alone (their vault locked elsewhere). */
  readonly left: number;
  /** Batches rolled back, their members run again alone. */
  readonly rolledBack: number;
}

/** Waiting messages looked at per batch formed: bounds the work of one pump. */
const WAITING_SCAN_MAX = 1024;

/**
 * Gathers concurrent messages into shared transactions (the invariants above). A message
 * starts a batch at once while a lane is free; otherwise it waits, and the next batch takes
 * the messages waiting, up to `membersMax`. Under light load every batch holds one message.
 *
 * Batches keep apart by vault, as the authorizations' lanes do (store/authorize/lanes.ts): a
 * batch skips a message whose vault (its claim hint: where this process last saw its hold or
 * card) a running batch holds or expects, or one it takes already; the message waits for the
 * next. So a message of a vault taken does not send its lock statements only to be sent on,
 * and lanes past one do not meet each other's locks. A hint can be wrong or missing; then the
 * claims and the locks decide.
 */
export class SharedTransactions {
  readonly #waiting: Member[] = [];
  readonly #running = new Set<Batch>();
  #stats = { batches: 0, members: 0, restarts: 0, deferred: 0, left: 0, rolledBack: 0 };

  constructor(readonly options: SharedTransactionsOptions) {
    assert(
      options.lanesMax >= 1 && options.membersMax >= 1 && options.waitingMax >= 1,
      'a batch runs at least one message',
    );
  }

  /**
   * Runs `work` in a shared transaction, or calls `runAlone` (the same work in the store's own
   * transaction) when the batch sends it there. `work` may run more than once; only one run
   * commits.
   */
  async run<T>(
    work: (tx: SqlQueryable) => Promise<T>,
    runAlone: () => Promise<T>,
    claimHint?: string,
  ): Promise<T> {
    if (this.#waiting.length >= this.options.waitingMax) {
      throw new SpendgateError(
        'service_unavailable',
        'Too many messages are waiting for the database; try again in a moment.',
      );
    }
    for (let batches = 1; ; batches++) {
      const verdict = await new Promise<Verdict>((answer) => {
        // Sent on from a batch: first in the next one.
        if (batches === 1) this.#waiting.push({ work, answer, claimHint });
        else this.#waiting.unshift({ work, answer, claimHint });
        this.#pump();
      });
      if (verdict.kind === 'next' && batches < NEXT_BATCHES_MAX) continue;
      // Run alone from the caller's own context, not the batch's (the store's write gate is
      // re-entrant by context, and a run alone waits its turn like any write).
      if (verdict.kind === 'alone' || verdict.kind === 'next') return runAlone();
      if (verdict.kind === 'refused') throw verdict.error;
      return verdict.value as T;
    }
  }

  stats(): SharedTransactionStats {
    return { ...this.#stats };
  }

  #pump(): void {
    while (this.#running.size < this.options.lanesMax && this.#waiting.length > 0) {
      const members = this.#take();
      // Every message looked at waits on a running batch's vault: that batch's end pumps.
      if (members.length === 0) return;
      const batch = new Batch(members, this.#stats);
      this.#running.add(batch);
      void this.#runBatch(batch).finally(() => {
        this.#running.delete(batch);
        this.#pump();
      });
    }
  }

  /** The next batch's members: waiting ones, first come first, apart from running batches. */
  #take(): Member[] {
    const busy = new Set<string>();
    for (const running of this.#running) for (const key of running.keys()) busy.add(key);
    const taken: Member[] = [];
    const takenKeys = new Set<string>();
    let index = 0;
    for (let scanned = 0; scanned < WAITING_SCAN_MAX; scanned++) {
      const member = this.#waiting[index];
      if (member === undefined || taken.length >= this.options.membersMax) break;
      const key = member.claimHint;
      if (key !== undefined && (busy.has(key) || takenKeys.has(key))) {
        index += 1;
        continue;
      }
      this.#waiting.splice(index, 1);
      taken.push(member);
      if (key !== undefined) takenKeys.add(key);
    }
    return taken;
  }

  async #runBatch(batch: Batch): Promise<void> {
    this.#stats.batches += 1;
    this.#stats.members += batch.runs.length;
    let outcomes: readonly Outcome[];
    try {
      outcomes = await this.options.runShared((tx) => batch.run(tx));
    } catch (error) {
      if (error instanceof BatchRolledBack) {
        this.#stats.rolledBack += 1;
        for (const run of batch.runs)
          if (!batch.leftEarly(run)) run.member.answer({ kind: 'alone' });
        return;
      }
      // BEGIN or COMMIT failed: the batch's answer, as a transaction alone's (no run again).
      for (const run of batch.runs) {
        if (!batch.leftEarly(run)) run.member.answer({ kind: 'refused', error });
      }
      return;
    }
    outcomes.forEach((outcome, index) => {
      const { member } = batch.runs[index] as MemberRun;
      if (outcome.kind === 'done') member.answer({ kind: 'done', value: outcome.value });
      else if (outcome.kind === 'refused') member.answer({ kind: 'refused', error: outcome.error });
      else assert(outcome.kind === 'left', 'a batch with a failed member rolls back');
    });
  }
}

/** One shared transaction's members, their claims and the statements sent. */
class Batch {
  readonly runs: readonly MemberRun[];
  readonly #claims = new Map<string, MemberRun>();
  readonly #left = new Set<MemberRun>();
  readonly #stats: { restarts: number; deferred: number; left: number };
  #sent = 0;
  /** A statement failed: the transaction is aborted, and every member fails behind it. */
  #statementFailed = false;

  constructor(
    members: readonly Member[],
    stats: { restarts: number; deferred: number; left: number },
  ) {
    this.#stats = stats;
    this.runs = members.map((member) => ({
      member,
      attemptFirstSent: null,
      lastSent: 0,
      claimed: false,
      wrote: false,
      finished: false,
    }));
  }

  /** Every member run to its end on `tx`; throws BatchRolledBack when one failed. */
  async run(tx: SqlTransaction): Promise<Outcome[]> {
    const outcomes = await Promise.all(this.runs.map((run) => this.#runMember(run, tx)));
    if (outcomes.some((outcome) => outcome.kind === 'failed')) throw new BatchRolledBack();
    return outcomes;
  }

  /** The keys this batch's members claimed or are expected to claim. */
  *keys(): Iterable<string> {
    for (const run of this.runs) if (run.member.claimHint !== undefined) yield run.member.claimHint;
    yield* this.#claims.keys();
  }

  /** Whether `run` left before the batch ended (it was answered then, to run alone). */
  leftEarly(run: MemberRun): boolean {
    return this.#left.has(run);
  }

  async #runMember(run: MemberRun, tx: SqlTransaction): Promise<Outcome> {
    try {
      // Each start again follows another member's finish: at most one per member.
      for (let attempt = 1; attempt <= this.runs.length; attempt++) {
        this.#startAttempt(run);
        try {
          return { kind: 'done', value: await run.member.work(this.#queryableOf(run, tx)) };
        } catch (error) {
          if (error instanceof ClaimedInBatch && error.holder.finished) {
            this.#stats.restarts += 1;
            continue;
          }
          if (error instanceof ClaimedInBatch || error instanceof LeftBatch) {
            assert(!run.wrote, 'a member leaves before it writes');
            const next = error instanceof ClaimedInBatch;
            if (next) this.#stats.deferred += 1;
            else this.#stats.left += 1;
            this.#left.add(run);
            run.member.answer({ kind: next ? 'next' : 'alone' });
            return { kind: 'left' };
          }
          const refusedBeforeWriting = !run.wrote && !this.#statementFailed;
          return refusedBeforeWriting ? { kind: 'refused', error } : { kind: 'failed' };
        }
      }
      throw new Error('a member started again more often than its batch has members');
    } finally {
      run.finished = true;
    }
  }

  #startAttempt(run: MemberRun): void {
    for (const [key, holder] of this.#claims) if (holder === run) this.#claims.delete(key);
    run.attemptFirstSent = null;
    run.claimed = false;
    run.wrote = false;
  }

  #queryableOf(run: MemberRun, tx: SqlTransaction): SqlQueryable & Corkable {
    const send = <R>(issue: () => Promise<R>): Promise<R> => {
      assert(!run.finished, 'a member sends nothing once it has finished');
      this.#sent += 1;
      run.lastSent = this.#sent;
      run.attemptFirstSent ??= this.#sent;
      if (run.claimed) run.wrote = true;
      // The members' statements of this turn of the event loop leave in one write.
      tx.corkForTick?.();
      const sent = issue();
      sent.catch(() => {
        this.#statementFailed = true;
      });
      return sent;
    };
    return {
      query: (text, params) => send(() => tx.query(text, params)),
      exec: (text) => send(() => tx.exec(text)),
      together: (start) => (tx.together === undefined ? start() : tx.together(start)),
      batch: {
        claim: (key) => {
          this.#claim(run, key);
        },
        leave: () => {
          throw new LeftBatch();
        },
      },
    };
  }

  #claim(run: MemberRun, key: string): void {
    const firstSent = run.attemptFirstSent;
    assert(firstSent !== null, 'a claim follows the statements that read what it claims');
    const holder = this.#claims.get(key);
    // A holder that finished before this attempt's first statement left: what it wrote was
    // there when this attempt read.
    const free =
      holder === undefined || holder === run || (holder.finished && holder.lastSent < firstSent);
    if (!free) throw new ClaimedInBatch(holder);
    this.#claims.set(key, run);
    run.claimed = true;
  }
}
