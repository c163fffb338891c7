import { describe, expect, it } from 'vitest';
import { fundedCard, MERCHANT, networkId } from '../support/authorize.js';
import { useTestService } from '../support/http.js';

/**
 * What a transaction still holds (`heldAmount`) over real HTTP on PostgreSQL, in every answer
 * and event that carries a transaction, through partial reverses and captures; and amounts in
 * refusal messages written as the API writes amounts.
 */
interface Json {
  id: string;
  status: string;
  amount: string;
  capturedAmount: string;
  heldAmount: string;
  data: { id: string; heldAmount: string }[];
  balance: { available: string; pending: string; ledger: string };
  error?: { type: string; code: string; message: string; param?: string };
}

describe('heldAmount', () => {
  const harness = useTestService<Json>();
  const { call } = harness;
  const authorize = (cardId: string, amount: string, currency = 'USDC') =>
    call('POST', '/v1/authorizations', {
      cardId,
      amount,
      currency,
      merchant: MERCHANT,
      networkTransactionId: networkId(),
    });
  /** The transaction as Retrieve and List answer it: both must say the same. */
  const heldOf = async (id: string, vaultId: string) => {
    const retrieved = (await call('GET', `/v1/transactions/${id}`)).body;
    const listed = (await call('GET', `/v1/transactions?vaultId=${vaultId}&limit=100`)).body.data;
    expect(listed.find((txn) => txn.id === id)?.heldAmount).toBe(retrieved.heldAmount);
    return retrieved.heldAmount;
  };
  const eventHeld = async (id: string, type: string) => {
    const { rows } = await harness.service.store.client.query<{ held: string }>(
      `SELECT payload->'data'->'object'->>'heldAmount' AS held FROM outbox_events
       WHERE payload->'data'->'object'->>'id' = $1 AND type = $2`,
      [id, type],
    );
    return rows.map((row) => row.held);
  };

  it('shows what a card authorization still holds, down to 0.00, through partial reverses', async () => {
    const { vaultId, cardId } = await fundedCard(harness, '100');
    const held = await authorize(cardId, '10');
    expect(await heldOf(held.body.id, vaultId)).toBe('10.00');
    const part = await call('POST', `/v1/authorizations/${held.body.id}/reverse`, {
      amount: '3.000001',
    });
    expect([part.status, part.body.status, part.body.heldAmount]).toEqual([
      200,
      'pending',
      '6.999999',
    ]);
    expect(await heldOf(held.body.id, vaultId)).toBe('6.999999');
    // The vault's pending is the sum of what its transactions hold.
    expect((await call('GET', `/v1/vaults/${vaultId}`)).body.balance.pending).toBe('6.999999');
    const rest = await call('POST', `/v1/authorizations/${held.body.id}/reverse`);
    expect([rest.body.status, rest.body.heldAmount]).toEqual(['failed', '0.00']);
    expect(await heldOf(held.body.id, vaultId)).toBe('0.00');
    expect(await eventHeld(held.body.id, 'transaction.failed')).toEqual(['0.00']);
  });

  it('is 0.00 once a partial capture completes the authorization (the rest released)', async () => {
    const { vaultId, cardId } = await fundedCard(harness, '100');
    const held = await authorize(cardId, '10');
    await call('POST', `/v1/authorizations/${held.body.id}/reverse`, { amount: '2.5' });
    const captured = await call('POST', `/v1/authorizations/${held.body.id}/capture`, {
      amount: '4',
    });
    expect([
      captured.body.status,
      captured.body.amount,
      captured.body.capturedAmount,
      captured.body.heldAmount,
    ]).toEqual(['completed', '10.00', '4.00', '0.00']);
    expect(await heldOf(held.body.id, vaultId)).toBe('0.00');
    expect(await eventHeld(held.body.id, 'transaction.completed')).toEqual(['0.00']);
    expect(await eventHeld(held.body.id, 'authorization.approved')).toEqual(['10.00']);
  });

  it('is 0.00 on what never held anything: a decline, a deposit, a transfer', async () => {
    const { vaultId, cardId } = await fundedCard(harness, '5');
    const declined = await authorize(cardId, '6');
    expect(declined.body.status).toBe('declined');
    expect(await heldOf(declined.body.id, vaultId)).toBe('0.00');
    const other = await call('POST', '/v1/vaults', {
      name: 'B',
      currency: 'USDC',
      network: 'solana',
    });
    await call('POST', '/v1/transfers', {
      fromVaultId: vaultId,
      toVaultId: other.body.id,
      amount: '1',
    });
    const all = (await call('GET', `/v1/transactions?vaultId=${vaultId}`)).body.data;
    expect(all.map((txn) => txn.heldAmount)).toEqual(['0.00', '0.00', '0.00']);
  });

  it('writes SOL amounts at their scale, at least two decimals', async () => {
    const { vaultId, cardId } = await fundedCard(harness, '3', { currency: 'SOL' });
    const held = await authorize(cardId, '1.5', 'SOL');
    expect(await heldOf(held.body.id, vaultId)).toBe('1.50');
    await call('POST', `/v1/authorizations/${held.body.id}/reverse`, { amount: '0.000000001' });
    expect(await heldOf(held.body.id, vaultId)).toBe('1.499999999');
  });
});

describe('amounts in refusal messages', () => {
  const harness = useTestService<Json>();
  const { call } = harness;

  it('names the remaining hold as the API writes it, and changes nothing', async () => {
    const { vaultId, cardId } = await fundedCard(harness, '100');
    const held = await call('POST', '/v1/authorizations', {
      cardId,
      amount: '10',
      currency: 'USDC',
      merchant: MERCHANT,
      networkTransactionId: networkId(),
    });
    await call('POST', `/v1/authorizations/${held.body.id}/reverse`, { amount: '3' });
    const before = {
      transaction: (await call('GET', `/v1/transactions/${held.body.id}`)).body,
      balance: (await call('GET', `/v1/vaults/${vaultId}`)).body.balance,
    };
    // Reverse only: a capture above the hold posts (contract v1.2, section 16).
    for (const change of ['reverse']) {
      const refused = await call('POST', `/v1/authorizations/${held.body.id}/${change}`, {
        amount: '7.01',
      });
      expect([refused.status, refused.body.error]).toEqual([
        400,
        {
          type: 'invalid_request_error',
          code: 'invalid_amount',
          // "7.00", not the "7" of a bare decimal.
          message: 'amount exceeds the remaining hold of 7.00 USDC.',
          param: 'amount',
          requestId: expect.stringMatching(/^req_/) as unknown,
        },
      ]);
    }
    expect((await call('GET', `/v1/transactions/${held.body.id}`)).body).toEqual(
      before.transaction,
    );
    expect((await call('GET', `/v1/vaults/${vaultId}`)).body.balance).toEqual(before.balance);
  });

  it('names the largest amount as the API writes amounts', async () => {
    const vaults = async () => (await call('GET', '/v1/vaults?limit=100')).body.data;
    const before = await vaults();
    const refused = await call('POST', '/v1/vaults', {
      name: 'Huge',
      currency: 'USDC',
      network: 'solana',
      initialDeposit: '1000000000000.01',
    });
    expect([refused.status, refused.body.error?.code, refused.body.error?.message]).toEqual([
      400,
      'invalid_amount',
      'initialDeposit must not exceed 1000000000000.00.',
    ]);
    expect(await vaults()).toEqual(before);
  });
});
