import { describe, expect, it } from 'vitest';
import { checkInvariants } from '../../src/store/invariants.js';
import { fundedCard, MERCHANT, networkId } from '../support/authorize.js';
import { useTestService } from '../support/http.js';

/**
 * The postings side of a card transaction's life over real HTTP on PostgreSQL (contract v1.2,
 * section 16): captures that always post (above the hold, final: false, late), force
 * captures, refunds, overdrawn vaults and their events, refusals that change nothing,
 * idempotent repeats, and captures racing on one hold. Invariants are checked after each step.
 */
interface Json {
  id: string;
  type: string;
  status: string;
  approved: boolean;
  declineCode: string | null;
  amount: string;
  capturedAmount: string;
  heldAmount: string;
  refundedAmount: string;
  failureReason: string | null;
  billing: { amount: string; currency: string };
  policyWouldDecline: { declineCode: string; declineReason: { rule: string } | null } | null;
  originalTransactionId: string | null;
  expiresAt: string | null;
  advice: boolean;
  partial: boolean;
  overdrawnAt: string | null;
  balance: { available: string; pending: string; ledger: string };
  error?: { code: string; param?: string };
}

describe('transaction lifecycle', () => {
  const harness = useTestService<Json>();
  const { call } = harness;
  const authorize = (cardId: string, amount: string) =>
    call('POST', '/v1/authorizations', {
      cardId,
      amount,
      currency: 'USDC',
      merchant: MERCHANT,
      networkTransactionId: networkId(),
    });
  const capture = (id: string, body: object | undefined) =>
    call('POST', `/v1/authorizations/${id}/capture`, body);
  const clearing = (path: '/v1/captures' | '/v1/refunds', cardId: string, extra: object) =>
    call('POST', path, {
      cardId,
      currency: 'USDC',
      merchant: MERCHANT,
      networkTransactionId: networkId(),
      ...extra,
    });
  const vaultOf = async (vaultId: string) => (await call('GET', `/v1/vaults/${vaultId}`)).body;
  const balanceOf = async (vaultId: string) => (await vaultOf(vaultId)).balance;
  const eventsFor = async (id: string) => {
    const { rows } = await harness.service.store.client.query<{ type: string }>(
      `SELECT type FROM outbox_events WHERE payload->'data'->'object'->>'id' = $1 ORDER BY id`,
      [id],
    );
    return rows.map((row) => row.type);
  };
  const timelineOf = async (id: string) => {
    const { rows } = await harness.service.store.client.query<{ kind: string; hold: string }>(
      `SELECT kind, hold_after::text AS hold FROM transaction_messages WHERE transaction_id = $1 ORDER BY id`,
      [id],
    );
    return rows.map((row) => `${row.kind} ${Number(row.hold)}`);
  };
  const expectInvariants = async () => {
    expect(await checkInvariants(harness.service.store.client)).toEqual([]);
  };

  it('posts a capture above the hold (a tip), releasing nothing more, as spend', async () => {
    const { vaultId, cardId } = await fundedCard(harness, '100');
    const held = await authorize(cardId, '50');
    const captured = await capture(held.body.id, { amount: '60' });
    expect(captured.status).toBe(200);
    expect(captured.body).toMatchObject({
      status: 'completed',
      amount: '50.00',
      capturedAmount: '60.00',
      heldAmount: '0.00',
      refundedAmount: '0.00',
      billing: { amount: '50.00', currency: 'USDC' },
    });
    expect(await balanceOf(vaultId)).toEqual({
      available: '40.00',
      pending: '0.00',
      ledger: '40.00',
    });
    expect(await eventsFor(held.body.id)).toEqual([
      'authorization.approved',
      'transaction.captured',
      'transaction.completed',
    ]);
    expect(await timelineOf(held.body.id)).toEqual(['capture 0']);
    await expectInvariants();
  });

  it('keeps the hold open for captures with final: false, and completes on the final one', async () => {
    const { vaultId, cardId } = await fundedCard(harness, '100');
    const held = await authorize(cardId, '100');
    const first = await capture(held.body.id, { amount: '30', final: false });
    expect(first.body).toMatchObject({
      status: 'pending',
      capturedAmount: '30.00',
      heldAmount: '70.00',
    });
    expect(await balanceOf(vaultId)).toEqual({
      available: '0.00',
      pending: '70.00',
      ledger: '70.00',
    });
    await expectInvariants();
    const second = await capture(held.body.id, { amount: '50', final: false });
    expect(second.body).toMatchObject({
      status: 'pending',
      capturedAmount: '80.00',
      heldAmount: '20.00',
    });
    const last = await capture(held.body.id, { amount: '5' });
    expect(last.body).toMatchObject({
      status: 'completed',
      capturedAmount: '85.00',
      heldAmount: '0.00',
    });
    expect(await balanceOf(vaultId)).toEqual({
      available: '15.00',
      pending: '0.00',
      ledger: '15.00',
    });
    expect(await eventsFor(held.body.id)).toEqual([
      'authorization.approved',
      'transaction.captured',
      'transaction.captured',
      'transaction.captured',
      'transaction.completed',
    ]);
    expect(await timelineOf(held.body.id)).toEqual(['capture 70', 'capture 20', 'capture 0']);
    await expectInvariants();
  });

  it('completes (not fails) an authorization partly captured whose rest is reversed', async () => {
    const { vaultId, cardId } = await fundedCard(harness, '100');
    const held = await authorize(cardId, '40');
    await capture(held.body.id, { amount: '10', final: false });
    const reversed = await call('POST', `/v1/authorizations/${held.body.id}/reverse`);
    expect(reversed.body).toMatchObject({
      status: 'completed',
      capturedAmount: '10.00',
      failureReason: null,
    });
    expect(await balanceOf(vaultId)).toEqual({
      available: '90.00',
      pending: '0.00',
      ledger: '90.00',
    });
    expect(await timelineOf(held.body.id)).toEqual(['capture 30', 'reversal 0']);
    await expectInvariants();
  });

  it('posts a late capture of a reversed authorization, and keeps reverse refusing', async () => {
    const { vaultId, cardId } = await fundedCard(harness, '100');
    const held = await authorize(cardId, '20');
    await call('POST', `/v1/authorizations/${held.body.id}/reverse`);
    const again = await call('POST', `/v1/authorizations/${held.body.id}/reverse`);
    expect([again.status, again.body.error?.code]).toEqual([409, 'transaction_not_pending']);
    const noAmount = await capture(held.body.id, undefined);
    expect([noAmount.status, noAmount.body.error?.code]).toEqual([400, 'invalid_amount']);
    const late = await capture(held.body.id, { amount: '20' });
    expect(late.status).toBe(200);
    expect(late.body).toMatchObject({
      status: 'completed',
      capturedAmount: '20.00',
      failureReason: null,
    });
    expect(await balanceOf(vaultId)).toEqual({
      available: '80.00',
      pending: '0.00',
      ledger: '80.00',
    });
    expect(await eventsFor(held.body.id)).toEqual([
      'authorization.approved',
      'transaction.failed',
      'transaction.captured',
      'transaction.completed',
    ]);
    await expectInvariants();
  });

  it('overdraws a vault with a mandated capture, declines everything on it, restores on a deposit', async () => {
    const { vaultId, cardId } = await fundedCard(harness, '100');
    const held = await authorize(cardId, '90');
    await capture(held.body.id, { amount: '150' });
    const overdrawn = await vaultOf(vaultId);
    expect(overdrawn.balance).toEqual({ available: '-50.00', pending: '0.00', ledger: '-50.00' });
    expect(overdrawn.overdrawnAt).not.toBeNull();
    expect(await eventsFor(vaultId)).toContain('vault.overdrawn');
    await expectInvariants();
    const declined = await authorize(cardId, '0.01');
    expect([declined.body.approved, declined.body.declineCode]).toEqual([
      false,
      'insufficient_balance',
    ]);
    await call('POST', '/v1/simulate/deposits', { vaultId, amount: '20' });
    expect((await vaultOf(vaultId)).overdrawnAt).not.toBeNull();
    await call('POST', '/v1/simulate/deposits', { vaultId, amount: '30' });
    const restored = await vaultOf(vaultId);
    expect([restored.balance.available, restored.overdrawnAt]).toEqual(['0.00', null]);
    const types = await eventsFor(vaultId);
    expect(
      types.filter((type) => type.startsWith('vault.o') || type.startsWith('vault.r')),
    ).toEqual(['vault.overdrawn', 'vault.restored']);
    await expectInvariants();
  });

  it('approves nothing on an overdrawn vault, an account verification of 0.00 included', async () => {
    const { vaultId, cardId } = await fundedCard(harness, '10');
    await clearing('/v1/captures', cardId, { amount: '11' });
    expect((await vaultOf(vaultId)).overdrawnAt).not.toBeNull();
    for (const amount of ['0.000001', '1', '10', '0.00']) {
      const answer = await authorize(cardId, amount);
      expect([answer.status, answer.body.approved, answer.body.declineCode]).toEqual([
        200,
        false,
        'insufficient_balance',
      ]);
    }
    // The balance history shows the overdraft as it stands: today's row, negative.
    const history = (await call('GET', `/v1/vaults/${vaultId}/balance/history`))
      .body as unknown as {
      data: { available: string; ledger: string; final: boolean }[];
    };
    expect(history.data[0]).toMatchObject({ available: '-1.00', ledger: '-1.00', final: false });
    await expectInvariants();
  });

  it('records a force capture whatever the card, balance and policy say, once per network id', async () => {
    const { vaultId, cardId } = await fundedCard(harness, '10');
    expect((await call('POST', `/v1/cards/${cardId}/freeze`)).status).toBe(200);
    const ntx = networkId();
    const forced = await clearing('/v1/captures', cardId, {
      amount: '25',
      networkTransactionId: ntx,
    });
    expect(forced.status).toBe(201);
    expect(forced.body).toMatchObject({
      type: 'force_capture',
      status: 'completed',
      amount: '25.00',
      capturedAmount: '25.00',
      heldAmount: '0.00',
      policyWouldDecline: { declineCode: 'card_declined', declineReason: { rule: 'card_frozen' } },
      billing: { amount: '25.00', currency: 'USDC' },
    });
    expect(await balanceOf(vaultId)).toEqual({
      available: '-15.00',
      pending: '0.00',
      ledger: '-15.00',
    });
    const repeat = await clearing('/v1/captures', cardId, {
      amount: '25',
      networkTransactionId: ntx,
    });
    expect([repeat.status, repeat.body.id]).toEqual([201, forced.body.id]);
    expect(repeat.headers.get('idempotent-replayed')).toBe('true');
    expect(await balanceOf(vaultId)).toEqual({
      available: '-15.00',
      pending: '0.00',
      ledger: '-15.00',
    });
    expect(await eventsFor(forced.body.id)).toEqual([
      'transaction.captured',
      'transaction.completed',
    ]);
    expect(await timelineOf(forced.body.id)).toEqual(['capture 0']);
    await expectInvariants();
  });

  it('keeps a clearing id apart from the authorization id it reuses, per kind of message', async () => {
    const { cardId } = await fundedCard(harness, '100');
    const ntx = networkId();
    const held = await call('POST', '/v1/authorizations', {
      cardId,
      amount: '10',
      currency: 'USDC',
      merchant: MERCHANT,
      networkTransactionId: ntx,
    });
    const forced = await clearing('/v1/captures', cardId, {
      amount: '3',
      networkTransactionId: ntx,
    });
    const refunded = await clearing('/v1/refunds', cardId, {
      amount: '2',
      networkTransactionId: ntx,
    });
    expect([held.status, forced.status, refunded.status]).toEqual([200, 201, 201]);
    expect(new Set([held.body.id, forced.body.id, refunded.body.id]).size).toBe(3);
    const repeated = await call('POST', '/v1/authorizations', {
      cardId,
      amount: '10',
      currency: 'USDC',
      merchant: MERCHANT,
      networkTransactionId: ntx,
    });
    expect(repeated.body.id).toBe(held.body.id);
    await expectInvariants();
  });

  it('credits refunds, linked (refundedAmount) or not, and restores an overdrawn vault', async () => {
    const { vaultId, cardId } = await fundedCard(harness, '50');
    const held = await authorize(cardId, '40');
    await capture(held.body.id, { amount: '60' });
    expect((await vaultOf(vaultId)).overdrawnAt).not.toBeNull();
    const linked = await clearing('/v1/refunds', cardId, {
      amount: '15',
      transactionId: held.body.id,
    });
    expect(linked.status).toBe(201);
    expect(linked.body).toMatchObject({
      type: 'refund',
      status: 'completed',
      amount: '15.00',
      originalTransactionId: held.body.id,
      policyWouldDecline: null,
    });
    const restored = await vaultOf(vaultId);
    expect([restored.balance.available, restored.overdrawnAt]).toEqual(['5.00', null]);
    const original = await call('GET', `/v1/transactions/${held.body.id}`);
    expect([original.body.refundedAmount, original.body.capturedAmount]).toEqual([
      '15.00',
      '60.00',
    ]);
    // Above what was captured: recorded, never refused (the network moved the money).
    const above = await clearing('/v1/refunds', cardId, {
      amount: '50',
      transactionId: held.body.id,
    });
    expect(above.status).toBe(201);
    const unlinked = await clearing('/v1/refunds', cardId, { amount: '1' });
    expect(unlinked.body.originalTransactionId).toBeNull();
    expect(await balanceOf(vaultId)).toEqual({
      available: '56.00',
      pending: '0.00',
      ledger: '56.00',
    });
    expect(await eventsFor(linked.body.id)).toEqual(['transaction.refunded']);
    expect(await timelineOf(held.body.id)).toEqual(['capture 0', 'refund 0', 'refund 0']);
    expect(await eventsFor(vaultId)).toContain('vault.restored');
    await expectInvariants();
  });

  it('refuses malformed, unknown and mismatched messages with the error body, changing nothing', async () => {
    const { vaultId, cardId } = await fundedCard(harness, '100');
    const other = await fundedCard(harness, '100');
    const held = await authorize(cardId, '10');
    const before = await balanceOf(vaultId);
    const refusals: [Promise<{ status: number; body: Json }>, number, string][] = [
      [capture('txn_unknown', { amount: '1' }), 404, 'transaction_not_found'],
      [capture(held.body.id, { amount: 'ten' }), 400, 'invalid_amount'],
      [capture(held.body.id, { amount: '0' }), 400, 'invalid_amount'],
      [capture(held.body.id, { amount: '1.0000001' }), 400, 'invalid_amount'],
      [capture(held.body.id, { amount: '1', final: 'yes' }), 400, 'parameter_invalid'],
      [clearing('/v1/captures', 'card_unknown', { amount: '1' }), 404, 'card_not_found'],
      [
        clearing('/v1/captures', cardId, { amount: '1', currency: 'SOL' }),
        400,
        'currency_mismatch',
      ],
      [clearing('/v1/captures', cardId, { amount: '-1' }), 400, 'invalid_amount'],
      [
        clearing('/v1/refunds', cardId, { amount: '1', transactionId: 'txn_x' }),
        404,
        'transaction_not_found',
      ],
    ];
    for (const [answer, status, code] of refusals) {
      const { status: got, body } = await answer;
      expect([got, body.error?.code]).toEqual([status, code]);
    }
    const foreign = await authorize(other.cardId, '5');
    const wrongCard = await clearing('/v1/refunds', cardId, {
      amount: '1',
      transactionId: foreign.body.id,
    });
    expect([wrongCard.status, wrongCard.body.error?.param]).toEqual([400, 'transactionId']);
    expect(await balanceOf(vaultId)).toEqual(before);
    expect(await timelineOf(held.body.id)).toEqual([]);
    await expectInvariants();
  });

  it('leaves the ledger exact when captures race on one hold', async () => {
    const { vaultId, cardId } = await fundedCard(harness, '100');
    const held = await authorize(cardId, '50');
    const answers = await Promise.all(
      Array.from({ length: 12 }, (_, index) =>
        capture(held.body.id, { amount: '7', final: index === 11 ? true : false }),
      ),
    );
    expect(answers.map((answer) => answer.status)).toEqual(Array(12).fill(200));
    const after = await call('GET', `/v1/transactions/${held.body.id}`);
    expect(after.body.capturedAmount).toBe('84.00');
    const balance = await balanceOf(vaultId);
    expect(balance.ledger).toBe('16.00');
    // Whatever the order: the final one releases what is left, and every other takes its 7.00.
    expect(balance.pending).toBe('0.00');
    await expectInvariants();
  });
});
