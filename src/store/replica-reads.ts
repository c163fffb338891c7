import { assert, SpendgateError } from '../core/index.js';
import type { ReplicaEvent, ReplicaReadReason } from './port/index.js';
import type { SqlClient, SqlQueryable } from './sql/client.js';
import { runTransaction } from './sql/transaction.js';

/*
 * Reads from a PostgreSQL streaming replica (DATABASE_READ_URL; docs/operations.md, "Read
 * replica"). Only the reads that may lag go there: lists, balance history, webhook deliveries
 * and backtests, each declared so in replica-routes.ts. Whatever decides or moves money, every write, and every read inside a write's
 * transaction stays on the primary.
 *
 * Read-your-writes, across a fleet: after each commit made for an account (a route's write, an
 * authorization batch), the store raises that account's *write position* to the primary's WAL
 * insert position, read after the COMMIT (so at or past the commit record), in a place every
 * process sees (`WritePositions`: Redis in `spendgate serve`). A read of the account goes to
 * the replica only when the replica has replayed at least that far
 * (`pg_last_wal_replay_lsn()`, asked in the read's own replica transaction, so the snapshot it
 * reads is at least as new), else to the primary. The caller's next request may reach another
 * process: that process reads the same position. Chosen over the alternatives because:
 * - asking the primary for its current WAL position before each read (no shared state) sends
 *   every read back to the primary whenever anything at all is being written, that is always;
 * - per-process memory of positions breaks as soon as a client's next request reaches
 *   another API process;
 * - a table of positions in the primary costs a row write per commit on the hot path (and
 *   a lock shared by every authorization of an account), where Redis costs one round trip.
 * An account with no position kept (none written since it expired, or Redis lost it) reads
 * the primary once, and that read sets its position to the primary's current one: a lost
 * position costs a primary read, never a stale one. A replica that is down, lagging or not a
 * standby never fails a read: it falls back to the primary, counted by reason.
 */

/** The shared record of each account's last write position (WAL bytes). */
export interface WritePositions {
  /** Raises each account's position to at least `position`; never lowers one. */
  raise(accountIds: readonly string[], position: bigint): Promise<void>;
  /** The account's position, or null when none is kept (never written, expired, or lost). */
  of(accountId: string): Promise<bigint | null>;
}

export interface ReplicaReadsOptions {
  readonly primary: SqlClient;
  readonly replica: SqlClient;
  /** After a replica error, reads skip it for this long (a down replica costs no connect per read). */
  readonly retryAfterMs?: number;
  readonly clock?: () => number;
}

/** A replica read ran but the replica had not replayed far enough: read the primary instead. */
class ReplicaBehind extends Error {}

const RETRY_AFTER_MS_DEFAULT = 5_000;

/** `X/Y` (pg_lsn's text) as a number of WAL bytes. */
export function parseLsn(text: string): bigint {
  const match = /^([0-9A-F]{1,8})\/([0-9A-F]{1,8})$/i.exec(text);
  assert(match !== null, 'a pg_lsn reads X/Y in hexadecimal');
  return (BigInt(`0x${match[1] as string}`) << 32n) | BigInt(`0x${match[2] as string}`);
}

/** Routes the lagging reads of one store, and keeps its accounts' write positions. */
export class ReplicaReads {
  readonly #primary: SqlClient;
  readonly #replica: SqlClient;
  readonly #retryAfterMs: number;
  readonly #clock: () => number;
  #positions: WritePositions | null = null;
  /** Until when the replica is skipped after an error (epoch ms). */
  #skipUntilMs = 0;
  readonly #observers = new Set<(event: ReplicaEvent) => void>();

  constructor(options: ReplicaReadsOptions) {
    this.#primary = options.primary;
    this.#replica = options.replica;
    this.#retryAfterMs = options.retryAfterMs ?? RETRY_AFTER_MS_DEFAULT;
    this.#clock = options.clock ?? Date.now;
    assert(this.#retryAfterMs > 0, 'a failed replica is skipped for a while');
  }

  /** Where positions are kept; until set, every lagging read goes to the primary. */
  keepPositionsIn(positions: WritePositions): void {
    this.#positions = positions;
  }

  observe(observer: (event: ReplicaEvent) => void): () => void {
    this.#observers.add(observer);
    return () => this.#observers.delete(observer);
  }

  /**
   * Runs `work` (reads only) on the replica when it has replayed the account's last write,
   * else on the primary. Never fails because of the replica or the positions.
   */
  async read<T>(accountId: string, work: (tx: SqlQueryable) => Promise<T>): Promise<T> {
    const position = await this.#positionOf(accountId);
    if (typeof position === 'string') {
      const result = await this.#onPrimary(position, work);
      if (position === 'position_unknown') await this.wrote([accountId]);
      return result;
    }
    try {
      const result = await this.#replica.transaction(
        async (tx) => {
          const replayed = await replayPosition(tx);
          if (replayed === null || replayed < position) throw new ReplicaBehind();
          return work(tx);
        },
        // Its first statement is a read: BEGIN leaves with it, in one round trip.
        { pipelineBegin: true },
      );
      this.#emit({ kind: 'read', servedBy: 'replica', reason: 'caught_up' });
      return result;
    } catch (error) {
      if (error instanceof ReplicaBehind) return this.#onPrimary('behind', work);
      // A refusal of the caller (an unknown id) is the answer, wherever it was read: the
      // replica had replayed the caller's own writes, so what it lacks, the caller never made.
      if (error instanceof SpendgateError) throw error;
      this.#replicaFailed();
      return this.#onPrimary('replica_unavailable', work);
    }
  }

