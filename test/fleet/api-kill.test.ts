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
import type { Child } from '../support/processes.js';
import type { Outcome } from '../support/round-robin.js';

/**
 * One of three API processes is SIGKILLed in the middle of a burst of 1,500 authorizations
 * on a vault funded with 600: its open connections and database sessions die with it. Every
 * authorization it had answered is recorded once, as it was answered; those it had not
 * answered are recorded once or not at all (a transaction cut by the kill rolls back whole);
 * the ledger's invariants hold. The card network then retries the unanswered ones on the
 * survivors, and each gets exactly one decision: the recorded one where there was one.
 */
const BURST = 1_500;
const FUNDED = 600;
/**
 * The burst's clients, each sending its next authorization once the last is answered (or
 * failed), as a network's connection pool does. Why not all 1,500 at once: then the whole
 * burst is on the wire before the first answer is counted, and a fast victim could answer
 * its whole share before the kill landed (CI saw it once). With a bounded pool, most of the
 * burst is still to be sent when the kill falls, and a third of that goes to the dead
 * process: the kill is mid-burst by construction.
 */
const CLIENTS = 48;
/** The kill falls once the victim itself has given this many answers: well inside the burst. */
const VICTIM_ANSWERED_AT_KILL = 10;

describe('an API process SIGKILLed mid-burst', () => {
  const started = useFleet({ apis: 3, workers: 0, chain: false });

  it('records each answered authorization once, each unanswered once or not at all; the ledger holds', async () => {
    const {
      engines: { store },
      fleet,
      robin,
    } = started();
    const { scope, networkKey } = await fleetAccount(store);
    const { vaultId, cardId } = await fundedVaultCard(store, scope, String(FUNDED));
    const victim = fleet.apis[0];
    if (victim === undefined) throw new Error('no API process');
    const ids = Array.from({ length: BURST }, () => networkId());

    let victimAnswers = 0;
    // Set from inside the requests' callbacks: a holder, which the compiler does not narrow.
    const kill = { exit: null as ReturnType<Child['stop']> | null };
    const outcomes: { id: string; outcome: Outcome }[] = [];
    let nextIndex = 0;
    const client = async (): Promise<void> => {
      for (let id = ids[nextIndex++]; id !== undefined; id = ids[nextIndex++]) {
        const outcome = await robin.send(
          networkKey,
          'POST',
          '/v1/authorizations',
          authorizationBody(cardId, id),
        );
        outcomes.push({ id, outcome });
        if (outcome.answered && outcome.member === 0 && ++victimAnswers === VICTIM_ANSWERED_AT_KILL)
          kill.exit = victim.child.stop('SIGKILL');
      }
    };
    await Promise.all(Array.from({ length: CLIENTS }, () => client()));
    expect(outcomes).toHaveLength(BURST);
    expect(await kill.exit).toMatchObject({ signal: 'SIGKILL' });

    // Only the killed process left requests unanswered, and it did leave some: mid-burst.
    const unanswered = outcomes.filter(({ outcome }) => !outcome.answered);
    expect(unanswered.filter(({ outcome }) => outcome.member !== 0)).toEqual([]);
    expect(
      unanswered.length,
      'the kill fell after the killed process had answered all',
    ).toBeGreaterThan(0);
    const answered = outcomes.filter(({ outcome }) => outcome.answered);
    expect(answered.filter(({ outcome }) => decisionOf(outcome) === null)).toEqual([]);
    expect(answered.some(({ outcome }) => outcome.member === 0)).toBe(true);

    // Answered: recorded once, as answered. Unanswered: once or not at all.
    const rows = await authorizationRows(store, vaultId);
    expectRecordedAsAnswered(rows, answered);
    expect(rows.length).toBeGreaterThanOrEqual(answered.length);
    expect(rows.length).toBeLessThanOrEqual(BURST);
    expect(await checkInvariants(store.client)).toEqual([]);
    const recordedBeforeRetry = new Map(rows.map((row) => [row.network_transaction_id, row]));

    // The network retries what went unanswered, through the survivors: one decision each.
    robin.takeOut(0);
    const retried = await Promise.all(
      unanswered.map(async ({ id }) => ({
        id,
        outcome: await robin.send(
          networkKey,
          'POST',
          '/v1/authorizations',
          authorizationBody(cardId, id),
        ),
      })),
    );
    expect(retried.filter(({ outcome }) => decisionOf(outcome) === null)).toEqual([]);
    const replayedWrong = retried.filter(({ id, outcome }) => {
      const before = recordedBeforeRetry.get(id);
      return before !== undefined && before.id !== decisionOf(outcome)?.id;
    });
    expect(replayedWrong).toEqual([]);

    const after = await authorizationRows(store, vaultId);
    expect(after).toHaveLength(BURST);
    expect(new Set(after.map((row) => row.network_transaction_id))).toEqual(new Set(ids));
    const approved = after.filter((row) => row.status === 'pending').length;
    const vault = await store.getVault(scope, vaultId);
    expect(approved).toBe(FUNDED);
    expect(vault.ledger.minus(vault.pending).toFixed()).toBe('0');
    expect(await checkInvariants(store.client)).toEqual([]);
  });
});

type Row = Awaited<ReturnType<typeof authorizationRows>>[number];

/** Each id has at most one row, and each answered id the one row its answer named. */
function expectRecordedAsAnswered(
  rows: readonly Row[],
  answered: readonly { id: string; outcome: Outcome }[],
): void {
  const rowsById = new Map<string, Row[]>();
  for (const row of rows)
    rowsById.set(row.network_transaction_id, [
      ...(rowsById.get(row.network_transaction_id) ?? []),
      row,
    ]);
  expect([...rowsById.values()].filter((each) => each.length !== 1)).toEqual([]);
  const misrecorded = answered.filter(({ id, outcome }) => {
    const decision = decisionOf(outcome);
    const row = rowsById.get(id)?.[0];
    return row?.id !== decision?.id || (row?.status === 'pending') !== decision?.approved;
  });
  expect(misrecorded).toEqual([]);
}

/** The decision an answer carries; null for anything but a 200 decision. */
function decisionOf(outcome: Outcome): { id: string; approved: boolean } | null {
  if (!outcome.answered || outcome.status !== 200) return null;
  const { id, approved, standIn } = outcome.body;
  if (typeof id !== 'string' || typeof approved !== 'boolean' || standIn !== false) return null;
  return { id, approved };
}
