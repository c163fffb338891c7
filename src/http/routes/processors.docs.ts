import type { OperationDoc } from '../operation-docs/doc.js';
import {
  AUTHORIZATION_ID,
  IDEMPOTENT,
  LATER,
  PROCESSOR,
  PROCESSOR_ID,
  list,
} from '../operation-docs/examples.js';

/** The reference page's text and examples of the processors operations, by operationId. */
export const PROCESSORS_DOCS = {
  createProcessorConnection: {
    summary: 'Connect a card processor',
    description:
      'Registers a processor connection (contract section 17): Stripe Issuing (`signingSecret`, ' +
      "the webhook endpoint's `whsec_` secret), Lithic (`asaSecret`, and `apiKey` where needed) " +
      'or Marqeta (the `username` and `password` its JIT Funding gateway calls with). The ' +
      'processor then sends its messages to `url`, a path of this server. The secrets are ' +
      'kept encrypted under the master key and answered this once; an idempotent replay ' +
      "answers the connection without them. `mode` must be the key's. At most 100 " +
      'connections an account and mode.',
    returns: 'The connection, with its secrets this once.',
    errors: [
      ...IDEMPOTENT,
      {
        code: 'parameter_invalid',
        message: 'A Stripe signing secret starts with whsec_.',
        param: 'signingSecret',
      },
      { code: 'parameter_missing', message: 'signingSecret is required.', param: 'signingSecret' },
    ],
    example: { ...PROCESSOR, secrets: { signingSecret: 'whsec_EXAMPLEonlyNotARealSigningSecret' } },
    requestExample: {
      processor: 'stripe',
      mode: 'test',
      signingSecret: 'whsec_EXAMPLEonlyNotARealSigningSecret',
    },
  },
  listProcessorConnections: {
    summary: 'List processor connections',
    description:
      "The account's connections in the key's mode, without their secrets (at most 100: one page).",
    returns: 'The connections.',
    errors: [],
    example: list([PROCESSOR]),
  },
  getProcessorConnection: {
    summary: 'Retrieve a processor connection',
    description: 'The connection, without its secrets.',
    returns: 'The connection.',
    errors: ['processor_not_found'],
    example: PROCESSOR,
  },
  deleteProcessorConnection: {
    summary: 'Delete a processor connection',
    description:
      'Erases its secrets (nothing verifies any more: its messages are refused) and unties the ' +
      'cards tied to it.',
    returns: 'The deletion.',
    errors: [...IDEMPOTENT, 'processor_not_found'],
    example: { object: 'processor_connection', id: PROCESSOR_ID, deleted: true },
  },
  rotateProcessorSecrets: {
    summary: "Rotate a processor connection's secrets",
    description:
      'Replaces the secrets with the ones given (the same names as at creation). The current ' +
      'ones keep verifying for `graceSeconds` (default a day, at most 7 days; 0: not at all), ' +
      "so messages signed either way verify while the processor's side is switched over. The " +
      'new secrets are answered this once.',
    returns: 'The connection, with its new secrets this once.',
    errors: [...IDEMPOTENT, 'processor_not_found'],
    example: {
      ...PROCESSOR,
      rotatedAt: LATER,
      previousSecretsUntil: '2026-03-03T15:30:00.000Z',
      secrets: { signingSecret: 'whsec_EXAMPLEonlyNotARealSigningSecretNew' },
    },
    requestExample: {
      signingSecret: 'whsec_EXAMPLEonlyNotARealSigningSecretNew',
      graceSeconds: 86400,
    },
  },
  receiveStripeEvent: {
    summary: 'Receive a Stripe Issuing event',
    description:
      "Stripe's webhook endpoint for the connection (docs/processors.md), with no API key: " +
      "the `Stripe-Signature` over the raw body, with the connection's signing secret (or the " +
      "previous one through a rotation's grace), within Stripe's tolerance of 5 minutes. " +
      '`issuing_authorization.request` is answered at once with `Stripe-Version` and ' +
      '`{approved, amount?, metadata}` (a refusal, such as a card tied to no card of the ' +
      'connection, is `approved: false`); `issuing_authorization.created` and `.updated` and ' +
      '`issuing_transaction.created` become advice, increments, reversals, captures, force ' +
      'captures and refunds, answered `{received: true}`. Any other event type, a malformed ' +
      'object or a bad signature: the error body, and nothing recorded.',
    returns: 'The decision (requests), or the receipt (other events).',
    errors: ['invalid_signature', 'processor_not_found', 'card_not_found', 'transaction_not_found'],
    example: {
      approved: true,
      metadata: { spendgate_transaction_id: AUTHORIZATION_ID },
    },
    requestExample: {
      id: 'evt_1ExampleOnly',
      object: 'event',
      type: 'issuing_authorization.request',
      livemode: false,
      data: { object: { id: 'iauth_1ExampleOnly', object: 'issuing.authorization' } },
    },
  },
  receiveLithicMessage: {
    summary: 'Receive a Lithic ASA request or transaction event',
    description:
      "Lithic's ASA responder and transaction webhook for the connection (docs/processors.md), " +
      "with no API key: Lithic's Standard Webhooks signature (`webhook-id`, " +
      "`webhook-timestamp`, `webhook-signature`) over the raw body, with the connection's " +
      '`asaSecret`, within 5 minutes. An ASA request (`status` AUTHORIZATION, ' +
      'CREDIT_AUTHORIZATION, FINANCIAL_AUTHORIZATION, FINANCIAL_CREDIT_AUTHORIZATION, ' +
      'BALANCE_INQUIRY) is answered at once, 200, `{token, result, approved_amount?}` (a ' +
      'refusal is a decline result); `card_transaction.updated` events become increments, ' +
      'advice, captures, refunds and reversals, answered `{received: true}`. A bad signature ' +
      'or a malformed event: the error body, and nothing recorded.',
    returns: 'The ASA decision, or the receipt (transaction events).',
    errors: ['invalid_signature', 'processor_not_found', 'card_not_found', 'transaction_not_found'],
    example: { token: 'b1a2c3d4-0000-4000-8000-000000000001', result: 'APPROVED' },
    requestExample: {
      token: 'b1a2c3d4-0000-4000-8000-000000000001',
      status: 'AUTHORIZATION',
    },
  },
  receiveMarqetaJitRequest: {
    summary: 'Receive a Marqeta Gateway JIT Funding request',
    description:
      "Marqeta's JIT Funding gateway for the connection (docs/processors.md), with no API " +
      "key: HTTP basic auth with the connection's `username` and `password` (or the previous " +
      "ones through a rotation's grace). Every JIT method (authorization, incremental, advice, " +
      'capture, reversal, refund, PIN debit, force capture, account verification, balance ' +
      "inquiry) is answered with its `jit_funding` object within Marqeta's 3 s: 200 funded, " +
      '402 with a `decline_reason` (a refusal, such as an unknown card, is a decline). A wrong ' +
      'basic auth or a body with no `jit_funding`: the error body, and nothing recorded.',
    returns: 'The jit_funding answer.',
    errors: ['invalid_signature', 'processor_not_found', 'parameter_invalid'],
    example: {
      jit_funding: {
        token: 'jit_1ExampleOnly',
        method: 'pgfs.authorization',
        user_token: 'user_1ExampleOnly',
        amount: 10,
      },
    },
    requestExample: {
      type: 'authorization',
      token: 'txn_1ExampleOnly',
      card_token: 'card_1ExampleOnly',
      gpa_order: {
        jit_funding: { token: 'jit_1ExampleOnly', method: 'pgfs.authorization', amount: 10 },
      },
    },
  },
} satisfies Record<string, OperationDoc>;
