import { randomInt } from 'node:crypto';
import {
  countOf,
  countsAgree,
  fixed,
  met,
  newMeasured,
  postAll,
  printRows,
  rowOf,
  runMeasured,
  type BenchContext,
  type Expect,
  type GroupResult,
  type Measured,
  type Row,
} from './extra-harness.js';
import type { Target } from './http-load.js';
import { integerSetting } from './settings.js';
import { HTTP_BENCH_PURCHASE } from './workloads.js';

/**
 * Issue 34's bench: each message of a card transaction's life after the authorization
 * (contract v1.2, section 16), 64 connections in a closed loop over the 200 USDC vaults, against
 * the naive SQL loop of the same run (bench/naive-sql.ts). Target per message: at least
 * 2,000/s with p99 at most 30 ms.
 *
 * - increment: POST /v1/authorizations/{id}/increment of 0.10, on 2,000 open holds at random
 *   (each increment a decision of its own, with its own networkTransactionId);
 * - capture: POST /v1/authorizations/{id}/capture of the whole hold (1.25, final), each on a
 *   hold of its own, authorized before the workload (not measured);
 * - capture over the hold: the same with 1.50 on a hold of 1.25 (a tip: the excess posts too);
 * - force capture: POST /v1/captures of 1.25 on a card at random;
 * - refund: POST /v1/refunds of 1.25 on a card at random, not linked;
 * - advice: POST /v1/authorizations/advice, approved in stand-in, a new networkTransactionId.
 *
 * A capture's hold is used once: BENCH_CAPTURE_POOL_PER_SECOND (5,000 by default) holds per
 * second of the workload are authorized first; a pool used up shows as wrong answers.
 */

export const MESSAGE_WORKLOADS = [
  'increment',
  'capture',
  'capture-over',
  'force-capture',
  'refund',
  'advice',
] as const;
export type MessageWorkload = (typeof MESSAGE_WORKLOADS)[number];

const TARGET_PER_SECOND = 2000;
const TARGET_P99_MS = 30;
const INCREMENT_HOLDS = 2000;
const INCREMENT_AMOUNT = '0.10';
const OVER_THE_HOLD = '1.50';
const POOL_PER_SECOND = integerSetting('BENCH_CAPTURE_POOL_PER_SECOND', 5000, 100, 100_000);

const isDecision: (approved: boolean) => Expect = (approved) => (status, body) =>
  status === 200 && body.includes(`"approved":${approved}`) ? 'approved' : null;
const isPosting =
  (status: number, type: string): Expect =>
  (answered, body) =>
    answered === status && body.includes(`"type":"${type}"`) ? 'posted' : null;

interface Workload {
  readonly name: MessageWorkload;
  readonly title: string;
  /** The status every answer must have (section 16: 201 for a new posting, else 200). */
  readonly status: 200 | 201;
  readonly expect: Expect;
  /** The target, after its preconditions are in place (not measured). */
  target(context: BenchContext): Promise<Target>;
  /** What the database recorded for the workload's messages, counted. */
  recorded(context: BenchContext): Promise<{ count: number; what: string }>;
}

/** `${runId}_${tag}_${n}`: every id of a workload; LIKE `${runId}_${tag}_%` finds them. */
const idOf = (context: BenchContext, tag: string, n: number) => `${context.runId}_${tag}_${n}`;
const like = (context: BenchContext, tag: string) => `${context.runId}\\_${tag}\\_%`;

function purchase(context: BenchContext, card: string, id: string, amount: string) {
  return {
    cardId: card,
    amount,
    currency: HTTP_BENCH_PURCHASE.currency,
    merchant: HTTP_BENCH_PURCHASE.merchant,
    networkTransactionId: id,
  };
}

const randomCard = (context: BenchContext) =>
  context.cards[randomInt(context.cards.length)] as string;

/** Authorizes `count` holds of the bench purchase (tag `tag`); returns their ids. */
async function authorizeHolds(
  context: BenchContext,
  tag: string,
  count: number,
): Promise<string[]> {
  const started = performance.now();
  const answers = await postAll(
    context.base,
    context.headers,
    Array.from({ length: count }, (_, n) => ({
      path: '/v1/authorizations',
      body: JSON.stringify(
        purchase(context, randomCard(context), idOf(context, tag, n), HTTP_BENCH_PURCHASE.amount),
      ),
    })),
  );
  const ids = answers.map(({ status, body }) => {
    const id = /"id":"([^"]+)"/.exec(body)?.[1];
    if (status !== 200 || !body.includes('"approved":true') || id === undefined) {
      throw new Error(`a hold for the ${tag} workload was refused: ${status} ${body}`);
    }
    return id;
  });
  console.log(
    `  ${count} holds for ${tag} authorized in ${((performance.now() - started) / 1000).toFixed(1)} s`,
  );
  return ids;
}

