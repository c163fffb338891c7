import { randomBytes } from 'node:crypto';
import {
  assert,
  BacktestReplay,
  backtestResultRecord,
  backtestWindow,
  compilePolicy,
  currencyOf,
  SpendgateError,
  type BacktestRecord,
  type BacktestResultRecord,
  type BacktestResult,
  type BacktestStatus,
  type BacktestWindow,
  type CompiledPolicy,
  type Mode,
  type PolicyDocument,
  type Scope,
} from '../../core/index.js';
import { newId } from '../../ids.js';
import {
  countAuthorizations,
  readPriorSpend,
  readReplayBatch,
  REPLAY_BATCH_ROWS,
  windowIdBounds,
  type BacktestTarget,
  type ReplayBatch,
} from '../backtest-rows.js';
import type { StoreContext } from '../context.js';
import { currencyFromRow } from '../rows.js';
import type { SqlQueryable } from '../sql/client.js';
import { oneRow } from '../sql/one-row.js';
import { runTransaction } from '../sql/transaction.js';
import { getCard } from './reads.js';
import { getVault } from './vaults.js';
import {
  BACKTEST_ATTEMPTS_MAX,
  BACKTEST_SYNC_AUTHORIZATIONS_MAX,
  type BacktestInput,
  type BacktestRunOutcome,
  type BacktestSubject,
} from '../port/backtests.js';

/*
 * Policy backtests (issue 14): a draft policy replayed over a vault's, or a card's, recorded
 * authorizations of a window (core/decision/backtest.ts says what is judged and how the spend
 * counters run). A window of at most 10,000 authorizations is replayed in the request that asks
 * for it; a larger one is queued here, and a BullMQ job of the worker role replays it
 * (workers/backtests.ts), writing its progress and then its result to this table.
 */

/** Batches one replay reads at most: 100,000,000 rows, far beyond any 90 days of one vault. */
const REPLAY_BATCHES_MAX = 10_000;
const FAILURE_MESSAGE = 'The backtest could not be completed; ask for it again.';

interface BacktestRow {
  id: string;
  account_id: string;
  mode: Mode;
  vault_id: string;
  card_id: string | null;
  policy: PolicyDocument;
  start_date: string;
  end_date: string;
  status: BacktestStatus;
  replayed: number;
  total: number | null;
  result: BacktestResultRecord | null;
  failure_message: string | null;
  created_at: Date;
  completed_at: Date | null;
}

/** The columns of a backtest row, each of the table aliased `alias` when given. */
function backtestColumns(alias = ''): string {
  const of = alias === '' ? '' : `${alias}.`;
  return `${of}id, ${of}account_id, ${of}mode, ${of}vault_id, ${of}card_id, ${of}policy,
          ${of}start_date::text AS start_date, ${of}end_date::text AS end_date, ${of}status,
          ${of}replayed, ${of}total, ${of}result, ${of}failure_message, ${of}created_at, ${of}completed_at`;
}
const BACKTEST_COLUMNS = backtestColumns();

function backtestFromRow(row: BacktestRow): BacktestRecord {
  return {
    id: row.id,
    accountId: row.account_id,
    mode: row.mode,
    vaultId: row.vault_id,
    cardId: row.card_id,
    policy: row.policy,
    startDate: row.start_date,
    endDate: row.end_date,
    status: row.status,
    replayed: row.replayed,
    total: row.total,
    result: row.result,
    failureMessage: row.failure_message,
    createdAtMs: row.created_at.getTime(),
    completedAtMs: row.completed_at === null ? null : row.completed_at.getTime(),
  };
}

/** A replay that outgrew its bound: the run fails rather than read without end. */
class WindowTooLarge extends Error {}

/**
 * The replay of `policy` over the target's rows of `window`, from the spend before it, in
 * batches of REPLAY_BATCH_ROWS read through `db`. `afterBatch` runs after each batch (a run's
 * progress and lease); it may throw to stop the replay.
 */
