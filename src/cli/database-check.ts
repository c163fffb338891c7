import pg from 'pg';
import { ConfigError } from '../config/env.js';

/*
 * The first connection to the PostgreSQL server at DATABASE_URL, made once before the pool,
 * so that a server that cannot be reached stops the command with one line that says what
 * failed and what to check, rather than a driver's stack trace; and within a bound, since the
 * pool alone would wait forever on an address that drops packets: PGCONNECT_TIMEOUT seconds
 * (libpq's variable, which the pg driver's pool honours too), else CONNECT_TIMEOUT_MS. No
 * message carries the URL or its password.
 */

export const CONNECT_TIMEOUT_MS = 10_000;

/** PGCONNECT_TIMEOUT in milliseconds when it is a whole number of seconds from 1, else the default. */
export function connectTimeoutMs(env: Readonly<Record<string, string | undefined>>): number {
  const seconds = Number(env.PGCONNECT_TIMEOUT ?? '');
  return Number.isSafeInteger(seconds) && seconds >= 1 && seconds <= 3600
    ? seconds * 1000
    : CONNECT_TIMEOUT_MS;
}

/** A ConfigError, so that the command prints its one line (main.ts) and exits 1. */
export class DatabaseUnreachableError extends ConfigError {}

export async function checkDatabase(
  databaseUrl: string,
  timeoutMs = connectTimeoutMs(process.env),
): Promise<void> {
  const client = new pg.Client({
    connectionString: databaseUrl,
    connectionTimeoutMillis: timeoutMs,
  });
  // A connection lost after the check must not end the process through an unheard event.
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.query('SELECT 1');
  } catch (error) {
    throw new DatabaseUnreachableError(connectionFailure(error, databaseUrl, timeoutMs));
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** Where DATABASE_URL points, as `host:port`, without its user or password. */
export function databaseAddress(databaseUrl: string): string {
  const url = new URL(databaseUrl);
  // A socket folder is given as `?host=/run/postgresql` (libpq's form), the host left empty.
  const host = url.hostname !== '' ? url.hostname : (url.searchParams.get('host') ?? 'localhost');
  return `${host}:${url.port === '' ? '5432' : url.port}`;
}

/** One line: what failed, and what to check. */
export function connectionFailure(error: unknown, databaseUrl: string, timeoutMs: number): string {
  const url = new URL(databaseUrl);
  const user = decodeURIComponent(url.username) || 'the default user';
  const database = decodeURIComponent(url.pathname.slice(1)) || user;
  const code = errorField(error, 'code');
  const message = redact(error instanceof Error ? error.message : String(error), url);
  const reasons: Readonly<Record<string, string>> = {
    ECONNREFUSED: 'connection refused — is the server running, and listening on that port?',
    ENOTFOUND: 'no such host — check the host name in DATABASE_URL',
    EAI_AGAIN: 'the host name could not be resolved (DNS) — check the host name and the network',
    EHOSTUNREACH: 'host unreachable — check the host in DATABASE_URL and the network',
    ENETUNREACH: 'network unreachable — check the host in DATABASE_URL and the network',
    ETIMEDOUT: `no answer — check the host, the port and any firewall between`,
    ECONNRESET:
      'the connection was closed before PostgreSQL answered — is that port a PostgreSQL server? Check sslmode too',
    // PostgreSQL's SQLSTATE codes (https://www.postgresql.org/docs/current/errcodes-appendix.html).
    '28P01': `password authentication failed for user "${user}" — check the user and password in DATABASE_URL`,
    '28000': `${message} — check the user in DATABASE_URL and the server's pg_hba.conf`,
    '3D000': `database "${database}" does not exist — create it (createdb ${database}) or correct its name in DATABASE_URL`,
    '57P03': 'the server is starting up or shutting down — try again in a moment',
    '53300': 'the server has no free connection (max_connections) — try again, or raise it',
  };
  const reason =
    (code === undefined ? undefined : reasons[code]) ??
    (/timeout/i.test(message)
      ? `no answer within ${timeoutMs / 1000} s — check the host, the port and any firewall between`
      : /terminated unexpectedly/i.test(message)
        ? reasons.ECONNRESET
        : /ssl|tls|certificate/i.test(message)
          ? `${message} — check sslmode in DATABASE_URL`
          : `${code === undefined ? '' : `${code}: `}${message}`);
  return `cannot connect to PostgreSQL at ${databaseAddress(databaseUrl)} (DATABASE_URL): ${reason}`;
}

function errorField(error: unknown, field: string): string | undefined {
  if (typeof error !== 'object' || error === null || !(field in error)) return undefined;
  const value = (error as Record<string, unknown>)[field];
  return typeof value === 'string' ? value : undefined;
}

/** The driver's text without the password, in case a message ever quotes the URL. */
function redact(text: string, url: URL): string {
  const secrets = [url.href, url.password, decodeURIComponent(url.password)].filter(
    (secret) => secret.length > 0,
  );
  let redacted = text;
  for (const secret of secrets) redacted = redacted.split(secret).join('[redacted]');
  return redacted.split('\n')[0]?.slice(0, 300) ?? '';
}
