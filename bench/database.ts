import { randomBytes } from 'node:crypto';
import pg from 'pg';

/**
 * A database of the bench run's own on the local PostgreSQL server (BENCH_DATABASE_URL names
 * another), created before and dropped after, so that runs never see each other's data.
 */
const SERVER_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

async function admin(sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: SERVER_URL });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

/** Runs `work` with the URL of a new database, and drops the database however it ends. */
export async function withBenchDatabase<T>(work: (databaseUrl: string) => Promise<T>): Promise<T> {
  const name = `sg_bench_${randomBytes(4).toString('hex')}`;
  const databaseUrl = new URL(SERVER_URL);
  databaseUrl.pathname = `/${name}`;
  await admin(`CREATE DATABASE ${name}`);
  try {
    return await work(databaseUrl.toString());
  } finally {
    await admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  }
}
