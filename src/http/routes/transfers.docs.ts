import type { OperationDoc } from '../operation-docs/doc.js';
import { ERROR_EXAMPLES } from '../operation-docs/error-examples.js';
import {
  CARD_TRANSACTION,
  DEPOSIT_ID,
  EXAMPLE_ADDRESS,
  EXTERNAL_TRANSFER,
  IDEMPOTENT,
  OTHER_VAULT_ID,
  PAGINATION,
  TRANSFER,
  TRANSFER_TRANSACTION,
  TRANSFER_TRANSACTION_ID,
  VAULT_ID,
  list,
} from '../operation-docs/examples.js';

/** The reference page's text and examples of the transfers and transactions operations, by operationId. */
export const TRANSFERS_DOCS = {
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
          billing: null,
          rate: null,
        },
        {
          kind: 'capture',
          amount: '21.60',
          heldAmount: '0.00',
          approved: null,
          networkTransactionId: null,
          createdAt: '2026-03-03T08:00:00.000Z',
          billing: null,
          rate: null,
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
} satisfies Record<string, OperationDoc>;
