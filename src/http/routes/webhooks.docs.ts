import type { OperationDoc } from '../operation-docs/doc.js';
import {
  DELIVERY_ID,
  EVENT_ID,
  IDEMPOTENT,
  LATER,
  PAGINATION,
  WEBHOOK,
  WEBHOOK_ID,
  list,
} from '../operation-docs/examples.js';

/** The reference page's text and examples of the webhooks operations, by operationId. */
export const WEBHOOKS_DOCS = {
  createWebhook: {
    summary: 'Create a webhook endpoint',
    description:
      'Registers an endpoint for events (named types, or `*` for all) and answers its `whsec_` ' +
      'signing secret, this once: deliveries are signed with it (Standard Webhooks). With an ' +
      '`Idempotency-Key`, a retry answers the first endpoint with `Idempotent-Replayed: true` ' +
      'and creates nothing, but without `secret`, which is not stored for replay: a client ' +
      'that lost the first answer deletes the endpoint and creates another. The url must be ' +
      'https in live mode; test mode also allows http. It must not be or resolve to a ' +
      'private, link-local, metadata or other non-public address in either mode; test mode ' +
      'allows loopback (a receiver on the same machine). At most 100 endpoints an account.',
    returns: 'The endpoint, with its signing secret.',
    errors: [
      ...IDEMPOTENT,
      {
        code: 'parameter_invalid',
        message: 'url must use https in live mode.',
        param: 'url',
      },
    ],
    example: { ...WEBHOOK, secret: 'whsec_EXAMPLEonlyNotARealSigningSecret000000' },
    requestExample: {
      url: WEBHOOK.url,
      events: WEBHOOK.events,
      description: WEBHOOK.description,
    },
  },
  listWebhooks: {
    summary: 'List webhook endpoints',
    description:
      "The account's endpoints in the key's mode, without their secrets. At most 100, so one " +
      'page holds them all.',
    returns: 'Every endpoint.',
    errors: [],
    example: list([WEBHOOK]),
  },
  deleteWebhook: {
    summary: 'Delete a webhook endpoint',
    description: 'Disables the endpoint for good: no more deliveries go to it.',
    returns: 'The deletion.',
    errors: [...IDEMPOTENT, 'webhook_not_found'],
    example: { object: 'webhook_endpoint', id: WEBHOOK_ID, deleted: true },
  },
  testWebhook: {
    summary: 'Send a test event',
    description:
      'Sends one signed `webhook.test` event to the endpoint now and answers how it went ' +
      '(waiting up to 15 s). The attempt is recorded with the deliveries; it is not retried.',
    returns: "The attempt's outcome.",
    errors: ['webhook_not_found'],
    example: {
      object: 'webhook_test',
      eventId: EVENT_ID,
      delivered: true,
      statusCode: 200,
      durationMs: 84,
      error: null,
    },
  },
  listWebhookDeliveries: {
    summary: "List an endpoint's deliveries",
    description:
      'Each delivery attempt to the endpoint: its event, attempt number, status code and ' +
      'duration, and for a failure its class (`connection_failed`, `timeout`, `tls_error`, ' +
      '`http_status`, `address_forbidden`, `invalid_url`), never the network error text. ' +
      PAGINATION,
    returns: 'A page of delivery attempts.',
    errors: ['webhook_not_found'],
    example: list([
      {
        id: DELIVERY_ID,
        object: 'webhook_delivery',
        endpointId: WEBHOOK_ID,
        eventId: EVENT_ID,
        eventType: 'authorization.approved',
        attempt: 2,
        status: 'failed',
        statusCode: 503,
        durationMs: 120,
        error: 'http_status',
        createdAt: LATER,
      },
    ]),
  },
  streamEvents: {
    summary: 'Stream authorization events',
    description:
      "The caller's `authorization.approved` and `authorization.declined` events as " +
      'server-sent events (`text/event-stream`), as they are committed: each as `event: <type>`, ' +
      '`id: <event id>` and `data: <the event, as webhooks receive it>`, with a comment line ' +
      'every 15 seconds. Only events committed after the stream opens. Send the key in the ' +
      '`Authorization` header (read the body as a stream, e.g. with `fetch()`; never put a key ' +
      'in a URL). Each process serves a bounded number of streams (1,000, and 10 per account ' +
      'and mode); past them the answer is `service_unavailable`. A reader that falls 1 MiB ' +
      'behind is disconnected.',
    returns: 'A stream of events, open until either side closes it.',
    errors: ['service_unavailable'],
    example: `event: authorization.declined\nid: ${EVENT_ID}\ndata: {"id":"${EVENT_ID}","object":"event","type":"authorization.declined",...}\n\n`,
  },
} satisfies Record<string, OperationDoc>;
