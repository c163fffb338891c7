import { generateSecret, generateURI, verifySync } from 'otplib';
import { SpendgateError } from '../../core/index.js';
import type { StoreContext } from '../context.js';
import { decryptText, encryptText } from '../secrets/index.js';
import type { SqlQueryable } from '../sql/client.js';

/**
 * Two-factor authentication per account (contract section 2): TOTP (RFC 6238, 30 s steps, 6
 * digits). The secret is stored encrypted under the master key, bound to its account. A code
 * is accepted once: the time step it matched is recorded and no step at or before it passes
 * again, so a code seen over a shoulder cannot be replayed.
 */
const PERIOD_S = 30;
/** One step back: a code typed as the step turns still passes; none from the future. */
const TOLERANCE_S: [number, number] = [PERIOD_S, 0];
const ISSUER = 'spendgate';
const CODE_PATTERN = /^[0-9]{6}$/;

const aad = (accountId: string) => `two-factor:${accountId}`;

interface AccountRow {
  name: string;
  two_factor_secret_enc: string | null;
  two_factor_enabled: boolean;
  two_factor_last_step: string | null;
}

async function lockAccount(tx: SqlQueryable, accountId: string): Promise<AccountRow> {
  const { rows } = await tx.query<AccountRow>(
    'SELECT name, two_factor_secret_enc, two_factor_enabled, two_factor_last_step FROM accounts WHERE id = $1 FOR UPDATE',
    [accountId],
  );
  const row = rows[0];
  if (row === undefined) throw new SpendgateError('invalid_api_key', 'The API key is invalid.');
  return row;
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
    [accountId, encryptText(ctx.masterKey, secret, aad(accountId))],
  );
  return { secret, otpauthUri: generateURI({ issuer: ISSUER, label: account.name, secret }) };
}

/** Checks a code against the account's secret, once; throws invalid_two_factor_code. */
async function consumeCode(
  ctx: StoreContext,
  tx: SqlQueryable,
  accountId: string,
  account: AccountRow,
  code: string,
): Promise<void> {
  const refuse = () =>
    new SpendgateError(
      'invalid_two_factor_code',
      'The two-factor code is wrong or was already used.',
    );
  if (account.two_factor_secret_enc === null || !CODE_PATTERN.test(code)) throw refuse();
  const secret = decryptText(ctx.masterKey, account.two_factor_secret_enc, aad(accountId));
  const nowS = Math.floor(ctx.clock() / 1000);
  const result = verifySync({ secret, token: code, epoch: nowS, epochTolerance: TOLERANCE_S });
  if (!result.valid) throw refuse();
  // The step the code belongs to: the current one, moved by the offset it matched at.
  const step = Math.floor(nowS / PERIOD_S) + result.delta;
  if (account.two_factor_last_step !== null && step <= Number(account.two_factor_last_step))
    throw refuse();
  await tx.query('UPDATE accounts SET two_factor_last_step = $2 WHERE id = $1', [accountId, step]);
}

/**
 * verifyTwoFactor: one transaction. In: account id, a code from the secret of beginTwoFactor.
 * Out: nothing; two-factor is on. Fails: invalid_two_factor_code.
 */
export async function verifyTwoFactor(
  ctx: StoreContext,
  tx: SqlQueryable,
  accountId: string,
  code: string,
): Promise<void> {
  const account = await lockAccount(tx, accountId);
  await consumeCode(ctx, tx, accountId, account, code);
  await tx.query('UPDATE accounts SET two_factor_enabled = true WHERE id = $1', [accountId]);
}

/**
 * disableTwoFactor: one transaction. In: account id, a current code.
 * Out: nothing; two-factor is off and its secret gone.
 * Fails: two_factor_required (no code), invalid_two_factor_code, parameter_invalid (not on).
 */
export async function disableTwoFactor(
  ctx: StoreContext,
  tx: SqlQueryable,
  accountId: string,
  code: string | undefined,
): Promise<void> {
  const account = await lockAccount(tx, accountId);
  if (!account.two_factor_enabled)
    throw new SpendgateError('parameter_invalid', 'Two-factor authentication is not on.');
  if (code === undefined)
    throw new SpendgateError('two_factor_required', 'Send a current code in X-Two-Factor-Code.');
  await consumeCode(ctx, tx, accountId, account, code);
  await tx.query(
    'UPDATE accounts SET two_factor_enabled = false, two_factor_secret_enc = NULL, two_factor_last_step = NULL WHERE id = $1',
    [accountId],
  );
}

/**
 * requireTwoFactor: for operations behind a second factor (Reveal Card Details). Passes when
 * the account has two-factor off; otherwise needs a current, unused code.
 * Fails: two_factor_required, invalid_two_factor_code.
 */
export async function requireTwoFactor(
  ctx: StoreContext,
  tx: SqlQueryable,
  accountId: string,
  code: string | undefined,
): Promise<void> {
  const account = await lockAccount(tx, accountId);
  if (!account.two_factor_enabled) return;
  if (code === undefined)
    throw new SpendgateError(
      'two_factor_required',
      'This request needs a code in X-Two-Factor-Code.',
    );
  await consumeCode(ctx, tx, accountId, account, code);
}
