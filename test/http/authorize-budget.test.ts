import { describe, expect, it } from 'vitest';
import { parseAmount, type AuthorizationOutcome } from '../../src/core/index.js';
import { authorizeWithinBudget } from '../../src/http/authorize-budget.js';
import { StandInRecords } from '../../src/http/stand-in-records.js';
import type { OpenedStore as Store } from '../../src/store/store.js';
import { useTestService } from '../support/http.js';
import { fundedCard, MERCHANT, networkId, type DecisionJson } from '../support/authorize.js';
import { lockVault } from '../support/store.js';

/**
 * The authorization time budget (contract section 10). A decision the database cannot reach in
 * time (its vault row is locked by another transaction, as a long-running one would) is
 * answered with the stand-in decision; when the lock goes, the late decision records what the
 * network was told, and no hold is left behind.
 */
const BUDGET_MS = 300;

interface Json extends Omit<DecisionJson, 'id'> {
  id: string;
  balance: { available: string; pending: string; ledger: string };
  status: string;
  failureReason: string | null;
}

async function until<T>(read: () => Promise<T>, done: (value: T) => boolean): Promise<T> {
  for (let attempt = 0; attempt < 100; attempt++) {
    const value = await read();
    if (done(value)) return value;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error('the condition never held');
}

describe('the authorization budget, stand-in decline (the default)', () => {
  const harness = useTestService<Json>({
    server: { authorize: { budgetMs: BUDGET_MS, standIn: 'decline' } },
  });

  it('answers the stand-in decline past the budget, then records that decline with no hold', async () => {
    const { vaultId, cardId } = await fundedCard(harness, '100');
    const body = {
      cardId,
      amount: '10',
      currency: 'USDC',
      merchant: MERCHANT,
      networkTransactionId: networkId(),
    };
    const lock = lockVault(harness.service.store, vaultId);
    await lock.isLocked;
    const answer = await harness.call('POST', '/v1/authorizations', body);
    lock.release();
    await lock.done;
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({
      id: null,
      approved: false,
      status: 'declined',
      declineCode: 'card_declined',
      declineReason: { rule: 'stand_in' },
      standIn: true,
      amount: '10.00',
    });
    // The late decision is recorded as the stand-in decline: its replay agrees, with an id now.
    const replay = await until(
      () => harness.call('POST', '/v1/authorizations', body),
      (again) => again.body.id !== null,
    );
    expect(replay.body).toMatchObject({
      approved: false,
      declineReason: { rule: 'stand_in' },
      standIn: true,
    });
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect((await harness.call('GET', `/v1/vaults/${vaultId}`)).body.balance.pending).toBe('0.00');
  });

  it('releases an approval that was decided in time but answered too late', async () => {
    const { vaultId, cardId } = await fundedCard(harness, '100');
    const store = harness.service.store;
    const ownerScope = { accountId: await ownerOf(store, vaultId), mode: 'test' as const };
    // The store decides and commits at once, but its answer arrives after the budget: the
    // window between decision and reply that a slow commit or network hop opens.
    let late: AuthorizationOutcome | undefined;
    const slowStore: Store = {
      ...store,
      authorize: async (...args) => {
        late = await store.authorize(...args);
        await new Promise((resolve) => setTimeout(resolve, BUDGET_MS + 100));
        return late;
      },
    };
    const input = {
      cardId,
      amount: parseAmount('10', 'USDC'),
      currency: 'USDC',
      merchant: MERCHANT,
      networkTransactionId: networkId(),
    };
    const result = await authorizeWithinBudget(
      slowStore,
      ownerScope,
      input,
      { budgetMs: BUDGET_MS, standIn: 'decline' },
      harness.service.app.log,
      new StandInRecords(store, harness.service.app.log),
    );
    expect([result.standIn, result.transaction, result.decision.declineReason?.rule]).toEqual([
      true,
      null,
      'stand_in',
    ]);
    expect(late?.decision.approved).toBe(true);
    const heldId = late?.transaction?.id ?? '';
    // The network was told declined: the ledger records that, the hold released.
    const released = await until(
      () => harness.call('GET', `/v1/transactions/${heldId}`),
      (transaction) => transaction.body.status === 'declined',
    );
    expect(released.body.declineReason?.rule).toBe('stand_in');
    expect((await harness.call('GET', `/v1/vaults/${vaultId}`)).body.balance.pending).toBe('0.00');
    // Its replay is the stand-in decline the network was told.
    const replay = await harness.call('POST', '/v1/authorizations', {
      ...input,
      amount: '10',
    });
    expect([replay.body.approved, replay.body.standIn, replay.body.id]).toEqual([
      false,
      true,
      heldId,
    ]);
  });

  it('answers the stand-in decision when the store fails, and records it once the database is back', async () => {
    const { vaultId, cardId } = await fundedCard(harness, '100');
    const failing: Store = {
      ...harness.service.store,
      authorize: () => Promise.reject(new Error('the database is down')),
    };
    // The database answers the advice only once it is back.
    let databaseBack = false;
    const records = new StandInRecords(
      {
        advise: (scope, advice) =>
          databaseBack
            ? harness.service.store.advise(scope, advice)
            : Promise.reject(new Error('the database is down')),
      },
      harness.service.app.log,
      { owedMax: 10, retryMsMin: 20, retryMsMax: 40 },
    );
    const input = {
      cardId,
      amount: parseAmount('1', 'USDC'),
      currency: 'USDC',
      merchant: MERCHANT,
      networkTransactionId: networkId(),
    };
    const scope = {
      accountId: await ownerOf(harness.service.store, vaultId),
      mode: 'test' as const,
    };
    const settings = { budgetMs: BUDGET_MS, standIn: 'decline' } as const;
    const log = harness.service.app.log;
    const result = await authorizeWithinBudget(failing, scope, input, settings, log, records);
    expect([result.standIn, result.decision.approved, result.transaction]).toEqual([
      true,
      false,
      null,
    ]);
    // A repeat while the record is owed gets the same stand-in answer, not a fresh decision.
    const repeat = await authorizeWithinBudget(failing, scope, input, settings, log, records);
    expect([repeat.standIn, repeat.decision.approved, repeat.replayed]).toEqual([
      true,
      false,
      true,
    ]);
    expect(records.owedCount).toBe(1);
    databaseBack = true;
    await until(
      () => Promise.resolve(records.owedCount),
      (owed) => owed === 0,
    );
    // Recorded as told: a repeated callback now answers the recorded stand-in decline.
    const replay = await harness.call('POST', '/v1/authorizations', { ...input, amount: '1' });
    expect([replay.body.approved, replay.body.standIn, replay.body.id]).toMatchObject([
      false,
      true,
      expect.stringMatching(/^txn_/),
    ]);
    await records.close();
  });
});

describe('the authorization budget, stand-in approve', () => {
  const harness = useTestService<Json>({
    server: { authorize: { budgetMs: BUDGET_MS, standIn: 'approve' } },
  });

  it('answers approved in stand-in, and the late decision stands as decided', async () => {
    const { vaultId, cardId } = await fundedCard(harness, '100');
    const lock = lockVault(harness.service.store, vaultId);
    await lock.isLocked;
    const answer = await harness.call('POST', '/v1/authorizations', {
      cardId,
      amount: '10',
      currency: 'USDC',
      merchant: MERCHANT,
      networkTransactionId: networkId(),
    });
    lock.release();
    await lock.done;
    expect(answer.body).toMatchObject({
      id: null,
      approved: true,
      status: 'pending',
      declineCode: null,
      standIn: true,
    });
    const vault = await until(
      () => harness.call('GET', `/v1/vaults/${vaultId}`),
      (read) => read.body.balance.pending !== '0.00',
    );
    expect(vault.body.balance.pending).toBe('10.00');
  });
});

describe('the authorization budget, stand-in approve on a vault that cannot cover it', () => {
  const harness = useTestService<Json>({
    server: { authorize: { budgetMs: BUDGET_MS, standIn: 'approve' } },
  });

  it('records the approval the network was told, though the late decision declined', async () => {
    const { vaultId, cardId } = await fundedCard(harness, '5');
    const lock = lockVault(harness.service.store, vaultId);
    await lock.isLocked;
    const body = {
      cardId,
      amount: '10',
      currency: 'USDC',
      merchant: MERCHANT,
      networkTransactionId: networkId(),
    };
    const answer = await harness.call('POST', '/v1/authorizations', body);
    lock.release();
    await lock.done;
    expect([answer.body.approved, answer.body.standIn]).toEqual([true, true]);
    // The late decision declined for the balance; the ledger records the approval told.
    const vault = await until(
      () => harness.call('GET', `/v1/vaults/${vaultId}`),
      (read) => read.body.balance.pending === '10.00',
    );
    expect(vault.body.balance.available).toBe('-5.00');
    const replay = await harness.call('POST', '/v1/authorizations', body);
    expect([replay.body.approved, replay.body.standIn]).toEqual([true, true]);
    expect(replay.body.id).toMatch(/^txn_/);
  });
});

async function ownerOf(store: Store, vaultId: string): Promise<string> {
  const { rows } = await store.client.query<{ account_id: string }>(
    'SELECT account_id FROM vaults WHERE id = $1',
    [vaultId],
  );
  return rows[0]?.account_id ?? '';
}
