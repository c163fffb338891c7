import { describe, expect, it } from 'vitest';
import { fundedCard, MERCHANT, networkId } from '../support/authorize.js';
import { useTestService } from '../support/http.js';

/**
 * GET /v1/transactions/{id}/timeline (contract v1.2, section 16; the console's transaction
 * view): every message of a transaction's life, oldest first, with what it moved and the hold
 * it left, over real HTTP on PostgreSQL.
 */
interface Message {
  kind: string;
  amount: string;
  heldAmount: string;
  approved: boolean | null;
  networkTransactionId: string | null;
  createdAt: string;
}

interface Json {
  id: string;
  approved: boolean;
  object: string;
  transactionId: string;
  currency: string;
  messages: Message[];
  truncated: boolean;
  error?: { code: string; param?: string };
}

const HOTEL = { ...MERCHANT, name: 'Hotel Lago', mcc: '7011' };

describe('transaction timeline', () => {
  const harness = useTestService<Json>();
  const { call } = harness;
  const authorize = (cardId: string, amount: string, merchant = MERCHANT) =>
    call('POST', '/v1/authorizations', {
      cardId,
      amount,
      currency: 'USDC',
      merchant,
      networkTransactionId: networkId(),
    });
  const timelineOf = async (id: string) => {
    const answer = await call('GET', `/v1/transactions/${id}/timeline`);
    expect(answer.status).toBe(200);
    return answer.body;
  };
  const shape = (messages: readonly Message[]) =>
    messages.map((m) => `${m.kind} ${m.amount} held ${m.heldAmount} ${String(m.approved)}`);

  it('tells a hotel stay: increments, a partial capture, a late larger one and a refund', async () => {
    const { cardId } = await fundedCard(harness, '1000');
    const stay = await authorize(cardId, '200', HOTEL);
    expect(stay.body.approved).toBe(true);
    const raise = (amount: string) =>
      call('POST', `/v1/authorizations/${stay.body.id}/increment`, {
        amount,
        networkTransactionId: networkId(),
      });
    expect((await raise('50')).body.approved).toBe(true);
    expect((await raise('5000')).body.approved).toBe(false);
    const capture = (body: object) =>
      call('POST', `/v1/authorizations/${stay.body.id}/capture`, body);
    expect((await capture({ amount: '100', final: false })).status).toBe(200);
    expect((await capture({ amount: '170' })).status).toBe(200);
    const refunded = await call('POST', '/v1/refunds', {
      cardId,
      amount: '20',
      currency: 'USDC',
      merchant: HOTEL,
      networkTransactionId: networkId(),
      transactionId: stay.body.id,
    });
    expect(refunded.status).toBe(201);

    const timeline = await timelineOf(stay.body.id);
    expect(timeline).toMatchObject({
      object: 'timeline',
      transactionId: stay.body.id,
      currency: 'USDC',
      truncated: false,
    });
    expect(shape(timeline.messages)).toEqual([
      'authorization 200.00 held 200.00 true',
      'increment 50.00 held 250.00 true',
      'increment 5000.00 held 250.00 false',
      'capture 100.00 held 150.00 null',
      'capture 170.00 held 0.00 null',
      'refund 20.00 held 0.00 null',
    ]);
    const times = timeline.messages.map((m) => Date.parse(m.createdAt));
    expect([...times].sort((a, b) => a - b)).toEqual(times);
  });

  it('opens a declined authorization with its decision and no hold', async () => {
    const { cardId } = await fundedCard(harness, '10');
    const declined = await authorize(cardId, '25');
    expect(declined.body.approved).toBe(false);
    expect(shape((await timelineOf(declined.body.id)).messages)).toEqual([
      'authorization 25.00 held 0.00 false',
    ]);
  });

  it('shows a reversal and an advice that declined what was approved', async () => {
    const { cardId } = await fundedCard(harness, '100');
    const networkTransactionId = networkId();
    const approved = await call('POST', '/v1/authorizations', {
      cardId,
      amount: '40',
      currency: 'USDC',
      merchant: MERCHANT,
      networkTransactionId,
    });
    const id = approved.body.id;
    expect((await call('POST', `/v1/authorizations/${id}/reverse`, { amount: '15' })).status).toBe(
      200,
    );
    const advised = await call('POST', '/v1/authorizations/advice', {
      cardId,
      amount: '40',
      currency: 'USDC',
      merchant: MERCHANT,
      networkTransactionId,
      approved: false,
      reason: 'stand_in',
    });
    expect(advised.status).toBe(200);
    expect(shape((await timelineOf(id)).messages)).toEqual([
      'authorization 40.00 held 40.00 true',
      'reversal 15.00 held 25.00 null',
      'reversal 25.00 held 0.00 null',
      'advice 40.00 held 0.00 false',
    ]);
  });

  it('opens a force capture with its own posting, and an advised stand-in with the advice', async () => {
    const { cardId } = await fundedCard(harness, '100');
    const forced = await call('POST', '/v1/captures', {
      cardId,
      amount: '12.50',
      currency: 'USDC',
      merchant: MERCHANT,
      networkTransactionId: networkId(),
    });
    expect(forced.status).toBe(201);
    expect(shape((await timelineOf(forced.body.id)).messages)).toEqual([
      'capture 12.50 held 0.00 null',
    ]);
    const advised = await call('POST', '/v1/authorizations/advice', {
      cardId,
      amount: '30',
      currency: 'USDC',
      merchant: MERCHANT,
      networkTransactionId: networkId(),
      approved: true,
      reason: 'stand_in',
    });
    expect(advised.body.approved).toBe(true);
    expect(shape((await timelineOf(advised.body.id)).messages)).toEqual([
      'advice 30.00 held 30.00 true',
    ]);
  });

  it('answers 404 for an unknown transaction and changes nothing', async () => {
    const answer = await call('GET', '/v1/transactions/txn_0000000000000000000000000/timeline');
    expect(answer.status).toBe(404);
    expect(answer.body.error).toMatchObject({ code: 'transaction_not_found', param: 'id' });
  });
});
