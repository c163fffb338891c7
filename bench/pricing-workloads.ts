import { randomInt } from 'node:crypto';
import { Decimal, type Scope } from '../src/core/index.js';
import { createPgClient } from '../src/store/sql/pg-client.js';
import { openStore } from '../src/store/store.js';
import { sleep } from './child.js';
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
import { HTTP_BENCH_DEPOSIT, HTTP_BENCH_POLICY, HTTP_BENCH_PURCHASE } from './workloads.js';

/**
 * Issue 35's bench: authorizations in USD, the cards' billing currency, on 200 SOL vaults
 * priced from memory (the SOL/USD Pyth price account the local chain of `serve` carries and
 * publishes every second, read in the background: docs/pricing.md) against the same on 200
 * USDC vaults (USD at par), alternated (usdc, sol; the next round sol, usdc), BENCH_ROUNDS
 * rounds of BENCH_SECONDS, 64 connections. Both vault sets have HTTP_BENCH_POLICY (for SOL, its
 * `not-usdc` rule on SOL instead).
 *
 * Target: "costs the same", read as the SOL vault's req/s at least 1/1.1 of the USDC vault's
 * (time per request at most 10% more, the bar of the processors' workloads); Node CPU per
 * request shown beside it. Needs the service's local chain: the default roles (`all`); with
 * BENCH_SERVICE_ROLE=api there is no test-mode price and every SOL request declines.
 */

export const PRICING_WORKLOADS = ['sol'] as const;

const COST_RATIO_MAX = 1.1;

/**
 * HTTP_BENCH_POLICY for a SOL vault: its `not-usdc` rule (decline what is not in USDC) would
 * decline every SOL hold, so it becomes `not-sol`, the same condition on SOL: the same work.
 */
const SOL_POLICY = {
  ...HTTP_BENCH_POLICY,
  rules: HTTP_BENCH_POLICY.rules.map((rule) =>
    rule.name === 'not-usdc'
      ? {
          name: 'not-sol',
          conditions: { not: { fact: 'currency', operator: 'equal', value: 'SOL' } },
        }
      : rule,
  ),
};
const SETUP_PARALLEL = 16;
const PRICE_WAIT_MS = 30_000;

/** `count` SOL vaults, each with HTTP_BENCH_POLICY and a card billed in USD. */
export async function setUpSolVaults(
  databaseUrl: string,
  masterKey: Buffer,
  count: number,
): Promise<readonly string[]> {
  const client = createPgClient({ connectionString: databaseUrl, connectionsMax: SETUP_PARALLEL });
  const store = await openStore({ client, masterKey });
  try {
    const account = await store.findOrCreateAccount('bench-http');
    const scope: Scope = { accountId: account.id, mode: 'test' };
    const cards: string[] = [];
    for (let first = 0; first < count; first += SETUP_PARALLEL) {
      const group = Array.from(
        { length: Math.min(SETUP_PARALLEL, count - first) },
        async (_, offset) => {
          const { vault } = await store.createVault(scope, {
            name: `bench sol ${first + offset}`,
            currency: 'SOL',
            metadata: {},
            initialDeposit: new Decimal(HTTP_BENCH_DEPOSIT),
          });
          await store.setPolicy(scope, vault.id, SOL_POLICY);
          const card = await store.createCard(scope, {
            vaultId: vault.id,
            cardholderName: 'Bench',
            metadata: {},
            billingCurrency: 'USD',
          });
          return card.id;
        },
      );
      cards.push(...(await Promise.all(group)));
    }
    return cards;
  } finally {
    await store.close();
  }
}

type Vaults = 'usdc' | 'sol';
const TAGS: Readonly<Record<Vaults, string>> = { usdc: 'pu', sol: 'ps' };
const approvedAnswer: Expect = (status, body) =>
  status === 200 && body.includes('"approved":true') ? 'approved' : null;

function usdTarget(context: BenchContext, cards: readonly string[], tag: string): Target {
  let n = 0;
  return {
    url: context.base,
    path: '/v1/authorizations',
    headers: context.headers,
    nextBody: () => {
      n += 1;
      const id = `${context.runId}_${tag}_${n}`;
      return {
        id,
        body: JSON.stringify({
          cardId: cards[randomInt(cards.length)],
          amount: HTTP_BENCH_PURCHASE.amount,
          currency: 'USD',
          merchant: HTTP_BENCH_PURCHASE.merchant,
          networkTransactionId: id,
        }),
      };
    },
  };
}

