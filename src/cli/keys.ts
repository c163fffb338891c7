import { parseArgs } from 'node:util';
import { API_SCOPES, type ApiScope } from '../store/ops/accounts.js';
import type { Store } from '../store/store.js';

/**
 * `spendgate keys create --account NAME --mode test|live [--scopes a,b]`: prints a new key once
 * (creating the account if it is new). `keys list --account NAME`: the keys, never the
 * secrets. `keys revoke KEY_ID`. Keys are stored only as their SHA-256 (contract section 2).
 */
export const KEYS_USAGE =
  'usage: spendgate keys create --account NAME --mode test|live [--scopes a,b]\n' +
  `       (scopes: ${API_SCOPES.join(', ')}; without --scopes, all of them)\n` +
  '       spendgate keys list --account NAME\n' +
  '       spendgate keys revoke KEY_ID';

export class UsageError extends Error {
  override readonly name = 'UsageError';
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
      if (values.account === undefined || values.account === '' || values.account.length > 100) {
        throw new UsageError('--account NAME is required (1 to 100 characters)');
      }
      if (mode !== 'test' && mode !== 'live') throw new UsageError('--mode must be test or live');
      const scopes = (values.scopes ?? '').split(',').filter((scope) => scope !== '');
      const unknown = scopes.filter((scope) => !isApiScope(scope));
      if (unknown.length > 0)
        throw new UsageError(
          `unknown scopes: ${unknown.join(', ')}; scopes are ${API_SCOPES.join(', ')}`,
        );
      const account = await store.findOrCreateAccount(values.account);
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
      if (values.account === undefined) throw new UsageError('--account NAME is required');
      const account = await store.findOrCreateAccount(values.account);
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
      return [(await store.revokeApiKey(keyId)) ? `revoked ${keyId}` : `no active key ${keyId}`];
    }
    default:
      throw new UsageError(KEYS_USAGE);
  }
}
