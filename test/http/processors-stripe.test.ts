import Stripe from 'stripe';
import { describe, expect, it } from 'vitest';
import { useTestService } from '../support/http.js';
import { processorTestKit } from '../support/processors.js';

/**
 * Stripe Issuing at /v1/processors/stripe/{connectionId} over real HTTP on PostgreSQL
 * (contract v1.2, section 17). Events are built with the `stripe` package's types, in the
 * shapes of Stripe's public documentation, and signed with its own
 * `webhooks.generateTestHeaderString`. A forged, stale or missing signature is refused and
 * changes nothing; a whole card life through the adapter ends in the same ledger as the same
 * life sent to spendgate's own routes.
 */
interface Json {
  id: string;
  approved?: boolean;
  amount?: number | string;
  metadata?: Record<string, string>;
  received?: boolean;
  operations?: number;
  balance?: { available: string; pending: string; ledger: string };
  data?: Record<string, unknown>[];
  error?: { code: string; param?: string };
}

const MERCHANT_DATA: Stripe.Issuing.Authorization.MerchantData = {
  category: 'lodging_hotels_motels_resorts',
  category_code: '7011',
  city: 'Austin',
  country: 'US',
  name: 'Hotel Congress',
  network_id: '1234567890',
  postal_code: '78701',
  state: 'TX',
  tax_id: null,
  terminal_id: null,
  url: null,
};

/** Stripe's card object, with the fields an authorization event carries that the adapter reads. */
function issuingCard(id: string): Stripe.Issuing.Card {
  // The card is expanded in events; only its id is read, so the rest of its many fields are
  // left out (the cast says so) rather than invented.
  return { id, object: 'issuing.card' } as unknown as Stripe.Issuing.Card;
}

interface AuthorizationFields {
  readonly id: string;
  readonly card: string;
  readonly networkId: string | null;
  readonly amount: number;
  readonly approved: boolean;
  readonly status: Stripe.Issuing.Authorization.Status;
  readonly pending: Stripe.Issuing.Authorization.PendingRequest | null;
  readonly history: Stripe.Issuing.Authorization.RequestHistory[];
}

function authorization(fields: AuthorizationFields): Stripe.Issuing.Authorization {
  return {
    id: fields.id,
    object: 'issuing.authorization',
    amount: fields.amount,
    amount_details: { atm_fee: null, cashback_amount: 0 },
    approved: fields.approved,
    authorization_method: 'online',
    balance_transactions: [],
    card: issuingCard(fields.card),
    card_presence: 'not_present',
    cardholder: 'ich_1',
    created: 1_764_000_000,
    currency: 'usd',
    fleet: null,
    fuel: null,
    livemode: false,
    merchant_amount: fields.amount,
    merchant_currency: 'usd',
    merchant_data: MERCHANT_DATA,
    metadata: {},
    network_data:
      fields.networkId === null
        ? null
        : {
            acquiring_institution_id: null,
            system_trace_audit_number: null,
            transaction_id: fields.networkId,
          },
    pending_request: fields.pending,
    request_history: fields.history,
    status: fields.status,
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
  };
}

/** One entry of an authorization's request_history: a decision, ours or Stripe's. */
function historyEntry(
  amount: number,
  reason: Stripe.Issuing.Authorization.RequestHistory.Reason,
  approved = true,
): Stripe.Issuing.Authorization.RequestHistory {
  return {
    amount,
    amount_details: null,
    approved,
    authorization_code: null,
    created: 1,
    currency: 'usd',
    merchant_amount: amount,
    merchant_currency: 'usd',
    network_risk_score: null,
    reason,
    reason_message: null,
    requested_at: 1,
  };
}

function pendingRequest(
  amount: number,
  controllable = false,
): Stripe.Issuing.Authorization.PendingRequest {
  return {
    amount,
    amount_details: null,
    currency: 'usd',
    is_amount_controllable: controllable,
    merchant_amount: amount,
    merchant_currency: 'usd',
    network_risk_score: null,
  };
}

