import { generateSecret, generateURI, verifySync } from 'otplib';
import { assert, SpendgateError } from '../../core/index.js';
import type { StoreContext } from '../context.js';
import type { SqlQueryable } from '../sql/client.js';
import { oneRow } from '../sql/one-row.js';
import {
  TWO_FACTOR_FAILURES_MAX,
  TWO_FACTOR_FAILURE_WINDOW_MS,
  type TwoFactorRefusal,
} from '../port/accounts.js';

/*
 * Two-factor authentication per account (contract section 2): TOTP (RFC 6238, 30 s steps, 6
 * digits). The secret is stored encrypted under the master key, bound to its account.
 *
 * A code is accepted once: the time step it matched is recorded, in the transaction of its
 * use, and no step at or before it passes again, so a code seen over a shoulder cannot be
 * replayed. Wrong codes are counted on the account row (contract v1.1): after
 * `TWO_FACTOR_FAILURES_MAX` in `TWO_FACTOR_FAILURE_WINDOW_MS`, every two-factor check of the
 * account is refused until the oldest of them leaves the window, whatever the code. Five
 * guesses per 15 minutes, two codes valid at a time: a guess succeeds with odds of 1 in
 * 100,000 per window.
 *
 * A wrong code must be counted although the request is refused, so the checks return their
 * refusal (`TwoFactorRefusal`) instead of throwing it: the transaction commits the count, and
 * the caller throws afterwards.
 */

const PERIOD_S = 30;
/**
 * One step back, none ahead: a code typed as its step turns still passes (RFC 6238 section
 * 5.2 recommends one step of delay), which spares users a retry at every step boundary. It
 * doubles a guess's odds (two codes valid instead of one), which the lockout bounds; and a
 * code of the previous step is still accepted once only, since steps must increase.
 */
const TOLERANCE_S: [number, number] = [PERIOD_S, 0];
const ISSUER = 'spendgate';
const CODE_PATTERN = /^[0-9]{6}$/;

/** The AAD of an account's two-factor secret, encrypted under the master key. */
export const twoFactorSecretAad = (accountId: string) => `two-factor:${accountId}`;

interface AccountRow {
  name: string;
  two_factor_secret_enc: string | null;
  two_factor_enabled: boolean;
  two_factor_last_step: string | null;
  /** JSON, so that both SQL clients read the bigint array the same way. */
  failed_at_ms: number[];
}

async function lockAccount(tx: SqlQueryable, accountId: string): Promise<AccountRow> {
  const { rows } = await tx.query<AccountRow>(
    `SELECT name, two_factor_secret_enc, two_factor_enabled, two_factor_last_step,
            array_to_json(two_factor_failed_at_ms) AS failed_at_ms
       FROM accounts WHERE id = $1 FOR UPDATE`,
    [accountId],
  );
  const row = rows[0];
  if (row === undefined) throw new SpendgateError('invalid_api_key', 'The API key is invalid.');
  assert(row.failed_at_ms.length <= TWO_FACTOR_FAILURES_MAX, 'failures are kept bounded');
  return row;
}

/** The refusal while the account is locked out, or null: the wrong codes still in the window. */
function lockout(account: AccountRow, nowMs: number): TwoFactorRefusal | null {
  const recent = account.failed_at_ms.filter((ms) => ms > nowMs - TWO_FACTOR_FAILURE_WINDOW_MS);
  if (recent.length < TWO_FACTOR_FAILURES_MAX) return null;
  const untilMs = Math.min(...recent) + TWO_FACTOR_FAILURE_WINDOW_MS;
  assert(untilMs > nowMs, 'a lockout ends in the future');
  return {
    code: 'rate_limit_exceeded',
    retryAfterS: Math.max(1, Math.ceil((untilMs - nowMs) / 1000)),
    lockoutStarted: false,
  };
}

/**
 * Counts a wrong code: one statement under the row lock, which appends it and keeps the
 * latest `TWO_FACTOR_FAILURES_MAX` within the window.
 */
async function countFailure(
  tx: SqlQueryable,
  accountId: string,
  nowMs: number,
): Promise<TwoFactorRefusal> {
  const { rows } = await tx.query<{ failures: number }>(
    `UPDATE accounts SET two_factor_failed_at_ms = ARRAY(
       SELECT failed FROM (
         SELECT failed FROM unnest(two_factor_failed_at_ms || $2::bigint) AS failed
          WHERE failed > $3::bigint ORDER BY failed DESC LIMIT $4
       ) AS latest ORDER BY failed)
     WHERE id = $1
     RETURNING cardinality(two_factor_failed_at_ms) AS failures`,
    [accountId, nowMs, nowMs - TWO_FACTOR_FAILURE_WINDOW_MS, TWO_FACTOR_FAILURES_MAX],
  );
  const { failures } = oneRow(rows, 'the UPDATE of the locked account');
  assert(failures >= 1, 'the failure just counted is kept');
  return {
    code: 'invalid_two_factor_code',
    retryAfterS: null,
    lockoutStarted: failures >= TWO_FACTOR_FAILURES_MAX,
  };
}

