import { createHmac, randomBytes } from 'node:crypto';
import type Lithic from 'lithic';
import { describe, expect, it } from 'vitest';
import { replay } from '../../src/cli/processors-replay.js';
import { useTestService, type ServiceHarness } from '../support/http.js';
import { lockVault } from '../support/store.js';
import { processorTestKit } from '../support/processors.js';

/**
 * Lithic at /v1/processors/lithic/{connectionId} over real HTTP on PostgreSQL (contract v1.2,
 * section 17). ASA requests and transaction events are built with the `lithic` package's types,
 * in the shapes of Lithic's public documentation, and signed as Lithic signs (Standard
 * Webhooks: HMAC-SHA256 of "id.timestamp.body"); the server verifies with the `lithic`
 * package's own `webhooks.verifySignature`. A forged, stale or missing signature is refused
 * and changes nothing; a whole card life through the adapter ends in the same ledger as the
 * same life sent to spendgate's own routes.
 */
interface Json {
  id: string;
  token?: string;
  result?: string;
  approved_amount?: number;
  received?: boolean;
  operations?: number;
  approved?: boolean;
  balance?: { available: string; pending: string; ledger: string };
  data?: Record<string, unknown>[];
  error?: { code: string; param?: string };
}

const LITHIC_MERCHANT: Lithic.CardAuthorization['merchant'] = {
  acceptor_id: '',
  acquiring_institution_id: '1000',
  city: 'Austin',
  country: 'USA',
  descriptor: 'Hotel Congress',
  mcc: '7011',
  state: 'TX',
} as Lithic.CardAuthorization['merchant'];

const usd = (amount: number) => ({ amount, currency: 'USD' as const });

/* eslint-disable @typescript-eslint/no-deprecated -- Lithic still sends the deprecated top-level
   amounts beside `amounts`; the fixture sends what Lithic sends (the adapter reads `amounts`). */
/** An ASA request as Lithic sends it; only the fields the adapter reads are filled with care. */
function asa(
  card: string,
  token: string,
  amount: number,
  status: Lithic.CardAuthorization['status'] = 'AUTHORIZATION',
  partialApprovalCapable = false,
): Lithic.CardAuthorization {
  return {
    pos: {
      entry_mode: { card: 'PRESENT', cardholder: 'PRESENT', pan: 'ICC', pin_entered: false },
      terminal: {
        attended: true,
        card_retention_capable: false,
        on_premise: true,
        operator: 'CARD_ACCEPTOR',
        partial_approval_capable: partialApprovalCapable,
        pin_capability: 'CAPABLE',
        type: 'POS_TERMINAL',
      },
    },
    token,
    acquirer_fee: 0,
    amount,
    amounts: {
      cardholder: { ...usd(amount), conversion_rate: '1.000000' },
      hold: status === 'AUTHORIZATION' ? usd(amount) : null,
      merchant: usd(amount),
      settlement: null,
    },
    authorization_amount: amount,
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
    created: '2026-11-29T01:00:00Z',
    merchant: LITHIC_MERCHANT,
    merchant_amount: amount,
    merchant_currency: 'USD',
    name_validation: null,
    service_location: null,
    settled_amount: 0,
    status,
    transaction_initiator: 'CARDHOLDER',
    event_token: `${token}-event`,
  };
}
/* eslint-enable @typescript-eslint/no-deprecated */

type EventType = Lithic.Transaction.Event['type'];
interface EventFields {
  readonly token: string;
  readonly type: EventType;
  readonly amount: number;
  readonly result?: Lithic.Transaction.Event['result'];
  readonly detailed?: Lithic.Transaction.Event['detailed_results'];
}

