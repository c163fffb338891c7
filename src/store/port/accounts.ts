import type { AccountRecord, Mode } from '../../core/index.js';
import type { ApiKeyRecord, ApiScope, Authentication } from '../ops/accounts.js';
import type { TwoFactorRefusal } from '../ops/two-factor.js';

export {
  API_SCOPES,
  type ApiKeyRecord,
  type ApiScope,
  type Authentication,
} from '../ops/accounts.js';
export {
  TWO_FACTOR_FAILURE_WINDOW_MS,
  TWO_FACTOR_FAILURES_MAX,
  type TwoFactorRefusal,
} from '../ops/two-factor.js';

export interface CreateApiKeyInput {
  readonly accountId: string;
  readonly mode: Mode;
  /** Empty: every scope. */
  readonly scopes: readonly ApiScope[];
  readonly expiresAtMs?: number | null;
}

/** Accounts, their API keys and their two-factor setting (contract sections 2 and 7). */
export interface AccountOperations {
  findAccountByName(name: string): Promise<AccountRecord | null>;
  findOrCreateAccount(name: string): Promise<AccountRecord>;
  getAccount(accountId: string): Promise<AccountRecord | null>;
  beginTwoFactor(accountId: string): Promise<{ secret: string; otpauthUri: string }>;
  verifyTwoFactor(accountId: string, code: string): Promise<TwoFactorRefusal | null>;
  disableTwoFactor(accountId: string, code: string | undefined): Promise<TwoFactorRefusal | null>;
  requireTwoFactor(accountId: string, code: string | undefined): Promise<TwoFactorRefusal | null>;
  hasAnyApiKey(): Promise<boolean>;
  createApiKey(input: CreateApiKeyInput): Promise<{ key: string; record: ApiKeyRecord }>;
  /** One read-only statement, run without a transaction of its own: every request pays it. */
  authenticateApiKey(key: string): Promise<Authentication>;
  listApiKeys(accountId: string): Promise<ApiKeyRecord[]>;
  revokeApiKey(keyId: string): Promise<boolean>;
}
