import { describe, expect, it } from 'vitest';
import { checkInvariants } from '../../src/store/invariants.js';
import { fundedCard, MERCHANT, networkId } from '../support/authorize.js';
import { useTestService } from '../support/http.js';

/**
 * The deciding side of a card transaction's life over real HTTP on PostgreSQL (contract v1.2,
 * section 16): requests in the card's billing currency, merchant amounts, partial approval,
 * 0.00 account verifications, increments and advice, each idempotent, every refusal changing
 * nothing. The ledger's invariants are checked after each test's steps.
 */
interface Json {
  id: string;
  approved: boolean;
  status: string;
  declineCode: string | null;
  declineReason: { rule: string } | null;
  amount: string;
  currency: string;
  partial: boolean;
  requestedAmount: string | null;
  standIn: boolean;
  billing: { amount: string; currency: string };
  merchantAmount: { amount: string; currency: string } | null;
  expiresAt: string | null;
  advice: boolean;
  heldAmount: string;
  overdrawnAt: string | null;
  balance: { available: string; pending: string; ledger: string };
  error?: { code: string; param?: string };
}

describe('authorize, increment and advice in the whole life', () => {
  const harness = useTestService<Json>();
  const { call } = harness;
  const authorize = (cardId: string, amount: string, extra: object = {}) =>
    call('POST', '/v1/authorizations', {
      cardId,
      amount,
      currency: 'USDC',
      merchant: MERCHANT,
      networkTransactionId: networkId(),
      ...extra,
    });
  const balanceOf = async (vaultId: string) =>
    (await call('GET', `/v1/vaults/${vaultId}`)).body.balance;
  const transaction = async (id: string | null) =>
    (await call('GET', `/v1/transactions/${String(id)}`)).body;
  const eventsFor = async (id: string | null) => {
    const { rows } = await harness.service.store.client.query<{ type: string }>(
      `SELECT type FROM outbox_events WHERE payload->'data'->'object'->>'id' = $1 ORDER BY id`,
      [id],
    );
    return rows.map((row) => row.type);
  };
  const expectInvariants = async () => {
    expect(await checkInvariants(harness.service.store.client)).toEqual([]);
  };

  it('converts a request in the billing currency at par, and records what was billed and charged', async () => {
    const { vaultId, cardId } = await fundedCard(harness, '100');
    const answer = await authorize(cardId, '18.25', {
      currency: 'USD',
      merchantAmount: '2650',
      merchantCurrency: 'JPY',
    });
    expect(answer.body).toMatchObject({ approved: true, amount: '18.25', currency: 'USDC' });
    const recorded = await transaction(answer.body.id);
    expect(recorded).toMatchObject({
      billing: { amount: '18.25', currency: 'USD' },
      merchantAmount: { amount: '2650', currency: 'JPY' },
    });
    expect(await balanceOf(vaultId)).toMatchObject({ available: '81.75', pending: '18.25' });
    // A hotel's hold lives 31 days, a coffee's 7.
    const hotel = await authorize(cardId, '10', { merchant: { ...MERCHANT, mcc: '7011' } });
    const days = (held: Json & { createdAt?: string }) =>
      (Date.parse(String(held.expiresAt)) - Date.parse(String(held.createdAt))) / 86_400_000;
    expect(days(await transaction(hotel.body.id))).toBe(31);
    expect(days(recorded)).toBe(7);
    await expectInvariants();
  });

  it('declines a currency it cannot convert, and refuses what is malformed, changing nothing', async () => {
    const { vaultId, cardId } = await fundedCard(harness, '100');
    const euro = await authorize(cardId, '5', { currency: 'EUR' });
    expect([euro.body.approved, euro.body.declineReason?.rule]).toEqual([
      false,
      'currency_mismatch',
    ]);
    const sol = await fundedCard(harness, '10', { currency: 'SOL' });
    const unpriced = await authorize(sol.cardId, '5', { currency: 'USD' });
    expect([unpriced.body.declineCode, unpriced.body.declineReason?.rule]).toEqual([
      'card_declined',
      'rate_unavailable',
    ]);
    const refusals = [
      [{ currency: 'USD', amount: '1.001' }, 'invalid_amount', 'amount'],
      [{ currency: 'ZZZ' }, 'invalid_currency', 'currency'],
      [{ merchantAmount: '1' }, 'parameter_missing', 'merchantCurrency'],
      [{ merchantAmount: '1.5', merchantCurrency: 'JPY' }, 'invalid_amount', 'merchantAmount'],
      [{ partialApprovalAllowed: 'yes' }, 'parameter_invalid', 'partialApprovalAllowed'],
    ] as const;
    for (const [extra, code, param] of refusals) {
      const refused = await authorize(cardId, '1', extra);
      expect([refused.status, refused.body.error?.code, refused.body.error?.param]).toEqual([
        400,
        code,
        param,
      ]);
    }
    expect(await balanceOf(vaultId)).toMatchObject({ available: '100.00', pending: '0.00' });
    await expectInvariants();
  });

  it('approves in part what the balance allows, when the request allows it', async () => {
    const { vaultId, cardId } = await fundedCard(harness, '40.5');
    const fuel = { merchant: { ...MERCHANT, mcc: '5542' }, partialApprovalAllowed: true };
    const partial = await authorize(cardId, '75', { ...fuel, currency: 'USD' });
    expect(partial.body).toMatchObject({
      approved: true,
      partial: true,
      amount: '40.50',
      requestedAmount: '75.00',
    });
    expect(await balanceOf(vaultId)).toMatchObject({ available: '0.00', pending: '40.50' });
    const nothingLeft = await authorize(cardId, '10', fuel);
    expect([nothingLeft.body.approved, nothingLeft.body.declineCode]).toEqual([
      false,
      'insufficient_balance',
    ]);
    const whole = await authorize((await fundedCard(harness, '100')).cardId, '20', fuel);
    expect([whole.body.partial, whole.body.requestedAmount]).toEqual([false, null]);
    await expectInvariants();
  });

  it('answers a 0.00 verification approved with no hold, and declines it on an overdrawn vault', async () => {
    const { vaultId, cardId } = await fundedCard(harness, '5');
    const verified = await authorize(cardId, '0');
    expect([verified.status, verified.body.approved]).toEqual([200, true]);
    expect((await transaction(verified.body.id)).status).toBe('completed');
    expect(await balanceOf(vaultId)).toMatchObject({ available: '5.00', pending: '0.00' });
    const held = await authorize(cardId, '5');
    await call('POST', `/v1/authorizations/${held.body.id}/capture`, { amount: '7' });
    expect((await call('GET', `/v1/vaults/${vaultId}`)).body.overdrawnAt).not.toBeNull();
    for (const amount of ['0', '0.01']) {
      const declined = await authorize(cardId, amount);
      expect([declined.body.approved, declined.body.declineCode], amount).toEqual([
        false,
        'insufficient_balance',
      ]);
    }
    await expectInvariants();
  });

  it('raises a hold by an approved increment, keeps it on a declined one, and replays each', async () => {
    const { vaultId, cardId } = await fundedCard(harness, '100');
    const hotel = await authorize(cardId, '60', { merchant: { ...MERCHANT, mcc: '7011' } });
    const increment = (amount: string, networkTransactionId: string) =>
      call('POST', `/v1/authorizations/${hotel.body.id}/increment`, {
        amount,
        networkTransactionId,
      });
    const first = networkId();
    const raised = await increment('30', first);
    expect(raised.body).toMatchObject({ approved: true, amount: '90.00' });
    expect(await balanceOf(vaultId)).toMatchObject({ available: '10.00', pending: '90.00' });
    const again = await increment('30', first);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body.approved).toBe(true);
    const tooMuch = networkId();
    const declined = await increment('20', tooMuch);
    expect([declined.body.approved, declined.body.declineCode]).toEqual([
      false,
      'insufficient_balance',
    ]);
    expect((await increment('20', tooMuch)).body.declineCode).toBe('insufficient_balance');
    expect(await balanceOf(vaultId)).toMatchObject({ available: '10.00', pending: '90.00' });
    expect(await eventsFor(hotel.body.id)).toEqual([
      'authorization.approved',
      'authorization.incremented',
    ]);
    const unknown = await call('POST', '/v1/authorizations/txn_nope/increment', {
      amount: '1',
      networkTransactionId: networkId(),
    });
    expect([unknown.status, unknown.body.error?.code]).toEqual([404, 'transaction_not_found']);
    await call('POST', `/v1/authorizations/${hotel.body.id}/capture`, {});
    const late = await increment('1', networkId());
    expect([late.status, late.body.error?.code]).toEqual([409, 'transaction_not_pending']);
    await expectInvariants();
  });

  it('lets advice win: places a hold the network approved whatever the balance, releases one it declined', async () => {
    const { vaultId, cardId } = await fundedCard(harness, '10');
    const advise = (approved: boolean, networkTransactionId: string, amount = '25') =>
      call('POST', '/v1/authorizations/advice', {
        cardId,
        amount,
        currency: 'USD',
        merchant: MERCHANT,
        networkTransactionId,
        approved,
        reason: 'network stand-in',
      });
    // Approved in stand-in for more than the vault holds: the hold is placed, overdrawing it.
    const standIn = networkId();
    const placed = await advise(true, standIn);
    expect(placed.body).toMatchObject({ approved: true, amount: '25.00' });
    expect(await balanceOf(vaultId)).toMatchObject({ available: '-15.00', pending: '25.00' });
    expect((await call('GET', `/v1/vaults/${vaultId}`)).body.overdrawnAt).not.toBeNull();
    expect((await transaction(placed.body.id)).advice).toBe(true);
    const repeat = await advise(true, standIn);
    expect([repeat.headers.get('idempotent-replayed'), repeat.body.id]).toEqual([
      'true',
      placed.body.id,
    ]);
    // The network declines what spendgate approved: the hold is released, the record declined.
    const funded = await fundedCard(harness, '100');
    const adviseOn = (approved: boolean, networkTransactionId: string) =>
      call('POST', '/v1/authorizations/advice', {
        cardId: funded.cardId,
        amount: '30',
        currency: 'USDC',
        merchant: MERCHANT,
        networkTransactionId,
        approved,
        reason: 'issuer timeout',
      });
    const approvedByUs = networkId();
    const ours = await authorize(funded.cardId, '30', { networkTransactionId: approvedByUs });
    expect(ours.body.approved).toBe(true);
    const overruled = await adviseOn(false, approvedByUs);
    expect([
      overruled.body.id,
      overruled.body.approved,
      overruled.body.declineReason?.rule,
    ]).toEqual([ours.body.id, false, 'advice']);
    expect(await balanceOf(funded.vaultId)).toMatchObject({ available: '100.00', pending: '0.00' });
    // A decline advised after a capture: the captured money stands, the rest is released.
    const split = networkId();
    const shipped = await authorize(funded.cardId, '20', { networkTransactionId: split });
    await call('POST', `/v1/authorizations/${shipped.body.id}/capture`, {
      amount: '5',
      final: false,
    });
    await adviseOn(false, split);
    expect(await transaction(shipped.body.id)).toMatchObject({ status: 'completed', advice: true });
    expect(await balanceOf(funded.vaultId)).toMatchObject({ available: '95.00', pending: '0.00' });
    await expectInvariants();
    // And approves what spendgate declined: the hold is placed.
    const declinedByUs = networkId();
    const refused = await authorize(funded.cardId, '500', { networkTransactionId: declinedByUs });
    expect(refused.body.approved).toBe(false);
    const approvedAnyway = await adviseOn(true, declinedByUs);
    expect([approvedAnyway.body.id, approvedAnyway.body.approved]).toEqual([refused.body.id, true]);
    expect(await balanceOf(funded.vaultId)).toMatchObject({ available: '65.00', pending: '30.00' });
    expect(await eventsFor(refused.body.id)).toEqual([
      'authorization.declined',
      'authorization.advised',
    ]);
    // A repeated callback now answers the network's decision.
    const repeated = await authorize(funded.cardId, '500', { networkTransactionId: declinedByUs });
    expect([repeated.body.approved, repeated.headers.get('idempotent-replayed')]).toEqual([
      true,
      'true',
    ]);
    const unknownCard = await call('POST', '/v1/authorizations/advice', {
      cardId: 'card_nope',
      amount: '1',
      currency: 'USDC',
      merchant: MERCHANT,
      networkTransactionId: networkId(),
      approved: true,
      reason: 'x',
    });
    expect([unknownCard.status, unknownCard.body.error?.code]).toEqual([404, 'card_not_found']);
    await expectInvariants();
  });
});