async function replayWindow(
  db: SqlQueryable,
  target: BacktestTarget,
  policy: CompiledPolicy,
  window: BacktestWindow,
  afterBatch?: (replay: BacktestReplay) => Promise<void>,
): Promise<BacktestResult> {
  const prior = await readPriorSpend(db, target, policy.aggregates, window.startMs);
  const replay = new BacktestReplay(policy, window, prior, target.kind);
  const bounds = windowIdBounds(window);
  // The next batch is read while this one is replayed: the database builds a batch in about
  // the time the replay takes (bench/backtest.bench.ts), so the two overlap rather than add.
  // Two batches in memory at most.
  const read = (after: string): Promise<ReplayBatch> => {
    const reading = readReplayBatch(db, target, after, bounds.before);
    // Handled here too: a replay that stops (its lease lost) leaves this read unawaited.
    reading.catch(() => undefined);
    return reading;
  };
  let next: Promise<ReplayBatch> | null = read(bounds.after);
  let after = bounds.after;
  for (let batch = 0; next !== null; batch++) {
    if (batch >= REPLAY_BATCHES_MAX) throw new WindowTooLarge('the window outgrew its bound');
    const current: ReplayBatch = await next;
    const { rows, lastId } = current;
    assert(lastId === null || lastId > after, 'each batch reads on');
    next = rows.length === REPLAY_BATCH_ROWS && lastId !== null ? read(lastId) : null;
    after = lastId ?? after;
    for (const row of rows) replay.replay(row);
    await afterBatch?.(replay);
  }
  return replay.result();
}

/** The subject's vault (and card), read in the scope: what the backtest is of. */
async function resolveSubject(
  tx: SqlQueryable,
  scope: Scope,
  subject: BacktestSubject,
): Promise<{ target: BacktestTarget; currency: ReturnType<typeof currencyOf> }> {
  if (subject.kind === 'vault') {
    const vault = await getVault(tx, scope, subject.vaultId);
    return { target: { kind: 'vault', vaultId: vault.id }, currency: currencyOf(vault.currency) };
  }
  const card = await getCard(tx, scope, subject.cardId);
  const vault = await getVault(tx, scope, card.vaultId);
  return {
    target: { kind: 'card', vaultId: vault.id, cardId: card.id },
    currency: currencyOf(vault.currency),
  };
}

/**
 * Queued or running backtests an account (in one mode) may have at once: each is a worker's
 * replay of up to 90 days, so one account cannot fill the queue for every other.
 */
export const BACKTESTS_UNFINISHED_MAX = 5;

/**
 * Refuses a backtest to queue beyond BACKTESTS_UNFINISHED_MAX. The account's row is locked
 * (FOR NO KEY UPDATE: the backtests' foreign keys still read it) so that two requests at once
 * cannot both pass the count.
 */
async function checkUnfinishedBound(tx: SqlQueryable, scope: Scope): Promise<void> {
  await tx.query('SELECT 1 FROM accounts WHERE id = $1 FOR NO KEY UPDATE', [scope.accountId]);
  const { rows } = await tx.query<{ unfinished: string }>(
    `SELECT count(*) AS unfinished FROM backtests
     WHERE status IN ('queued', 'running') AND account_id = $1 AND mode = $2`,
    [scope.accountId, scope.mode],
  );
  if (Number(rows[0]?.unfinished ?? 0) >= BACKTESTS_UNFINISHED_MAX) {
    throw new SpendgateError(
      'rate_limit_exceeded',
      `At most ${BACKTESTS_UNFINISHED_MAX} backtests may be queued or running at once; ask again when one has finished.`,
    );
  }
}

/**
 * createBacktest: one transaction.
 * In: scope, the subject (a vault, or a card: its authorizations under the draft alone), the
 *   draft and the window (startDate to endDate, at most 90 days, cut at now).
 * Out: the backtest: completed, with its result, when the window holds at most 10,000 card
 *   authorizations (replayed here, through this transaction's reads); else queued (`queued`
 *   true), for the worker role.
 * Writes: backtests (one row).
 * Fails: vault_not_found / card_not_found (param id), parameter_invalid (startDate, endDate),
 *   policy_invalid (the draft, param at the fault), rate_limit_exceeded (a backtest to queue
 *   while the account has BACKTESTS_UNFINISHED_MAX queued or running).
 */
