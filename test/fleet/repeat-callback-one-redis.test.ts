import { afterAll, describe, expect, it } from 'vitest';
import { Decimal } from '../../src/core/index.js';
import { checkInvariants } from '../../src/store/invariants.js';
import { MERCHANT, networkId } from '../support/authorize.js';
import { callWithKey, serverDatabase } from '../support/processes.js';
import { ServiceUnderLoad } from '../support/service-under-load.js';

/**
 * One callback, one answer, across two real `spendgate serve` processes on one Redis server
 * (issue 37, item 2; test/fleet/repeat-callback.test.ts runs the same on a Redis Cluster): the
 * same networkTransactionId sent to both at once gets the one recorded decision from both,
 * declines included.
 */
const ROUNDS = 20;
const service = new ServiceUnderLoad();
const databases: Awaited<ReturnType<typeof serverDatabase>>[] = [];

afterAll(async () => {
  await service.close();
  await Promise.all(databases.map((database) => database.drop()));
});

describe('a callback repeated at two processes on one Redis server', () => {
  it('answers the one recorded decision from both, declines and approvals', async () => {
    const database = await serverDatabase();
    databases.push(database);
    const store = await service.storeOn(database.url);
    const account = await service.account(store, 'one-redis');
    const scope = { accountId: account.accountId, mode: 'test' as const };
    const { vault: empty } = await store.createVault(scope, {
      name: 'empty',
      currency: 'USDC',
      metadata: {},
      initialDeposit: new Decimal('0'),
    });
    const declining = await store.createCard(scope, {
      vaultId: empty.id,
      cardholderName: 'Bo',
      metadata: {},
    });
    const bases = [(await service.serve(database.url))[1], (await service.serve(database.url))[1]];
    for (const [cardId, approves] of [
      [declining.id, false],
      [account.cardId, true],
    ] as const) {
      for (let round = 0; round < ROUNDS; round++) {
        const body = {
          cardId,
          amount: '1',
          currency: 'USDC',
          merchant: MERCHANT,
          networkTransactionId: networkId(),
        };
        const answers = await Promise.all(
          bases.map((base) => callWithKey(base, account.key, 'POST', '/v1/authorizations', body)),
        );
        // The decision as recorded: everything but the time each process took to answer.
        const decisions = answers.map((answer): Record<string, unknown> => {
          const decision: Record<string, unknown> = { ...answer.body };
          delete decision['decidedInMicros'];
          return { httpStatus: answer.status, ...decision };
        });
        const label = `round ${String(round)} (${approves ? 'approvals' : 'declines'})`;
        expect(decisions[0]?.['id'], label).toMatch(/^txn_/);
        expect(decisions[1], label).toEqual(decisions[0]);
        expect([decisions[0]?.['httpStatus'], decisions[0]?.['approved']], label).toEqual([
          200,
          approves,
        ]);
      }
    }
    const { rows } = await store.client.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM transactions WHERE type = 'card_authorization'",
    );
    expect(rows[0]?.n).toBe(2 * ROUNDS);
    expect(await checkInvariants(store.client)).toEqual([]);
  });
});
