import type { ErrorCode } from '../core/index.js';

/** An error example of an operation: the code, and the message and param it answers with. */
export interface ErrorExample {
  readonly code: ErrorCode;
  readonly message: string;
  readonly param?: string;
}

export interface OperationDoc {
  readonly summary: string;
  /** CommonMark, as the reference page renders it. */
  readonly description: string;
  /** The description of the success response. */
  readonly returns: string;
  /** A code alone is shown with its example of `ERROR_EXAMPLES`. */
  readonly errors: readonly (ErrorCode | ErrorExample)[];
  /** The success response's body. */
  readonly example: unknown;
  /** The request body, for an operation that takes one. */
  readonly requestExample?: unknown;
}

// Made-up ids of the form the service gives (a kind prefix and a UUIDv7 in hex).
const ACCOUNT_ID = 'acct_0193a4f1c2d87b3e9f1a2b3c4d5e6f70';
const VAULT_ID = 'vlt_0193a4f1c2e47d01a5b6c7d8e9f0a1b2';
const OTHER_VAULT_ID = 'vlt_0193a4f1c3017a2cb4d5e6f7a8b9c0d1';
const CARD_ID = 'card_0193a4f1c5b27e44a1b2c3d4e5f60718';
const AUTHORIZATION_ID = 'txn_0193a4f1c7d974c2b8e9f0a1b2c3d4e5';
const TRANSFER_ID = 'tr_0193a4f1c9e07f13a4b5c6d7e8f90a1b';
const TRANSFER_TRANSACTION_ID = 'txn_0193a4f1c9e07f13a4b5d1e2f3a4b5c6';
const DEPOSIT_ID = 'txn_0193a4f1cab17d20b1c2d3e4f5a6b7c8';
const WEBHOOK_ID = 'we_0193a4f1cb1a7c55b6c7d8e9f0a1b2c3';
const DELIVERY_ID = 'whd_0193a4f1cc2b7a01b2c3d4e5f6a7b8c9';
const EVENT_ID = 'evt_0193a4f1cc2b7a01a1b2c3d4e5f6a7b8';
const SETTLEMENT_ID = 'stl_0193a4f1cd3c7e91c1d2e3f4a5b6c7d8';
const BACKTEST_ID = 'bt_0193a4f1cf5e7a13e1f2a3b4c5d6e7f8';
const PROCESSOR_ID = 'pc_0193a4f1d06f7b24f1a2b3c4d5e6f7a8';
const DECLINED_ID = 'txn_0193a4f1c8d874c2b8e9f0a1b2c3d4e6';
export const EXAMPLE_REQUEST_ID = 'req_0193a4f1ce4d7f02d1e2f3a4b5c6d7e8';
/** Decodes to 32 bytes, as a Solana address does, and says what it is. */
const EXAMPLE_ADDRESS = 'ExampLeAddressDoNotSendFundsHerexxxxxxxxxxx';

const CREATED_AT = '2026-03-02T14:05:09.412Z';
const LATER = '2026-03-02T15:30:00.000Z';

const VAULT = {
  id: VAULT_ID,
  object: 'vault',
  name: 'Marketing',
  currency: 'USDC',
  network: 'solana',
  status: 'active',
  balance: { available: '4957.50', pending: '42.50', ledger: '5000.00' },
  metadata: { costCenter: 'cc-104' },
  createdAt: CREATED_AT,
  updatedAt: CREATED_AT,
  frozenAt: null,
  closedAt: null,
  depositAddress: 'DepositAddressExampLeDoNotSendFundsHerexxxx',
  overdrawnAt: null,
};

const NEW_VAULT = {
  ...VAULT,
  balance: { available: '5000.00', pending: '0.00', ledger: '5000.00' },
};

const POLICY_DOCUMENT = {
  limits: [
    { interval: 'daily', amount: '1000' },
    { interval: 'perTransaction', amount: '250' },
  ],
  merchantCategories: { block: ['7995'] },
  templates: [{ name: 'block-high-risk-countries' }],
  rules: [
    {
      name: 'no-weekend-airfare',
      message: 'Declined: airfare on weekends',
      conditions: {
        all: [
          { fact: 'mcc', operator: 'in', value: ['4511'] },
          { fact: 'dayOfWeekUtc', operator: 'greaterThanInclusive', value: 6 },
        ],
      },
    },
  ],
};

/** The stored document: the rules' defaults (action, mode) filled in. */
const POLICY = {
  object: 'policy',
  vaultId: VAULT_ID,
  version: 3,
  limits: POLICY_DOCUMENT.limits,
  merchantCategories: POLICY_DOCUMENT.merchantCategories,
  templates: [{ name: 'block-high-risk-countries', mode: 'enforce' }],
  rules: POLICY_DOCUMENT.rules.map((rule) => ({ ...rule, action: 'decline', mode: 'enforce' })),
  createdAt: CREATED_AT,
  updatedAt: LATER,
};

/** A card's own policy: the same document, answered with its card. */
const CARD_POLICY_DOCUMENT = {
  limits: [
    { interval: 'daily', amount: '200' },
    { interval: 'monthly', count: 40 },
  ],
  merchantCategories: { block: ['5813'] },
};
const CARD_POLICY = {
  object: 'policy',
  vaultId: VAULT_ID,
  cardId: CARD_ID,
  version: 2,
  ...CARD_POLICY_DOCUMENT,
  createdAt: CREATED_AT,
  updatedAt: LATER,
};

const POLICY_LIMITS = {
  object: 'policy_limits',
  vaultId: VAULT_ID,
  cardId: null,
  version: 3,
  currency: 'USDC',
  asOf: LATER,
  limits: [
    {
      rule: 'limits[0]',
      mode: 'enforce',
      interval: 'daily',
      merchantCategories: null,
      amount: '1000.00',
      count: null,
      used: '642.50',
      remaining: '357.50',
      resetsAt: '2026-03-03T00:00:00.000Z',
    },
    {
      rule: 'limits[1]',
      mode: 'enforce',
      interval: 'perTransaction',
      merchantCategories: null,
      amount: '250.00',
      count: null,
      used: null,
      remaining: '250.00',
      resetsAt: null,
    },
  ],
};

const CARD_POLICY_LIMITS = {
  ...POLICY_LIMITS,
  cardId: CARD_ID,
  version: 2,
  limits: [
    { ...POLICY_LIMITS.limits[0], amount: '200.00', used: '42.50', remaining: '157.50' },
    {
      rule: 'limits[1]',
      mode: 'enforce',
      interval: 'monthly',
      merchantCategories: null,
      amount: null,
      count: 40,
      used: 12,
      remaining: 28,
      resetsAt: '2026-04-01T00:00:00.000Z',
    },
  ],
};

const KEY_ID = 'key_0193a4f1c0a17b22a3b4c5d6e7f8a9b0';

const POLICY_VERSIONS = [
  {
    object: 'policy_version',
    vaultId: VAULT_ID,
    cardId: null,
    version: 3,
    change: 'restore',
    restoredFrom: 1,
    keyId: KEY_ID,
    document: { limits: POLICY_DOCUMENT.limits },
    createdAt: LATER,
  },
  {
    object: 'policy_version',
    vaultId: VAULT_ID,
    cardId: null,
    version: 2,
    change: 'delete',
    restoredFrom: null,
    keyId: KEY_ID,
    document: null,
    createdAt: CREATED_AT,
  },
];

const MERCHANT = { name: 'Blue Bottle Coffee', mcc: '5814', country: 'US', city: 'Oakland' };

const APPROVED = {
  id: AUTHORIZATION_ID,
  object: 'authorization',
  approved: true,
  status: 'pending',
  declineCode: null,
  declineReason: null,
  amount: '42.50',
  currency: 'USDC',
  cardId: CARD_ID,
  vaultId: VAULT_ID,
  standIn: false,
  decidedInMicros: 412,
  shadowMatches: [],
  partial: false,
  requestedAmount: null,
};

const CARD = {
  id: CARD_ID,
  object: 'card',
  vaultId: VAULT_ID,
  status: 'active',
  last4: '4242',
  expMonth: 3,
  expYear: 2029,
  cardholderName: 'Ada Lovelace',
  metadata: { employeeId: 'e-2291' },
  billingCurrency: 'USD',
  createdAt: CREATED_AT,
  cancelledAt: null,
  processorCard: null,
};

