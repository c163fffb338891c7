import type pg from 'pg';

/** The cluster's WAL insert position in bytes: a byte count fits a double for 8 PB. */
export async function walPosition(pool: pg.Pool): Promise<number> {
  const { rows } = await pool.query<{ at: string }>(
    "SELECT pg_wal_lsn_diff(pg_current_wal_insert_lsn(), '0/0')::text AS at",
  );
  return Number(rows[0]?.at ?? Number.NaN);
}
