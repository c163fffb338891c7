import { Webhook } from 'standardwebhooks';

/**
 * Standard Webhooks signing (contract section 13), through the `standardwebhooks` library so
 * that a receiver using it verifies a delivery as is: `webhook-id` is the event's id (stable
 * across retries, so a receiver can drop repeats), `webhook-timestamp` the time of this
 * attempt in seconds, `webhook-signature` `v1,<base64 HMAC-SHA256>` of id.timestamp.body.
 */
export function signedHeaders(
  secret: string,
  eventId: string,
  body: string,
  at: Date,
): Record<string, string> {
  return {
    'webhook-id': eventId,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': new Webhook(secret).sign(eventId, at, body),
    'user-agent': 'spendgate-webhooks/1',
  };
}
