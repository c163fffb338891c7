/*
 * Outbound HTTP for webhook delivery, with SSRF protection (contract section 13). The HTTP
 * adapter checks an endpoint URL at registration with `checkWebhookUrl`; the webhook worker
 * delivers with `sendWebhook`, which applies the same address policy at connection time.
 * Imports only node built-ins, src/core and `standardwebhooks` (the signature, sign.ts).
 */

export {
  ADDRESS_CHARS_MAX,
  classifyAddress,
  isAllowedAddress,
  isForbiddenAddress,
  type AddressClass,
} from './address-policy.js';
export { LOOKUP_ADDRESSES_MAX, systemLookup, type LookupAddress, type LookupFn } from './lookup.js';
export {
  DELIVERY_FAILURES,
  REQUEST_BODY_BYTES_MAX,
  REQUEST_HEADERS_COUNT_MAX,
  RESPONSE_BODY_BYTES_MAX,
  sendWebhook,
  TIMEOUT_MS_MAX,
  type DeliveryFailure,
  type SendWebhookOptions,
  type WebhookRequest,
  type WebhookResult,
} from './send.js';
export {
  checkWebhookUrl,
  LOOKUP_TIMEOUT_MS_MAX,
  URL_CHARS_MAX,
  type CheckWebhookUrlOptions,
  type OutboundMode,
} from './webhook-url.js';
export { DELIVERY_ATTEMPT_TIMEOUT_MS, deliverSigned, type DeliveryOutcome } from './deliver.js';