export async function createBacktest(
  ctx: StoreContext,
  tx: SqlQueryable,
  scope: Scope,
  subject: BacktestSubject,
  input: BacktestInput,
): Promise<{ backtest: BacktestRecord; queued: boolean }> {
  const nowMs = ctx.clock();
  const { target, currency } = await resolveSubject(tx, scope, subject);
  const window = backtestWindow(input.startDate, input.endDate, nowMs);
  const policy = compilePolicy(input.draft, { currency, templates: ctx.templates });
  const count = await countAuthorizations(
    tx,
    target,
    windowIdBounds(window),
    BACKTEST_SYNC_AUTHORIZATIONS_MAX + 1,
  );
  const queued = count > BACKTEST_SYNC_AUTHORIZATIONS_MAX;
  if (queued) await checkUnfinishedBound(tx, scope);
  const result = queued
    ? null
    : backtestResultRecord(await replayWindow(tx, target, policy, window), currency);
  const at = new Date(nowMs);
  const { rows } = await tx.query<BacktestRow>(
    `INSERT INTO backtests (id, account_id, mode, vault_id, card_id, policy, start_date, end_date, status,
                            replayed, total, result, created_at, updated_at, completed_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $13, $14)
     RETURNING ${BACKTEST_COLUMNS}`,
    [
      newId('backtest', nowMs),
      scope.accountId,
      scope.mode,
      target.vaultId,
      target.kind === 'card' ? target.cardId : null,
      JSON.stringify(policy.document),
      window.startDate,
      window.endDate,
      queued ? 'queued' : 'completed',
      queued ? 0 : count,
      queued ? null : count,
      result === null ? null : JSON.stringify(result),
      at,
      queued ? null : at,
    ],
  );
  return { backtest: backtestFromRow(oneRow(rows, 'the backtest INSERT')), queued };
}

/**
 * getBacktest: one read. In: scope, the subject, the backtest id. Out: the backtest.
 * Fails: vault_not_found / card_not_found (param id); policy_not_found (param backtestId) for a
 *   backtest that is not this subject's (the policy's backtests are the policy's resources).
 */
export async function getBacktest(
  tx: SqlQueryable,
  scope: Scope,
  subject: BacktestSubject,
  backtestId: string,
): Promise<BacktestRecord> {
  // The subject first, so that an unknown vault or card is named as such.
  const { target } = await resolveSubject(tx, scope, subject);
  const { rows } = await tx.query<BacktestRow>(
    `SELECT ${BACKTEST_COLUMNS} FROM backtests
     WHERE id = $1 AND account_id = $2 AND mode = $3 AND vault_id = $4 AND card_id IS NOT DISTINCT FROM $5`,
    [
      backtestId,
      scope.accountId,
      scope.mode,
      target.vaultId,
      target.kind === 'card' ? target.cardId : null,
    ],
  );
  const row = rows[0];
  if (row === undefined) {
    const owner = target.kind === 'card' ? `card ${target.cardId}` : `vault ${target.vaultId}`;
    throw new SpendgateError(
      'policy_not_found',
      `No backtest ${backtestId.slice(0, 64)} exists for ${owner}.`,
      'backtestId',
    );
  }
  return backtestFromRow(row);
}

/**
 * backtestsAwaitingJobs: one transaction (the relay's, with markBacktestJobs).
 * In: batchMax; recheckAfterMs: how long a backtest's job is trusted before it is looked for.
 * Out: unfinished backtests no run holds (queued, or running with its lease expired) that have
 *   no job yet or whose job was last looked at `recheckAfterMs` ago, oldest first, locked
 *   (others skipped) until the transaction ends, with their job generation.
 */
export async function backtestsAwaitingJobs(
  ctx: StoreContext,
  tx: SqlQueryable,
  batchMax: number,
  recheckAfterMs: number,
): Promise<{ id: string; jobGeneration: number }[]> {
  assert(batchMax > 0 && batchMax <= 1_000 && recheckAfterMs >= 0, 'bounded relay parameters');
  const nowMs = ctx.clock();
  const { rows } = await tx.query<{ id: string; job_generation: number }>(
    `SELECT id, job_generation FROM backtests
     WHERE status IN ('queued', 'running') AND (lease_expires_at IS NULL OR lease_expires_at < $1)
       AND (job_generation = 0 OR updated_at < $2)
     ORDER BY created_at LIMIT $3
     FOR UPDATE SKIP LOCKED`,
    [new Date(nowMs), new Date(nowMs - recheckAfterMs), batchMax],
  );
  return rows.map((row) => ({ id: row.id, jobGeneration: row.job_generation }));
}

/**
 * markBacktestJobs: in the relay's transaction. Records each backtest's job generation (the
 * job added, or found alive) and when it was looked at. Writes: backtests.
 */