  /**
   * A queryable for a long run of reads outside any transaction (a backtest worker's batches):
   * the replica when it has replayed the account's last write, else the primary. Each of its
   * statements takes a snapshot at least as new as the check (replay only moves on). A replica
   * statement that fails is run on the primary, and so is every later one.
   */
  async reader(accountId: string): Promise<SqlQueryable> {
    const position = await this.#positionOf(accountId);
    let reason: Exclude<ReplicaReadReason, 'caught_up'> | null =
      typeof position === 'string' ? position : null;
    if (typeof position !== 'string') {
      try {
        const replayed = await replayPosition(this.#replica);
        if (replayed === null || replayed < position) reason = 'behind';
      } catch {
        this.#replicaFailed();
        reason = 'replica_unavailable';
      }
    }
    if (reason !== null) {
      if (reason === 'position_unknown') await this.wrote([accountId]);
      this.#emit({ kind: 'read', servedBy: 'primary', reason });
      return this.#primary;
    }
    this.#emit({ kind: 'read', servedBy: 'replica', reason: 'caught_up' });
    return this.#fallingBack();
  }

  /**
   * After a commit made for these accounts: each one's position raised to the primary's WAL
   * insert position, read now (after the COMMIT returned, so at or past its commit record).
   * A position that cannot be kept is counted, never thrown: the write is committed.
   */
  async wrote(accountIds: Iterable<string>): Promise<void> {
    const accounts = [...new Set(accountIds)];
    if (accounts.length === 0) return;
    try {
      if (this.#positions === null) throw new Error('no write positions are kept yet');
      const { rows } = await this.#primary.query<{ lsn: string }>(
        'SELECT pg_current_wal_insert_lsn()::text AS lsn',
      );
      const lsn = rows[0]?.lsn;
      assert(lsn !== undefined, 'the primary answers its WAL position');
      await this.#positions.raise(accounts, parseLsn(lsn));
    } catch {
      this.#emit({ kind: 'position_not_kept' });
    }
  }

  async close(): Promise<void> {
    await this.#replica.close();
  }

  /** The account's position, or why the replica is not asked. */
  async #positionOf(
    accountId: string,
  ): Promise<bigint | Exclude<ReplicaReadReason, 'caught_up' | 'behind'>> {
    if (this.#clock() < this.#skipUntilMs) return 'replica_unavailable';
    try {
      if (this.#positions === null) throw new Error('no write positions are kept yet');
      // Not known: the primary answers, and the account's position becomes the primary's
      // current one (read), at or past every commit the account has made.
      return (await this.#positions.of(accountId)) ?? 'position_unknown';
    } catch {
      return 'positions_unavailable';
    }
  }

  #replicaFailed(): void {
    this.#skipUntilMs = this.#clock() + this.#retryAfterMs;
  }

  /** The replica's pool, handing each statement to the primary from its first failure on. */
  #fallingBack(): SqlQueryable {
    let target: SqlQueryable = this.#replica;
    const query: SqlQueryable['query'] = async (text, params) => {
      if (target === this.#primary) return this.#primary.query(text, params);
      try {
        return await this.#replica.query(text, params);
      } catch (error) {
        if (error instanceof SpendgateError) throw error;
        target = this.#primary;
        this.#replicaFailed();
        this.#emit({ kind: 'read', servedBy: 'primary', reason: 'replica_unavailable' });
        return this.#primary.query(text, params);
      }
    };
    return {
      query,
      exec: async (text) => {
        await query(text);
      },
    };
  }

  async #onPrimary<T>(
    reason: Exclude<ReplicaReadReason, 'caught_up'>,
    work: (tx: SqlQueryable) => Promise<T>,
  ): Promise<T> {
    const result = await runTransaction(this.#primary, work);
    this.#emit({ kind: 'read', servedBy: 'primary', reason });
    return result;
  }

  #emit(event: ReplicaEvent): void {
    for (const observe of this.#observers) observe(event);
  }
}

/** How far the server has replayed the primary's WAL; null when it is not a standby. */
async function replayPosition(tx: SqlQueryable): Promise<bigint | null> {
  const { rows } = await tx.query<{ lsn: string | null }>(
    'SELECT pg_last_wal_replay_lsn()::text AS lsn',
  );
  const lsn = rows[0]?.lsn ?? null;
  // A server that is no standby (promoted, or the wrong URL) may have diverged: not read.
  return lsn === null ? null : parseLsn(lsn);
}

/** Positions in this process's memory, for a single process (tests, an embedding service). */
export function memoryWritePositions(entriesMax = 100_000): WritePositions {
  const positions = new Map<string, bigint>();
  return {
    raise(accountIds, position) {
      for (const accountId of accountIds) {
        const kept = positions.get(accountId);
        if (kept !== undefined && kept >= position) continue;
        positions.delete(accountId);
        positions.set(accountId, position);
        // Forgetting the oldest costs that account one primary read, never a stale one.
        if (positions.size > entriesMax) {
          const oldest = positions.keys().next();
          if (oldest.done !== true) positions.delete(oldest.value);
        }
      }
      return Promise.resolve();
    },
    of: (accountId) => Promise.resolve(positions.get(accountId) ?? null),
  };
}
