/* The API's objects as the console reads them (docs/openapi.json has them in full). */

export interface Vault {
  id: string;
  name: string;
  currency: string;
  network: string;
  status: string;
  balance: { available: string; pending: string; ledger: string };
  /** When `available` went below zero by a network-mandated posting; null otherwise. */
  overdrawnAt?: string | null;
  createdAt: string;
}

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

export interface Transaction {
  id: string;
  type: string;
  status: string;
  vaultId: string;
  cardId: string | null;
  amount: string;
  currency: string;
  merchant: { name: string; mcc: string; country: string; city: string | null } | null;
  declineCode: string | null;
  declineReason: Reason | null;
  shadowMatches: Reason[];
  createdAt: string;
}

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

export interface WebhookEndpoint {
  id: string;
  url: string;
  events: string[];
  status: string;
  createdAt: string;
}

export interface WebhookDelivery {
  id: string;
  eventId: string;
  eventType: string;
  attempt: number;
  status: string;
  statusCode: number | null;
  durationMs: number | null;
  error: string | null;
  createdAt: string;
}

export interface FeedEvent {
  id: string;
  type: 'authorization.approved' | 'authorization.declined';
  createdAt: string;
  data: { object: Transaction };
}

/** GET /v1/transactions/{id}/timeline: every lifecycle message, oldest first. */
export interface Timeline {
  transactionId: string;
  currency: string;
  messages: {
    kind: string;
    amount: string;
    heldAmount: string;
    approved: boolean | null;
    networkTransactionId: string | null;
    createdAt: string;
  }[];
  truncated: boolean;
}

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