export async function markBacktestJobs(
  ctx: StoreContext,
  tx: SqlQueryable,
  jobs: readonly { readonly id: string; readonly jobGeneration: number }[],
): Promise<void> {
  if (jobs.length === 0) return;
  const { rowCount } = await tx.query(
    `UPDATE backtests SET job_generation = j.generation, updated_at = $3
     FROM unnest($1::text[], $2::integer[]) AS j(id, generation) WHERE backtests.id = j.id`,
    [jobs.map((job) => job.id), jobs.map((job) => job.jobGeneration), new Date(ctx.clock())],
  );
  assert(rowCount === jobs.length, 'every backtest marked exists');
}

/** The backtest a run holds, as its claim read it. */
interface ClaimedBacktest {
  readonly row: BacktestRow;
  readonly currency: string;
  readonly attempts: number;
}

/**
 * Claims a backtest for one run: one transaction. A backtest out of attempts is failed for good
 * first ('failed'). Out: the backtest, now `running` under `token` until the lease ends; null
 * when it is finished or another run holds it.
 */
async function claimBacktest(
  ctx: StoreContext,
  tx: SqlQueryable,
  backtestId: string,
  token: string,
  leaseMs: number,
): Promise<ClaimedBacktest | 'failed' | null> {
  const now = new Date(ctx.clock());
  const free = `b.status IN ('queued', 'running') AND (b.lease_expires_at IS NULL OR b.lease_expires_at < $2)`;
  const { rowCount: exhausted } = await tx.query(
    `UPDATE backtests b SET status = 'failed', failure_message = $3, completed_at = $2, updated_at = $2,
                            lease_token = NULL, lease_expires_at = NULL
     WHERE b.id = $1 AND ${free} AND b.attempts >= $4`,
    [backtestId, now, FAILURE_MESSAGE, BACKTEST_ATTEMPTS_MAX],
  );
  if (exhausted > 0) return 'failed';
  const { rows } = await tx.query<BacktestRow & { currency: string; attempts: number }>(
    `UPDATE backtests b SET status = 'running', attempts = b.attempts + 1, lease_token = $3,
                            lease_expires_at = $4, replayed = 0, total = NULL, updated_at = $2
     FROM vaults v
     WHERE b.id = $1 AND v.id = b.vault_id AND ${free}
     RETURNING ${backtestColumns('b')}, v.currency, b.attempts`,
    [backtestId, now, token, new Date(now.getTime() + leaseMs)],
  );
  const row = rows[0];
  if (row === undefined) return null;
  return { row, currency: row.currency, attempts: row.attempts };
}

/** The lease a run held was taken over (it ran past it): the run stops, writing nothing more. */
class LeaseLost extends Error {}
/** The run was asked to stop (its worker is shutting down): the backtest goes back to the queue. */
class RunStopped extends Error {}

/** A run's writes, each conditional on its token: a run that lost its lease changes nothing. */
function leaseHolder(ctx: StoreContext, backtestId: string, token: string, leaseMs: number) {
  const client = ctx.client;
  return {
    /** Progress, and the lease extended: one statement (a transaction of its own). */
    async progress(replayed: number, total: number): Promise<void> {
      const nowMs = ctx.clock();
      const { rowCount } = await client.query(
        `UPDATE backtests SET replayed = $3, total = $4, lease_expires_at = $5, updated_at = $6
         WHERE id = $1 AND lease_token = $2`,
        [backtestId, token, replayed, total, new Date(nowMs + leaseMs), new Date(nowMs)],
      );
      if (rowCount === 0) throw new LeaseLost('another run holds the backtest');
    },
    /** The result, once: one statement. Out: whether this run still held the backtest. */
    async complete(result: BacktestResultRecord): Promise<boolean> {
      const at = new Date(ctx.clock());
      const { rowCount } = await client.query(
        `UPDATE backtests SET status = 'completed', result = $3, replayed = $4, total = $4, completed_at = $5,
                              updated_at = $5, lease_token = NULL, lease_expires_at = NULL
         WHERE id = $1 AND lease_token = $2`,
        [backtestId, token, JSON.stringify(result), result.authorizations, at],
      );
      return rowCount === 1;
    },
    /** A stopped run: the backtest queued again, the attempt not counted. One statement. */
    async giveBack(): Promise<void> {
      await client.query(
        `UPDATE backtests SET status = 'queued', attempts = attempts - 1, updated_at = $3,
                              lease_token = NULL, lease_expires_at = NULL
         WHERE id = $1 AND lease_token = $2`,
        [backtestId, token, new Date(ctx.clock())],
      );
    },
    /**
     * A failed run: the lease given back (queued for another run), or, on the last attempt or
     * for a window past the bound, failed for good. One statement.
     */
    async fail(final: boolean, message: string): Promise<void> {
      const at = new Date(ctx.clock());
      await client.query(
        `UPDATE backtests SET status = CASE WHEN $3 THEN 'failed' ELSE 'queued' END,
                              failure_message = CASE WHEN $3 THEN $4 END,
                              completed_at = CASE WHEN $3 THEN $5::timestamptz END, updated_at = $5,
                              lease_token = NULL, lease_expires_at = NULL
         WHERE id = $1 AND lease_token = $2`,
        [backtestId, token, final, message, at],
      );
    },
  };
}

