import { describe, expect, it } from 'vitest';
import { testDatabase } from '../support/databases.js';
import {
  merchant,
  networkTransactionId,
  openTestStore,
  usdc,
  useTestStore,
} from '../support/store.js';

/**
 * One callback, one answer, across processes (issue 37, item 2): the same networkTransactionId
 * sent to two stores at once (each with its own batcher and known state, as two API processes
 * have) is recorded once, and both answers are that record, declines included. A decline
 * takes no vault lock, so two first decisions race to the unique index; the loser, alone in
 * its batch, must run again and answer the winner's decision, never a stand-in of its own.
 */
describe('a repeated callback across two stores on one database', () => {
  const database = testDatabase('pg', 16);
  const t = useTestStore(database);

  it.each([
    ['declines', '0'],
    ['approvals', '1000'],
  ])('answers the recorded decision to both, for %s', async (_kind, funded) => {
    const other = await openTestStore(database);
    const vault = await t.vault(t.owner, funded);
    const card = await t.card(t.owner, vault.id);
    const rounds = 20;
    for (let round = 0; round < rounds; round++) {
      const request = {
        cardId: card.id,
        amount: usdc('10'),
        currency: 'USDC',
        merchant: merchant(),
        networkTransactionId: networkTransactionId(),
      };
      const outcomes = await Promise.all([
        t.store.authorize(t.owner, request),
        other.store.authorize(t.owner, request),
      ]);
      const ids = outcomes.map((outcome) => outcome.transaction?.id ?? null);
      expect(ids[0], `round ${String(round)}`).not.toBeNull();
      expect(ids[1], `round ${String(round)}`).toBe(ids[0]);
      expect(outcomes.map((outcome) => outcome.standIn)).toEqual([false, false]);
      expect(outcomes.filter((outcome) => outcome.replayed)).toHaveLength(1);
      expect(outcomes[0]?.decision).toEqual(outcomes[1]?.decision);
    }
    await t.expectInvariants();
  });
});
