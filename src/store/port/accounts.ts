import type { AccountRecord, Mode } from '../../core/index.js';

/** The scopes of contract section 2; a key made without a list has all of them. */
export const API_SCOPES = [
  'vaults:read',
  'vaults:write',
  'cards:read',
  'cards:write',
  'cards:reveal',
  'transactions:read',
  'transactions:metadata',
  'policies:write',
  'transfers:write',
  'webhooks:write',
  'authorizations:write',
  // v1.1: two-factor enrolment and removal (migration 0006 gives it to keys of all v1.0 scopes).
  'account:write',
] as const;

export type ApiScope = (typeof API_SCOPES)[number];

export interface ApiKeyRecord {
  readonly id: string;
  readonly accountId: string;
  readonly mode: Mode;
  readonly prefix: string;
  readonly scopes: readonly ApiScope[];
  readonly createdAtMs: number;
  readonly expiresAtMs: number | null;
  readonly revokedAtMs: number | null;
}

export type Authentication =
  | { readonly status: 'ok'; readonly key: ApiKeyRecord }
  | { readonly status: 'unknown' | 'revoked' | 'expired' };

/** Wrong codes an account may send within the window (the column's CHECK says the same). */
export const TWO_FACTOR_FAILURES_MAX = 5;

export const TWO_FACTOR_FAILURE_WINDOW_MS = 15 * 60_000;

/** Why a two-factor check refused; the caller throws it once the transaction has committed. */
export interface TwoFactorRefusal {
  readonly code: 'invalid_two_factor_code' | 'rate_limit_exceeded';
  /** rate_limit_exceeded: seconds until the window lets a code be tried again (Retry-After). */
  readonly retryAfterS: number | null;
  /** This wrong code was the one that locked the account (the caller logs each lockout). */
  readonly lockoutStarted: boolean;
}

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