/**
 * beginTwoFactor: one transaction. In: account id. Out: a new secret and its otpauth:// URI,
 * shown this once; two-factor stays off until a code from it is verified.
 * Fails: parameter_invalid when two-factor is already on (turn it off first).
 */
export async function beginTwoFactor(
  ctx: StoreContext,
  tx: SqlQueryable,
  accountId: string,
): Promise<{ secret: string; otpauthUri: string }> {
  const account = await lockAccount(tx, accountId);
  if (account.two_factor_enabled) {
    throw new SpendgateError(
      'parameter_invalid',
      'Two-factor authentication is already on; turn it off first.',
    );
  }
  const secret = generateSecret();
  await tx.query(
    'UPDATE accounts SET two_factor_secret_enc = $2, two_factor_last_step = NULL WHERE id = $1',
    [accountId, ctx.keyring.encryptSecret(secret, twoFactorSecretAad(accountId))],
  );
  return { secret, otpauthUri: generateURI({ issuer: ISSUER, label: account.name, secret }) };
}

/**
 * Checks a code against the account's secret, once, unless the account is locked out: on
 * success records its step; a wrong or used code is counted and refused. Needs the row lock
 * of `lockAccount`, taken in this transaction.
 */
async function checkCode(
  ctx: StoreContext,
  tx: SqlQueryable,
  accountId: string,
  account: AccountRow,
  code: string,
): Promise<TwoFactorRefusal | null> {
  const nowMs = ctx.clock();
  const locked = lockout(account, nowMs);
  if (locked !== null) return locked;
  if (account.two_factor_secret_enc === null || !CODE_PATTERN.test(code)) {
    return countFailure(tx, accountId, nowMs);
  }
  const secret = ctx.keyring.decryptSecret(
    account.two_factor_secret_enc,
    twoFactorSecretAad(accountId),
  );
  const nowS = Math.floor(nowMs / 1000);
  const result = verifySync({ secret, token: code, epoch: nowS, epochTolerance: TOLERANCE_S });
  if (!result.valid) return countFailure(tx, accountId, nowMs);
  // The step the code belongs to: the current one, moved by the offset it matched at.
  const step = Math.floor(nowS / PERIOD_S) + result.delta;
  if (account.two_factor_last_step !== null && step <= Number(account.two_factor_last_step)) {
    return countFailure(tx, accountId, nowMs);
  }
  await tx.query('UPDATE accounts SET two_factor_last_step = $2 WHERE id = $1', [accountId, step]);
  return null;
}

/**
 * verifyTwoFactor: one transaction. In: account id, a code from the secret of beginTwoFactor.
 * Out: null, and two-factor is on; or the refusal (invalid_two_factor_code, counted, or
 * rate_limit_exceeded while locked out), to throw once the count is committed.
 */
export async function verifyTwoFactor(
  ctx: StoreContext,
  tx: SqlQueryable,
  accountId: string,
  code: string,
): Promise<TwoFactorRefusal | null> {
  const account = await lockAccount(tx, accountId);
  const refusal = await checkCode(ctx, tx, accountId, account, code);
  if (refusal !== null) return refusal;
  await tx.query('UPDATE accounts SET two_factor_enabled = true WHERE id = $1', [accountId]);
  return null;
}

/**
 * disableTwoFactor: one transaction. In: account id, a current code.
 * Out: null, and two-factor is off and its secret gone; or the refusal of the code, as for
 * verifyTwoFactor. Fails: two_factor_required (no code), parameter_invalid (not on).
 */
export async function disableTwoFactor(
  ctx: StoreContext,
  tx: SqlQueryable,
  accountId: string,
  code: string | undefined,
): Promise<TwoFactorRefusal | null> {
  const account = await lockAccount(tx, accountId);
  if (!account.two_factor_enabled)
    throw new SpendgateError('parameter_invalid', 'Two-factor authentication is not on.');
  if (code === undefined) {
    return (
      lockout(account, ctx.clock()) ?? missingCode('Send a current code in X-Two-Factor-Code.')
    );
  }
  const refusal = await checkCode(ctx, tx, accountId, account, code);
  if (refusal !== null) return refusal;
  await tx.query(
    'UPDATE accounts SET two_factor_enabled = false, two_factor_secret_enc = NULL, two_factor_last_step = NULL WHERE id = $1',
    [accountId],
  );
  return null;
}

/**
 * requireTwoFactor: for operations behind a second factor (Reveal Card Details). Out: null
 * when the account has two-factor off or the code is current and unused (its step is then
 * spent); otherwise the refusal, as for verifyTwoFactor. Fails: two_factor_required.
 */
export async function requireTwoFactor(
  ctx: StoreContext,
  tx: SqlQueryable,
  accountId: string,
  code: string | undefined,
): Promise<TwoFactorRefusal | null> {
  const account = await lockAccount(tx, accountId);
  if (!account.two_factor_enabled) return null;
  if (code === undefined) {
    return (
      lockout(account, ctx.clock()) ??
      missingCode('This request needs a code in X-Two-Factor-Code.')
    );
  }
  return checkCode(ctx, tx, accountId, account, code);
}

/** No code sent: nothing to count, so thrown at once (the transaction has written nothing). */
function missingCode(message: string): never {
  throw new SpendgateError('two_factor_required', message);
}
