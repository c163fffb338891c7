import { parseArgs } from 'node:util';
import { API_SCOPES, type ApiScope, type Store } from '../store/store.js';

/*
 * `spendgate keys create --account NAME --mode test|live [--scopes a,b] [--create-account]`:
 * prints a new key once. An account is made only when asked (`--create-account`), so a typo
 * in a name is an error, never a new account. `keys list --account NAME`: the keys, never the
 * secrets. `keys revoke KEY_ID`. Keys are stored only as their SHA-256. A name or key that
 * names nothing is a `NotFoundError` (exit 1). `keys rotate-master` is rotate-master.ts.
 */

export const KEYS_USAGE =
  'usage: spendgate keys create --account NAME --mode test|live [--scopes a,b] [--create-account]\n' +
  `       (scopes: ${API_SCOPES.join(', ')}; without --scopes, all of them)\n` +
  '       spendgate keys list --account NAME\n' +
  '       spendgate keys revoke KEY_ID\n' +
  '       spendgate keys rotate-master [--batch-size N]';

export class UsageError extends Error {
  override readonly name = 'UsageError';
}

/** A command whose account or key does not exist: its message says what to do instead. */
export class NotFoundError extends Error {
  override readonly name = 'NotFoundError';
}

async function accountNamed(
  store: Store,
  name: string | undefined,
  create: boolean,
): Promise<{ id: string; name: string }> {
  if (name === undefined || name === '' || name.length > 100) {
    throw new UsageError('--account NAME is required (1 to 100 characters)');
  }
  if (create) return store.findOrCreateAccount(name);
  const account = await store.findAccountByName(name);
  if (account === null) {
    throw new NotFoundError(
      `no account named "${name}"; to make it, run keys create again with --create-account`,
    );
  }
  return account;
}

function isApiScope(value: string): value is ApiScope {
  return (API_SCOPES as readonly string[]).includes(value);
}

/** Runs a keys command; returns the lines to print. */
export async function runKeys(store: Store, argv: readonly string[]): Promise<string[]> {
  const [action, ...rest] = argv;
  let parsed;
  try {
    parsed = parseArgs({
      args: rest,
      options: {
        account: { type: 'string' },
        mode: { type: 'string' },
        scopes: { type: 'string' },
        'create-account': { type: 'boolean' },
      },
      allowPositionals: true,
      strict: true,
    });
  } catch (error) {
    throw new UsageError(
      `${error instanceof Error ? error.message : String(error)}\n${KEYS_USAGE}`,
    );
  }
  const { values, positionals } = parsed;
  switch (action) {
    case 'create': {
      const mode = values.mode;
      if (mode !== 'test' && mode !== 'live') throw new UsageError('--mode must be test or live');
      const scopes = (values.scopes ?? '').split(',').filter((scope) => scope !== '');
      const unknown = scopes.filter((scope) => !isApiScope(scope));
      if (unknown.length > 0)
        throw new UsageError(
          `unknown scopes: ${unknown.join(', ')}; scopes are ${API_SCOPES.join(', ')}`,
        );
      const account = await accountNamed(store, values.account, values['create-account'] === true);
      const { key, record } = await store.createApiKey({
        accountId: account.id,
        mode: mode,
        scopes: scopes.filter(isApiScope),
      });
      return [
        `account ${account.name} (${account.id}), key ${record.id}, mode ${record.mode}, scopes ${record.scopes.join(',')}`,
        key,
        'Store this key now: it is not shown again.',
      ];
    }
    case 'list': {
      const account = await accountNamed(store, values.account, false);
      const keys = await store.listApiKeys(account.id);
      return keys.map((key) => {
        const state =
          key.revokedAtMs !== null
            ? 'revoked'
            : key.expiresAtMs !== null && key.expiresAtMs <= Date.now()
              ? 'expired'
              : 'active';
        return `${key.id}  ${key.prefix}...  ${key.mode}  ${state}  ${key.scopes.join(',')}`;
      });
    }
    case 'revoke': {
      const keyId = positionals[0];
      if (keyId === undefined) throw new UsageError('KEY_ID is required');
      if (!(await store.revokeApiKey(keyId))) {
        throw new NotFoundError(`no active key ${keyId.slice(0, 64)}: keys list shows the keys`);
      }
      return [`revoked ${keyId}`];
    }
    default:
      throw new UsageError(KEYS_USAGE);
  }
}
