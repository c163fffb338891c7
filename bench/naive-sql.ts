import { randomInt } from 'node:crypto';
import type pg from 'pg';

/**
 * The naive SQL loop, the baseline the HTTP benches compare the service with (bench:http's
 * naive SQL row, and the lifecycle messages of bench/message-workloads.ts): what PostgreSQL
 * does for a naive service, one transaction per authorization (BEGIN; SELECT ... FOR UPDATE a
 * vault; UPDATE it; INSERT a hold; COMMIT), over `vaults` vault rows in a schema of its own.
 */

/** Creates the naive loop's schema, its vaults each funded with `deposit`. */
export async function createNaiveSchema(
  pool: pg.Pool,
  vaults: number,
  deposit: string,
): Promise<void> {
  await pool.query(`
    CREATE SCHEMA bench_naive;
    CREATE TABLE bench_naive.vaults (id integer PRIMARY KEY, available numeric(38, 9) NOT NULL);
    CREATE TABLE bench_naive.holds (
      id bigserial PRIMARY KEY,
      vault_id integer NOT NULL,
      amount numeric(38, 9) NOT NULL,
      network_transaction_id text NOT NULL UNIQUE,
      created_at timestamptz NOT NULL DEFAULT now()
    );
    INSERT INTO bench_naive.vaults SELECT id, ${deposit}
      FROM generate_series(1, ${vaults}) AS id;`);
}

/** One naive authorization of `amount` on a vault at random, each with its own id. */
export function naiveAuthorization(
  pool: pg.Pool,
  vaults: number,
  amount: string,
): () => Promise<void> {
  let sequence = 0;
  return async () => {
    sequence += 1;
    // Read now: other callers move `sequence` on while this one waits.
    const networkTransactionId = `naive_${sequence}`;
    const vault = randomInt(vaults) + 1;
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      await client.query('SELECT available FROM bench_naive.vaults WHERE id = $1 FOR UPDATE', [
        vault,
      ]);
      await client.query('UPDATE bench_naive.vaults SET available = available - $2 WHERE id = $1', [
        vault,
        amount,
      ]);
      await client.query(
        'INSERT INTO bench_naive.holds (vault_id, amount, network_transaction_id) VALUES ($1, $2, $3)',
        [vault, amount, networkTransactionId],
      );
      await client.query('COMMIT');
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    } finally {
      client.release();
    }
  };
}