/** Each hold of the pool once, in order; past the end, the first again (then refused). */
function captures(context: BenchContext, holds: readonly string[], amount: string): Target {
  let next = 0;
  const body = JSON.stringify({ amount, final: true });
  return {
    url: context.base,
    path: '/v1/authorizations/-/capture',
    headers: context.headers,
    nextBody: () => {
      const hold = holds[next % holds.length] as string;
      next += 1;
      if (next === holds.length + 1) {
        console.log(
          `  the pool of ${holds.length} holds is used up: raise BENCH_CAPTURE_POOL_PER_SECOND (its captures again are refused)`,
        );
      }
      return { id: `${hold}:${next}`, body, path: `/v1/authorizations/${hold}/capture` };
    },
  };
}

/** A target whose every body is `make(n)`'s, with networkTransactionId `idOf(tag, n)`. */
function sequence(
  context: BenchContext,
  path: string,
  tag: string,
  make: (id: string) => Record<string, unknown>,
): Target {
  let n = 0;
  return {
    url: context.base,
    path,
    headers: context.headers,
    nextBody: () => {
      n += 1;
      const id = idOf(context, tag, n);
      return { id, body: JSON.stringify(make(id)) };
    },
  };
}

const capturedCount = async (context: BenchContext, tag: string, amount: string) => ({
  count: await countOf(
    context.checks,
    `SELECT count(*) AS count FROM transactions WHERE type = 'card_authorization'
       AND network_transaction_id LIKE $1 AND status = 'completed' AND captured_amount = $2`,
    [like(context, tag), amount],
  ),
  what: `captures of ${amount}`,
});

const postingCount = async (context: BenchContext, tag: string, type: string) => ({
  count: await countOf(
    context.checks,
    `SELECT count(*) AS count FROM transactions WHERE type = $2
       AND message_network_transaction_id LIKE $1 AND status = 'completed'`,
    [like(context, tag), type],
  ),
  what: `completed ${type} transactions`,
});

function captureWorkload(name: 'capture' | 'capture-over', amount: string, title: string) {
  const tag = name === 'capture' ? 'cp' : 'co';
  return {
    name,
    title,
    status: 200,
    expect: isPosting(200, 'card_authorization'),
    target: async (context: BenchContext) =>
      captures(
        context,
        await authorizeHolds(context, tag, POOL_PER_SECOND * context.seconds),
        amount,
      ),
    recorded: (context: BenchContext) => capturedCount(context, tag, amount),
  } satisfies Workload;
}

const WORKLOADS: readonly Workload[] = [
  {
    name: 'increment',
    title: `increment: ${INCREMENT_AMOUNT} on ${INCREMENT_HOLDS} holds`,
    status: 200,
    expect: isDecision(true),
    target: async (context) => {
      const holds = await authorizeHolds(context, 'ih', INCREMENT_HOLDS);
      let n = 0;
      return {
        url: context.base,
        path: '/v1/authorizations/-/increment',
        headers: context.headers,
        nextBody: () => {
          n += 1;
          const id = idOf(context, 'in', n);
          const hold = holds[randomInt(holds.length)] as string;
          return {
            id,
            body: JSON.stringify({ amount: INCREMENT_AMOUNT, networkTransactionId: id }),
            path: `/v1/authorizations/${hold}/increment`,
          };
        },
      };
    },
    recorded: async (context) => ({
      count: await countOf(
        context.checks,
        `SELECT count(*) AS count FROM transaction_messages
           WHERE kind = 'increment' AND network_transaction_id LIKE $1`,
        [like(context, 'in')],
      ),
      what: 'increments',
    }),
  },
  captureWorkload('capture', HTTP_BENCH_PURCHASE.amount, 'capture: the whole hold, final'),
  captureWorkload('capture-over', OVER_THE_HOLD, `capture over the hold: ${OVER_THE_HOLD} of 1.25`),
  {
    name: 'force-capture',
    title: 'force capture: POST /v1/captures',
    status: 201,
    expect: isPosting(201, 'force_capture'),
    target: (context) =>
      Promise.resolve(
        sequence(context, '/v1/captures', 'fc', (id) =>
          purchase(context, randomCard(context), id, HTTP_BENCH_PURCHASE.amount),
        ),
      ),
    recorded: (context) => postingCount(context, 'fc', 'force_capture'),
  },
  {
    name: 'refund',
    title: 'refund: POST /v1/refunds, not linked',
    status: 201,
    expect: isPosting(201, 'refund'),
    target: (context) =>
      Promise.resolve(
        sequence(context, '/v1/refunds', 'rf', (id) =>
          purchase(context, randomCard(context), id, HTTP_BENCH_PURCHASE.amount),
        ),
      ),
    recorded: (context) => postingCount(context, 'rf', 'refund'),
  },
  {
    name: 'advice',
    title: 'advice: approved in stand-in',
    status: 200,
    expect: isDecision(true),
    target: (context) =>
      Promise.resolve(
        sequence(context, '/v1/authorizations/advice', 'ad', (id) => ({
          ...purchase(context, randomCard(context), id, HTTP_BENCH_PURCHASE.amount),
          approved: true,
          reason: 'stand-in: issuer timed out',
        })),
      ),
    recorded: async (context) => ({
      count: await countOf(
        context.checks,
        `SELECT count(*) AS count FROM transactions WHERE type = 'card_authorization'
           AND network_transaction_id LIKE $1 AND advice AND status = 'pending'`,
        [like(context, 'ad')],
      ),
      what: 'approved advices holding',
    }),
  },
];

