import { Decimal } from 'decimal.js';
import { describe, expect, it } from 'vitest';
import { checkInvariants } from '../../src/store/invariants.js';
import { fundedCard, MERCHANT, networkId } from '../support/authorize.js';
import { useTestService } from '../support/http.js';

/**
 * Lifecycle messages racing on one vault and on one hold, over real HTTP on PostgreSQL
 * (issue 34's concurrency proof): the vault's lock serializes them, so the ledger ends exact
 * whatever the order, no decision of spendgate's takes available below 0, and the postings
 * the network mandates are all recorded.
 */
interface Json {
  id: string;
  approved: boolean;
  declineCode: string | null;
  status: string;
  capturedAmount: string;
  heldAmount: string;
  balance: { available: string; pending: string; ledger: string };
  overdrawnAt: string | null;
  error?: { code: string };
}

describe('lifecycle races', () => {
  // The budget at its bound: 520 messages on one vault's lock at once answer late on a loaded
  // machine, and a stand-in decline there would say nothing of what this test is about.
  const harness = useTestService<Json>({
    server: { authorize: { budgetMs: 10_000, standIn: 'decline' } },
  });
  const { call } = harness;
  const authorize = (cardId: string, amount: string) =>
    call('POST', '/v1/authorizations', {
      cardId,
      amount,
      currency: 'USDC',
      merchant: MERCHANT,
      networkTransactionId: networkId(),
    });

  it('keeps 500 authorizations racing 20 force captures on one vault exact', async () => {
    const { vaultId, cardId } = await fundedCard(harness, '1000');
    const forceCapture = () =>
      call('POST', '/v1/captures', {
        cardId,
        amount: '25',
        currency: 'USDC',
        merchant: MERCHANT,
        networkTransactionId: networkId(),
      });
    // Interleaved: a force capture after every 25 authorizations.
    const sent = Array.from({ length: 520 }, (_, index) =>
      index % 26 === 25 ? forceCapture() : authorize(cardId, '3'),
    );
    const answers = await Promise.all(sent);
    const forced = answers.filter((_, index) => index % 26 === 25);
    const decisions = answers.filter((_, index) => index % 26 !== 25);
    expect(forced.map((answer) => answer.status)).toEqual(Array(20).fill(201));
    expect(decisions.map((answer) => answer.status)).toEqual(Array(500).fill(200));
    const approved = decisions.filter((answer) => answer.body.approved);
    const declined = decisions.filter((answer) => !answer.body.approved);
    expect(new Set(declined.map((answer) => answer.body.declineCode))).toEqual(
      new Set(declined.length === 0 ? [] : ['insufficient_balance']),
    );
    const held = new Decimal(3).times(approved.length);
    // Never more than the deposit was approved (only force captures take money away).
    expect(held.lte(1000)).toBe(true);
    const balance = (await call('GET', `/v1/vaults/${vaultId}`)).body.balance;
    // Every force capture posted, whatever the balance: 1000 - 20 x 25.
    expect(balance.ledger).toBe('500.00');
    expect(new Decimal(balance.pending).equals(held)).toBe(true);
    const available = new Decimal(balance.available);
    expect(available.equals(new Decimal(500).minus(held))).toBe(true);
    // Demand (1,500) exceeded the deposit: the approvals stopped only once 3.00 no longer fit,
    // and a vault overdrawn by the force captures is overdrawn by no more than they took.
    expect(available.lt(3)).toBe(true);
    expect(available.gte(-500)).toBe(true);
    expect(await checkInvariants(harness.service.store.client)).toEqual([]);
    // Overdrawn or not, the next authorization is decided on what is available now.
    const next = await authorize(cardId, '0.01');
    expect(next.body.approved).toBe(available.gte('0.01'));
  });

  it('serializes increments and captures racing on one hold', async () => {
    const { vaultId, cardId } = await fundedCard(harness, '300');
    const held = await authorize(cardId, '100');
    expect(held.body.approved).toBe(true);
    const id = held.body.id;
    const increments = Array.from({ length: 10 }, () =>
      call('POST', `/v1/authorizations/${id}/increment`, {
        amount: '10',
        networkTransactionId: networkId(),
      }),
    );
    const captures = Array.from({ length: 5 }, () =>
      call('POST', `/v1/authorizations/${id}/capture`, { amount: '20', final: false }),
    );
    const answers = await Promise.all([...increments, ...captures]);
    expect(answers.map((answer) => answer.status)).toEqual(Array(15).fill(200));
    // Available never fell below 100 in any order: every increment is approved.
    expect(answers.slice(0, 10).every((answer) => answer.body.approved)).toBe(true);
    const after = (await call('GET', `/v1/transactions/${id}`)).body;
    expect(after).toMatchObject({
      status: 'pending',
      capturedAmount: '100.00',
      heldAmount: '100.00',
    });
    expect((await call('GET', `/v1/vaults/${vaultId}`)).body.balance).toEqual({
      available: '100.00',
      pending: '100.00',
      ledger: '200.00',
    });
    const timeline = (await call('GET', `/v1/transactions/${id}/timeline`)).body as unknown as {
      messages: { kind: string }[];
    };
    expect(timeline.messages.map((message) => message.kind).sort()).toEqual(
      [
        'authorization',
        ...Array<string>(10).fill('increment'),
        ...Array<string>(5).fill('capture'),
      ].sort(),
    );
    expect(await checkInvariants(harness.service.store.client)).toEqual([]);
  });
});