/** Waits until a SOL card's USD authorization is approved: the price is in memory. */
async function waitForPrice(context: BenchContext, solCards: readonly string[]): Promise<void> {
  const deadline = Date.now() + PRICE_WAIT_MS;
  for (let attempt = 0; ; attempt += 1) {
    const [answer] = await postAll(context.base, context.headers, [
      {
        path: '/v1/authorizations',
        body: JSON.stringify({
          cardId: solCards[0],
          amount: HTTP_BENCH_PURCHASE.amount,
          currency: 'USD',
          merchant: HTTP_BENCH_PURCHASE.merchant,
          networkTransactionId: `${context.runId}_price_${attempt}`,
        }),
      },
    ]);
    if (answer?.status === 200 && answer.body.includes('"approved":true')) return;
    if (Date.now() > deadline) {
      throw new Error(`no SOL price within ${PRICE_WAIT_MS} ms: ${answer?.status} ${answer?.body}`);
    }
    await sleep(500);
  }
}

/** Runs the SOL and USDC vaults' workloads alternated; prints, checks, judges. */
export async function runPricingWorkloads(
  context: BenchContext,
  solCards: readonly string[],
): Promise<GroupResult> {
  console.log('sol: waiting for the SOL/USD price ...');
  await waitForPrice(context, solCards);
  const cardsOf: Readonly<Record<Vaults, readonly string[]>> = {
    usdc: context.cards,
    sol: solCards,
  };
  const sides: readonly Vaults[] = ['usdc', 'sol'];
  console.log('sol: warming up ...');
  for (const side of sides) {
    const warm = newMeasured(approvedAnswer, context.servicePid, context.database);
    const target = usdTarget(context, cardsOf[side], `w${TAGS[side]}`);
    await runMeasured(warm, target, Math.min(2, context.seconds), context.checks);
    if (warm.tally.wrong > 0 || warm.tally.declined > 0) {
      throw new Error(`the ${side} warm-up answered: ${warm.tally.samples.join('\n')}`);
    }
  }
  const measured = new Map<Vaults, Measured>(
    sides.map((side) => [side, newMeasured(approvedAnswer, context.servicePid, context.database)]),
  );
  const targets = new Map(
    sides.map((side) => [side, usdTarget(context, cardsOf[side], TAGS[side])]),
  );
  for (let round = 0; round < context.rounds; round += 1) {
    const order = round % 2 === 0 ? sides : [...sides].reverse();
    console.log(`sol: round ${round + 1} of ${context.rounds}: ${order.join(', ')} ...`);
    for (const side of order) {
      await runMeasured(
        measured.get(side) as Measured,
        targets.get(side) as Target,
        context.seconds,
        context.checks,
      );
    }
  }
  const usdc = rowOf('USDC vaults, USD at par', measured.get('usdc') as Measured);
  const sol = rowOf('SOL vaults, USD at the feed price', measured.get('sol') as Measured);
  printRows(
    `issue 35: USD authorizations, ${context.rounds} rounds of ${context.seconds} s alternated, 64 connections, 200 vaults each`,
    [usdc, sol],
    usdc,
  );

  console.log('\nchecks: every answer an approval, each recorded once, SOL holds with a rate');
  let checksHold = true;
  for (const side of sides) {
    const { tally } = measured.get(side) as Measured;
    for (const sample of tally.samples.slice(0, 3)) console.log(`sample (${side}): ${sample}`);
    console.log(
      `${tally.wrong === 0 ? 'hold  ' : 'BROKEN'} ${side}: every answer an approval (${tally.non200} error statuses, ${tally.unexpected} other 2xx answers, ${tally.errors} connection errors)`,
    );
    const recorded = await countOf(
      context.checks,
      `SELECT count(*) AS count FROM transactions WHERE type = 'card_authorization'
         AND network_transaction_id LIKE $1 AND status = 'pending'
         AND currency = $2 AND (rate IS NOT NULL) = $3`,
      [`${context.runId}\\_${TAGS[side]}\\_%`, side.toUpperCase(), side === 'sol'],
    );
    const what = side === 'sol' ? 'SOL holds with a rate' : 'USDC holds at par';
    checksHold = countsAgree(side, recorded, tally, what) && tally.wrong === 0 && checksHold;
  }

  console.log('\ntargets (issue 35)');
  const cost = usdc.perSecond / sol.perSecond;
  console.log(
    `${met(cost <= COST_RATIO_MAX)} SOL vault: costs the same as a USDC vault, within ${Math.round((COST_RATIO_MAX - 1) * 100)}% (time per request ${fixed(cost, 3)}x from req/s; Node CPU per request ${fixed(sol.nodeCpuUs / usdc.nodeCpuUs, 3)}x)`,
  );
  const rows: Row[] = [usdc, sol];
  return { rows, checksHold };
}
