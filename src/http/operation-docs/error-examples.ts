import type { ErrorCode } from '../../core/index.js';
import type { ErrorExample } from './doc.js';
import {
  AUTHORIZATION_ID,
  CARD_ID,
  SETTLEMENT_ID,
  TRANSFER_ID,
  VAULT_ID,
  WEBHOOK_ID,
} from './examples.js';

/** The example of each code where an operation does not give its own. */
export const ERROR_EXAMPLES: Readonly<Record<ErrorCode, Omit<ErrorExample, 'code'>>> = {
  parameter_invalid: { message: 'name must have at most 100 characters.', param: 'name' },
  parameter_missing: { message: 'amount is required.', param: 'amount' },
  invalid_json: { message: 'The request body is not valid JSON.' },
  invalid_currency: { message: 'EURC is not a supported currency.', param: 'currency' },
  invalid_amount: {
    message: 'amount has more than 6 decimal places, the scale of USDC.',
    param: 'amount',
  },
  invalid_address: {
    message: 'address must be a base58 Solana address of 32 bytes.',
    param: 'address',
  },
  currency_mismatch: {
    message: 'The destination vault holds another currency.',
    param: 'toVaultId',
  },
  invalid_signature: {
    message: "The Stripe-Signature header does not verify with the connection's signing secret.",
  },
  processor_not_found: { message: 'No processor connection pc_... exists.' },
  policy_invalid: {
    message:
      'interval must be one of "perTransaction", "daily", "weekly", "monthly", "yearly", "allTime".',
    param: 'limits[0].interval',
  },
  missing_api_key: { message: 'Send your API key as Authorization: Bearer <key>.' },
  invalid_api_key: { message: 'The API key is invalid.' },
  expired_api_key: { message: 'The API key has expired.' },
  insufficient_balance: {
    message: `Vault ${VAULT_ID} does not have that much available.`,
    param: 'amount',
  },
  authorization_failed: {
    message: 'Daily spend limit of 1000.00 USDC would be exceeded',
    param: 'amount',
  },
  card_declined: { message: 'The card transaction was declined.' },
  insufficient_scope: { message: 'This request needs the scope vaults:write.' },
  two_factor_required: {
    message: 'This request needs a code in X-Two-Factor-Code.',
  },
  invalid_two_factor_code: { message: 'The two-factor code is wrong or was already used.' },
  metadata_access_denied: {
    message: 'Only the owner or the counterparty may read this metadata.',
  },
  vault_not_found: { message: `No vault ${VAULT_ID} exists.`, param: 'id' },
  card_not_found: { message: `No card ${CARD_ID} exists.`, param: 'id' },
  transaction_not_found: {
    message: `No transaction ${AUTHORIZATION_ID} exists.`,
    param: 'id',
  },
  transfer_not_found: { message: `No transfer ${TRANSFER_ID} exists.`, param: 'id' },
  webhook_not_found: { message: `No webhook endpoint ${WEBHOOK_ID} exists.`, param: 'id' },
  policy_not_found: { message: `Vault ${VAULT_ID} has no authorization policy.`, param: 'id' },
  settlement_not_found: { message: `No settlement ${SETTLEMENT_ID} exists.`, param: 'id' },
  route_not_found: { message: 'No route GET /v1/vault.' },
  vault_frozen: { message: `Vault ${VAULT_ID} is frozen.`, param: 'id' },
  vault_closed: { message: `Vault ${VAULT_ID} is closed.`, param: 'id' },
  card_frozen: { message: `Card ${CARD_ID} is frozen.`, param: 'id' },
  card_cancelled: { message: `Card ${CARD_ID} is cancelled.`, param: 'id' },
  vault_has_pending_transactions: { message: `Vault ${VAULT_ID} has open holds.`, param: 'id' },
  transaction_not_pending: {
    message: `Transaction ${AUTHORIZATION_ID} is no longer pending.`,
    param: 'id',
  },
  duplicate_idempotency_key: {
    message: 'This Idempotency-Key was used with another request.',
    param: 'Idempotency-Key',
  },
  idempotency_key_in_use: {
    message: 'A request with this Idempotency-Key is still running.',
    param: 'Idempotency-Key',
  },
  payload_too_large: { message: 'The request body is too large.' },
  unsupported_media_type: { message: 'The request body must be application/json.' },
  rate_limit_exceeded: { message: 'Too many requests.' },
  internal_error: { message: 'An internal error occurred.' },
  service_unavailable: {
    message: 'Live transfers to Solana are unavailable: no Solana cluster is configured.',
  },
};