function issuingTransaction(fields: {
  id: string;
  card: string;
  authorization: string | null;
  networkId: string | null;
  amount: number;
  type: Stripe.Issuing.Transaction.Type;
}): Stripe.Issuing.Transaction {
  return {
    id: fields.id,
    object: 'issuing.transaction',
    amount: fields.amount,
    amount_details: null,
    authorization: fields.authorization,
    balance_transaction: null,
    card: fields.card,
    cardholder: 'ich_1',
    created: 1_764_000_100,
    currency: 'usd',
    dispute: null,
    livemode: false,
    merchant_amount: fields.amount,
    merchant_currency: 'usd',
    merchant_data: MERCHANT_DATA,
    metadata: {},
    network_data:
      fields.networkId === null
        ? null
        : { authorization_code: null, processing_date: null, transaction_id: fields.networkId },
    type: fields.type,
    wallet: null,
  };
}

let events = 0;
function event(type: string, object: unknown, extra: Record<string, unknown> = {}): Stripe.Event {
  events += 1;
  return {
    id: `evt_test_${process.pid}_${events}`,
    object: 'event',
    api_version: Stripe.API_VERSION,
    created: Math.floor(Date.now() / 1000),
    data: { object, ...extra },
    livemode: false,
    pending_webhooks: 1,
    request: { id: null, idempotency_key: null },
    type,
  } as Stripe.Event;
}

