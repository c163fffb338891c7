import { describe, expect, it } from 'vitest';
import { checkInvariants } from '../../src/store/invariants.js';
import { networkId } from '../support/authorize.js';
import {
  authorizationBody,
  authorizationRows,
  fleetAccount,
  fundedVaultCard,
  useFleet,
} from '../support/fleet.js';

/**
 * One callback, one answer, across real API processes (issue 37, item 2): the same
 * networkTransactionId sent to two processes at once gets the one recorded decision from
 * both, declines included (a decline takes no vault lock, so the two first decisions race to
 * the unique index, and the loser must answer the winner's record, not a stand-in).
 */
const ROUNDS = 20;

describe('a callback repeated at two API processes at once', () => {
  const started = useFleet({ apis: 2, workers: 0, chain: false });

  it.each([
    ['a vault that must decline', '0', false],
    ['a funded vault', '1000', true],
  ])('answers the one recorded decision from both, on %s', async (_title, funded, approves) => {
    const {
      engines: { store },
      robin,
    } = started();
    const { scope, networkKey } = await fleetAccount(store);
    const { vaultId, cardId } = await fundedVaultCard(store, scope, funded);
    for (let round = 0; round < ROUNDS; round++) {
      const body = authorizationBody(cardId, networkId());
      const answers = await Promise.all(
        [0, 1].map((index) => robin.sendTo(index, networkKey, 'POST', '/v1/authorizations', body)),
      );
      // The decision as recorded: everything but the time each process took to answer.
      const decisions = answers.map((answer) => {
        if (!answer.answered) return answer;
        const decision = { ...answer.body };
        delete decision['decidedInMicros'];
        return { httpStatus: answer.status, ...decision };
      });
      const [first, second] = decisions as Record<string, unknown>[];
      expect(first?.['httpStatus'], `round ${String(round)}`).toBe(200);
      expect(first?.['id'], `round ${String(round)}`).toMatch(/^txn_/);
      expect(second, `round ${String(round)}`).toEqual(first);
      expect(first?.['standIn']).toBe(false);
      expect(first?.['approved']).toBe(approves);
    }
    const rows = await authorizationRows(store, vaultId);
    expect(rows).toHaveLength(ROUNDS);
    expect(await checkInvariants(store.client)).toEqual([]);
  });
});
