import { parseArgs } from 'node:util';
import { assert } from '../core/index.js';
import { API_SCOPES, type ApiScope, type Store } from '../store/store.js';
import { unknownWord } from './suggest.js';
import { NotFoundError, UsageError } from './usage-error.js';

export { NotFoundError, UsageError };

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

async function accountNamed(
  store: Store,
  name: string | undefined,
  create: boolean,
): Promise<{ id: string; name: string }> {
  const checked = checkedAccount(name);
  if (create) return store.findOrCreateAccount(checked);
  const account = await store.findAccountByName(checked);
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

const KEYS_ACTIONS = ['create', 'list', 'revoke', 'rotate-master'] as const;
const KEYS_FLAGS = ['--account', '--mode', '--scopes', '--create-account'] as const;

/** A keys command read and checked before any database is opened. */
export interface KeysArgs {
  readonly action: 'create' | 'list' | 'revoke';
  readonly account: string | undefined;
  readonly mode: 'test' | 'live' | undefined;
  readonly scopes: readonly ApiScope[];
  readonly createAccount: boolean;
  readonly keyId: string | undefined;
}

function checkedAccount(name: string | undefined): string {
  if (name === undefined || name === '' || name.length > 100) {
    throw new UsageError('--account NAME is required (1 to 100 characters)');
  }
  return name;
}

/** Reads `keys create|list|revoke ...`: a mistyped word is named, with the nearest known one. */
export function parseKeysArgs(argv: readonly string[]): KeysArgs {
  const [action, ...rest] = argv;
  if (action !== 'create' && action !== 'list' && action !== 'revoke') {
    if (action === undefined) throw new UsageError(KEYS_USAGE);
    throw new UsageError(`${unknownWord('keys command', action, KEYS_ACTIONS)}\n${KEYS_USAGE}`);
  }
  for (const word of rest) {
    const flag = word.split('=')[0] ?? word;
    if (flag.startsWith('-') && !(KEYS_FLAGS as readonly string[]).includes(flag)) {
      throw new UsageError(unknownWord('flag', flag, KEYS_FLAGS));
    }
  }
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
  const scopes = (values.scopes ?? '').split(',').filter((scope) => scope !== '');
  const unknown = scopes.filter((scope) => !isApiScope(scope));
  if (unknown.length > 0)
    throw new UsageError(
      `unknown scopes: ${unknown.join(', ')}; scopes are ${API_SCOPES.join(', ')}`,
    );
  const mode = values.mode;
  if (action === 'create' && mode !== 'test' && mode !== 'live') {
    throw new UsageError(`--mode must be test or live, not "${(mode ?? '').slice(0, 20)}"`);
  }
  if (action !== 'revoke') checkedAccount(values.account);
  if (action === 'revoke' && positionals[0] === undefined) {
    throw new UsageError('KEY_ID is required');
  }
  return {
    action,
    account: values.account,
    mode: mode === 'test' || mode === 'live' ? mode : undefined,
    scopes: scopes.filter(isApiScope),
    createAccount: values['create-account'] === true,
    keyId: positionals[0],
  };
}

/** Runs a keys command; returns the lines to print. */
export async function runKeys(store: Store, argv: readonly string[]): Promise<string[]> {
  return runParsedKeys(store, parseKeysArgs(argv));
}

/** Runs a keys command already read by parseKeysArgs; returns the lines to print. */
export async function runParsedKeys(store: Store, args: KeysArgs): Promise<string[]> {
  switch (args.action) {
    case 'create': {
      assert(args.mode !== undefined, 'parseKeysArgs checks --mode');
      const account = await accountNamed(store, args.account, args.createAccount);
      const { key, record } = await store.createApiKey({
        accountId: account.id,
        mode: args.mode,
        scopes: [...args.scopes],
      });
      return [
        `account ${account.name} (${account.id}), key ${record.id}, mode ${record.mode}, scopes ${record.scopes.join(',')}`,
        key,
        'Store this key now: it is not shown again.',
      ];
    }
    case 'list': {
      const account = await accountNamed(store, args.account, false);
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
      const keyId = args.keyId;
      assert(keyId !== undefined, 'parseKeysArgs checks KEY_ID');
      if (!(await store.revokeApiKey(keyId))) {
        throw new NotFoundError(`no active key ${keyId.slice(0, 64)}: keys list shows the keys`);
      }
      return [`revoked ${keyId}`];
    }
  }
}