describe('Stripe Issuing adapter', () => {
  const harness = useTestService<Json>();
  const { call } = harness;
  const SECRET = 'whsec_stripe_adapter_test_secret';

  const { setUp, digest, lifeThroughRoutes, expectSameLedger } = processorTestKit(harness, {
    processor: 'stripe',
    signingSecret: SECRET,
  });

  const send = async (
    connectionId: string,
    body: Stripe.Event,
    signing: { secret?: string; timestamp?: number; header?: string | null } = {},
  ) => {
    const payload = JSON.stringify(body);
    const header =
      signing.header !== undefined
        ? signing.header
        : Stripe.webhooks.generateTestHeaderString({
            payload,
            secret: signing.secret ?? SECRET,
            ...(signing.timestamp === undefined ? {} : { timestamp: signing.timestamp }),
          });
    const response = await fetch(`${harness.service.base}/v1/processors/stripe/${connectionId}`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json; charset=utf-8',
        ...(header === null ? {} : { 'stripe-signature': header }),
      },
      body: payload,
    });
    return {
      status: response.status,
      stripeVersion: response.headers.get('stripe-version'),
      body: (await response.json()) as Json,
    };
  };

  const requestEvent = (
    card: string,
    id: string,
    networkId: string | null,
    amount: number,
    controllable = false,
  ) =>
    event(
      'issuing_authorization.request',
      authorization({
        id,
        card,
        networkId,
        amount: 0,
        approved: false,
        status: 'pending',
        pending: pendingRequest(amount, controllable),
        history: [],
      }),
    );

  it('answers a real-time request synchronously, with Stripe-Version and the decision', async () => {
    const { connectionId, vaultId } = await setUp('100', 'ic_sync');
    const answer = await send(
      connectionId,
      requestEvent('ic_sync', 'iauth_sync', 'ntx_sync', 2500),
    );
    expect(answer.status).toBe(200);
    expect(answer.stripeVersion).toBe(Stripe.API_VERSION);
    expect(answer.body.approved).toBe(true);
    expect(answer.body.amount).toBeUndefined();
    expect(answer.body.metadata?.['spendgate_transaction_id']).toMatch(/^txn_/);
    const vault = await call('GET', `/v1/vaults/${vaultId}`);
    expect(vault.body.balance).toMatchObject({ pending: '25.00', available: '75.00' });
    // Above the balance, amount-controllable: a partial approval of what the vault holds.
    const partial = await send(
      connectionId,
      requestEvent('ic_sync', 'iauth_partial', 'ntx_partial', 9000, true),
    );
    expect([partial.body.approved, partial.body.amount]).toEqual([true, 7500]);
    // Not controllable: declined, and the decline code said.
    const declined = await send(
      connectionId,
      requestEvent('ic_sync', 'iauth_declined', 'ntx_declined', 5000),
    );
    expect([declined.status, declined.body.approved]).toEqual([200, false]);
    expect(declined.body.metadata?.['spendgate_decline_code']).toBe('insufficient_balance');
  });

  it('refuses a forged, stale or missing signature with 400 invalid_signature, changing nothing', async () => {
    const { connectionId } = await setUp('100', 'ic_forged');
    const body = requestEvent('ic_forged', 'iauth_forged', 'ntx_forged', 1000);
    const before = await digest();
    const forged = await send(connectionId, body, { secret: 'whsec_not_the_connections_secret' });
    const stale = await send(connectionId, body, {
      timestamp: Math.floor(Date.now() / 1000) - 600,
    });
    const missing = await send(connectionId, body, { header: null });
    const garbage = await send(connectionId, body, { header: 't=1,v1=00' });
    for (const answer of [forged, stale, missing, garbage]) {
      expect([answer.status, answer.body.error?.code]).toEqual([400, 'invalid_signature']);
    }
    // A body changed after signing does not verify either.
    const payload = JSON.stringify(body);
    const header = Stripe.webhooks.generateTestHeaderString({ payload, secret: SECRET });
    const tampered = await fetch(`${harness.service.base}/v1/processors/stripe/${connectionId}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'stripe-signature': header },
      body: payload.replace('"amount":1000', '"amount":100'),
    });
    expect(tampered.status).toBe(400);
    expect(await digest()).toBe(before);
    // Counted, by outcome.
    const metrics = await (await fetch(`${harness.service.base}/metrics`)).text();
    expect(metrics).toMatch(
      /spendgate_processor_messages_total\{processor="stripe",event="unknown",outcome="invalid_signature"\} [5-9]/,
    );
  });

  it('declines a request for an unknown card, refuses an unknown event type or connection, changing nothing', async () => {
    const { connectionId } = await setUp('100', 'ic_known');
    const before = await digest();
    const unknownCard = await send(
      connectionId,
      requestEvent('ic_unknown', 'iauth_u', 'ntx_u', 1000),
    );
    expect([unknownCard.status, unknownCard.body.approved, unknownCard.body.metadata]).toEqual([
      200,
      false,
      { spendgate_error: 'card_not_found' },
    ]);
    const malformedRequest = await send(
      connectionId,
      event('issuing_authorization.request', { id: 'iauth_bad', object: 'issuing.authorization' }),
    );
    expect([malformedRequest.status, malformedRequest.body.approved]).toEqual([200, false]);
    const unknownType = await send(
      connectionId,
      event('issuing_card.created', issuingCard('ic_known')),
    );
    expect([unknownType.status, unknownType.body.error?.code]).toEqual([400, 'parameter_invalid']);
    const malformed = await send(
      connectionId,
      event('issuing_transaction.created', { id: 'ipi_bad', amount: 'ten' }),
    );
    expect([malformed.status, malformed.body.error?.code]).toEqual([400, 'parameter_invalid']);
    const unknownCapture = await send(
      connectionId,
      event(
        'issuing_transaction.created',
        issuingTransaction({
          id: 'ipi_unknown',
          card: 'ic_unknown',
          authorization: null,
          networkId: null,
          amount: -500,
          type: 'capture',
        }),
      ),
    );
    expect([unknownCapture.status, unknownCapture.body.error?.code]).toEqual([
      404,
      'card_not_found',
    ]);
    const noConnection = await send(
      'pc_0123456789abcdef0123456789abcdef',
      requestEvent('ic_known', 'iauth_n', 'ntx_n', 1000),
    );
    expect([noConnection.status, noConnection.body.error?.code]).toEqual([
      404,
      'processor_not_found',
    ]);
    const liveEvent = { ...requestEvent('ic_known', 'iauth_l', 'ntx_l', 1000), livemode: true };
    const wrongMode = await send(connectionId, liveEvent);
    expect([wrongMode.status, wrongMode.body.error?.code]).toEqual([400, 'parameter_invalid']);
    expect(await digest()).toBe(before);
  });

  it("verifies with the real-time endpoint's own secret too", async () => {
    const connection = await call('POST', '/v1/processors', {
      processor: 'stripe',
      mode: 'test',
      signingSecret: SECRET,
      realtimeSigningSecret: 'whsec_stripe_adapter_realtime_secret',
    });
    const vault = await call('POST', '/v1/vaults', {
      name: 'R',
      currency: 'USDC',
      network: 'solana',
      initialDeposit: '10',
    });
    await call('POST', '/v1/cards', {
      vaultId: vault.body.id,
      cardholderName: 'Ada',
      processorCard: { connectionId: connection.body.id, cardId: 'ic_realtime' },
    });
    const answer = await send(
      connection.body.id,
      requestEvent('ic_realtime', 'iauth_rt', 'ntx_rt', 100),
      { secret: 'whsec_stripe_adapter_realtime_secret' },
    );
    expect([answer.status, answer.body.approved]).toEqual([200, true]);
  });

  it('verifies with the previous secret through a rotation grace', async () => {
    const { connectionId } = await setUp('100', 'ic_rotated');
    const rotated = await call('POST', `/v1/processors/${connectionId}/rotate`, {
      signingSecret: 'whsec_stripe_adapter_rotated_secret',
      graceSeconds: 3600,
    });
    expect(rotated.status).toBe(200);
    const old = await send(connectionId, requestEvent('ic_rotated', 'iauth_r1', 'ntx_r1', 100));
    const fresh = await send(connectionId, requestEvent('ic_rotated', 'iauth_r2', 'ntx_r2', 100), {
      secret: 'whsec_stripe_adapter_rotated_secret',
    });
    expect([old.body.approved, fresh.body.approved]).toEqual([true, true]);
    await call('POST', `/v1/processors/${connectionId}/rotate`, {
      signingSecret: 'whsec_stripe_adapter_third_secret',
      graceSeconds: 0,
    });
    const expired = await send(
      connectionId,
      requestEvent('ic_rotated', 'iauth_r3', 'ntx_r3', 100),
      {
        secret: 'whsec_stripe_adapter_rotated_secret',
      },
    );
    expect([expired.status, expired.body.error?.code]).toEqual([400, 'invalid_signature']);
  });

  it('ends a whole card life through Stripe in the same ledger as through spendgate’s routes', async () => {
    const viaStripe = await setUp('200', 'ic_life');
    const viaRoutes = await setUp('200', null);
    const c = 'ic_life';
    // 1. The hotel's authorization: 100.00.
    const first = await send(
      viaStripe.connectionId,
      requestEvent(c, 'iauth_life', 'ntx_life', 10000),
    );
    expect(first.body.approved).toBe(true);
    // 2. An increment of 50.00 on the approved authorization.
    const approved = authorization({
      id: 'iauth_life',
      card: c,
      networkId: 'ntx_life',
      amount: 10000,
      approved: true,
      status: 'pending',
      pending: pendingRequest(5000),
      history: [historyEntry(10000, 'webhook_approved')],
    });
    const increment = await send(
      viaStripe.connectionId,
      event('issuing_authorization.request', approved),
    );
    expect([increment.status, increment.body.approved]).toEqual([200, true]);
    // Stripe tells of the authorization it created on our answer: already recorded.
    const created = await send(
      viaStripe.connectionId,
      event('issuing_authorization.created', { ...approved, pending_request: null }),
    );
    expect(created.body).toMatchObject({ received: true, operations: 0 });
    // 3. The capture, above the hold (150.00 held, 170.00 captured: the minibar).
    const capture = event(
      'issuing_transaction.created',
      issuingTransaction({
        id: 'ipi_life_capture',
        card: c,
        authorization: 'iauth_life',
        networkId: 'ntx_life',
        amount: -17000,
        type: 'capture',
      }),
    );
    expect((await send(viaStripe.connectionId, capture)).status).toBe(200);
    // Stripe sends an event again until it is answered 2xx: a repeat changes nothing.
    const beforeRepeat = await digest();
    const repeat = await send(viaStripe.connectionId, capture);
    expect([repeat.status, repeat.body.received]).toEqual([200, true]);
    expect(await digest()).toBe(beforeRepeat);
    // 4. A refund of 20.00, linked to the purchase.
    const refund = event(
      'issuing_transaction.created',
      issuingTransaction({
        id: 'ipi_life_refund',
        card: c,
        authorization: 'iauth_life',
        networkId: 'ntx_life',
        amount: 2000,
        type: 'refund',
      }),
    );
    expect((await send(viaStripe.connectionId, refund)).status).toBe(200);
    // 5. Our webhook timed out; Stripe approved on its own: an advice.
    const advised = authorization({
      id: 'iauth_outage',
      card: c,
      networkId: 'ntx_outage',
      amount: 3000,
      approved: true,
      status: 'pending',
      pending: null,
      history: [historyEntry(3000, 'webhook_timeout')],
    });
    expect(
      (await send(viaStripe.connectionId, event('issuing_authorization.created', advised))).status,
    ).toBe(200);
    await lifeThroughRoutes(viaRoutes.cardId, 'webhook_timeout');
    await expectSameLedger(viaStripe.vaultId, viaRoutes.vaultId);
  });

  it('releases a hold Stripe reversed, in part or whole, or expired; posts a capture with no authorization', async () => {
    const { connectionId, vaultId } = await setUp('100', 'ic_release');
    const c = 'ic_release';
    for (const [id, amount] of [
      ['iauth_rev', 4000],
      ['iauth_exp', 1000],
    ] as const) {
      const answer = await send(connectionId, requestEvent(c, id, `ntx_${id}`, amount));
      expect(answer.body.approved).toBe(true);
    }
    const held = (id: string, amount: number, status: Stripe.Issuing.Authorization.Status) =>
      authorization({
        id,
        card: c,
        networkId: `ntx_${id}`,
        amount,
        approved: true,
        status,
        pending: null,
        history: [],
      });
    // A partial reversal: the amount went down from 40.00 to 25.00 while pending.
    const partly = await send(
      connectionId,
      event('issuing_authorization.updated', held('iauth_rev', 2500, 'pending'), {
        previous_attributes: { amount: 4000 },
      }),
    );
    expect(partly.body).toMatchObject({ received: true, operations: 1 });
    expect((await call('GET', `/v1/vaults/${vaultId}`)).body.balance).toMatchObject({
      pending: '35.00',
    });
    const reversed = await send(
      connectionId,
      event('issuing_authorization.updated', held('iauth_rev', 0, 'reversed')),
    );
    const expired = await send(
      connectionId,
      event('issuing_authorization.updated', held('iauth_exp', 1000, 'expired')),
    );
    expect([reversed.status, expired.status]).toEqual([200, 200]);
    const listed = await call('GET', `/v1/transactions?vaultId=${vaultId}&limit=10`);
    const statuses = (listed.body.data ?? [])
      .filter((t) => t['type'] === 'card_authorization')
      .map((t) => `${String(t['status'])} ${String(t['failureReason'])}`)
      .sort();
    expect(statuses).toEqual(['failed expired', 'failed reversed']);
    // Stripe reverses what already holds nothing (it expired here first): taken, nothing changed.
    const money = async () => ({
      vault: (await call('GET', `/v1/vaults/${vaultId}`)).body.balance,
      transactions: (await call('GET', `/v1/transactions?vaultId=${vaultId}&limit=10`)).body.data,
    });
    const beforeLate = await money();
    const late = await send(
      connectionId,
      event('issuing_authorization.updated', held('iauth_exp', 0, 'reversed')),
    );
    expect([late.status, late.body.received, late.body.operations]).toEqual([200, true, 0]);
    expect(await money()).toEqual(beforeLate);
    // An offline purchase Stripe never asked about: a force capture, whatever the balance.
    const offline = await send(
      connectionId,
      event(
        'issuing_transaction.created',
        issuingTransaction({
          id: 'ipi_offline',
          card: c,
          authorization: null,
          networkId: null,
          amount: -12000,
          type: 'capture',
        }),
      ),
    );
    expect(offline.status).toBe(200);
    expect((await call('GET', `/v1/vaults/${vaultId}`)).body.balance).toEqual({
      available: '-20.00',
      pending: '0.00',
      ledger: '-20.00',
    });
  });
  it('records an increase Stripe decided without us as an increment, once; ours only once too', async () => {
    const { connectionId, vaultId } = await setUp('200', 'ic_grow');
    const c = 'ic_grow';
    const first = await send(connectionId, requestEvent(c, 'iauth_grow', 'ntx_grow', 10000));
    expect(first.body.approved).toBe(true);
    const pendingOf = async () =>
      (await call('GET', `/v1/vaults/${vaultId}`)).body.balance?.pending;
    const grown = (amount: number, history: Stripe.Issuing.Authorization.RequestHistory[]) =>
      authorization({
        id: 'iauth_grow',
        card: c,
        networkId: 'ntx_grow',
        amount,
        approved: true,
        status: 'pending',
        pending: null,
        history,
      });
    // Our answer to the increment request timed out; Stripe's timeout setting approved 30.00.
    const byStripe = [
      historyEntry(10000, 'webhook_approved'),
      historyEntry(3000, 'webhook_timeout'),
    ];
    const increased = event('issuing_authorization.updated', grown(13000, byStripe), {
      previous_attributes: { amount: 10000 },
    });
    const answer = await send(connectionId, increased);
    expect(answer.body).toMatchObject({ received: true, operations: 1 });
    expect(await pendingOf()).toBe('130.00');
    const listed = await call('GET', `/v1/transactions?vaultId=${vaultId}&limit=10`);
    expect(listed.body.data?.[0]).toMatchObject({ amount: '130.00', heldAmount: '130.00' });
    // Stripe sends the event again, or another event tells the same increase: nothing more.
    const before = await digest();
    expect((await send(connectionId, increased)).status).toBe(200);
    const retold = event('issuing_authorization.updated', grown(13000, byStripe), {
      previous_attributes: { amount: 10000 },
    });
    expect((await send(connectionId, retold)).status).toBe(200);
    expect(await digest()).toBe(before);
    // An increase we answered ourselves was recorded by its request: its update adds nothing.
    const asked = await send(
      connectionId,
      event('issuing_authorization.request', {
        ...grown(13000, byStripe),
        pending_request: pendingRequest(2000),
      }),
    );
    expect(asked.body.approved).toBe(true);
    expect(await pendingOf()).toBe('150.00');
    const ours = await send(
      connectionId,
      event(
        'issuing_authorization.updated',
        grown(15000, [...byStripe, historyEntry(2000, 'webhook_approved')]),
        { previous_attributes: { amount: 13000 } },
      ),
    );
    expect(ours.body).toMatchObject({ received: true, operations: 0 });
    expect(await pendingOf()).toBe('150.00');
  });
  it('records an increase Stripe approved without us even above the balance: an advice', async () => {
    const { connectionId, vaultId } = await setUp('100', 'ic_over');
    const c = 'ic_over';
    expect(
      (await send(connectionId, requestEvent(c, 'iauth_over', 'ntx_over', 8000))).body.approved,
    ).toBe(true);
    // 50.00 more with 20.00 available: Stripe's timeout setting approved it; recorded.
    const grown = authorization({
      id: 'iauth_over',
      card: c,
      networkId: 'ntx_over',
      amount: 13000,
      approved: true,
      status: 'pending',
      pending: null,
      history: [historyEntry(8000, 'webhook_approved'), historyEntry(5000, 'webhook_timeout')],
    });
    const increased = event('issuing_authorization.updated', grown, {
      previous_attributes: { amount: 8000 },
    });
    expect((await send(connectionId, increased)).body).toMatchObject({ operations: 1 });
    expect((await call('GET', `/v1/vaults/${vaultId}`)).body.balance).toEqual({
      available: '-30.00',
      pending: '130.00',
      ledger: '100.00',
    });
  });

  it('captures one authorization several times, the rest released when it closes', async () => {
    const { connectionId, vaultId } = await setUp('100', 'ic_multi');
    const c = 'ic_multi';
    expect(
      (await send(connectionId, requestEvent(c, 'iauth_multi', 'ntx_multi', 9000))).body.approved,
    ).toBe(true);
    const balance = async () => (await call('GET', `/v1/vaults/${vaultId}`)).body.balance;
    const captured = (id: string, amount: number) =>
      event(
        'issuing_transaction.created',
        issuingTransaction({
          id,
          card: c,
          authorization: 'iauth_multi',
          networkId: 'ntx_multi',
          amount: -amount,
          type: 'capture',
        }),
      );
    expect((await send(connectionId, captured('ipi_multi_1', 3000))).body.operations).toBe(1);
    expect(await balance()).toEqual({ available: '10.00', pending: '60.00', ledger: '70.00' });
    // Stripe sends the first again: recorded once.
    await send(connectionId, captured('ipi_multi_1', 3000));
    expect((await send(connectionId, captured('ipi_multi_2', 2500))).body.operations).toBe(1);
    expect(await balance()).toEqual({ available: '10.00', pending: '35.00', ledger: '45.00' });
    // Stripe closes the authorization: the 35.00 still held is released.
    const closed = authorization({
      id: 'iauth_multi',
      card: c,
      networkId: 'ntx_multi',
      amount: 0,
      approved: true,
      status: 'closed',
      pending: null,
      history: [historyEntry(9000, 'webhook_approved')],
    });
    const closing = await send(
      connectionId,
      event('issuing_authorization.updated', closed, {
        previous_attributes: { status: 'pending' },
      }),
    );
    expect(closing.body).toMatchObject({ received: true, operations: 1 });
    expect(await balance()).toEqual({ available: '45.00', pending: '0.00', ledger: '45.00' });
    const listed = await call('GET', `/v1/transactions?vaultId=${vaultId}&limit=10`);
    expect(listed.body.data?.[0]).toMatchObject({ capturedAmount: '55.00', heldAmount: '0.00' });
  });
});
