import { describe, expect, it } from 'vitest';
import { checkInvariants } from '../../src/store/invariants.js';
import { MERCHANT, networkId } from '../support/authorize.js';
import {
  authorizationBody,
  fleetAccount,
  fundedVaultCard,
  useFleet,
  type FleetUnderTest,
} from '../support/fleet.js';

/**
 * A card transaction's whole life across two real API processes (issue 34's proof): every
 * lifecycle message sent to both processes at once (the network retrying at another node) is
 * recorded once and answered the same by both, and the ledger ends exact.
 */
const ROUNDS = 8;

type Outcome = Awaited<ReturnType<FleetUnderTest['robin']['sendTo']>>;

/** What both processes answered, with the time each took left out. */
function answered(outcome: Outcome): { status: number; body: Record<string, unknown> } {
  if (!outcome.answered) throw new Error(`not answered: ${outcome.error}`);
  const body = { ...outcome.body };
  delete body['decidedInMicros'];
  return { status: outcome.status, body };
}

describe('lifecycle messages at two API processes at once', () => {
  const started = useFleet({ apis: 2, workers: 0, chain: false });

  it('records each message once and answers it the same from both', async () => {
    const {
      engines: { store },
      robin,
    } = started();
    const account = await fleetAccount(store);
    const { vaultId, cardId } = await fundedVaultCard(store, account.scope, '1000');
    const both = async (path: string, body: Record<string, unknown>) => {
      const outcomes = await Promise.all(
        [0, 1].map((index) => robin.sendTo(index, account.networkKey, 'POST', path, body)),
      );
      const [first, second] = outcomes.map(answered);
      expect(second).toEqual(first);
      return first as { status: number; body: Record<string, unknown> };
    };
    for (let round = 0; round < ROUNDS; round++) {
      const networkTransactionId = networkId();
      const held = await both('/v1/authorizations', {
        ...authorizationBody(cardId, networkTransactionId, '20'),
      });
      expect(held.body['approved']).toBe(true);
      const id = String(held.body['id']);
      const raised = await both(`/v1/authorizations/${id}/increment`, {
        amount: '5',
        networkTransactionId: networkId(),
      });
      expect([raised.status, raised.body['approved']]).toEqual([200, true]);
      const clearing = { cardId, currency: 'USDC', merchant: MERCHANT };
      const forced = await both('/v1/captures', {
        ...clearing,
        amount: '3',
        networkTransactionId: networkId(),
      });
      expect(forced.status).toBe(201);
      // The network declines in stand-in what spendgate approved: the hold is released once.
      const advised = await both('/v1/authorizations/advice', {
        ...authorizationBody(cardId, networkTransactionId, '20'),
        approved: false,
        reason: 'stand_in',
      });
      expect([advised.status, advised.body['approved']]).toEqual([200, false]);
      const refunded = await both('/v1/refunds', {
        ...clearing,
        amount: '1',
        networkTransactionId: networkId(),
        transactionId: String(forced.body['id']),
      });
      expect(refunded.status).toBe(201);
    }
    const { rows } = await store.client.query<{ type: string; count: number }>(
      `SELECT type, count(*)::int AS count FROM transactions WHERE vault_id = $1
       GROUP BY type ORDER BY type`,
      [vaultId],
    );
    expect(rows).toEqual([
      { type: 'card_authorization', count: ROUNDS },
      { type: 'deposit', count: 1 },
      { type: 'force_capture', count: ROUNDS },
      { type: 'refund', count: ROUNDS },
    ]);
    const vault = await store.getVault(account.scope, vaultId);
    // Each round: 3.00 forced, 1.00 refunded; every hold released by the advice.
    expect([vault.ledger.toFixed(2), vault.pending.toFixed(2)]).toEqual([
      (1000 - ROUNDS * 2).toFixed(2),
      '0.00',
    ]);
    expect(await checkInvariants(store.client)).toEqual([]);
  });
});
