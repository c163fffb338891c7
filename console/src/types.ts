import type { components } from '../../src/client/api-types';

/*
 * The API's objects as the console reads them: the client's types, generated from
 * docs/openapi.json (src/client/api-types.ts), so a change of the API that breaks the
 * console breaks its build. The one shape written here is the live feed's event
 * (GET /v1/events/stream), which the document does not describe as a schema.
 */

type Schemas = components['schemas'];

export type PolicyVersion = Schemas['PolicyVersion'];
export type WebhookTest = Schemas['WebhookTest'];

export type Vault = Schemas['Vault'];

export type Card = Schemas['Card'];

/** A decision (or simulated one) as Simulate Policy answers it. */
export type AuthorizationDecision = Schemas['AuthorizationDecision'];

/** A policy backtest and its result, as the backtest routes answer them. */
export type PolicyBacktest = Schemas['PolicyBacktest'];
export type BacktestResult = Schemas['BacktestResult'];

/** As the API answers it (src/client/api-types.ts), `failureReason` included. */
export type Transaction = Schemas['Transaction'];

export type BalanceSnapshot = Schemas['BalanceSnapshot'];

/** GET /v1/account/key: the key the console signed in with, its mode and scopes. */
export type ApiKeyInfo = Schemas['ApiKey'];

export type WebhookEndpoint = Schemas['WebhookEndpoint'];

export type WebhookDelivery = Schemas['WebhookDelivery'];

/** An event of the live feed: a decided authorization, with the transaction as answered. */
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
export type PolicyLimits = Schemas['PolicyLimits'];