const BATCH_EVENTS = ['batches', 'members', 'restarts', 'deferred', 'left', 'rolled_back'] as const;
type BatchCounts = Record<(typeof BATCH_EVENTS)[number], number>;

/** The service's shared transactions of messages so far (spendgate_message_batches_total). */
async function messageBatches(context: BenchContext): Promise<BatchCounts> {
  const answer = await fetch(`${context.base}/metrics`, { headers: context.headers });
  const text = await answer.text();
  const counts = {} as BatchCounts;
  for (const event of BATCH_EVENTS) {
    const line = text
      .split('\n')
      .find((candidate) =>
        candidate.startsWith(`spendgate_message_batches_total{event="${event}"}`),
      );
    counts[event] = line === undefined ? 0 : Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return counts;
}

/** A workload's shared transactions, for its row's note. */
function batchesNote(before: BatchCounts, after: BatchCounts): string {
  const delta = (event: keyof BatchCounts) => after[event] - before[event];
  const batches = delta('batches');
  return `${batches} shared transactions, ${fixed(delta('members') / Math.max(1, batches), 1)} messages each, ${delta('restarts')} restarts, ${delta('deferred')} sent on, ${delta('left')} run alone, ${delta('rolled_back')} rolled back`;
}

/** Runs the selected message workloads, prints their table, checks and targets. */
export async function runMessageWorkloads(
  context: BenchContext,
  selected: ReadonlySet<string>,
  naive: Row,
): Promise<GroupResult> {
  const rows: Row[] = [];
  const runs: { workload: Workload; measured: Measured }[] = [];
  // The authorization the messages follow, measured the same way: a reference, no target here.
  console.log('authorize (reference) ...');
  const reference = newMeasured(isDecision(true), context.servicePid, context.database);
  const authorizations = sequence(context, '/v1/authorizations', 'ar', (id) =>
    purchase(context, randomCard(context), id, HTTP_BENCH_PURCHASE.amount),
  );
  await runMeasured(reference, authorizations, context.seconds, context.checks);
  const referenceRow = rowOf('authorize (reference, not a target here)', reference);
  for (const workload of WORKLOADS) {
    if (!selected.has(workload.name)) continue;
    console.log(`${workload.name} ...`);
    const target = await workload.target(context);
    const measured = newMeasured(workload.expect, context.servicePid, context.database);
    const batchesBefore = await messageBatches(context);
    await runMeasured(measured, target, context.seconds, context.checks);
    const batches = batchesNote(batchesBefore, await messageBatches(context));
    runs.push({ workload, measured });
    rows.push(rowOf(workload.title, measured, batches));
  }
  printRows(
    `issue 34: lifecycle messages, ${context.seconds} s each, 64 connections, 200 vaults`,
    [naive, referenceRow, ...rows],
    naive,
  );
  for (const { measured } of runs) {
    for (const sample of measured.tally.samples.slice(0, 3)) console.log(`sample: ${sample}`);
  }

  console.log('\nchecks: every answer the expected status, each message recorded once');
  let checksHold = reference.tally.wrong === 0;
  console.log(
    `${checksHold ? 'hold  ' : 'BROKEN'} authorize (reference): every answer an approval (${reference.tally.wrong} not)`,
  );
  for (const { workload, measured } of runs) {
    const wrong = measured.tally.wrong;
    console.log(
      `${wrong === 0 ? 'hold  ' : 'BROKEN'} ${workload.name}: every answer ${workload.status} of the expected shape (${measured.tally.non200} error statuses, ${measured.tally.unexpected} other 2xx answers, ${measured.tally.errors} connection errors)`,
    );
    const { count, what } = await workload.recorded(context);
    checksHold = countsAgree(workload.name, count, measured.tally, what) && checksHold;
    checksHold = checksHold && wrong === 0;
  }

  console.log('\ntargets (issue 34)');
  for (const row of rows) {
    console.log(
      `${met(row.perSecond >= TARGET_PER_SECOND)} ${row.name}: at least ${TARGET_PER_SECOND}/s (${fixed(row.perSecond, 0)}, ${fixed(row.perSecond / naive.perSecond, 2)}x naive SQL)`,
    );
    console.log(
      `${met(row.p99Ms <= TARGET_P99_MS)} ${row.name}: p99 at most ${TARGET_P99_MS} ms (${fixed(row.p99Ms, 2)})`,
    );
  }
  return { rows, checksHold };
}
