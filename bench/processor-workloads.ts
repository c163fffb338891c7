import { createHmac, randomBytes, randomInt } from 'node:crypto';
import Stripe from 'stripe';
import type Lithic from 'lithic';
import type { Scope } from '../src/core/index.js';
import { createPgClient } from '../src/store/sql/pg-client.js';
import { openStore } from '../src/store/store.js';
import {
  countOf,
  countsAgree,
  fixed,
  met,
  newMeasured,
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
import { HTTP_BENCH_PURCHASE } from './workloads.js';

/**
 * Issue 36's bench: an authorization arriving through each processor adapter (contract v1.2,
 * section 17; docs/processors.md) against POST /v1/authorizations, in the same run, alternated
 * (authorize, stripe, lithic, marqeta; the next round in the other order), BENCH_ROUNDS rounds
 * of BENCH_SECONDS each, 64 connections over the 200 USDC vaults. Each processor's card is tied
 * to the same vaults as the REST cards (`processorCard`), and every message asks 1.25 USD, the
 * billing currency (converted at par to USDC), as POST /v1/authorizations is asked here too:
 *
 * - stripe: an `issuing_authorization.request` event as Stripe sends it (the test's shape,
 *   test/http/processors-stripe.test.ts), signed per request with the `stripe` package's
 *   `webhooks.generateTestHeaderString`; approved: 200 `{"approved":true,...}`;
 * - lithic: an ASA `AUTHORIZATION` request (test/http/processors-lithic.test.ts), signed per
 *   request as Lithic signs (Standard Webhooks HMAC); approved: `"result":"APPROVED"`;
 * - marqeta: a Gateway JIT Funding `authorization` (test/http/processors-marqeta.test.ts) with
 *   the gateway's basic auth; approved: 200 with `jit_funding` and no `decline_reason`.
 *
 * Target: an adapter's authorization costs at most 10% more than POST /v1/authorizations:
 * its req/s at least 1/1.1 of the REST route's (Node CPU per request is shown beside it).
 * The client signs and builds each body itself; its CPU per request is in the table.
 */

export const PROCESSOR_WORKLOADS = ['stripe', 'lithic', 'marqeta'] as const;
type Processor = (typeof PROCESSOR_WORKLOADS)[number];

const COST_RATIO_MAX = 1.1;
const AMOUNT_MINOR = Math.round(Number(HTTP_BENCH_PURCHASE.amount) * 100);
const MERCHANT = HTTP_BENCH_PURCHASE.merchant;
const STRIPE_SECRET = `whsec_${randomBytes(24).toString('hex')}`;
const LITHIC_SECRET = `whsec_${randomBytes(24).toString('base64')}`;
const MARQETA_USERNAME = 'spendgate_bench_gateway';
const MARQETA_PASSWORD = randomBytes(24).toString('hex');

/** What the processor workloads set up: one connection each, a processor card per vault. */
export interface ProcessorSetup {
  readonly connections: Readonly<Record<Processor, string>>;
  /** The processor's card ids, `${prefix}${index}`, one per vault of the REST cards. */
  readonly cardCount: number;
}

const CARD_PREFIX: Readonly<Record<Processor, string>> = {
  stripe: 'ic_bench_',
  lithic: 'lithic_card_bench_',
  marqeta: 'mq_card_bench_',
};

/** A connection per processor, and each REST card's vault given a card tied to each. */
export async function setUpProcessors(
  databaseUrl: string,
  masterKey: Buffer,
  cards: readonly string[],
): Promise<ProcessorSetup> {
  const client = createPgClient({ connectionString: databaseUrl, connectionsMax: 4 });
  const store = await openStore({ client, masterKey });
  try {
    const account = await store.findOrCreateAccount('bench-http');
    const scope: Scope = { accountId: account.id, mode: 'test' };
    const secrets: Readonly<Record<Processor, Record<string, string>>> = {
      stripe: { signingSecret: STRIPE_SECRET },
      lithic: { asaSecret: LITHIC_SECRET },
      marqeta: { username: MARQETA_USERNAME, password: MARQETA_PASSWORD },
    };
    const connections = {} as Record<Processor, string>;
    for (const processor of PROCESSOR_WORKLOADS) {
      const created = await store.createProcessorConnection(scope, {
        processor,
        secrets: secrets[processor],
      });
      connections[processor] = created.id;
    }
    const { rows } = await client.query<{ id: string; vault_id: string }>(
      'SELECT id, vault_id FROM cards WHERE id = ANY($1)',
      [cards],
    );
    const vaultOf = new Map(rows.map((row) => [row.id, row.vault_id]));
    for (const [index, card] of cards.entries()) {
      const vaultId = vaultOf.get(card);
      if (vaultId === undefined) throw new Error(`no vault for card ${card}`);
      await Promise.all(
        PROCESSOR_WORKLOADS.map((processor) =>
          store.createCard(scope, {
            vaultId,
            cardholderName: 'Bench',
            metadata: {},
            processorCard: {
              connectionId: connections[processor],
              cardId: `${CARD_PREFIX[processor]}${index}`,
            },
          }),
        ),
      );
    }
    return { connections, cardCount: cards.length };
  } finally {
    await store.close();
  }
}

// ---------------------------------------------------------------------------------------------
// Each processor's authorization request, as its tests build it.

function stripeAuthorizationRequest(card: string, id: string): Stripe.Event {
  const authorization = {
    id: `iauth_${id}`,
    object: 'issuing.authorization',
    amount: 0,
    amount_details: { atm_fee: null, cashback_amount: 0 },
    approved: false,
    authorization_method: 'online',
    balance_transactions: [],
    // Expanded in events; only its id is read.
    card: { id: card, object: 'issuing.card' },
    card_presence: 'not_present',
    cardholder: 'ich_bench',
    created: Math.floor(Date.now() / 1000),
    currency: 'usd',
    fleet: null,
    fuel: null,
    livemode: false,
    merchant_amount: 0,
    merchant_currency: 'usd',
    merchant_data: {
      category: 'grocery_stores_supermarkets',
      category_code: MERCHANT.mcc,
      city: MERCHANT.city,
      country: MERCHANT.country,
      name: MERCHANT.name,
      network_id: '1234567890',
      postal_code: '78701',
      state: 'TX',
      tax_id: null,
      terminal_id: null,
      url: null,
    },
    metadata: {},
    network_data: {
      acquiring_institution_id: null,
      system_trace_audit_number: null,
      transaction_id: id,
    },
    pending_request: {
      amount: AMOUNT_MINOR,
      amount_details: null,
      currency: 'usd',
      is_amount_controllable: false,
      merchant_amount: AMOUNT_MINOR,
      merchant_currency: 'usd',
      network_risk_score: null,
    },
    request_history: [],
    status: 'pending',
    transactions: [],
    verification_data: {
      address_line1_check: 'not_provided',
      address_postal_code_check: 'not_provided',
      authentication_exemption: null,
      cvc_check: 'match',
      expiry_check: 'match',
      postal_code: null,
      three_d_secure: null,
    },
    verified_by_fraud_challenge: null,
    wallet: null,
  } as unknown as Stripe.Issuing.Authorization;
  return {
    id: `evt_${id}`,
    object: 'event',
    api_version: Stripe.API_VERSION,
    created: Math.floor(Date.now() / 1000),
    data: { object: authorization },
    livemode: false,
    pending_webhooks: 1,
    request: { id: null, idempotency_key: null },
    type: 'issuing_authorization.request',
  };
}

/* eslint-disable @typescript-eslint/no-deprecated -- Lithic still sends the deprecated top-level
   amounts beside `amounts`; the bench sends what Lithic sends (the adapter reads `amounts`). */
function lithicAuthorization(card: string, token: string): Lithic.CardAuthorization {
  const usd = { amount: AMOUNT_MINOR, currency: 'USD' as const };
  return {
    token,
    acquirer_fee: 0,
    amount: AMOUNT_MINOR,
    amounts: {
      cardholder: { ...usd, conversion_rate: '1.000000' },
      hold: usd,
      merchant: usd,
      settlement: null,
    },
    authorization_amount: AMOUNT_MINOR,
    avs: { address: '', address_on_file_match: 'NOT_PRESENT', zipcode: '' },
    card: {
      token: card,
      last_four: '4242',
      memo: '',
      spend_limit: 0,
      spend_limit_duration: 'TRANSACTION',
      state: 'OPEN',
      type: 'VIRTUAL',
    },
    cardholder_currency: 'USD',
    cash_amount: 0,
    created: new Date().toISOString(),
    merchant: {
      acceptor_id: MERCHANT.id,
      acquiring_institution_id: '1000',
      city: MERCHANT.city,
      country: 'USA',
      descriptor: MERCHANT.name,
      mcc: MERCHANT.mcc,
      state: 'TX',
    } as Lithic.CardAuthorization['merchant'],
    merchant_amount: AMOUNT_MINOR,
    merchant_currency: 'USD',
    name_validation: null,
    service_location: null,
    settled_amount: 0,
    status: 'AUTHORIZATION',
    transaction_initiator: 'CARDHOLDER',
    event_token: `${token}-event`,
  };
}
/* eslint-enable @typescript-eslint/no-deprecated */

function marqetaAuthorization(card: string, token: string) {
  const amount = Number(HTTP_BENCH_PURCHASE.amount);
  return {
    type: 'authorization',
    state: 'PENDING',
    token,
    user_token: 'user_bench',
    acting_user_token: 'user_bench',
    card_token: card,
    amount,
    currency_code: 'USD',
    network: 'VISA',
    created_time: new Date().toISOString(),
    card_acceptor: {
      mid: '000000000011111',
      mcc: MERCHANT.mcc,
      name: MERCHANT.name,
      city: MERCHANT.city,
      state: 'TX',
      country_code: 'USA',
    },
    gpa_order: {
      token: `gpa_${token}`,
      amount,
      currency_code: 'USD',
      jit_funding: {
        token: `jit_${token}`,
        method: 'pgfs.authorization',
        user_token: 'user_bench',
        acting_user_token: 'user_bench',
        amount,
      },
    },
  };
}

function lithicSignature(id: string, timestamp: number, payload: string): string {
  const key = Buffer.from(LITHIC_SECRET.replace(/^whsec_/, ''), 'base64');
  return `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.${payload}`).digest('base64')}`;
}

const MARQETA_AUTHORIZATION = `Basic ${Buffer.from(`${MARQETA_USERNAME}:${MARQETA_PASSWORD}`).toString('base64')}`;

// ---------------------------------------------------------------------------------------------
// The workloads.

type Door = 'authorize' | Processor;
const TAGS: Readonly<Record<Door, string>> = {
  authorize: 'pa',
  stripe: 'st',
  lithic: 'li',
  marqeta: 'mq',
};

const EXPECT: Readonly<Record<Door, Expect>> = {
  authorize: (status, body) =>
    status === 200 && body.includes('"approved":true') ? 'approved' : null,
  stripe: (status, body) =>
    status === 200 && body.includes('"approved":true') ? 'approved' : null,
  lithic: (status, body) =>
    status === 200 && body.includes('"result":"APPROVED"') ? 'approved' : null,
  marqeta: (status, body) =>
    status === 200 && body.includes('"jit_funding"') && !body.includes('decline_reason')
      ? 'approved'
      : null,
};

function doorTarget(context: BenchContext, setup: ProcessorSetup, door: Door, tag: string): Target {
  let n = 0;
  const headers = { 'content-type': 'application/json' };
  return {
    url: context.base,
    path:
      door === 'authorize'
        ? '/v1/authorizations'
        : `/v1/processors/${door}/${setup.connections[door]}`,
    headers: door === 'authorize' ? context.headers : headers,
    nextBody: () => {
      n += 1;
      const id = `${context.runId}_${tag}_${n}`;
      const index = randomInt(setup.cardCount);
      switch (door) {
        case 'authorize':
          return {
            id,
            body: JSON.stringify({
              cardId: context.cards[index],
              amount: HTTP_BENCH_PURCHASE.amount,
              // The billing currency, as the processors ask: converted at par to USDC.
              currency: 'USD',
              merchant: MERCHANT,
              networkTransactionId: id,
            }),
          };
        case 'stripe': {
          const payload = JSON.stringify(
            stripeAuthorizationRequest(`${CARD_PREFIX.stripe}${index}`, id),
          );
          const signature = Stripe.webhooks.generateTestHeaderString({
            payload,
            secret: STRIPE_SECRET,
          });
          return { id, body: payload, headers: { 'stripe-signature': signature } };
        }
        case 'lithic': {
          const payload = JSON.stringify(lithicAuthorization(`${CARD_PREFIX.lithic}${index}`, id));
          const timestamp = Math.floor(Date.now() / 1000);
          const messageId = `msg_${id}`;
          return {
            id,
            body: payload,
            headers: {
              'webhook-id': messageId,
              'webhook-timestamp': String(timestamp),
              'webhook-signature': lithicSignature(messageId, timestamp, payload),
            },
          };
        }
        case 'marqeta':
          return {
            id,
            body: JSON.stringify(marqetaAuthorization(`${CARD_PREFIX.marqeta}${index}`, id)),
            headers: { authorization: MARQETA_AUTHORIZATION },
          };
      }
    },
  };
}

/** Runs the selected adapters against POST /v1/authorizations, alternated; prints and checks. */
export async function runProcessorWorkloads(
  context: BenchContext,
  selected: ReadonlySet<string>,
  setup: ProcessorSetup,
): Promise<GroupResult> {
  const doors: Door[] = [
    'authorize',
    ...PROCESSOR_WORKLOADS.filter((processor) => selected.has(processor)),
  ];
  const measured = new Map<Door, Measured>(
    doors.map((door) => [door, newMeasured(EXPECT[door], context.servicePid, context.database)]),
  );
  const targets = new Map(
    doors.map((door) => [door, doorTarget(context, setup, door, TAGS[door])]),
  );
  // The JIT of each door's path warm before anything is measured.
  console.log('processors: warming up each door ...');
  for (const door of doors) {
    const warm = newMeasured(EXPECT[door], context.servicePid, context.database);
    const target = doorTarget(context, setup, door, `w${TAGS[door]}`);
    await runMeasured(warm, target, Math.min(2, context.seconds), context.checks);
    if (warm.tally.wrong > 0) {
      throw new Error(`the ${door} warm-up answered: ${warm.tally.samples.join('\n')}`);
    }
  }
  for (let round = 0; round < context.rounds; round += 1) {
    const order = round % 2 === 0 ? doors : [...doors].reverse();
    console.log(`processors: round ${round + 1} of ${context.rounds}: ${order.join(', ')} ...`);
    for (const door of order) {
      await runMeasured(
        measured.get(door) as Measured,
        targets.get(door) as Target,
        context.seconds,
        context.checks,
      );
    }
  }
  const rows = new Map<Door, Row>(
    doors.map((door) => [
      door,
      rowOf(
        door === 'authorize' ? 'POST /v1/authorizations (USD)' : `${door} adapter`,
        measured.get(door) as Measured,
      ),
    ]),
  );
  const baseline = rows.get('authorize') as Row;
  printRows(
    `issue 36: an authorization through each door, ${context.rounds} rounds of ${context.seconds} s alternated, 64 connections, 200 vaults`,
    [...rows.values()],
    baseline,
  );
  for (const door of doors) {
    for (const sample of (measured.get(door) as Measured).tally.samples.slice(0, 3)) {
      console.log(`sample (${door}): ${sample}`);
    }
  }

  console.log('\nchecks: every answer an approval in its processor format, each recorded once');
  let checksHold = true;
  for (const door of doors) {
    const { tally } = measured.get(door) as Measured;
    console.log(
      `${tally.wrong === 0 ? 'hold  ' : 'BROKEN'} ${door}: every answer an approval (${tally.non200} error statuses, ${tally.unexpected} other 2xx answers, ${tally.errors} connection errors)`,
    );
    const recorded = await countOf(
      context.checks,
      `SELECT count(*) AS count FROM transactions WHERE type = 'card_authorization'
         AND network_transaction_id LIKE $1 AND status = 'pending'`,
      [`${context.runId}\\_${TAGS[door]}\\_%`],
    );
    checksHold = countsAgree(door, recorded, tally, 'holds') && tally.wrong === 0 && checksHold;
  }

  console.log('\ntargets (issue 36)');
  for (const door of doors) {
    if (door === 'authorize') continue;
    const row = rows.get(door) as Row;
    const cost = baseline.perSecond / row.perSecond;
    console.log(
      `${met(cost <= COST_RATIO_MAX)} ${door}: costs at most ${Math.round((COST_RATIO_MAX - 1) * 100)}% more than POST /v1/authorizations (time per request ${fixed(cost, 3)}x from req/s; Node CPU per request ${fixed(row.nodeCpuUs / baseline.nodeCpuUs, 3)}x)`,
    );
  }
  return { rows: [...rows.values()], checksHold };
}
