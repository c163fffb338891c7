import { describe, expect, it } from 'vitest';
import { replay } from '../../src/cli/processors-replay.js';
import { useTestService } from '../support/http.js';
import { processorTestKit } from '../support/processors.js';

/**
 * Marqeta Gateway JIT Funding at /v1/processors/marqeta/{connectionId} over real HTTP on
 * PostgreSQL (contract v1.2, section 17). Requests follow the shapes of Marqeta's public
 * documentation (a transaction with gpa_order.jit_funding, amounts in major units) and carry
 * HTTP basic auth as Marqeta sends it to a gateway. A wrong basic auth is refused and changes
 * nothing; a whole card life through the adapter ends in the same ledger as the same life
 * sent to spendgate's own routes.
 */
interface Json {
  id: string;
  approved?: boolean;
  jit_funding?: { token: string; method: string; amount: number; decline_reason?: string };
  balance?: { available: string; pending: string; ledger: string };
  data?: Record<string, unknown>[];
  error?: { code: string; param?: string };
}

const USERNAME = 'spendgate_gateway';
const PASSWORD = 'gateway-password-for-tests-0123456789';

type JitType =
  | 'authorization'
  | 'authorization.incremental'
  | 'authorization.advice'
  | 'authorization.clearing'
  | 'authorization.reversal'
  | 'refund'
  | 'pindebit'
  | 'balanceinquiry'
  | 'account.funding.authorization';

interface JitFields {
  readonly type: JitType;
  readonly method: string;
  readonly token: string;
  readonly card: string;
  readonly amount: number;
  readonly preceding?: string;
}

/** A JIT Funding request as Marqeta sends it to a gateway. */
function jit(fields: JitFields) {
  return {
    type: fields.type,
    state: 'PENDING',
    token: fields.token,
    user_token: 'user_ada',
    acting_user_token: 'user_ada',
    card_token: fields.card,
    amount: fields.amount,
    currency_code: 'USD',
    network: 'VISA',
    created_time: '2026-11-29T01:00:00Z',
    ...(fields.preceding === undefined
      ? {}
      : { preceding_related_transaction_token: fields.preceding }),
    card_acceptor: {
      mid: '000000000011111',
      mcc: '7011',
      name: 'Hotel Congress',
      city: 'Austin',
      state: 'TX',
      country_code: 'USA',
    },
    gpa_order: {
      token: `gpa_${fields.token}`,
      amount: fields.amount,
      currency_code: 'USD',
      jit_funding: {
        token: `jit_${fields.token}`,
        method: fields.method,
        user_token: 'user_ada',
        acting_user_token: 'user_ada',
        amount: fields.amount,
      },
    },
  };
}

