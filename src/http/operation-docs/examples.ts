import type { ErrorCode } from '../../core/index.js';

/**
 * The made-up values the operations' examples share: ids of the form the service gives, the
 * objects as the API answers them. Every value is obviously fake.
 */
// Made-up ids of the form the service gives (a kind prefix and a UUIDv7 in hex).
const ACCOUNT_ID = 'acct_0193a4f1c2d87b3e9f1a2b3c4d5e6f70';
export const VAULT_ID = 'vlt_0193a4f1c2e47d01a5b6c7d8e9f0a1b2';
export const OTHER_VAULT_ID = 'vlt_0193a4f1c3017a2cb4d5e6f7a8b9c0d1';
export const CARD_ID = 'card_0193a4f1c5b27e44a1b2c3d4e5f60718';
export const AUTHORIZATION_ID = 'txn_0193a4f1c7d974c2b8e9f0a1b2c3d4e5';
export const TRANSFER_ID = 'tr_0193a4f1c9e07f13a4b5c6d7e8f90a1b';
export const TRANSFER_TRANSACTION_ID = 'txn_0193a4f1c9e07f13a4b5d1e2f3a4b5c6';
export const DEPOSIT_ID = 'txn_0193a4f1cab17d20b1c2d3e4f5a6b7c8';
export const WEBHOOK_ID = 'we_0193a4f1cb1a7c55b6c7d8e9f0a1b2c3';
export const DELIVERY_ID = 'whd_0193a4f1cc2b7a01b2c3d4e5f6a7b8c9';
export const EVENT_ID = 'evt_0193a4f1cc2b7a01a1b2c3d4e5f6a7b8';
export const SETTLEMENT_ID = 'stl_0193a4f1cd3c7e91c1d2e3f4a5b6c7d8';
export const BACKTEST_ID = 'bt_0193a4f1cf5e7a13e1f2a3b4c5d6e7f8';
export const PROCESSOR_ID = 'pc_0193a4f1d06f7b24f1a2b3c4d5e6f7a8';
const DECLINED_ID = 'txn_0193a4f1c8d874c2b8e9f0a1b2c3d4e6';
export const EXAMPLE_REQUEST_ID = 'req_0193a4f1ce4d7f02d1e2f3a4b5c6d7e8';
/** Decodes to 32 bytes, as a Solana address does, and says what it is. */
export const EXAMPLE_ADDRESS = 'ExampLeAddressDoNotSendFundsHerexxxxxxxxxxx';

export const CREATED_AT = '2026-03-02T14:05:09.412Z';
export const LATER = '2026-03-02T15:30:00.000Z';

export const VAULT = {
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

export const NEW_VAULT = {
  ...VAULT,
  balance: { available: '5000.00', pending: '0.00', ledger: '5000.00' },
};

export const POLICY_DOCUMENT = {
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
export const POLICY = {
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
export const CARD_POLICY_DOCUMENT = {
  limits: [
    { interval: 'daily', amount: '200' },
    { interval: 'monthly', count: 40 },
  ],
  merchantCategories: { block: ['5813'] },
};
export const CARD_POLICY = {
  object: 'policy',
  vaultId: VAULT_ID,
  cardId: CARD_ID,
  version: 2,
  ...CARD_POLICY_DOCUMENT,
  createdAt: CREATED_AT,
  updatedAt: LATER,
};

export const POLICY_LIMITS = {
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
      currency: 'USDC',
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
      currency: 'USDC',
      count: null,
      used: null,
      remaining: '250.00',
      resetsAt: null,
    },
  ],
};

export const CARD_POLICY_LIMITS = {
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
      currency: 'USDC',
      count: 40,
      used: 12,
      remaining: 28,
      resetsAt: '2026-04-01T00:00:00.000Z',
    },
  ],
};

const KEY_ID = 'key_0193a4f1c0a17b22a3b4c5d6e7f8a9b0';

export const POLICY_VERSIONS = [
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

export const MERCHANT = { name: 'Blue Bottle Coffee', mcc: '5814', country: 'US', city: 'Oakland' };

export const APPROVED = {
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

export const CARD = {
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

export const CARD_TRANSACTION = {
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

export const BACKTEST_REQUEST = {
  policy: { limits: [{ interval: 'daily', amount: '500' }] },
  startDate: '2026-02-01',
  endDate: '2026-03-01',
};

export const BACKTEST = {
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

export const TRANSFER = {
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

export const EXTERNAL_TRANSFER = {
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

export const TRANSFER_TRANSACTION = {
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

export const WEBHOOK = {
  id: WEBHOOK_ID,
  object: 'webhook_endpoint',
  url: 'https://hooks.example.com/spendgate',
  events: ['authorization.approved', 'authorization.declined', 'transaction.completed'],
  description: 'Ledger sync',
  status: 'enabled',
  createdAt: CREATED_AT,
};

export const PROCESSOR = {
  id: PROCESSOR_ID,
  object: 'processor_connection',
  processor: 'stripe',
  mode: 'test',
  url: `/v1/processors/stripe/${PROCESSOR_ID}`,
  createdAt: CREATED_AT,
  rotatedAt: null,
  previousSecretsUntil: null,
};

export const ACCOUNT = {
  id: ACCOUNT_ID,
  object: 'account',
  name: 'acme',
  mode: 'test',
  twoFactorEnabled: false,
};

/** An obviously fake TOTP secret (base32), never one a real enrolment gave. */
export const EXAMPLE_TOTP_SECRET = 'EXAMPLEEXAMPLEEXAMPLEEXAMPLE2345';

export const list = (data: readonly unknown[], nextCursor: string | null = null) => ({
  object: 'list',
  data,
  hasMore: nextCursor !== null,
  nextCursor,
});

/** What an id-paginated list's description ends with. */
export const PAGINATION =
  'Newest first, `limit` (1-100, default 10) at a time: while `hasMore` is true, pass ' +
  '`nextCursor` as `startingAfter` for the next page.';

/** The codes of a route run under an `Idempotency-Key` (contract section 5). */
export const IDEMPOTENT: readonly ErrorCode[] = [
  'duplicate_idempotency_key',
  'idempotency_key_in_use',
];
