import type { OperationDoc } from '../operation-docs/doc.js';
import { ERROR_EXAMPLES } from '../operation-docs/error-examples.js';
import {
  APPROVED,
  AUTHORIZATION_ID,
  CARD_ID,
  CARD_TRANSACTION,
  CREATED_AT,
  DEPOSIT_ID,
  IDEMPOTENT,
  LATER,
  MERCHANT,
  SETTLEMENT_ID,
} from '../operation-docs/examples.js';

/** The reference page's text and examples of the authorizations operations, by operationId. */
export const AUTHORIZATIONS_DOCS = {
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
} satisfies Record<string, OperationDoc>;
