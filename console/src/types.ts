import type { components } from '../../src/client/api-types';

/*
 * The API's objects as the console reads them: the generated client types where the console
 * has moved to them, hand-written shapes for the rest (docs/openapi.json has them in full).
 */

type Schemas = components['schemas'];

export type PolicyVersion = Schemas['PolicyVersion'];
export type WebhookTest = Schemas['WebhookTest'];

export type Vault = Schemas['Vault'];

export interface Card {
  id: string;
  vaultId: string;
  status: string;
  last4: string;
  expMonth: number;
  expYear: number;
  cardholderName: string;
  createdAt: string;
}

export interface Reason {
  rule: string;
  message: string;
  policy?: string;
}

/** As the API answers it (src/client/api-types.ts), `failureReason` included. */
export type Transaction = Schemas['Transaction'];

export interface BalanceSnapshot {
  date: string;
  ledger: string;
  available: string;
  pending: string;
  final: boolean;
}

export interface ApiKeyInfo {
  id: string;
  mode: 'test' | 'live';
  scopes: string[];
}

export type WebhookEndpoint = Schemas['WebhookEndpoint'];

export type WebhookDelivery = Schemas['WebhookDelivery'];

export interface FeedEvent {
  id: string;
  type: 'authorization.approved' | 'authorization.declined';
  createdAt: string;
  data: { object: Transaction };
}

/**
 * GET /v1/transactions/{id}/timeline: every lifecycle message, oldest first; a capture
 * converted at a price with what it captured in the billing currency and its own rate.
 */
export type Timeline = Schemas['Timeline'];

/** GET /v1/vaults/{id}/policy/limits: each limit of the current policy, as of now. */
export interface PolicyLimits {
  vaultId: string;
  version: number | null;
  currency: string;
  asOf: string;
  limits: {
    rule: string;
    mode: string;
    interval: string;
    amount: string | null;
    count: number | null;
    used: string | null;
    remaining: string | null;
    resetsAt: string | null;
  }[];
}