const CARD_TRANSACTION = {
  id: AUTHORIZATION_ID,
  object: 'transaction',
  type: 'card_authorization',
  status: 'pending',
  vaultId: VAULT_ID,
  cardId: CARD_ID,
  transferId: null,
  amount: '42.50',
  capturedAmount: '0.00',
  heldAmount: '42.50',
  currency: 'USDC',
  merchant: { ...MERCHANT, id: null },
  declineCode: null,
  declineReason: null,
  shadowMatches: [],
  failureReason: null,
  createdAt: CREATED_AT,
  completedAt: null,
  hasMetadata: false,
  onChain: null,
  billing: { amount: '42.50', currency: 'USD' },
  merchantAmount: null,
  rate: null,
  refundedAmount: '0.00',
  expiresAt: '2026-03-08T14:05:09.000Z',
  advice: false,
  partial: false,
  policyWouldDecline: null,
  originalTransactionId: null,
};

const BACKTEST_REQUEST = {
  policy: { limits: [{ interval: 'daily', amount: '500' }] },
  startDate: '2026-02-01',
  endDate: '2026-03-01',
};

const BACKTEST = {
  id: BACKTEST_ID,
  object: 'policy_backtest',
  vaultId: VAULT_ID,
  cardId: null,
  status: 'completed',
  startDate: '2026-02-01',
  endDate: '2026-03-01',
  policy: BACKTEST_REQUEST.policy,
  progress: { replayed: 1842, total: 1842 },
  result: {
    authorizations: 1842,
    replayed: 1830,
    notReplayed: { cardDeclined: 12, standIn: 0, otherPolicy: 0 },
    unchanged: 1791,
    approvedToDeclined: 37,
    declinedToApproved: 2,
    byRule: [
      {
        rule: 'limits[0]',
        declineCode: 'authorization_failed',
        approvedToDeclined: 37,
        declinedToApproved: 0,
        unchanged: 0,
      },
      {
        rule: 'limits[1]',
        declineCode: 'authorization_failed',
        approvedToDeclined: 0,
        declinedToApproved: 2,
        unchanged: 0,
      },
    ],
    shadowMatches: [],
    examples: [
      {
        transactionId: DECLINED_ID,
        createdAt: CREATED_AT,
        cardId: CARD_ID,
        amount: '320.00',
        currency: 'USDC',
        merchant: { ...MERCHANT, id: null },
        change: 'approved_to_declined',
        recorded: { approved: true, declineCode: null, declineReason: null },
        backtest: {
          approved: false,
          declineCode: 'authorization_failed',
          declineReason: {
            rule: 'limits[0]',
            message: 'Daily spend limit of 500.00 USDC would be exceeded',
          },
        },
      },
    ],
  },
  failureMessage: null,
  createdAt: CREATED_AT,
  completedAt: CREATED_AT,
};

const TRANSFER = {
  id: TRANSFER_ID,
  object: 'transfer',
  fromVaultId: VAULT_ID,
  toVaultId: OTHER_VAULT_ID,
  amount: '250.00',
  currency: 'USDC',
  status: 'completed',
  description: 'Q3 travel budget',
  memo: null,
  signature: null,
  failureReason: null,
  createdAt: CREATED_AT,
  completedAt: CREATED_AT,
};

const EXTERNAL_TRANSFER = {
  id: TRANSFER_ID,
  object: 'transfer',
  fromVaultId: VAULT_ID,
  address: EXAMPLE_ADDRESS,
  amount: '10.00',
  currency: 'USDC',
  status: 'pending',
  description: null,
  memo: 'invoice 2026-118',
  signature: null,
  failureReason: null,
  createdAt: CREATED_AT,
  completedAt: null,
};

const TRANSFER_TRANSACTION = {
  id: TRANSFER_TRANSACTION_ID,
  object: 'transaction',
  type: 'transfer_out',
  status: 'completed',
  vaultId: VAULT_ID,
  cardId: null,
  transferId: TRANSFER_ID,
  amount: '250.00',
  capturedAmount: '0.00',
  heldAmount: '0.00',
  currency: 'USDC',
  merchant: null,
  declineCode: null,
  declineReason: null,
  shadowMatches: [],
  failureReason: null,
  createdAt: CREATED_AT,
  completedAt: CREATED_AT,
  hasMetadata: true,
  onChain: null,
  billing: { amount: '250.00', currency: 'USDC' },
  merchantAmount: null,
  rate: null,
  refundedAmount: '0.00',
  expiresAt: null,
  advice: false,
  partial: false,
  policyWouldDecline: null,
  originalTransactionId: null,
};

const WEBHOOK = {
  id: WEBHOOK_ID,
  object: 'webhook_endpoint',
  url: 'https://hooks.example.com/spendgate',
  events: ['authorization.approved', 'authorization.declined', 'transaction.completed'],
  description: 'Ledger sync',
  status: 'enabled',
  createdAt: CREATED_AT,
};

const PROCESSOR = {
  id: PROCESSOR_ID,
  object: 'processor_connection',
  processor: 'stripe',
  mode: 'test',
  url: `/v1/processors/stripe/${PROCESSOR_ID}`,
  createdAt: CREATED_AT,
  rotatedAt: null,
  previousSecretsUntil: null,
};

const ACCOUNT = {
  id: ACCOUNT_ID,
  object: 'account',
  name: 'acme',
  mode: 'test',
  twoFactorEnabled: false,
};

/** An obviously fake TOTP secret (base32), never one a real enrolment gave. */
const EXAMPLE_TOTP_SECRET = 'EXAMPLEEXAMPLEEXAMPLEEXAMPLE2345';

const list = (data: readonly unknown[], nextCursor: string | null = null) => ({
  object: 'list',
  data,
  hasMore: nextCursor !== null,
  nextCursor,
});

/** What an id-paginated list's description ends with. */
const PAGINATION =
  'Newest first, `limit` (1-100, default 10) at a time: while `hasMore` is true, pass ' +
  '`nextCursor` as `startingAfter` for the next page.';

/** The codes of a route run under an `Idempotency-Key` (contract section 5). */
const IDEMPOTENT: readonly ErrorCode[] = ['duplicate_idempotency_key', 'idempotency_key_in_use'];

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

/**
 * What the reference page (/docs) says of each operation, keyed by operationId: its summary and
 * description, what its success answers, the error codes it can answer, and realistic examples.
 * One table beside the routes rather than in them, so that the prose of the whole API reads
 * and is reviewed in one place; `src/http/openapi.ts` applies it to the generated document, and
 * `test/http/openapi.test.ts` fails while an operation has no entry here, or an entry names no
 * operation, or an example does not fit its schema.
 *
 * `errors` names the codes particular to the operation. The codes every route with a key can
 * answer (no key, a bad or expired key, a missing scope, the rate limit) and those of every
 * JSON body (malformed JSON, too large, not JSON, a field missing or invalid) are added to
 * each operation from the document itself, as is the `default` response for the rest
 * (`internal_error`, `service_unavailable`).
 *
 * Every example value is made up: ids, card numbers, secrets and addresses are obviously fake.
 */