/** A card_transaction.updated event: the transaction with its events so far. */
function transactionEvent(card: string, token: string, events: readonly EventFields[]) {
  return {
    event_type: 'card_transaction.updated',
    token,
    card_token: card,
    merchant: LITHIC_MERCHANT,
    merchant_currency: 'USD',
    result: 'APPROVED',
    status: 'PENDING',
    events: events.map((fields) => ({
      token: fields.token,
      amount: fields.amount,
      amounts: {
        cardholder: { ...usd(fields.amount), conversion_rate: '1.000000' },
        merchant: usd(fields.amount),
        settlement: null,
      },
      created: '2026-11-29T01:00:00Z',
      detailed_results: fields.detailed ?? ['APPROVED'],
      effective_polarity: fields.type === 'RETURN' ? 'CREDIT' : 'DEBIT',
      network_info: null,
      result: fields.result ?? 'APPROVED',
      rule_results: [],
      type: fields.type,
    })),
  };
}

/** A Standard Webhooks secret as Lithic hands them out: whsec_ and base64 key bytes. */
const SECRET = `whsec_${randomBytes(24).toString('base64')}`;

function signature(secret: string, id: string, timestamp: number, payload: string): string {
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  const mac = createHmac('sha256', key).update(`${id}.${timestamp}.${payload}`).digest('base64');
  return `v1,${mac}`;
}

let messages = 0;

