export type ErrorType =
  | 'invalid_request_error'
  | 'authentication_error'
  | 'permission_error'
  | 'rate_limit_error'
  | 'server_error';

export interface CatalogueEntry {
  readonly status: number;
  readonly type: ErrorType;
  /** Default message; a thrown error usually carries a more specific one. */
  readonly message: string;
}

/**
 * The one error catalogue (contract section 3). Every error that leaves spendgate, from any
 * layer, is one of these codes with this status and type; `test/core/error-catalogue.test.ts`
 * keeps this table and the contract's table in step.
 */
export const ERROR_CATALOGUE = {
  parameter_invalid: {
    status: 400,
    type: 'invalid_request_error',
    message: 'A parameter is invalid.',
  },
  parameter_missing: {
    status: 400,
    type: 'invalid_request_error',
    message: 'A required parameter is missing.',
  },
  invalid_json: {
    status: 400,
    type: 'invalid_request_error',
    message: 'The request body is not valid JSON.',
  },
  invalid_currency: {
    status: 400,
    type: 'invalid_request_error',
    message: 'The currency is not supported.',
  },
  invalid_amount: { status: 400, type: 'invalid_request_error', message: 'The amount is invalid.' },
  invalid_address: {
    status: 400,
    type: 'invalid_request_error',
    message: 'The address is not a valid Solana address.',
  },
  currency_mismatch: {
    status: 400,
    type: 'invalid_request_error',
    message: 'The currencies of the vaults differ.',
  },
  policy_invalid: {
    status: 400,
    type: 'invalid_request_error',
    message: 'The authorization policy is invalid.',
  },
  invalid_signature: {
    status: 400,
    type: 'invalid_request_error',
    message: "The processor message's signature does not verify.",
  },
  missing_api_key: {
    status: 401,
    type: 'authentication_error',
    message: 'No API key was provided.',
  },
  invalid_api_key: {
    status: 401,
    type: 'authentication_error',
    message: 'The API key is invalid.',
  },
  expired_api_key: {
    status: 401,
    type: 'authentication_error',
    message: 'The API key has expired.',
  },
  insufficient_balance: {
    status: 402,
    type: 'invalid_request_error',
    message: 'The available balance does not cover the amount.',
  },
  authorization_failed: {
    status: 402,
    type: 'invalid_request_error',
    message: 'The transaction violates the authorization policy.',
  },
  card_declined: {
    status: 402,
    type: 'invalid_request_error',
    message: 'The card transaction was declined.',
  },
  insufficient_scope: {
    status: 403,
    type: 'permission_error',
    message: 'The API key lacks the scope for this operation.',
  },
  two_factor_required: {
    status: 403,
    type: 'permission_error',
    message: 'This operation needs a two-factor code.',
  },
  invalid_two_factor_code: {
    status: 403,
    type: 'permission_error',
    message: 'The two-factor code is wrong or was already used.',
  },
  metadata_access_denied: {
    status: 403,
    type: 'permission_error',
    message: 'Only the owner or the counterparty may read this metadata.',
  },
  vault_not_found: { status: 404, type: 'invalid_request_error', message: 'No such vault.' },
  card_not_found: { status: 404, type: 'invalid_request_error', message: 'No such card.' },
  transaction_not_found: {
    status: 404,
    type: 'invalid_request_error',
    message: 'No such transaction.',
  },
  transfer_not_found: { status: 404, type: 'invalid_request_error', message: 'No such transfer.' },
  webhook_not_found: {
    status: 404,
    type: 'invalid_request_error',
    message: 'No such webhook endpoint.',
  },
  policy_not_found: {
    status: 404,
    type: 'invalid_request_error',
    message: 'The vault has no authorization policy.',
  },
  settlement_not_found: {
    status: 404,
    type: 'invalid_request_error',
    message: 'No such settlement.',
  },
  processor_not_found: {
    status: 404,
    type: 'invalid_request_error',
    message: 'No such processor connection.',
  },
  route_not_found: { status: 404, type: 'invalid_request_error', message: 'No such route.' },
  vault_frozen: { status: 409, type: 'invalid_request_error', message: 'The vault is frozen.' },
  vault_closed: { status: 409, type: 'invalid_request_error', message: 'The vault is closed.' },
  card_frozen: { status: 409, type: 'invalid_request_error', message: 'The card is frozen.' },
  card_cancelled: {
    status: 409,
    type: 'invalid_request_error',
    message: 'The card is cancelled.',
  },
  vault_has_pending_transactions: {
    status: 409,
    type: 'invalid_request_error',
    message: 'The vault has open holds.',
  },
  transaction_not_pending: {
    status: 409,
    type: 'invalid_request_error',
    message: 'The transaction is no longer pending.',
  },
  duplicate_idempotency_key: {
    status: 409,
    type: 'invalid_request_error',
    message: 'The idempotency key was used with a different request.',
  },
  idempotency_key_in_use: {
    status: 409,
    type: 'invalid_request_error',
    message: 'A request with this idempotency key is still running.',
  },
  payload_too_large: {
    status: 413,
    type: 'invalid_request_error',
    message: 'The request body is too large.',
  },
  unsupported_media_type: {
    status: 415,
    type: 'invalid_request_error',
    message: 'The request body must be application/json.',
  },
  rate_limit_exceeded: {
    status: 429,
    type: 'rate_limit_error',
    message: 'Too many requests.',
  },
  internal_error: { status: 500, type: 'server_error', message: 'An internal error occurred.' },
  service_unavailable: {
    status: 503,
    type: 'server_error',
    message: 'The service is unavailable.',
  },
} as const satisfies Record<string, CatalogueEntry>;

export type ErrorCode = keyof typeof ERROR_CATALOGUE;

export function isErrorCode(value: string): value is ErrorCode {
  return Object.hasOwn(ERROR_CATALOGUE, value);
}