export const OPERATION_DOCS: Readonly<Record<string, OperationDoc>> = {
  // Account
  retrieveAccount: {
    summary: 'Retrieve the account',
    description:
      "The account the key belongs to, in the key's mode (`test` or `live`). Any valid key may " +
      'call it: a quick way to check a key.',
    returns: "The key's account.",
    errors: [],
    example: ACCOUNT,
  },
  retrieveApiKey: {
    summary: 'Retrieve the API key',
    description:
      "The calling key's id, mode and scopes, never the key itself. Any valid key may call it: " +
      'a client such as the console (`/console`) reads it to show only what the key may do.',
    returns: 'The calling key.',
    errors: [],
    example: {
      id: 'key_0193a4f1c1a07b3e9f1a2b3c4d5e6f71',
      object: 'api_key',
      mode: 'test',
      scopes: ['cards:read', 'transactions:read', 'vaults:read'],
    },
  },
  retrieveDisplayOrigins: {
    summary: 'Retrieve the display origins',
    description:
      "The origins that may frame the card display page of this account in the key's mode " +
      '(its `Content-Security-Policy: frame-ancestors`). Empty: no page may frame it.',
    returns: 'The registered origins.',
    errors: [],
    example: { object: 'card_display_origins', origins: ['https://app.example.com'] },
  },
  setDisplayOrigins: {
    summary: 'Set the display origins',
    description:
      "Replaces the origins that may frame the card display page, in the key's mode: at most " +
      '20, each an origin alone (`https://app.example.com`: scheme, host and a port other than ' +
      "the scheme's, no path, no wildcard), https only but, in test mode, http on localhost, " +
      '127.0.0.1 or [::1]. Repeats are kept once; an empty list lets no page frame it. Needs ' +
      '`account:write`.',
    returns: 'The origins now registered.',
    errors: [
      ...IDEMPOTENT,
      {
        code: 'parameter_invalid',
        message: 'The origin must be an origin alone: scheme, host and port, no path or wildcard.',
        param: 'origins[0]',
      },
    ],
    example: { object: 'card_display_origins', origins: ['https://app.example.com'] },
    requestExample: { origins: ['https://app.example.com'] },
  },
  retrieveRateLimits: {
    summary: "Retrieve the key's rate limit",
    description:
      "The caller's key's rate-limit window, as the count left it: this request is counted like " +
      'any other, so the body agrees with its own `RateLimit-*` headers. Limits are per key, ' +
      'per second, shared by every server process.',
    returns: 'The rate-limit window of the key.',
    errors: [],
    example: {
      object: 'rate_limit',
      limit: 25,
      remaining: 24,
      resetAt: '2026-03-02T14:05:10.000Z',
      windowSeconds: 1,
    },
  },
  beginTwoFactor: {
    summary: 'Begin two-factor enrolment',
    description:
      'Makes a new TOTP secret (30-second steps) and its `otpauth://` URI, also as an SVG QR ' +
      'code, for an authenticator app. Two-factor is not on until Verify Two-Factor accepts a code of it. Answered with ' +
      '`Cache-Control: no-store`. Refused while two-factor is already on: turn it off first.',
    returns: 'The secret, its otpauth URI and that URI as a QR code, shown this once.',
    errors: [
      {
        code: 'parameter_invalid',
        message: 'Two-factor authentication is already on; turn it off first.',
      },
    ],
    example: {
      object: 'two_factor_enrolment',
      secret: EXAMPLE_TOTP_SECRET,
      otpauthUri: `otpauth://totp/spendgate:acme?secret=${EXAMPLE_TOTP_SECRET}&issuer=spendgate`,
      // Cut short: a whole code is some kilobytes of path data.
      qrCodeSvg:
        '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 45 45" shape-rendering="crispEdges">' +
        '<path fill="#ffffff" d="M0 0h45v45H0z"/><path stroke="#000000" d="M4 4.5h7m2 0h1..."/></svg>',
    },
  },
  verifyTwoFactor: {
    summary: 'Turn two-factor on',
    description:
      'Checks a code of the secret Begin Two-Factor made (before it, every code is wrong) and ' +
      'turns two-factor on: from then on ' +
      'Reveal Card Details and turning two-factor off need `X-Two-Factor-Code`. Each code is ' +
      'accepted once; after 5 wrong codes in 15 minutes every two-factor check of the account ' +
      'answers 429 with `Retry-After`, even for the right code.',
    returns: 'The account, with two-factor on.',
    errors: [
      'invalid_two_factor_code',
      {
        code: 'rate_limit_exceeded',
        message: 'Too many wrong two-factor codes: try again in 540 seconds.',
      },
    ],
    example: { ...ACCOUNT, twoFactorEnabled: true },
    requestExample: { code: '492039' },
  },
  disableTwoFactor: {
    summary: 'Turn two-factor off',
    description:
      'Turns two-factor off, with a current code in `X-Two-Factor-Code`. The same lockout as ' +
      'Verify Two-Factor applies to wrong codes.',
    returns: 'The account, with two-factor off.',
    errors: [
      'two_factor_required',
      'invalid_two_factor_code',
      { code: 'parameter_invalid', message: 'Two-factor authentication is not on.' },
      {
        code: 'rate_limit_exceeded',
        message: 'Too many wrong two-factor codes: try again in 540 seconds.',
      },
    ],
    example: ACCOUNT,
  },

  // Vaults
  createVault: {
    summary: 'Create a vault',
    description:
      'A vault holds one currency (USDC or SOL, both on the `solana` network) and is what cards ' +
      'spend from. `initialDeposit` above 0 is for test mode only: a live vault starts empty ' +
      'and is funded on chain at its `depositAddress` or by a transfer from another vault. `metadata`: at most 50 keys of 1-40 ' +
      'characters, values of at most 500.',
    returns: 'The vault created.',
    errors: [
      ...IDEMPOTENT,
      'invalid_currency',
      'invalid_amount',
      {
        code: 'parameter_invalid',
        message: 'SOL vaults are on the solana network.',
        param: 'network',
      },
    ],
    example: NEW_VAULT,
    requestExample: {
      name: 'Marketing',
      currency: 'USDC',
      network: 'solana',
      initialDeposit: '5000',
      metadata: { costCenter: 'cc-104' },
    },
  },
  listVaults: {
    summary: 'List vaults',
    description: `The vaults of the key's account and mode, optionally by currency or status. ${PAGINATION}`,
    returns: 'A page of vaults.',
    errors: [],
    example: list([VAULT], VAULT_ID),
  },
  retrieveVault: {
    summary: 'Retrieve a vault',
    description: 'A vault with its balance: `available` = `ledger` − `pending` (open card holds).',
    returns: 'The vault.',
    errors: ['vault_not_found'],
    example: VAULT,
  },
  updateVault: {
    summary: 'Update a vault',
    description:
      'Renames a vault or changes its metadata: given keys are set, a key set to `null` is ' +
      'removed, others are kept. A closed vault cannot be changed.',
    returns: 'The vault, updated.',
    errors: [...IDEMPOTENT, 'vault_not_found', 'vault_closed'],
    example: { ...VAULT, name: 'Marketing EMEA', updatedAt: LATER },
    requestExample: { name: 'Marketing EMEA', metadata: { costCenter: null, region: 'emea' } },
  },
  freezeVault: {
    summary: 'Freeze a vault',
    description:
      'Stops all money movement: card authorizations are declined and transfers refused until ' +
      'the vault is unfrozen. Freezing a frozen vault changes nothing.',
    returns: 'The vault, frozen.',
    errors: [...IDEMPOTENT, 'vault_not_found', 'vault_closed'],
    example: { ...VAULT, status: 'frozen', updatedAt: LATER, frozenAt: LATER },
    requestExample: { reason: 'Quarterly audit' },
  },
  unfreezeVault: {
    summary: 'Unfreeze a vault',
    description: 'Lets money move again. Unfreezing an active vault changes nothing.',
    returns: 'The vault, active.',
    errors: [...IDEMPOTENT, 'vault_not_found', 'vault_closed'],
    example: { ...VAULT, updatedAt: LATER },
  },
  closeVault: {
    summary: 'Close a vault',
    description:
      'Closes a vault for good and cancels its cards. A vault with open holds cannot close ' +
      '(capture or reverse them first); one with a balance needs a `destination`: another ' +
      'active vault of the same currency (`vaultId`), or a Solana address (`address`), which ' +
      'in live mode needs a configured Solana cluster (503 otherwise).',
    returns: 'The vault, closed, its balance moved out.',
    errors: [
      ...IDEMPOTENT,
      'vault_not_found',
      'vault_closed',
      'vault_has_pending_transactions',
      {
        code: 'parameter_missing',
        message: 'A vault with a balance needs a destination to close.',
        param: 'destination',
      },
      {
        code: 'vault_frozen',
        message: `Vault ${OTHER_VAULT_ID} is frozen.`,
        param: 'destination.vaultId',
      },
      {
        code: 'currency_mismatch',
        message: 'The destination vault holds another currency.',
        param: 'destination.vaultId',
      },
      { ...ERROR_EXAMPLES.invalid_address, code: 'invalid_address', param: 'destination.address' },
    ],
    example: {
      ...VAULT,
      status: 'closed',
      balance: { available: '0.00', pending: '0.00', ledger: '0.00' },
      updatedAt: LATER,
      closedAt: LATER,
    },
    requestExample: { destination: { vaultId: OTHER_VAULT_ID } },
  },
  getVaultBalance: {
    summary: "Retrieve a vault's balance",
    description:
      'The balance now: `ledger` is what the vault holds, `pending` what open card holds and ' +
      'pending external transfers reserve, `available` = `ledger` − `pending`, what it can ' +
      'still spend.',
    returns: 'The balance.',
    errors: ['vault_not_found'],
    example: {
      object: 'balance',
      vaultId: VAULT_ID,
      currency: 'USDC',
      available: '4957.50',
      pending: '42.50',
      ledger: '5000.00',
      asOf: LATER,
    },
  },
  getBalanceHistory: {
    summary: "List a vault's daily balances",
    description:
      "The vault's balances by UTC day, newest first: each past day's end-of-day snapshot, " +
      'taken by the workers after midnight (missed days are backfilled), `final` saying ' +
      'whether the figures are final. Optionally between `startDate` and `endDate` ' +
      '(YYYY-MM-DD); `startingAfter` is a day, and the next page holds the days before it.',
    returns: 'A page of daily balances.',
    errors: [
      'vault_not_found',
      {
        code: 'parameter_invalid',
        message: 'startDate: must be a date, YYYY-MM-DD',
        param: 'startDate',
      },
    ],
    example: list([
      {
        object: 'balance_snapshot',
        vaultId: VAULT_ID,
        date: '2026-03-01',
        currency: 'USDC',
        ledger: '5000.00',
        available: '5000.00',
        pending: '0.00',
        final: true,
      },
    ]),
  },

  listVaultDeposits: {
    summary: "List the transfers found at a vault's deposit address",
    description:
      "Send the vault's currency (USDC or SOL) on Solana to its `depositAddress`. Once a " +
      'transfer is finalized the deposit watcher records it here, newest first: `credited` ' +
      '(the vault was credited once, a completed `deposit` transaction, ' +
      '`transaction.completed`), then `swept` when it has moved into the treasury; or ' +
      '`ignored` with `ignoredReason` and never credited: a token of another mint, the other ' +
      'currency, less than the minimum (0.01 USDC, 0.001 SOL), or a closed vault.',
    returns: 'A page of deposits.',
    errors: ['vault_not_found'],
    example: list([
      {
        id: 'dep_0193a4f1d06f7b24f1a2b3c4d5e6f7a8',
        object: 'chain_deposit',
        vaultId: VAULT_ID,
        status: 'credited',
        ignoredReason: null,
        currency: 'USDC',
        mint: 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v',
        amount: '250',
        signature:
          '5VERv8NMvzbJMEkV8xnrLkEaWRtSz9CosKDYjCJjBRnbJLgp8uirBgmQpjKhoR4tjF3ZpRzrFmBV6UjKdiSZkQUW',
        instructionIndex: 1,
        innerIndex: -1,
        slot: 312004518,
        sender: EXAMPLE_ADDRESS,
        transactionId: DEPOSIT_ID,
        foundAt: LATER,
        creditedAt: LATER,
        sweptAt: null,
      },
    ]),
  },

  // Policies
  setPolicy: {
    summary: "Set a vault's authorization policy",
    description:
      "Replaces the vault's policy (the `PolicyDocument` schema): limits, " +
      'merchant categories and countries, templates of the rule library (GET ' +
      '/v1/rule-templates) and custom rules. The policy is compiled before it is stored, so a ' +
      'bad one is refused with `policy_invalid` and `param` at the fault, and authorizations ' +
      'decide with the new version at once. Try a draft first with Simulate Policy. Every ' +
      'change is kept as a version (List Policy Versions), with the key that made it.',
    returns: 'The policy stored, with its new version.',
    errors: [...IDEMPOTENT, 'policy_invalid', 'vault_not_found', 'vault_closed'],
    example: POLICY,
    requestExample: POLICY_DOCUMENT,
  },
  getPolicy: {
    summary: "Retrieve a vault's authorization policy",
    description:
      'The policy as stored, with its version (one more on each Set Policy) and defaults ' +
      "filled in (a rule's `action` and `mode`).",
    returns: 'The policy.',
    errors: ['vault_not_found', 'policy_not_found'],
    example: POLICY,
  },
  deletePolicy: {
    summary: "Delete a vault's authorization policy",
    description:
      'Removes the policy: the vault then approves whatever its balance covers. The delete is ' +
      'a version of the history (List Policy Versions): the version count goes on from it.',
    returns: 'The deletion.',
    errors: [...IDEMPOTENT, 'vault_not_found', 'policy_not_found'],
    example: { object: 'policy', vaultId: VAULT_ID, deleted: true },
  },
  simulatePolicy: {
    summary: 'Simulate a decision',
    description:
      'The decision the vault would give a transaction now, against its live balance and spend ' +
      'so far, with its current policy, or with a draft in `policy` (refused as Set Policy ' +
      'would refuse it, `param` under `policy`). Records and holds nothing. A `cardId` must be ' +
      "one of the vault's cards; when that card has a policy of its own, it decides too, " +
      "after the vault's (or the draft), against the card's spend, as authorize would. Shadow " +
      'rules that match are reported in `shadowMatches`.',
    returns: 'The decision, as the authorize callback would answer it, without an id.',
    errors: [
      'vault_not_found',
      {
        code: 'policy_invalid',
        message: 'policy.limits[0].amount: must be a number or a decimal string',
        param: 'policy.limits[0].amount',
      },
      {
        code: 'card_not_found',
        message: `No card ${CARD_ID} exists on this vault.`,
        param: 'transaction.cardId',
      },
      'invalid_currency',
      { ...ERROR_EXAMPLES.invalid_amount, code: 'invalid_amount', param: 'transaction.amount' },
    ],
    example: {
      ...APPROVED,
      id: null,
      approved: false,
      status: 'declined',
      declineCode: 'authorization_failed',
      declineReason: {
        rule: 'limits[1]',
        message: 'Per-transaction limit of 250.00 USDC would be exceeded',
      },
      amount: '1200.00',
      cardId: null,
      decidedInMicros: 95,
    },
    requestExample: {
      policy: { limits: [{ interval: 'perTransaction', amount: '250' }] },
      transaction: {
        amount: '1200.00',
        merchant: { name: 'Acme Airlines', mcc: '4511', country: 'US' },
      },
    },
  },
  getPolicyLimits: {
    summary: "Retrieve a vault's remaining limits",
    description:
      "For every limit of the vault's policy (its own `limits[i]` and its templates', in the " +
      'order they decide): the amount or count it allows, what its current window has used, ' +
      'what remains for the next authorization, and when the window starts again (`resetsAt`, ' +
      'UTC calendar windows; null per transaction and all time). The figures come from the ' +
      'same counters and comparisons as the decision: a purchase above `remaining` is declined ' +
      'by that limit, one of exactly `remaining` is not; a count limit declines once ' +
      '`remaining` is 0. A limit narrowed to `merchantCategories` counts and limits spend at ' +
      "those categories only. The vault's spend counts its card authorizations and external " +
      'transfers.',
    returns: 'The limits of the current policy, as of now.',
    errors: ['vault_not_found', 'policy_not_found'],
    example: POLICY_LIMITS,
  },
  listPolicyVersions: {
    summary: "List a vault's policy versions",
    description:
      "Every change of the vault's policy (Set Policy, Delete Policy, Restore Policy Version) " +
      "is a version: its number (the policy's `version` after the change: a delete takes a " +
      'number too), what it did (`change`), the API key that made it (`keyId`, its id; null ' +
      'for a change made without a key, such as the version a policy had when the history ' +
      'began), when, and the document from then on (null for a delete). Newest first, ' +
      '`limit` (1-100, default 10) at a time: while `hasMore` is true, pass `nextCursor` (a ' +
      'version number) as `startingAfter`.',
    returns: 'A page of versions.',
    errors: [
      'vault_not_found',
      {
        code: 'parameter_invalid',
        message: 'startingAfter must be a version number from a previous page.',
        param: 'startingAfter',
      },
    ],
    example: list(POLICY_VERSIONS, '2'),
  },
  restorePolicyVersion: {
    summary: "Restore a version of a vault's policy",
    description:
      'Sets the document of an earlier version again, as a new version (recorded as a ' +
      '`restore` of that version, with `policy.updated`), exactly as Set Policy would set it. ' +
      'A version that is a delete has no document to restore.',
    returns: 'The policy stored, with its new version.',
    errors: [
      ...IDEMPOTENT,
      'vault_not_found',
      {
        code: 'policy_not_found',
        message: `Vault ${VAULT_ID} has no policy version 7.`,
        param: 'version',
      },
      {
        code: 'parameter_invalid',
        message: `Version 2 of the policy of vault ${VAULT_ID} is its deletion, with no document to restore.`,
        param: 'version',
      },
      'vault_closed',
    ],
    example: { ...POLICY, version: 4 },
  },
  setCardPolicy: {
    summary: "Set a card's own policy",
    description:
      "Gives one card a policy of its own, in the vault policy's format (the `PolicyDocument` " +
      "schema, amounts in the vault's currency): an authorization on the card must pass the " +
      "vault's policy and then the card's. A decline by the card's policy says so: " +
      "`declineReason.policy` is `card` (absent when the vault's policy or a fixed check " +
      "declined, as it always was). Its limits and spend facts count the card's own approved " +
      'authorizations, from before the policy was set too. Refused like Set Policy; answered ' +
      "with `cardId` and the card's vault; `policy.updated` is sent with the same object.",
    returns: "The card's policy stored, with its new version.",
    errors: [...IDEMPOTENT, 'policy_invalid', 'card_not_found', 'card_cancelled', 'vault_closed'],
    example: CARD_POLICY,
    requestExample: CARD_POLICY_DOCUMENT,
  },
  getCardPolicy: {
    summary: "Retrieve a card's own policy",
    description:
      "The card's policy as stored, with its version and defaults filled in. A card without " +
      "one is decided by its vault's policy alone.",
    returns: "The card's policy.",
    errors: [
      'card_not_found',
      {
        code: 'policy_not_found',
        message: `Card ${CARD_ID} has no authorization policy.`,
        param: 'id',
      },
    ],
    example: CARD_POLICY,
  },
  deleteCardPolicy: {
    summary: "Delete a card's own policy",
    description:
      "Removes the card's policy (a version of its history): the card is then decided by its " +
      "vault's policy alone. `policy.deleted` is sent with the answer's object.",
    returns: 'The deletion.',
    errors: [
      ...IDEMPOTENT,
      'card_not_found',
      {
        code: 'policy_not_found',
        message: `Card ${CARD_ID} has no authorization policy.`,
        param: 'id',
      },
    ],
    example: { object: 'policy', vaultId: VAULT_ID, cardId: CARD_ID, deleted: true },
  },
  getPolicyLimitsOfCard: {
    summary: "Retrieve a card's remaining limits",
    description:
      "Retrieve a vault's remaining limits, for the card's own policy: each limit's figures " +
      "from the card's own spend (its approved authorizations), as the card's policy decides " +
      "with them. The vault's limits apply to the card too: see the vault's.",
    returns: "The limits of the card's current policy, as of now.",
    errors: [
      'card_not_found',
      {
        code: 'policy_not_found',
        message: `Card ${CARD_ID} has no authorization policy.`,
        param: 'id',
      },
    ],
    example: CARD_POLICY_LIMITS,
  },
  listPolicyVersionsOfCard: {
    summary: "List a card's policy versions",
    description:
      "List a vault's policy versions, for the card's own policy: every Set Card Policy, " +
      'Delete Card Policy and restore, newest first.',
    returns: 'A page of versions.',
    errors: [
      'card_not_found',
      {
        code: 'parameter_invalid',
        message: 'startingAfter must be a version number from a previous page.',
        param: 'startingAfter',
      },
    ],
    example: list(
      POLICY_VERSIONS.map((version) => ({
        ...version,
        cardId: CARD_ID,
        document: version.document === null ? null : CARD_POLICY_DOCUMENT,
      })),
    ),
  },
  restorePolicyVersionOfCard: {
    summary: "Restore a version of a card's own policy",
    description:
      "Restore a version of a vault's policy, for the card's own: the version's document set " +
      'again as a new version, as Set Card Policy would set it, with `policy.updated`.',
    returns: "The card's policy stored, with its new version.",
    errors: [
      ...IDEMPOTENT,
      'card_not_found',
      {
        code: 'policy_not_found',
        message: `Card ${CARD_ID} has no policy version 7.`,
        param: 'version',
      },
      {
        code: 'parameter_invalid',
        message: `Version 2 of the policy of card ${CARD_ID} is its deletion, with no document to restore.`,
        param: 'version',
      },
      'card_cancelled',
    ],
    example: { ...CARD_POLICY, version: 4 },
  },
  listRuleTemplates: {
    summary: 'List rule templates',
    description:
      'The templates of the rule library that a policy can name in `templates`: what each ' +
      'does, its parameters with the JSON Schema of their values, and an example policy that ' +
      'uses it (with a transaction it decides as `outcome` says). The library is the same for ' +
      'every account. In name order, `limit` (1-100, default 10) at a time: while `hasMore` ' +
      'is true, pass `nextCursor` as `startingAfter`.',
    returns: 'A page of templates.',
    errors: [
      {
        code: 'parameter_invalid',
        message: 'startingAfter must be the name of a rule template from a previous page',
        param: 'startingAfter',
      },
    ],
    example: list([
      {
        object: 'rule_template',
        name: 'daily-cap',
        description:
          "Declines once the day's spend (UTC calendar day), this transaction included, would exceed amount.",
        parameters: [
          {
            name: 'amount',
            type: 'amount',
            description: 'Most the vault may spend in one UTC day.',
            required: true,
            schema: {
              type: ['number', 'string'],
              description: 'Most the vault may spend in one UTC day.',
            },
          },
        ],
        example: {
          policy: { templates: [{ name: 'daily-cap', params: { amount: '1000' } }] },
          transaction: {
            amount: '50.01',
            mcc: '5812',
            country: 'US',
            merchantName: 'Corner Shop',
            at: '2026-11-18T12:00:00Z',
          },
          spend: { 'amount:daily': '950' },
          outcome: 'decline',
        },
      },
    ]),
  },

  createVaultPolicyBacktest: {
    summary: 'Backtest a draft policy on a vault',
    description:
      "Replays the vault's recorded card authorizations of a window (whole UTC days, at most " +
      '90, ending now at the latest) under a draft policy, in order, with the spend counters ' +
      'as the draft would have left them: its limits start from the spend recorded before ' +
      'the window, add what the draft approves and take back what was later released. Counts ' +
      'approved -> declined, declined -> approved and unchanged, by rule and decline code, ' +
      'with the first 100 authorizations that change. Judged: every authorization that ' +
      'reached the policy. Kept as recorded: declines before the policy (`card_declined`), ' +
      'stand-in answers, and the balance (an `insufficient_balance` decline stays one unless ' +
      'the draft declines first; a lifted decline is assumed covered). A window of at most ' +
      '10,000 authorizations is answered completed (200); a larger one is queued (202) and ' +
      'replayed by the worker role: read it with Retrieve Vault Backtest. Stored, so every ' +
      'answer is there to read again. Needs `transactions:read`: the answer is made of ' +
      'recorded transactions.',
    returns: 'The backtest: completed with its result (200), or queued (202).',
    errors: [
      ...IDEMPOTENT,
      'vault_not_found',
      {
        code: 'parameter_invalid',
        message: 'The window holds 120 days; a backtest replays at most 90.',
        param: 'endDate',
      },
      {
        code: 'policy_invalid',
        message: 'policy.limits[0].amount: must be a number or a decimal string',
        param: 'policy.limits[0].amount',
      },
    ],
    example: BACKTEST,
    requestExample: BACKTEST_REQUEST,
  },
  getVaultPolicyBacktest: {
    summary: 'Retrieve a vault backtest',
    description:
      "A backtest of the vault's policy by its id: `queued`, `running` (with `progress`: " +
      'authorizations read of `total`), `completed` (with `result`) or `failed` (with ' +
      '`failureMessage`; ask again). A backtest of another vault, or unknown, is ' +
      '`policy_not_found` with `param` backtestId.',
    returns: 'The backtest.',
    errors: [
      'vault_not_found',
      {
        code: 'policy_not_found',
        message: `No backtest ${BACKTEST_ID} exists for vault ${VAULT_ID}.`,
        param: 'backtestId',
      },
    ],
    example: BACKTEST,
  },
  createCardPolicyBacktest: {
    summary: 'Backtest a draft policy on a card',
    description:
      "As Backtest Vault Policy, over one card's recorded authorizations, under the draft " +
      "alone (the vault's policy aside), with the card's own spend counted by its limits.",
    returns: 'The backtest: completed with its result (200), or queued (202).',
    errors: [
      ...IDEMPOTENT,
      'card_not_found',
      {
        code: 'parameter_invalid',
        message: 'endDate is before startDate.',
        param: 'endDate',
      },
      {
        code: 'policy_invalid',
        message: 'policy.limits[0].amount: must be a number or a decimal string',
        param: 'policy.limits[0].amount',
      },
    ],
    example: { ...BACKTEST, cardId: CARD_ID },
    requestExample: BACKTEST_REQUEST,
  },
  getCardPolicyBacktest: {
    summary: 'Retrieve a card backtest',
    description:
      "A backtest of the card's policy by its id, as Retrieve Vault Backtest. A backtest of " +
      'another card, or unknown, is `policy_not_found` with `param` backtestId.',
    returns: 'The backtest.',
    errors: [
      'card_not_found',
      {
        code: 'policy_not_found',
        message: `No backtest ${BACKTEST_ID} exists for card ${CARD_ID}.`,
        param: 'backtestId',
      },
    ],
    example: { ...BACKTEST, cardId: CARD_ID },
  },

  // Cards
  createCard: {
    summary: 'Issue a card',
    description:
      'Issues a virtual card that spends from a vault, under its policy. The number and CVV ' +
      'are never in this answer: Reveal Card Details shows them. The vault must be active. ' +
      '`billingCurrency` (ISO 4217, default USD) is the currency the card network asks in: an ' +
      "authorization in it is converted into the vault's asset (USD to USDC at par).",
    returns: 'The card issued.',
    errors: [
      ...IDEMPOTENT,
      { ...ERROR_EXAMPLES.vault_not_found, code: 'vault_not_found', param: 'vaultId' },
      { ...ERROR_EXAMPLES.vault_frozen, code: 'vault_frozen', param: 'vaultId' },
      { ...ERROR_EXAMPLES.vault_closed, code: 'vault_closed', param: 'vaultId' },
    ],
    example: CARD,
    requestExample: {
      vaultId: VAULT_ID,
      cardholderName: 'Ada Lovelace',
      metadata: { employeeId: 'e-2291' },
    },
  },
  listCards: {
    summary: 'List cards',
    description: `The cards of the key's account and mode, optionally of one vault or status. ${PAGINATION}`,
    returns: 'A page of cards.',
    errors: [
      {
        code: 'parameter_invalid',
        message: 'startingAfter must be the id of a card from a previous page.',
        param: 'startingAfter',
      },
    ],
    example: list([CARD]),
  },
  retrieveCard: {
    summary: 'Retrieve a card',
    description: 'A card, without its number or CVV (Reveal Card Details shows them).',
    returns: 'The card.',
    errors: ['card_not_found'],
    example: CARD,
  },
  updateCard: {
    summary: 'Update a card',
    description:
      "Changes a card's cardholder name or its metadata: given keys are set, a key set to " +
      '`null` is removed, others are kept. Sends `card.updated`. A cancelled card cannot be ' +
      'changed.',
    returns: 'The card, updated.',
    errors: [...IDEMPOTENT, 'card_not_found', 'card_cancelled'],
    example: { ...CARD, cardholderName: 'Ada King', metadata: { team: 'ops' } },
    requestExample: { cardholderName: 'Ada King', metadata: { employeeId: null, team: 'ops' } },
  },
  revealCard: {
    summary: 'Reveal card details',
    description:
      "The card's full number and CVV, with `Cache-Control: no-store`. With two-factor on, " +
      'send a current code in `X-Two-Factor-Code`. Nothing of the answer is stored, so an ' +
      '`Idempotency-Key` replays nothing here: a retry reveals again. A cancelled card is ' +
      'never shown again.',
    returns: 'The card details.',
    errors: [
      'card_not_found',
      'card_cancelled',
      'two_factor_required',
      'invalid_two_factor_code',
      {
        code: 'rate_limit_exceeded',
        message: 'Too many wrong two-factor codes: try again in 540 seconds.',
      },
    ],
    example: {
      object: 'card_details',
      cardId: CARD_ID,
      number: '4242424242424242',
      cvv: '123',
      expMonth: 3,
      expYear: 2029,
    },
  },
  createCardDisplayToken: {
    summary: 'Create a card display token',
    description:
      "A single-use token that lets the hosted page `GET /card-display?token=...` show the card's " +
      'number, expiry and CVV once, within 60 seconds: load that page in an iframe of a page on ' +
      'an origin the account registered (Set Display Origins), so that the number reaches the ' +
      "cardholder's browser without passing through your servers. Needs `cards:reveal`, and with " +
      'two-factor on a current code in `X-Two-Factor-Code`, as Reveal Card Details. Only a hash ' +
      'of the token is stored; it is answered once, with `Cache-Control: no-store`, and a retry ' +
      'makes another. The page takes `font` (one of system, sans-serif, serif, monospace, ' +
      'helvetica, georgia, courier) and `color`, `background`, `accent` (`#rrggbb`, in a URL ' +
      '`%23rrggbb`); any other parameter, or a value off the list, is a 400 page that spends no token.',
    returns: 'The token, the page URL (relative to the API base) and its expiry.',
    errors: [
      'card_not_found',
      'card_cancelled',
      'two_factor_required',
      'invalid_two_factor_code',
      {
        code: 'rate_limit_exceeded',
        message: 'Too many wrong two-factor codes: try again in 540 seconds.',
      },
    ],
    example: {
      object: 'card_display_token',
      cardId: CARD_ID,
      token: 'cdt_Qk1hY2hpbmUtbWFkZS1leGFtcGxlLW5vdC1hLXRva2V',
      url: '/card-display?token=cdt_Qk1hY2hpbmUtbWFkZS1leGFtcGxlLW5vdC1hLXRva2V',
      expiresAt: '2026-03-02T14:06:09.412Z',
    },
  },
  freezeCard: {
    summary: 'Freeze a card',
    description:
      'Declines every authorization of the card (`card_declined`) until it is unfrozen. ' +
      'Freezing a frozen card changes nothing.',
    returns: 'The card, frozen.',
    errors: [...IDEMPOTENT, 'card_not_found', 'card_cancelled'],
    example: { ...CARD, status: 'frozen' },
  },
  unfreezeCard: {
    summary: 'Unfreeze a card',
    description: 'Lets the card authorize again. Unfreezing an active card changes nothing.',
    returns: 'The card, active.',
    errors: [...IDEMPOTENT, 'card_not_found', 'card_cancelled'],
    example: CARD,
  },
  cancelCard: {
    summary: 'Cancel a card',
    description:
      'Cancels the card for good: it declines every authorization and is never revealed again. ' +
      'Open holds stay until captured, reversed or expired.',
    returns: 'The card, cancelled.',
    errors: [...IDEMPOTENT, 'card_not_found'],
    example: { ...CARD, status: 'cancelled', cancelledAt: LATER },
  },

  // Authorizations
  authorize: {
    summary: 'Authorize a card transaction',
    description:
      "The card network's callback. Decides from the card, the vault and its policy, and " +
      'always answers 200 with a decision: a decline is `approved: false` with its ' +
      '`declineCode` and `declineReason`, never an error. An approval holds the amount on the ' +
      'vault until Capture or Reverse (or expiry). `networkTransactionId` is the idempotency ' +
      'key: a repeated callback answers the first decision with `Idempotent-Replayed: true`. ' +
      'Past `AUTHORIZE_BUDGET_MS` the stand-in decision is answered (`standIn: true`). ' +
      "`currency` is the vault's asset or the card's `billingCurrency` (USD to USDC at par; " +
      'otherwise at a Pyth feed price held in memory, rounded up, a SOL hold plus ' +
      '`SOL_HOLD_BUFFER`; no usable price declines `card_declined`, rule `rate_unavailable`; ' +
      'the transaction records `rate`); `merchantAmount` and `merchantCurrency` (ISO 4217) are ' +
      'recorded and are policy facts. With ' +
      '`partialApprovalAllowed: true`, a decline for the balance or an amount limit becomes an ' +
      'approval of what they allow (`partial: true`, `requestedAmount`). `amount: 0` is an ' +
      'account verification: approved with no hold when the card and vault are active.',
    returns: 'The decision.',
    errors: ['invalid_currency', 'invalid_amount', 'parameter_missing'],
    example: APPROVED,
    requestExample: {
      cardId: CARD_ID,
      amount: '42.50',
      currency: 'USDC',
      merchant: MERCHANT,
      networkTransactionId: 'ntx_example_8f14e45f',
    },
  },
  adviseAuthorization: {
    summary: 'Record an advice',
    description:
      "A decision the network took on spendgate's behalf (stand-in while spendgate was not " +
      "answering, or a decline of its own), with the authorize request's fields, `approved` " +
      'and `reason`. An approved advice places the hold whatever the balance and the policy ' +
      '(it may overdraw the vault: `vault.overdrawn`); a declined one records the decline. It ' +
      'wins over a decision already recorded for the `networkTransactionId`: a hold spendgate ' +
      'placed is released if the network declined, placed if it approved. Sends ' +
      '`authorization.advised`. A repeat answers what was recorded, with `Idempotent-Replayed`.',
    returns: 'The decision as now recorded.',
    errors: ['invalid_currency', 'invalid_amount', 'card_not_found', 'currency_mismatch'],
    example: APPROVED,
    requestExample: {
      cardId: CARD_ID,
      amount: '42.50',
      currency: 'USD',
      merchant: MERCHANT,
      networkTransactionId: 'ntx_example_8f14e45f',
      approved: true,
      reason: 'stand_in',
    },
  },
  incrementAuthorization: {
    summary: 'Increment an authorization',
    description:
      'Raises a pending hold (hotels, car rentals, fuel). The increment is decided as an ' +
      'authorization of its own amount: the card and vault must be active, the policy and its ' +
      'limits see it, the balance must cover it. Approved, the hold grows ' +
      '(`authorization.incremented`); declined, it is unchanged. The answer is a decision, ' +
      "with the authorization's amount after it. `networkTransactionId` is its idempotency " +
      'key: a repeat answers the recorded decision.',
    returns: 'The decision on the increment.',
    errors: [
      'transaction_not_found',
      'transaction_not_pending',
      'invalid_amount',
      'currency_mismatch',
    ],
    example: { ...APPROVED, amount: '180.00' },
    requestExample: { amount: '30.00', networkTransactionId: 'ntx_example_inc_1' },
  },
  captureAuthorization: {
    summary: 'Capture an authorization',
    description:
      'Posts what the network captured (contract section 16: captures always post). The ' +
      'amount (the whole remaining hold without one) leaves the vault, whatever the balance: ' +
      'it may exceed the hold (tips, fuel), and a transaction that was reversed or expired is ' +
      'captured too (late presentment), completing it. `final` (default `true`) releases what ' +
      'is left of the hold; `final: false` keeps it open for later captures. A capture that ' +
      'takes `available` below 0 makes the vault overdrawn (`vault.overdrawn`). Sends ' +
      '`transaction.captured`, and `transaction.completed` when it completes. Only a malformed ' +
      'request, an unknown id or a currency that does not match is refused.',
    returns: 'The transaction: completed, or still pending after a capture with `final: false`.',
    errors: [
      ...IDEMPOTENT,
      'transaction_not_found',
      {
        code: 'invalid_amount',
        message:
          'Authorization txn_0193a4f1c7d974c2b8e9f0a1b2c3d4e5 holds nothing; give the amount to capture.',
        param: 'amount',
      },
      {
        code: 'currency_mismatch',
        message:
          'Authorization txn_0193a4f1c7d974c2b8e9f0a1b2c3d4e5 is in SOL; its vault holds USDC.',
        param: 'id',
      },
    ],
    example: {
      ...CARD_TRANSACTION,
      status: 'completed',
      capturedAmount: '48.50',
      heldAmount: '0.00',
      completedAt: LATER,
    },
    requestExample: { amount: '48.50', final: true },
  },
  forceCapture: {
    summary: 'Force capture',
    description:
      'Records a posting with no authorization (an offline terminal, a network stand-in ' +
      'never advised) as a completed `force_capture` transaction, whatever the balance, the ' +
      "card's state or the policy: `policyWouldDecline` says what authorize would have " +
      'answered. It may overdraw the vault (`vault.overdrawn`). Idempotent by ' +
      '`networkTransactionId` (per kind of message: a force capture may reuse an ' +
      "authorization's id): a repeat answers the transaction recorded, with " +
      '`Idempotent-Replayed: true`. Sends `transaction.captured` and `transaction.completed`.',
    returns: 'The force capture, completed.',
    errors: [
      ...IDEMPOTENT,
      { ...ERROR_EXAMPLES.card_not_found, code: 'card_not_found', param: 'cardId' },
      { ...ERROR_EXAMPLES.vault_closed, code: 'vault_closed', param: 'cardId' },
      {
        code: 'currency_mismatch',
        message: "currency EUR is not the vault's USDC, nor at par with it.",
        param: 'currency',
      },
      'invalid_amount',
    ],
    example: {
      ...CARD_TRANSACTION,
      type: 'force_capture',
      status: 'completed',
      capturedAmount: '42.50',
      heldAmount: '0.00',
      expiresAt: null,
      completedAt: CREATED_AT,
      policyWouldDecline: {
        declineCode: 'insufficient_balance',
        declineReason: {
          rule: 'available_balance',
          message: 'The available balance does not cover the amount',
        },
      },
    },
    requestExample: {
      cardId: CARD_ID,
      amount: '42.50',
      currency: 'USDC',
      merchant: MERCHANT,
      networkTransactionId: 'visa_482910_clearing',
    },
  },
  createRefund: {
    summary: 'Record a refund',
    description:
      "A merchant's credit, recorded as a completed `refund` transaction that credits the " +
      "vault's ledger (a posting from card settlement to the vault). With `transactionId` it " +
      'is linked to that card transaction of the same card, whose `refundedAmount` grows by ' +
      'the amount; a refund above what was captured is recorded too, never refused. A refund ' +
      "gives no limit's remaining amount back. It may restore an overdrawn vault " +
      '(`vault.restored`). Idempotent by `networkTransactionId`, per kind of message. Sends ' +
      '`transaction.refunded`.',
    returns: 'The refund, completed.',
    errors: [
      ...IDEMPOTENT,
      { ...ERROR_EXAMPLES.card_not_found, code: 'card_not_found', param: 'cardId' },
      {
        ...ERROR_EXAMPLES.transaction_not_found,
        code: 'transaction_not_found',
        param: 'transactionId',
      },
      {
        code: 'parameter_invalid',
        message:
          'transactionId txn_0193a4f1c9e07f13a4b5d1e2f3a4b5c6 is not a card transaction of card card_0193a4f1c5b27e44a1b2c3d4e5f60718.',
        param: 'transactionId',
      },
      { ...ERROR_EXAMPLES.vault_closed, code: 'vault_closed', param: 'cardId' },
      {
        code: 'currency_mismatch',
        message: "currency EUR is not the vault's USDC, nor at par with it.",
        param: 'currency',
      },
      'invalid_amount',
    ],
    example: {
      ...CARD_TRANSACTION,
      id: DEPOSIT_ID,
      type: 'refund',
      status: 'completed',
      amount: '12.00',
      heldAmount: '0.00',
      billing: { amount: '12.00', currency: 'USD' },
      expiresAt: null,
      completedAt: CREATED_AT,
      originalTransactionId: AUTHORIZATION_ID,
    },
    requestExample: {
      cardId: CARD_ID,
      amount: '12.00',
      currency: 'USD',
      merchant: MERCHANT,
      networkTransactionId: 'visa_482910_refund',
      transactionId: AUTHORIZATION_ID,
    },
  },
  reverseAuthorization: {
    summary: 'Reverse an authorization',
    description:
      'Releases a hold, whole (without an amount) or in part. A whole reversal fails the ' +
      'transaction (`failureReason: "reversed"`); a partial one leaves it pending, smaller.',
    returns: 'The transaction: failed when nothing is left held, else still pending.',
    errors: [
      ...IDEMPOTENT,
      'transaction_not_found',
      'transaction_not_pending',
      {
        code: 'invalid_amount',
        message: 'amount exceeds the remaining hold of 42.50 USDC.',
        param: 'amount',
      },
    ],
    example: {
      ...CARD_TRANSACTION,
      status: 'failed',
      heldAmount: '0.00',
      failureReason: 'reversed',
    },
    requestExample: { amount: '42.50' },
  },
  createSettlement: {
    summary: 'Submit a clearing batch',
    description:
      "The card network's clearing file: up to 10,000 records, each any of the network's " +
      'capture kinds (contract v1.2, section 16): a capture of an authorization (`type` absent ' +
      'or `capture`, an amount, the whole hold without one, and `final`), a force capture ' +
      '(`type: "force_capture"`, the fields of Force Capture) or a refund (`type: "refund"`, ' +
      'the fields of Create Refund). Accepted whole once every record is well formed (202); the ' +
      'workers then post each record once, as its own route would (a force capture or refund ' +
      'whose networkTransactionId was recorded before is not posted again), and a record that ' +
      'fails (unknown authorization or card, a currency that does not match) is reported in ' +
      '`errors` without stopping the others. Follow it with Retrieve Settlement.',
    returns: 'The settlement, pending.',
    errors: [
      ...IDEMPOTENT,
      {
        code: 'invalid_amount',
        message: 'records[1].amount must be a decimal string such as "125.50".',
        param: 'records[1].amount',
      },
    ],
    example: {
      id: SETTLEMENT_ID,
      object: 'settlement',
      status: 'pending',
      recordCount: 2,
      capturedCount: 0,
      failedCount: 0,
      pendingCount: 2,
      errors: [],
      createdAt: CREATED_AT,
      completedAt: null,
    },
    requestExample: {
      records: [
        { authorizationId: AUTHORIZATION_ID, amount: '40.00' },
        { authorizationId: 'txn_0193a4f1c7d974c2b8e9f0a1b2c3d4e6', amount: '10.00', final: false },
        {
          type: 'force_capture',
          cardId: CARD_ID,
          amount: '8.75',
          currency: 'USDC',
          merchant: { name: 'Cafe Rio', mcc: '5812', country: 'US' },
          networkTransactionId: 'nt_offline_0042',
        },
      ],
    },
  },
  retrieveSettlement: {
    summary: 'Retrieve a settlement',
    description:
      "A clearing batch's progress: records captured, failed and still pending, and each failed " +
      "record's position, code and message.",
    returns: 'The settlement.',
    errors: ['settlement_not_found'],
    example: {
      id: SETTLEMENT_ID,
      object: 'settlement',
      status: 'completed',
      recordCount: 2,
      capturedCount: 1,
      failedCount: 1,
      pendingCount: 0,
      errors: [
        {
          position: 1,
          type: 'capture',
          authorizationId: 'txn_0193a4f1c7d974c2b8e9f0a1b2c3d4e6',
          networkTransactionId: null,
          code: 'transaction_not_pending',
          message: 'Transaction txn_0193a4f1c7d974c2b8e9f0a1b2c3d4e6 is no longer pending.',
        },
      ],
      createdAt: CREATED_AT,
      completedAt: LATER,
    },
  },

  // Transfers and transactions
  createTransfer: {
    summary: 'Transfer between vaults',
    description:
      "Moves money at once from one of the account's vaults to another vault of the same " +
      "currency and mode, another account's included. Both must be active, and the source's " +
      'available balance must cover the amount.',
    returns: 'The transfer, completed.',
    errors: [
      ...IDEMPOTENT,
      { ...ERROR_EXAMPLES.vault_not_found, code: 'vault_not_found', param: 'fromVaultId' },
      { ...ERROR_EXAMPLES.vault_frozen, code: 'vault_frozen', param: 'toVaultId' },
      { ...ERROR_EXAMPLES.vault_closed, code: 'vault_closed', param: 'toVaultId' },
      'currency_mismatch',
      'insufficient_balance',
      'invalid_amount',
      {
        code: 'parameter_invalid',
        message: 'A transfer needs two different vaults.',
        param: 'toVaultId',
      },
    ],
    example: TRANSFER,
    requestExample: {
      fromVaultId: VAULT_ID,
      toVaultId: OTHER_VAULT_ID,
      amount: '250.00',
      description: 'Q3 travel budget',
      metadata: { approvedBy: 'finance' },
    },
  },
  createExternalTransfer: {
    summary: 'Send to a Solana address',
    description:
      'Sends USDC or SOL from a vault to a Solana address. Accepted pending (202) with the ' +
      'amount held; the workers sign and send it, and it completes with its `signature` (or ' +
      'fails, releasing the hold); `transfer.completed` or `transfer.failed` follows. The ' +
      "vault's policy limits apply. Live mode needs a configured Solana cluster (503 " +
      'otherwise).',
    returns: 'The transfer, pending.',
    errors: [
      ...IDEMPOTENT,
      'invalid_address',
      { ...ERROR_EXAMPLES.vault_not_found, code: 'vault_not_found', param: 'fromVaultId' },
      { ...ERROR_EXAMPLES.vault_frozen, code: 'vault_frozen', param: 'fromVaultId' },
      { ...ERROR_EXAMPLES.vault_closed, code: 'vault_closed', param: 'fromVaultId' },
      'insufficient_balance',
      'authorization_failed',
      'invalid_amount',
      'service_unavailable',
    ],
    example: EXTERNAL_TRANSFER,
    requestExample: {
      fromVaultId: VAULT_ID,
      address: EXAMPLE_ADDRESS,
      amount: '10.00',
      memo: 'invoice 2026-118',
    },
  },
  listTransfers: {
    summary: 'List transfers',
    description: `Transfers of the key's account and mode, optionally of one vault or status. ${PAGINATION}`,
    returns: 'A page of transfers.',
    errors: [
      {
        code: 'parameter_invalid',
        message: 'startingAfter must be the id of a transfer from a previous page.',
        param: 'startingAfter',
      },
    ],
    example: list([TRANSFER]),
  },
  retrieveTransfer: {
    summary: 'Retrieve a transfer',
    description: 'A transfer, between vaults or to a Solana address.',
    returns: 'The transfer.',
    errors: ['transfer_not_found'],
    example: TRANSFER,
  },
  listTransactions: {
    summary: 'List transactions',
    description:
      "Every movement of the account's vaults: card authorizations (declined ones included), " +
      'transfers in and out, external transfers, deposits and withdrawals. Filters: `vaultId`, ' +
      '`cardId`, `status`, `minAmount`/`maxAmount`, `startDate`/`endDate` (ISO 8601). ' +
      PAGINATION,
    returns: 'A page of transactions.',
    errors: [
      {
        code: 'parameter_invalid',
        message: 'startingAfter must be the id of a transaction from a previous page.',
        param: 'startingAfter',
      },
      {
        code: 'invalid_amount',
        message: 'minAmount must be a decimal string such as "125.50".',
        param: 'minAmount',
      },
    ],
    example: list([CARD_TRANSACTION, TRANSFER_TRANSACTION], TRANSFER_TRANSACTION_ID),
  },
  retrieveTransaction: {
    summary: 'Retrieve a transaction',
    description: 'A transaction; `hasMetadata` says whether Get Transaction Metadata has any.',
    returns: 'The transaction.',
    errors: ['transaction_not_found'],
    example: CARD_TRANSACTION,
  },
  getTransactionTimeline: {
    summary: "Retrieve a transaction's timeline",
    description:
      'Every lifecycle message of a card transaction, oldest first (contract v1.2, section ' +
      '16): the authorization, increments, captures, reversals, expiry, advice and refunds, ' +
      'each with the amount it moved and the amount still held after it. At most 500 messages; ' +
      '`truncated` says when there are more.',
    returns: 'The timeline.',
    errors: ['transaction_not_found'],
    example: {
      object: 'timeline',
      transactionId: CARD_TRANSACTION.id,
      currency: 'USDC',
      messages: [
        {
          kind: 'authorization',
          amount: '18.00',
          heldAmount: '18.00',
          approved: true,
          networkTransactionId: 'nt_7a21',
          createdAt: '2026-03-02T19:04:11.000Z',
        },
        {
          kind: 'capture',
          amount: '21.60',
          heldAmount: '0.00',
          approved: null,
          networkTransactionId: null,
          createdAt: '2026-03-03T08:00:00.000Z',
        },
      ],
      truncated: false,
    },
  },
  getTransactionMetadata: {
    summary: "Retrieve a transaction's metadata",
    description:
      'The metadata given with a transfer or deposit, stored encrypted. The owner of either ' +
      'vault of a transfer may read it; anyone else gets 404, as for an unknown id. Answered ' +
      'with `Cache-Control: no-store`.',
    returns: 'The metadata.',
    errors: ['transaction_not_found'],
    example: {
      object: 'transaction_metadata',
      transactionId: TRANSFER_TRANSACTION_ID,
      metadata: { approvedBy: 'finance' },
    },
  },
  simulateDeposit: {
    summary: 'Simulate a deposit (test mode)',
    description:
      'Credits a test-mode vault as an on-chain deposit would, to try cards and policies. Live ' +
      'keys are refused.',
    returns: 'The deposit transaction, completed.',
    errors: [
      ...IDEMPOTENT,
      {
        code: 'parameter_invalid',
        message: 'Deposits can be simulated in test mode only.',
        param: 'mode',
      },
      { ...ERROR_EXAMPLES.vault_not_found, code: 'vault_not_found', param: 'vaultId' },
      { ...ERROR_EXAMPLES.vault_frozen, code: 'vault_frozen', param: 'vaultId' },
      { ...ERROR_EXAMPLES.vault_closed, code: 'vault_closed', param: 'vaultId' },
      'invalid_amount',
    ],
    example: {
      ...TRANSFER_TRANSACTION,
      id: DEPOSIT_ID,
      type: 'deposit',
      transferId: null,
      amount: '100.00',
      hasMetadata: false,
      onChain: null,
    },
    requestExample: { vaultId: VAULT_ID, amount: '100.00' },
  },

  // Webhooks
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
};