const basic = (user: string, password: string) =>
  `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

describe('Marqeta Gateway JIT Funding adapter', () => {
  const harness = useTestService<Json>();

  const { setUp, digest, balanceOf, lifeThroughRoutes, expectSameLedger } = processorTestKit(
    harness,
    { processor: 'marqeta', username: USERNAME, password: PASSWORD },
  );

  const send = async (connectionId: string, body: unknown, authorization?: string | null) => {
    const response = await fetch(`${harness.service.base}/v1/processors/marqeta/${connectionId}`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        ...(authorization === null
          ? {}
          : { authorization: authorization ?? basic(USERNAME, PASSWORD) }),
      },
      body: JSON.stringify(body),
    });
    return { status: response.status, body: (await response.json()) as Json };
  };

  it('funds or declines each JIT method with its jit_funding object', async () => {
    const { connectionId, vaultId } = await setUp('100', 'card_jit');
    const auth = await send(
      connectionId,
      jit({
        type: 'authorization',
        method: 'pgfs.authorization',
        token: 't_a',
        card: 'card_jit',
        amount: 25,
      }),
    );
    expect([auth.status, auth.body.jit_funding]).toEqual([
      200,
      {
        token: 'jit_t_a',
        method: 'pgfs.authorization',
        user_token: 'user_ada',
        acting_user_token: 'user_ada',
        amount: 25,
      },
    ]);
    expect(await balanceOf(vaultId)).toMatchObject({ pending: '25.00', available: '75.00' });
    const declined = await send(
      connectionId,
      jit({
        type: 'authorization',
        method: 'pgfs.authorization',
        token: 't_big',
        card: 'card_jit',
        amount: 900,
      }),
    );
    expect([declined.status, declined.body.jit_funding?.decline_reason]).toEqual([
      402,
      'INSUFFICIENT_FUNDS',
    ]);
    const pin = await send(
      connectionId,
      jit({
        type: 'pindebit',
        method: 'pgfs.pindebit',
        token: 't_pin',
        card: 'card_jit',
        amount: 10.5,
      }),
    );
    expect([pin.status, pin.body.jit_funding?.amount]).toEqual([200, 10.5]);
    expect(await balanceOf(vaultId)).toMatchObject({ pending: '25.00', ledger: '89.50' });
    const inquiry = await send(
      connectionId,
      jit({
        type: 'balanceinquiry',
        method: 'pgfs.balanceinquiry',
        token: 't_bi',
        card: 'card_jit',
        amount: 0,
      }),
    );
    expect(inquiry.status).toBe(200);
    const reversal = await send(
      connectionId,
      jit({
        type: 'authorization.reversal',
        method: 'pgfs.authorization.reversal',
        token: 't_rev',
        card: 'card_jit',
        amount: 5,
        preceding: 't_a',
      }),
    );
    expect(reversal.status).toBe(200);
    expect(await balanceOf(vaultId)).toMatchObject({ pending: '20.00' });
    // Marqeta repeats a request it got no answer to: the same answer, nothing more.
    const before = await digest();
    const again = await send(
      connectionId,
      jit({
        type: 'authorization',
        method: 'pgfs.authorization',
        token: 't_a',
        card: 'card_jit',
        amount: 25,
      }),
    );
    expect(again.status).toBe(200);
    expect(await digest()).toBe(before);
  });

  it('refuses a wrong or missing basic auth with 400 invalid_signature, changing nothing', async () => {
    const { connectionId } = await setUp('100', 'card_auth');
    const body = jit({
      type: 'authorization',
      method: 'pgfs.authorization',
      token: 't_f',
      card: 'card_auth',
      amount: 10,
    });
    const before = await digest();
    for (const header of [basic(USERNAME, 'wrong'), basic('someone', PASSWORD), null, 'Bearer x']) {
      const answer = await send(connectionId, body, header);
      expect([answer.status, answer.body.error?.code]).toEqual([400, 'invalid_signature']);
    }
    expect(await digest()).toBe(before);
    const metrics = await (await fetch(`${harness.service.base}/metrics`)).text();
    expect(metrics).toMatch(
      /spendgate_processor_messages_total\{processor="marqeta",event="unknown",outcome="invalid_signature"\} [4-9]/,
    );
  });

  it('declines an unknown card or method; refuses a body with no jit_funding, changing nothing', async () => {
    const { connectionId } = await setUp('100', 'card_known');
    const before = await digest();
    const unknownCard = await send(
      connectionId,
      jit({
        type: 'authorization',
        method: 'pgfs.authorization',
        token: 't_u',
        card: 'card_nobody',
        amount: 10,
      }),
    );
    expect([unknownCard.status, unknownCard.body.jit_funding?.decline_reason]).toEqual([
      402,
      'INVALID_CARD',
    ]);
    const unknownMethod = await send(
      connectionId,
      jit({
        type: 'authorization',
        method: 'pgfs.unheard_of',
        token: 't_m',
        card: 'card_known',
        amount: 10,
      }),
    );
    expect([unknownMethod.status, unknownMethod.body.error?.code]).toEqual([
      400,
      'parameter_invalid',
    ]);
    const tooPrecise = await send(
      connectionId,
      jit({
        type: 'authorization',
        method: 'pgfs.authorization',
        token: 't_p',
        card: 'card_known',
        amount: 1.005,
      }),
    );
    expect([tooPrecise.status, tooPrecise.body.jit_funding?.decline_reason]).toEqual([
      402,
      'INVALID_AMOUNT',
    ]);
    const malformed = await send(connectionId, { type: 'authorization', token: 't_x' });
    expect([malformed.status, malformed.body.error?.code]).toEqual([400, 'parameter_invalid']);
    expect(await digest()).toBe(before);
  });

  it('ends a whole card life through Marqeta in the same ledger as through spendgate’s routes', async () => {
    const viaMarqeta = await setUp('200', 'card_life');
    const viaRoutes = await setUp('200', null);
    const c = 'card_life';
    const step = async (fields: Omit<JitFields, 'card'>) => {
      const answer = await send(viaMarqeta.connectionId, jit({ ...fields, card: c }));
      expect(answer.status).toBe(200);
      return answer;
    };
    // 1. The hotel's authorization: 100.00.
    await step({
      type: 'authorization',
      method: 'pgfs.authorization',
      token: 'm_auth',
      amount: 100,
    });
    // 2. An incremental authorization of 50.00.
    await step({
      type: 'authorization.incremental',
      method: 'pgfs.authorization.incremental',
      token: 'm_inc',
      amount: 50,
      preceding: 'm_auth',
    });
    // 3. The clearing above the hold: 170.00 of 150.00 held; a repeat changes nothing.
    const clearing = {
      type: 'authorization.clearing',
      method: 'pgfs.authorization.capture',
      token: 'm_clear',
      amount: 170,
      preceding: 'm_auth',
    } as const;
    await step(clearing);
    const beforeRepeat = await digest();
    await step(clearing);
    expect(await digest()).toBe(beforeRepeat);
    // 4. A refund of 20.00.
    await step({
      type: 'refund',
      method: 'pgfs.refund',
      token: 'm_refund',
      amount: 20,
      preceding: 'm_auth',
    });
    // 5. Our gateway timed out; Marqeta approved in stand-in: an advice of 30.00.
    await step({
      type: 'authorization.advice',
      method: 'pgfs.authorization.advice',
      token: 'm_out',
      amount: 30,
    });

    await lifeThroughRoutes(viaRoutes.cardId, 'marqeta_advice');
    await expectSameLedger(viaMarqeta.vaultId, viaRoutes.vaultId);
  });

  it('captures several clearings of one authorization, the last by is_final_clearing', async () => {
    const { connectionId, vaultId } = await setUp('100', 'card_multi');
    const card = 'card_multi';
    const auth = jit({
      type: 'authorization',
      method: 'pgfs.authorization',
      token: 'mq_multi',
      card,
      amount: 90,
    });
    expect((await send(connectionId, auth)).status).toBe(200);
    const clearing = (token: string, amount: number, marks: Record<string, unknown>) => ({
      ...jit({
        type: 'authorization.clearing',
        method: 'pgfs.authorization.capture',
        token,
        card,
        amount,
        preceding: 'mq_multi',
      }),
      ...marks,
    });
    // The first of several (is_final_clearing false): 30.00 posted, the rest still held.
    const first = clearing('mq_multi_c1', 30, { is_final_clearing: false });
    expect((await send(connectionId, first)).status).toBe(200);
    expect(await balanceOf(vaultId)).toEqual({
      available: '10.00',
      pending: '60.00',
      ledger: '70.00',
    });
    // The second of three, told by the sequence alone: not the last.
    const second = clearing('mq_multi_c2', 25, {
      multi_clearing_sequence_number: '02',
      multi_clearing_sequence_count: '03',
    });
    expect((await send(connectionId, second)).status).toBe(200);
    expect(await balanceOf(vaultId)).toMatchObject({ pending: '35.00', ledger: '45.00' });
    // The last (is_final_clearing true): 20.00 posted, the 15.00 left released.
    const last = clearing('mq_multi_c3', 20, { is_final_clearing: true });
    expect((await send(connectionId, last)).status).toBe(200);
    expect(await balanceOf(vaultId)).toEqual({
      available: '25.00',
      pending: '0.00',
      ledger: '25.00',
    });
  });

  it('records an incremental authorization Marqeta approved in stand-in, whatever the balance', async () => {
    const { connectionId, vaultId } = await setUp('100', 'card_inc_advice');
    const card = 'card_inc_advice';
    const auth = jit({
      type: 'authorization',
      method: 'pgfs.authorization',
      token: 'mq_inc_adv',
      card,
      amount: 80,
    });
    expect((await send(connectionId, auth)).status).toBe(200);
    // Asked of us, 50.00 more than the 20.00 available: declined.
    const asked = jit({
      type: 'authorization.incremental',
      method: 'pgfs.authorization.incremental',
      token: 'mq_inc_asked',
      card,
      amount: 50,
      preceding: 'mq_inc_adv',
    });
    expect((await send(connectionId, asked)).status).toBe(402);
    // The same approved by Marqeta in stand-in, told as an advice: recorded, once.
    const advice = jit({
      type: 'authorization.incremental',
      method: 'pgfs.authorization.advice',
      token: 'mq_inc_told',
      card,
      amount: 50,
      preceding: 'mq_inc_adv',
    });
    expect((await send(connectionId, advice)).status).toBe(200);
    expect((await send(connectionId, advice)).status).toBe(200);
    expect(await balanceOf(vaultId)).toEqual({
      available: '-30.00',
      pending: '130.00',
      ledger: '100.00',
    });
  });

  it('takes the shipped marqeta-hotel-stay.json replayed by spendgate processors replay', async () => {
    const { connectionId, vaultId } = await setUp('500', 'card_replay');
    const result = await replay(
      {
        processor: 'marqeta',
        file: 'docs/processors/marqeta-hotel-stay.json',
        to: `${harness.service.base}/v1/processors/marqeta/${connectionId}`,
        card: 'card_replay',
      },
      `${USERNAME}:${PASSWORD}`,
    );
    expect(result.ok).toBe(true);
    expect(await balanceOf(vaultId)).toEqual({
      available: '380.00',
      pending: '0.00',
      ledger: '380.00',
    });
  });
});