/** How often a run writes its progress (and extends its lease) at most. */
const PROGRESS_EVERY_MS = 1_000;

/**
 * runBacktest: a run of a queued backtest, in several transactions (the worker role's job).
 * 1. claim (one transaction): the backtest becomes `running` under a lease of `leaseMs`, or
 *    the run ends at once (`skipped`: finished, or held by another run);
 * 2. replay: the window counted, then read in batches outside any transaction (the rows are
 *    history; no snapshot is held for minutes); after each batch, at most once a second,
 *    progress is written and the lease extended, by one conditional statement;
 * 3. complete (one statement, conditional on the lease): the result.
 * A run that dies leaves its lease to expire; the next run (the job retried, or added again by
 * the relay) replays from the start: a replay writes nothing but progress before its result.
 * `signal`: aborted, the run stops after the batch it is in and gives the backtest back to the
 * queue (its attempt not counted). `historyOf`: where the window's rows are read for the
 * backtest's account (the primary by default; a caught-up replica, replica-reads.ts).
 * Out: completed, failed (for good: out of attempts, or a window past the read bound), skipped
 *   (finished, held by another run, or stopped).
 * Fails: with the error of a failed run that has attempts left (the backtest queued again).
 */
export async function runBacktest(
  ctx: StoreContext,
  backtestId: string,
  options: { readonly leaseMs: number; readonly signal?: AbortSignal },
  historyOf: (accountId: string) => Promise<SqlQueryable> = () => Promise.resolve(ctx.client),
): Promise<BacktestRunOutcome> {
  assert(options.leaseMs >= 1_000, 'a lease outlives a progress interval');
  const token = randomBytes(16).toString('hex');
  const claimed = await runTransaction(ctx.client, (tx) =>
    claimBacktest(ctx, tx, backtestId, token, options.leaseMs),
  );
  if (claimed === null) return 'skipped';
  if (claimed === 'failed') return 'failed';
  const lease = leaseHolder(ctx, backtestId, token, options.leaseMs);
  const { row } = claimed;
  try {
    const currency = currencyOf(currencyFromRow(claimed.currency));
    const policy = compilePolicy(row.policy, { currency, templates: ctx.templates });
    const window = backtestWindow(row.start_date, row.end_date, row.created_at.getTime());
    const target: BacktestTarget =
      row.card_id === null
        ? { kind: 'vault', vaultId: row.vault_id }
        : { kind: 'card', vaultId: row.vault_id, cardId: row.card_id };
    // The recorded authorizations: history, read from a replica that has replayed the
    // account's writes when there is one (replica-reads.ts); the lease's writes stay primary.
    const history = await historyOf(row.account_id);
    const total = await countAuthorizations(
      history,
      target,
      windowIdBounds(window),
      REPLAY_BATCHES_MAX * REPLAY_BATCH_ROWS,
    );
    await lease.progress(0, total);
    let writtenAtMs = performance.now();
    const result = await replayWindow(history, target, policy, window, async (replay) => {
      if (options.signal?.aborted === true) throw new RunStopped('the worker is stopping');
      if (performance.now() - writtenAtMs < PROGRESS_EVERY_MS) return;
      await lease.progress(replay.authorizations, total);
      writtenAtMs = performance.now();
    });
    return (await lease.complete(backtestResultRecord(result, currency))) ? 'completed' : 'skipped';
  } catch (error) {
    if (error instanceof LeaseLost) return 'skipped';
    if (error instanceof RunStopped) {
      await lease.giveBack();
      return 'skipped';
    }
    const final = error instanceof WindowTooLarge || claimed.attempts >= BACKTEST_ATTEMPTS_MAX;
    await lease.fail(
      final,
      error instanceof WindowTooLarge
        ? `The window holds more than ${REPLAY_BATCHES_MAX * REPLAY_BATCH_ROWS} rows.`
        : FAILURE_MESSAGE,
    );
    if (final) return 'failed';
    throw error;
  }
}
