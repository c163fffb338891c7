import { expect } from 'vitest';
import type { ServiceHarness } from './http.js';

/**
 * What the processor adapters' tests (Stripe, Lithic, Marqeta, the replay) share: a connection
 * with a funded vault and a card tied to the processor's card, a digest of every row that holds
 * money or its history (to prove a refused message changed nothing), a vault's ledger as the
 * API shows it, and the whole card life sent to spendgate's own routes, which each adapter's
 * life must end equal to (contract v1.2, section 17).
 */

/** The fields of the answers these helpers read. */
export interface ProcessorTestJson {
  id: string;
  approved?: boolean;
  balance?: { available: string; pending: string; ledger: string };
  data?: Record<string, unknown>[];
}

export const LIFE_MERCHANT = { name: 'Hotel Congress', mcc: '7011', country: 'US', city: 'Austin' };

export interface ProcessorSetUp {
  readonly connectionId: string;
  readonly vaultId: string;
  readonly cardId: string;
}

export function processorTestKit<Json extends ProcessorTestJson>(
  harness: ServiceHarness<Json>,
  connection: Record<string, unknown>,
) {
  const { call } = harness;

  /** A connection, a vault with `deposit`, and a card tied to `processorCardId` (or none). */
  const setUp = async (
    deposit: string,
    processorCardId: string | null,
  ): Promise<ProcessorSetUp> => {
    const created = await call('POST', '/v1/processors', { mode: 'test', ...connection });
    const vault = await call('POST', '/v1/vaults', {
      name: 'P',
      currency: 'USDC',
      network: 'solana',
      initialDeposit: deposit,
    });
    const card = await call('POST', '/v1/cards', {
      vaultId: vault.body.id,
      cardholderName: 'Ada',
      ...(processorCardId === null
        ? {}
        : { processorCard: { connectionId: created.body.id, cardId: processorCardId } }),
    });
    expect([created.status, vault.status, card.status]).toEqual([201, 201, 201]);
    return { connectionId: created.body.id, vaultId: vault.body.id, cardId: card.body.id };
  };

  /** Every row that holds money or its history, as one digest. */
  const digest = async (): Promise<string> => {
    const { rows } = await harness.service.store.client.query<{ d: string }>(
      `SELECT md5(string_agg(t, '|' ORDER BY t)) AS d FROM (
         SELECT v::text AS t FROM vaults v UNION ALL SELECT x::text FROM transactions x
         UNION ALL SELECT e::text FROM ledger_entries e UNION ALL SELECT o::text FROM outbox_events o
         UNION ALL SELECT m::text FROM transaction_messages m
         UNION ALL SELECT i::text FROM idempotency_keys i) rows`,
    );
    return rows[0]?.d ?? '';
  };

  const balanceOf = async (vaultId: string) =>
    (await call('GET', `/v1/vaults/${vaultId}`)).body.balance;

  /** The vault's balance and its transactions, by the fields a ledger is compared on. */
  const ledgerOf = async (vaultId: string) => {
    const listed = await call('GET', `/v1/transactions?vaultId=${vaultId}&limit=100`);
    const transactions = (listed.body.data ?? []).map((t) => ({
      type: t['type'],
      status: t['status'],
      amount: t['amount'],
      capturedAmount: t['capturedAmount'],
      heldAmount: t['heldAmount'],
      refundedAmount: t['refundedAmount'],
      advice: t['advice'],
      billing: t['billing'],
    }));
    return { balance: await balanceOf(vaultId), transactions };
  };

  /**
   * The hotel stay every adapter's test replays, sent to spendgate's own routes: 100.00 held,
   * 50.00 more, 170.00 captured (above the hold), 20.00 refunded, then 30.00 approved by the
   * network while we did not answer (an advice, `adviceReason`).
   */
  const lifeThroughRoutes = async (cardId: string, adviceReason: string): Promise<void> => {
    const held = await call('POST', '/v1/authorizations', {
      cardId,
      amount: '100.00',
      currency: 'USD',
      merchant: LIFE_MERCHANT,
      networkTransactionId: 'ntx_route_life',
    });
    expect(held.body.approved).toBe(true);
    const increment = await call('POST', `/v1/authorizations/${held.body.id}/increment`, {
      amount: '50.00',
      networkTransactionId: 'inc_route_life',
    });
    expect(increment.body.approved).toBe(true);
    const capture = await call('POST', `/v1/authorizations/${held.body.id}/capture`, {
      amount: '170.00',
      final: true,
    });
    const refund = await call('POST', '/v1/refunds', {
      cardId,
      amount: '20.00',
      currency: 'USD',
      merchant: LIFE_MERCHANT,
      networkTransactionId: 'ref_route_life',
      transactionId: held.body.id,
    });
    const advice = await call('POST', '/v1/authorizations/advice', {
      cardId,
      amount: '30.00',
      currency: 'USD',
      merchant: LIFE_MERCHANT,
      networkTransactionId: 'ntx_route_outage',
      approved: true,
      reason: adviceReason,
    });
    expect([capture.status, refund.status, advice.status]).toEqual([200, 201, 200]);
  };

  /** The adapter's life ended where the routes' did: 20.00 left, 30.00 held. */
  const expectSameLedger = async (viaAdapter: string, viaRoutes: string): Promise<void> => {
    const adapterLedger = await ledgerOf(viaAdapter);
    expect(adapterLedger.balance).toEqual({
      available: '20.00',
      pending: '30.00',
      ledger: '50.00',
    });
    expect(adapterLedger.transactions.length).toBe(4);
    expect(adapterLedger).toEqual(await ledgerOf(viaRoutes));
  };

  return { setUp, digest, balanceOf, ledgerOf, lifeThroughRoutes, expectSameLedger };
}
