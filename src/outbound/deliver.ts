import type { OutboundMode } from './webhook-url.js';
import { sendWebhook, type DeliveryFailure } from './send.js';
import { signedHeaders } from './sign.js';

/** The contract's limit on one delivery attempt (section 13): the worker's and Test Webhook's. */
export const DELIVERY_ATTEMPT_TIMEOUT_MS = 15_000;

export interface DeliveryOutcome {
  readonly statusCode: number | null;
  readonly durationMs: number;
  /** Null when delivered; else the failure's class (`http_status` for a non-2xx answer). */
  readonly error: DeliveryFailure | null;
  readonly delivered: boolean;
}

/**
 * One signed delivery attempt of an event, as the delivery worker and Test Webhook both make
 * it: signed now (Standard Webhooks), sent under the address policy, the duration in whole
 * milliseconds (as recorded), and whether it counts as delivered (2xx only, contract 13).
 */
export async function deliverSigned(attempt: {
  readonly url: string;
  readonly mode: OutboundMode;
  readonly secret: string;
  readonly eventId: string;
  readonly body: string;
  readonly timeoutMs: number;
}): Promise<DeliveryOutcome> {
  const result = await sendWebhook({
    url: attempt.url,
    mode: attempt.mode,
    headers: signedHeaders(attempt.secret, attempt.eventId, attempt.body, new Date()),
    body: attempt.body,
    timeoutMs: attempt.timeoutMs,
  });
  const status = result.statusCode;
  const delivered = status !== null && status >= 200 && status < 300;
  return {
    statusCode: status,
    durationMs: Math.round(result.durationMs),
    error: delivered ? null : (result.error ?? 'http_status'),
    delivered,
  };
}
