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
import type { Outcome } from '../support/round-robin.js';

/**
 * Three `spendgate serve --role api` processes on one PostgreSQL database, behind a round
 * robin, receive 1,500 authorizations of 1 at once on one vault funded with 600: no process
 * knows what the others approved, so only the database can keep the vault from being
 * overdrawn. Exactly 600 are approved and the balance ends at exactly 0. Each
 * networkTransactionId is answered once: 100 of them are also sent, at the same moment, to a
 * second process, and each pair gets one decision (the same answer, one transaction row).
 */
const BURST = 1_500;
const FUNDED = 600;
const REPEATED = 100;
const PROCESSES = 3;

describe('a fleet of three API processes under one burst', () => {
  const started = useFleet({ apis: PROCESSES, workers: 0, chain: false });

  it('approves exactly 600 of 1,500 concurrent authorizations, answers each id once, ends at 0', async () => {
    const {
      engines: { store },
      robin,
    } = started();
    const { scope, networkKey } = await fleetAccount(store);
    const { vaultId, cardId } = await fundedVaultCard(store, scope, String(FUNDED));
    const ids = Array.from({ length: BURST }, () => networkId());
    const authorize = (id: string, member?: number): Promise<Outcome> =>
      member === undefined
        ? robin.send(networkKey, 'POST', '/v1/authorizations', authorizationBody(cardId, id))
        : robin.sendTo(
            member,
            networkKey,
            'POST',
            '/v1/authorizations',
            authorizationBody(cardId, id),
          );
    // The repeated ids go to two different processes at once; the rest through the round robin.
    const pairs = ids
      .slice(0, REPEATED)
      .map((id, index) =>
        Promise.all([authorize(id, index % PROCESSES), authorize(id, (index + 1) % PROCESSES)]),
      );
    const singles = ids.slice(REPEATED).map((id) => authorize(id));
    const [pairOutcomes, singleOutcomes] = await Promise.all([
      Promise.all(pairs),
      Promise.all(singles),
    ]);
    const outcomes = [...pairOutcomes.flat(), ...singleOutcomes];

    // Every request answered with a decision, none past the budget, by every process.
    expect(outcomes.filter((outcome) => !answered200(outcome)).slice(0, 5)).toEqual([]);
    const decisions = outcomes.map(decisionOf);
    expect(decisions.filter((decision) => decision.standIn)).toEqual([]);
    for (let member = 0; member < PROCESSES; member++)
      expect(outcomes.some((outcome) => outcome.member === member)).toBe(true);

    // A pair's two answers are one decision.
    const differing = pairOutcomes
      .map(([first, second]) => [decisionOf(first), decisionOf(second)] as const)
      .filter(([first, second]) => first.id !== second.id || first.approved !== second.approved);
    expect(differing).toEqual([]);

    // One decision per id: 600 approvals, 900 declines for the balance.
    const byId = new Map<string, Decision>();
    for (const decision of decisions) byId.set(decision.id, decision);
    expect(byId.size).toBe(BURST);
    const approved = [...byId.values()].filter((decision) => decision.approved);
    expect(approved).toHaveLength(FUNDED);
    expect(
      [...byId.values()].filter(
        (decision) => !decision.approved && decision.declineCode !== 'insufficient_balance',
      ),
    ).toEqual([]);

    // One transaction row per networkTransactionId, the one each answer named.
    const rows = await authorizationRows(store, vaultId);
    expect(rows).toHaveLength(BURST);
    expect(new Set(rows.map((row) => row.network_transaction_id))).toEqual(new Set(ids));
    expect(rows.filter((row) => byId.get(row.id) === undefined)).toEqual([]);
    expect(rows.filter((row) => row.status === 'pending')).toHaveLength(FUNDED);

    const vault = await store.getVault(scope, vaultId);
    expect([vault.ledger.toFixed(), vault.pending.toFixed()]).toEqual([
      String(FUNDED),
      String(FUNDED),
    ]);
    expect(vault.ledger.minus(vault.pending).toFixed()).toBe('0');
    expect(await checkInvariants(store.client)).toEqual([]);
  });
});

interface Decision {
  readonly id: string;
  readonly approved: boolean;
  readonly standIn: boolean;
  readonly declineCode: string | null;
}

function answered200(outcome: Outcome): boolean {
  return outcome.answered && outcome.status === 200;
}

function decisionOf(outcome: Outcome): Decision {
  if (!outcome.answered || outcome.status !== 200)
    throw new Error(`not a decision: ${JSON.stringify(outcome)}`);
  const { id, approved, standIn, declineCode } = outcome.body;
  if (typeof id !== 'string' || typeof approved !== 'boolean' || typeof standIn !== 'boolean')
    throw new Error(`not a decision: ${JSON.stringify(outcome.body)}`);
  return {
    id,
    approved,
    standIn,
    declineCode: typeof declineCode === 'string' ? declineCode : null,
  };
}
