import { describe, expect, it } from 'vitest';
import type { SqlClient, SqlTransaction } from '../../src/store/sql/client.js';
import { testDatabase } from '../support/databases.js';
import { merchant, networkTransactionId, usdc, useTestStore } from '../support/store.js';
import { checkInvariants } from '../../src/store/invariants.js';

/**
 * Crash safety on a real PostgreSQL server: the database session is killed in the middle of a
 * store operation (pg_terminate_backend on the transaction's own connection, right before its
 * Nth statement). Whatever statement it dies at, nothing of the operation may remain, the
 * invariants must hold, and the store must go on working on fresh connections.
 */
function crashingClient(client: SqlClient): SqlClient & { crashAt: number | null } {
  const wrapper: SqlClient & { crashAt: number | null } = {
    ...client,
    crashAt: null,
    transaction<T>(
      work: (tx: SqlTransaction) => Promise<T>,
      options?: Parameters<SqlClient['transaction']>[1],
    ): Promise<T> {
      return client.transaction((tx) => {
        let statements = 0;
        const crashIfDue = async () => {
          statements += 1;
          if (wrapper.crashAt !== null && statements === wrapper.crashAt) {
            wrapper.crashAt = null;
            await tx.query('SELECT pg_terminate_backend(pg_backend_pid())').catch(() => undefined);
          }
        };
        const dying: SqlTransaction = {
          async query(text, params) {
            await crashIfDue();
            return tx.query(text, params);
          },
          async queryAndCommit(text, params) {
            await crashIfDue();
            return tx.queryAndCommit(text, params);
          },
          exec: tx.exec,
        };
        return work(dying);
      }, options);
    },
  };
  return wrapper;
}

describe('crash safety on PostgreSQL', () => {
  let client: ReturnType<typeof crashingClient>;
  const t = useTestStore(testDatabase('pg'), {
    wrapClient: (inner) => (client = crashingClient(inner)),
  });

  const snapshot = async () => {
    const { rows } = await t.store.client.query<Record<string, string>>(
      `SELECT (SELECT count(*) FROM ledger_entries)::text AS entries, (SELECT count(*) FROM transactions)::text AS transactions,
              (SELECT count(*) FROM outbox_events)::text AS events, (SELECT coalesce(sum(pending), 0) FROM vaults)::text AS pending,
              (SELECT coalesce(sum(ledger), 0) FROM vaults)::text AS ledger, (SELECT count(*) FROM hold_changes)::text AS holds`,
    );
    return rows[0];
  };

  it('an operation killed at any statement leaves nothing behind', async () => {
    const vault = await t.vault(t.owner, '100', { name: 'c' });
    const other = await t.vault(t.owner, '0', { name: 'd' });
    const card = await t.card(t.owner, vault.id);
    const operations: [string, () => Promise<unknown>][] = [
      [
        'authorize',
        () =>
          t.store.authorize(t.owner, {
            cardId: card.id,
            amount: usdc('10'),
            currency: 'USDC',
            merchant: merchant(),
            networkTransactionId: networkTransactionId(),
          }),
      ],
      [
        'transfer',
        () =>
          t.store.createInternalTransfer(t.owner, {
            fromVaultId: vault.id,
            toVaultId: other.id,
            amount: usdc('5'),
            description: null,
          }),
      ],
      ['deposit', () => t.store.deposit(t.owner, vault.id, usdc('3'))],
    ];
    let crashes = 0;
    for (const [name, operation] of operations) {
      for (let statement = 1; statement <= 12; statement++) {
        const before = await snapshot();
        client.crashAt = statement;
        const outcome = await operation().then(
          () => 'committed',
          () => 'crashed',
        );
        const survived = client.crashAt !== null; // the operation ended before that statement
        client.crashAt = null;
        if (outcome === 'crashed') {
          crashes += 1;
          expect(await snapshot(), `${name} killed at statement ${statement}`).toEqual(before);
        } else {
          expect(survived, `${name} committed although killed at statement ${statement}`).toBe(
            true,
          );
        }
        expect(await checkInvariants(t.store.client)).toEqual([]);
      }
    }
    expect(crashes).toBeGreaterThan(15);
    // The pool replaced the dead connections: the store still works.
    expect((await t.store.deposit(t.owner, vault.id, usdc('1'))).vault.status).toBe('active');
  });
});