/** Sends a message to the Lithic door, signed as Lithic signs (or not, or forged, as asked). */
function lithicSender(harness: ServiceHarness<Json>) {
  return async (
    connectionId: string,
    body: unknown,
    signing: { secret?: string; timestamp?: number; omit?: boolean; tamper?: boolean } = {},
  ) => {
    messages += 1;
    const payload = JSON.stringify(body);
    const id = `msg_${process.pid}_${messages}`;
    const timestamp = signing.timestamp ?? Math.floor(Date.now() / 1000);
    const headers =
      signing.omit === true
        ? {}
        : {
            'webhook-id': id,
            'webhook-timestamp': String(timestamp),
            'webhook-signature': signature(signing.secret ?? SECRET, id, timestamp, payload),
          };
    const response = await fetch(`${harness.service.base}/v1/processors/lithic/${connectionId}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: signing.tamper === true ? payload.replace(/"amount":(\d)/, '"amount":9$1') : payload,
    });
    return { status: response.status, body: (await response.json()) as Json };
  };
}

describe('Lithic adapter', () => {
  const harness = useTestService<Json>();

  const { setUp, digest, balanceOf, lifeThroughRoutes, expectSameLedger } = processorTestKit(
    harness,
    { processor: 'lithic', asaSecret: SECRET },
  );

  const send = lithicSender(harness);

  it('answers every ASA status in ASA format, with its result codes', async () => {
    const { connectionId, vaultId } = await setUp('100', 'card_asa');
    const approved = await send(connectionId, asa('card_asa', 'tx_auth', 2500));
    expect([approved.status, approved.body]).toEqual([
      200,
      { token: 'tx_auth', result: 'APPROVED' },
    ]);
    expect(await balanceOf(vaultId)).toMatchObject({ pending: '25.00', available: '75.00' });
    const declined = await send(connectionId, asa('card_asa', 'tx_big', 90000));
    expect(declined.body).toEqual({ token: 'tx_big', result: 'INSUFFICIENT_FUNDS' });
    const inquiry = await send(connectionId, asa('card_asa', 'tx_bal', 0, 'BALANCE_INQUIRY'));
    expect(inquiry.body.result).toBe('APPROVED');
    const financial = await send(
      connectionId,
      asa('card_asa', 'tx_fin', 1000, 'FINANCIAL_AUTHORIZATION'),
    );
    expect(financial.body.result).toBe('APPROVED');
    expect(await balanceOf(vaultId)).toMatchObject({ pending: '25.00', ledger: '90.00' });
    const credit = await send(connectionId, asa('card_asa', 'tx_cr', 500, 'CREDIT_AUTHORIZATION'));
    expect(credit.body.result).toBe('APPROVED');
    expect(await balanceOf(vaultId)).toMatchObject({ ledger: '90.00' });
    const financialCredit = await send(
      connectionId,
      asa('card_asa', 'tx_fcr', 500, 'FINANCIAL_CREDIT_AUTHORIZATION'),
    );
    expect(financialCredit.body.result).toBe('APPROVED');
    expect(await balanceOf(vaultId)).toMatchObject({ ledger: '95.00', pending: '25.00' });
    // Lithic retries an ASA request it got no answer to: the same answer, nothing more.
    const before = await digest();
    const repeat = await send(connectionId, asa('card_asa', 'tx_auth', 2500));
    expect(repeat.body).toEqual({ token: 'tx_auth', result: 'APPROVED' });
    expect(await digest()).toBe(before);
  });

  it('refuses a forged, stale, missing or tampered signature, changing nothing', async () => {
    const { connectionId } = await setUp('100', 'card_forged');
    const body = asa('card_forged', 'tx_forged', 1000);
    const before = await digest();
    const answers = [
      await send(connectionId, body, { secret: `whsec_${randomBytes(24).toString('base64')}` }),
      await send(connectionId, body, { timestamp: Math.floor(Date.now() / 1000) - 600 }),
      await send(connectionId, body, { omit: true }),
      await send(connectionId, body, { tamper: true }),
    ];
    for (const answer of answers)
      expect([answer.status, answer.body.error?.code]).toEqual([400, 'invalid_signature']);
    expect(await digest()).toBe(before);
    const metrics = await (await fetch(`${harness.service.base}/metrics`)).text();
    expect(metrics).toMatch(
      /spendgate_processor_messages_total\{processor="lithic",event="unknown",outcome="invalid_signature"\} [4-9]/,
    );
  });

  it('declines an unknown card or a malformed request; refuses an unknown event, changing nothing', async () => {
    const { connectionId } = await setUp('100', 'card_known');
    const before = await digest();
    const unknownCard = await send(connectionId, asa('card_nobody', 'tx_nobody', 1000));
    expect([unknownCard.status, unknownCard.body]).toEqual([
      200,
      { token: 'tx_nobody', result: 'CARD_PAUSED' },
    ]);
    const malformed = await send(connectionId, { token: 'tx_bad', status: 'AUTHORIZATION' });
    expect([malformed.status, malformed.body.result]).toEqual([200, 'UNAUTHORIZED_MERCHANT']);
    const unknownStatus = await send(connectionId, {
      ...asa('card_known', 'tx_s', 100),
      status: 'NOPE',
    });
    expect(unknownStatus.body.result).toBe('UNAUTHORIZED_MERCHANT');
    const unknownEvent = await send(connectionId, { event_type: 'card.created', token: 'c' });
    expect([unknownEvent.status, unknownEvent.body.error?.code]).toEqual([
      400,
      'parameter_invalid',
    ]);
    const badEvent = await send(connectionId, {
      event_type: 'card_transaction.updated',
      token: 'tx_x',
      events: 'none',
    });
    expect([badEvent.status, badEvent.body.error?.code]).toEqual([400, 'parameter_invalid']);
    const noConnection = await send('pconn_nothing', asa('card_known', 'tx_n', 100));
    expect(noConnection.status).toBe(404);
    expect(await digest()).toBe(before);
  });

  it('ends a whole card life through Lithic in the same ledger as through spendgate’s routes', async () => {
    const viaLithic = await setUp('200', 'card_life');
    const viaRoutes = await setUp('200', null);
    const c = 'card_life';
    const life = (events: readonly EventFields[]) => transactionEvent(c, 'tx_life', events);
    const first: EventFields = { token: 'ev_auth', type: 'AUTHORIZATION', amount: 10000 };
    const increment: EventFields = { token: 'ev_inc', type: 'AUTHORIZATION', amount: 5000 };
    const clearing: EventFields = { token: 'ev_clear', type: 'CLEARING', amount: 17000 };
    const refund: EventFields = { token: 'ev_return', type: 'RETURN', amount: 2000 };
    // 1. The hotel's authorization: 100.00, asked through ASA; Lithic's event tells it again.
    expect((await send(viaLithic.connectionId, asa(c, 'tx_life', 10000))).body.result).toBe(
      'APPROVED',
    );
    expect((await send(viaLithic.connectionId, life([first]))).body.operations).toBe(0);
    // 2. An incremental authorization of 50.00.
    expect((await send(viaLithic.connectionId, life([first, increment]))).status).toBe(200);
    // 3. The clearing, above the hold (150.00 held, 170.00 cleared); a repeat changes nothing.
    const cleared = life([first, increment, clearing]);
    expect((await send(viaLithic.connectionId, cleared)).status).toBe(200);
    const beforeRepeat = await digest();
    expect((await send(viaLithic.connectionId, cleared)).body.received).toBe(true);
    expect(await digest()).toBe(beforeRepeat);
    // 4. A return of 20.00.
    expect(
      (await send(viaLithic.connectionId, life([first, increment, clearing, refund]))).status,
    ).toBe(200);
    // 5. Our ASA answer timed out; Lithic approved on its own: an advice.
    const timedOut = transactionEvent(c, 'tx_outage', [
      { token: 'ev_out', type: 'AUTHORIZATION', amount: 3000, detailed: ['CUSTOMER_ASA_TIMEOUT'] },
    ]);
    expect((await send(viaLithic.connectionId, timedOut)).body.operations).toBe(1);

    await lifeThroughRoutes(viaRoutes.cardId, 'CUSTOMER_ASA_TIMEOUT');
    await expectSameLedger(viaLithic.vaultId, viaRoutes.vaultId);
  });

  it('releases a hold Lithic reversed in part or whole, or expired', async () => {
    const { connectionId, vaultId } = await setUp('100', 'card_rel');
    for (const [token, amount] of [
      ['tx_rev', 4000],
      ['tx_exp', 1000],
    ] as const)
      expect((await send(connectionId, asa('card_rel', token, amount))).body.result).toBe(
        'APPROVED',
      );
    const auth = (token: string, amount: number): EventFields => ({
      token: `${token}_a`,
      type: 'AUTHORIZATION',
      amount,
    });
    const partly = transactionEvent('card_rel', 'tx_rev', [
      auth('tx_rev', 4000),
      { token: 'ev_rev1', type: 'AUTHORIZATION_REVERSAL', amount: 1500 },
    ]);
    expect((await send(connectionId, partly)).body.operations).toBe(1);
    expect(await balanceOf(vaultId)).toMatchObject({ pending: '35.00' });
    const expired = transactionEvent('card_rel', 'tx_exp', [
      auth('tx_exp', 1000),
      { token: 'ev_exp', type: 'AUTHORIZATION_EXPIRY', amount: 0 },
    ]);
    expect((await send(connectionId, expired)).status).toBe(200);
    expect(await balanceOf(vaultId)).toMatchObject({ pending: '25.00', available: '75.00' });
    // A reversal of a hold our expiry already released: taken, the ledger unchanged (the
    // dispatcher keeps its idempotency record of the message, as for Stripe).
    const before = await balanceOf(vaultId);
    const late = transactionEvent('card_rel', 'tx_exp', [
      auth('tx_exp', 1000),
      { token: 'ev_late_rev', type: 'AUTHORIZATION_REVERSAL', amount: 0 },
    ]);
    expect((await send(connectionId, late)).body).toMatchObject({ received: true, operations: 0 });
    expect(await balanceOf(vaultId)).toEqual(before);
  });

  it('captures several CLEARING events of one transaction, the last releasing the rest', async () => {
    const { connectionId, vaultId } = await setUp('100', 'card_split');
    const c = 'card_split';
    expect((await send(connectionId, asa(c, 'tx_split', 9000))).body.result).toBe('APPROVED');
    const auth = { token: 'ev_split_auth', type: 'AUTHORIZATION' as const, amount: 9000 };
    const first = { token: 'ev_split_c1', type: 'CLEARING' as const, amount: 3000 };
    const second = { token: 'ev_split_c2', type: 'CLEARING' as const, amount: 2000 };
    // A first shipment: 30.00 cleared, Lithic still holds 60.00 (PENDING): not final.
    const partly = {
      ...transactionEvent(c, 'tx_split', [auth, first]),
      amounts: { hold: usd(6000) },
    };
    expect((await send(connectionId, partly)).body).toMatchObject({ operations: 1 });
    expect(await balanceOf(vaultId)).toEqual({
      available: '10.00',
      pending: '60.00',
      ledger: '70.00',
    });
    // Lithic sends it again: recorded once.
    expect((await send(connectionId, partly)).body).toMatchObject({ operations: 1 });
    expect(await balanceOf(vaultId)).toMatchObject({ pending: '60.00', ledger: '70.00' });
    // The last: 20.00 cleared, the transaction settled; the 40.00 left is released.
    const settled = {
      ...transactionEvent(c, 'tx_split', [auth, first, second]),
      status: 'SETTLED',
      amounts: { hold: usd(0) },
    };
    expect((await send(connectionId, settled)).body).toMatchObject({ operations: 1 });
    expect(await balanceOf(vaultId)).toEqual({
      available: '50.00',
      pending: '0.00',
      ledger: '50.00',
    });
  });

  it('records an incremental authorization Lithic approved after our timeout, whatever the balance', async () => {
    const { connectionId, vaultId } = await setUp('100', 'card_inc_advice');
    const c = 'card_inc_advice';
    expect((await send(connectionId, asa(c, 'tx_inc_adv', 8000))).body.result).toBe('APPROVED');
    // 50.00 more, above the 20.00 available: Lithic's fallback approved it; it is recorded.
    const approvedByLithic = transactionEvent(c, 'tx_inc_adv', [
      { token: 'ev_inc_adv_auth', type: 'AUTHORIZATION', amount: 8000 },
      {
        token: 'ev_inc_adv_more',
        type: 'AUTHORIZATION',
        amount: 5000,
        detailed: ['CUSTOMER_ASA_TIMEOUT'],
      },
    ]);
    expect((await send(connectionId, approvedByLithic)).body).toMatchObject({ operations: 1 });
    expect(await balanceOf(vaultId)).toEqual({
      available: '-30.00',
      pending: '130.00',
      ledger: '100.00',
    });
    // Once: a repeat of the event records nothing more.
    await send(connectionId, approvedByLithic);
    expect(await balanceOf(vaultId)).toMatchObject({ pending: '130.00' });
    // An increment we would decide ourselves is still declined above the balance.
    const asked = transactionEvent(c, 'tx_inc_adv', [
      { token: 'ev_inc_adv_auth', type: 'AUTHORIZATION', amount: 8000 },
      { token: 'ev_inc_adv_more', type: 'AUTHORIZATION', amount: 5000 },
      { token: 'ev_inc_adv_again', type: 'AUTHORIZATION', amount: 1000 },
    ]);
    await send(connectionId, asked);
    expect(await balanceOf(vaultId)).toMatchObject({ pending: '130.00' });
  });

  it('takes the shipped lithic-hotel-stay.json replayed by spendgate processors replay', async () => {
    const { connectionId, vaultId } = await setUp('500', 'card_replay');
    const result = await replay(
      {
        processor: 'lithic',
        file: 'docs/processors/lithic-hotel-stay.json',
        to: `${harness.service.base}/v1/processors/lithic/${connectionId}`,
        card: 'card_replay',
      },
      SECRET,
    );
    expect(result.ok).toBe(true);
    expect(await balanceOf(vaultId)).toEqual({
      available: '380.00',
      pending: '0.00',
      ledger: '380.00',
    });
  });
  it('approves part where the terminal takes a partial approval, declines where it does not', async () => {
    const { connectionId, vaultId } = await setUp('60', 'card_part');
    // 90.00 asked of 60.00: a terminal that cannot take a partial approval gets a decline.
    const whole = await send(connectionId, asa('card_part', 'tx_whole', 9000));
    expect(whole.body).toEqual({ token: 'tx_whole', result: 'INSUFFICIENT_FUNDS' });
    const part = await send(connectionId, asa('card_part', 'tx_part', 9000, 'AUTHORIZATION', true));
    expect(part.body).toEqual({ token: 'tx_part', result: 'APPROVED', approved_amount: 6000 });
    expect(await balanceOf(vaultId)).toMatchObject({ pending: '60.00', available: '0.00' });
    // Asked what the vault covers, on a capable terminal: approved whole, no approved_amount.
    const { connectionId: other } = await setUp('100', 'card_full');
    const full = await send(other, asa('card_full', 'tx_full', 2500, 'AUTHORIZATION', true));
    expect(full.body).toEqual({ token: 'tx_full', result: 'APPROVED' });
  });

  it("records Lithic's fallback decision after our ASA answer timed out: the advice wins", async () => {
    const { connectionId, vaultId } = await setUp('100', 'card_late');
    const c = 'card_late';
    // We approved 40.00, too late: Lithic's fallback declined. The hold is released.
    expect((await send(connectionId, asa(c, 'tx_late', 4000))).body.result).toBe('APPROVED');
    expect(await balanceOf(vaultId)).toMatchObject({ pending: '40.00' });
    const declinedByLithic = transactionEvent(c, 'tx_late', [
      {
        token: 'ev_late',
        type: 'AUTHORIZATION',
        amount: 4000,
        result: 'DECLINED',
        detailed: ['CUSTOMER_ASA_TIMEOUT'],
      },
    ]);
    expect((await send(connectionId, declinedByLithic)).body).toMatchObject({ operations: 1 });
    expect(await balanceOf(vaultId)).toMatchObject({ pending: '0.00', available: '100.00' });
    // We declined 150.00 (above the balance), too late: Lithic's fallback approved it. The
    // network's approval places the hold whatever the balance.
    expect((await send(connectionId, asa(c, 'tx_over', 15000))).body.result).toBe(
      'INSUFFICIENT_FUNDS',
    );
    const approvedByLithic = transactionEvent(c, 'tx_over', [
      {
        token: 'ev_over',
        type: 'AUTHORIZATION',
        amount: 15000,
        detailed: ['CUSTOMER_ASA_TIMEOUT'],
      },
    ]);
    expect((await send(connectionId, approvedByLithic)).body).toMatchObject({ operations: 1 });
    expect(await balanceOf(vaultId)).toMatchObject({ pending: '150.00', available: '-50.00' });
    // Lithic tells it again: nothing more.
    const before = await digest();
    expect((await send(connectionId, approvedByLithic)).status).toBe(200);
    expect(await digest()).toBe(before);
    // A later authorization Lithic declined raises nothing; an approved one is an increment.
    const first = { token: 'ev_over', type: 'AUTHORIZATION', amount: 15000 } as const;
    const declinedIncrement = transactionEvent(c, 'tx_over', [
      first,
      { token: 'ev_inc_no', type: 'AUTHORIZATION', amount: 1000, result: 'DECLINED' },
    ]);
    expect((await send(connectionId, declinedIncrement)).body).toMatchObject({ operations: 0 });
    expect(await balanceOf(vaultId)).toMatchObject({ pending: '150.00' });
  });
});

describe('Lithic adapter past the authorize budget', () => {
  const harness = useTestService<Json>({
    server: { authorize: { budgetMs: 300, standIn: 'decline' } },
  });
  const { setUp, balanceOf } = processorTestKit(harness, {
    processor: 'lithic',
    asaSecret: SECRET,
  });
  const send = lithicSender(harness);

  it('answers the stand-in decline in ASA format past the budget, and repeats it', async () => {
    const { connectionId, vaultId } = await setUp('100', 'card_si');
    const lock = lockVault(harness.service.store, vaultId);
    await lock.isLocked;
    const answer = await send(connectionId, asa('card_si', 'tx_si', 1000));
    lock.release();
    await lock.done;
    expect(answer).toEqual({ status: 200, body: { token: 'tx_si', result: 'CARD_PAUSED' } });
    // Lithic retries: the stand-in answer, never a decision afresh, and no hold is left.
    for (let attempt = 0; attempt < 3; attempt++) {
      const again = await send(connectionId, asa('card_si', 'tx_si', 1000));
      expect(again.body).toEqual({ token: 'tx_si', result: 'CARD_PAUSED' });
    }
    // Lithic tells of the decline it forwarded: already recorded, nothing more.
    const told = transactionEvent('card_si', 'tx_si', [
      { token: 'ev_si', type: 'AUTHORIZATION', amount: 1000, result: 'DECLINED' },
    ]);
    expect((await send(connectionId, told)).body).toMatchObject({ operations: 0 });
    expect(await balanceOf(vaultId)).toMatchObject({ pending: '0.00', available: '100.00' });
  });
});
