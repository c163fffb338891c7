import { describe, expect, it } from 'vitest';
import { Decimal } from '../../src/core/index.js';
import { StandInRecords } from '../../src/http/stand-in-records.js';
import { fundedCard, MERCHANT, networkId } from '../support/authorize.js';
import { SILENT_LOG, useTestService } from '../support/http.js';
import { lockVault } from '../support/store.js';

/**
 * The stand-in answers owed to the ledger (http/stand-in-records.ts), on the real store: an
 * answer owed while a round of records is under way is recorded too. Found under a PostgreSQL
 * restart (test/fleet/postgres-restart.test.ts): a round took its list when it began, and a
 * flush asked for meanwhile joined that round, so the later answer waited for the next one
 * that nothing asked for.
 */
interface Json {
  id: string;
  status: string;
  balance: { pending: string };
}

describe('stand-in records', () => {
  const harness = useTestService<Json>();

  it('records an answer owed while a round is under way', async () => {
    const records = new StandInRecords(harness.service.store, SILENT_LOG, {
      owedMax: 100,
      retryMsMin: 20,
      retryMsMax: 50,
    });
    const first = await fundedCard(harness, '100');
    const second = await fundedCard(harness, '100');
    const { rows } = await harness.service.store.client.query<{
      account_id: string;
      mode: 'test' | 'live';
    }>('SELECT account_id, mode FROM vaults WHERE id = $1', [first.vaultId]);
    const scope = { accountId: rows[0]?.account_id ?? '', mode: rows[0]?.mode ?? 'test' };
    const input = (cardId: string) => ({
      cardId,
      amount: new Decimal('5'),
      currency: 'USDC',
      merchant: MERCHANT,
      networkTransactionId: networkId(),
    });
    const held = input(first.cardId);
    const later = input(second.cardId);
    // The round's first record waits on its vault's lock: the round is under way.
    const lock = lockVault(harness.service.store, first.vaultId);
    await lock.isLocked;
    await records.owe(scope, held, true);
    await new Promise((resolve) => setTimeout(resolve, 100));
    let settle: () => void = () => undefined;
    const settled = new Promise<void>((resolve) => {
      settle = resolve;
    });
    await records.owe(scope, later, true, settled);
    settle();
    await new Promise((resolve) => setTimeout(resolve, 100));
    lock.release();
    await lock.done;
    const recorded = async () =>
      (
        await harness.service.store.client.query<{ n: number }>(
          'SELECT count(*)::int AS n FROM transactions WHERE network_transaction_id = ANY($1)',
          [[held.networkTransactionId, later.networkTransactionId]],
        )
      ).rows[0]?.n;
    for (let attempt = 0; attempt < 100 && (await recorded()) !== 2; attempt++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(await recorded()).toBe(2);
    expect(records.owedCount).toBe(0);
    await records.close();
  });
});
