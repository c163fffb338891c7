import { z } from 'zod';
import { CURRENCY_CODES } from '../../core/index.js';
import {
  amountInput,
  metadataInput,
  moneyOutput,
  paginationQuery,
  text,
  timestampOutput,
} from './common.js';
import { declineReason } from './policy.js';

const currencyCode = z.enum(CURRENCY_CODES as [string, ...string[]]);
const transactionType = z.enum([
  'card_authorization',
  'transfer_in',
  'transfer_out',
  'external_transfer',
  'deposit',
  'withdrawal',
  'force_capture',
  'refund',
]);

/** An amount in an ISO 4217 currency (billing, merchant), to that currency's minor units. */
const fiatAmount = z.object({ amount: z.string(), currency: z.string() });

/** A price that converted billing into the vault's asset: a transaction's, or a capture's own. */
const rateObject = z.object({
  value: z.string(),
  source: z.string(),
  at: timestampOutput,
  feeds: z
    .array(
      z.object({
        pair: z.string(),
        address: z.string(),
        price: z.string(),
        confidence: z.string(),
        publishedAt: timestampOutput,
      }),
    )
    .meta({
      description:
        'The Pyth price accounts the rate was read from (billing currency to USD, then USD to the asset): each price, confidence interval and publish time (docs/pricing.md).',
    }),
});

export const transactionObject = z
  .object({
    id: z.string(),
    object: z.literal('transaction'),
    type: transactionType,
    status: z.enum(['pending', 'completed', 'failed', 'declined']),
    vaultId: z.string(),
    cardId: z.string().nullable(),
    transferId: z.string().nullable(),
    amount: moneyOutput,
    capturedAmount: moneyOutput,
    heldAmount: z.string().meta({
      description:
        'The amount still on hold, e.g. "7.00" after 3.00 of a 10.00 authorization was ' +
        'reversed; "0.00" once nothing is held (captured, released, declined, or never a hold).',
    }),
    currency: currencyCode,
    merchant: z
      .object({
        name: z.string(),
        mcc: z.string(),
        country: z.string(),
        city: z.string().nullable(),
        id: z.string().nullable(),
      })
      .nullable(),
    declineCode: z.string().nullable(),
    declineReason: declineReason.nullable(),
    shadowMatches: z.array(declineReason).meta({
      description:
        "A card authorization's shadow rules whose conditions held when it was decided (the " +
        'rules of mode `shadow`, which report and never decline), as Simulate Policy reports ' +
        'them (a card\'s own policy\'s say `policy: "card"`); empty when none did, and for every other type.',
    }),
    failureReason: z.string().nullable(),
    createdAt: timestampOutput,
    completedAt: timestampOutput.nullable(),
    hasMetadata: z.boolean(),
    onChain: z
      .object({ signature: z.string(), sender: z.string(), slot: z.number().int() })
      .nullable()
      .meta({
        description:
          "A deposit credited from the chain (sent to the vault's depositAddress): the transfer's signature, sender and slot. Null for every other transaction.",
      }),
    billing: fiatAmount.meta({
      description:
        "What the network asked, in the cardholder's billing currency (contract section 16). For " +
        'a transaction recorded without one (before billing currencies, and every transfer), ' +
        'the amount and currency as recorded.',
    }),
    merchantAmount: fiatAmount.nullable().meta({
      description: 'What the merchant charged, in its own currency; null when not told.',
    }),
    rate: rateObject.nullable().meta({
      description:
        'The price that converted billing into the vault asset (billing currency per unit of the asset; `at`: the oldest feed publish time); null when none was needed (at par, or asked in the asset). A capture converts at its own price: the timeline shows it on the capture.',
    }),
    refundedAmount: moneyOutput.meta({
      description: 'What linked refunds (`POST /v1/refunds` with `transactionId`) credited.',
    }),
    expiresAt: timestampOutput.nullable().meta({
      description:
        'When the hold expires: 31 days for lodging, car rental and cruise lines, 7 days otherwise (settings); null when it has no expiry recorded (then it expires 7 days after createdAt).',
    }),
    advice: z.boolean().meta({ description: 'The network took this decision (advice).' }),
    partial: z.boolean().meta({ description: 'Approved for less than was asked.' }),
    policyWouldDecline: z
      .object({ declineCode: z.string(), declineReason: declineReason.nullable() })
      .nullable()
      .meta({
        description:
          'A force capture: the decline authorize would have given it (the card, the vault, the policy, the balance), recorded though it posted; null when it would have been approved, and for every other type.',
      }),
    originalTransactionId: z.string().nullable().meta({
      description: 'A linked refund: the transaction it credits. Null for every other transaction.',
    }),
  })
  .meta({ id: 'Transaction' });

export const transferObject = z
  .object({
    id: z.string(),
    object: z.literal('transfer'),
    fromVaultId: z.string(),
    toVaultId: z.string().nullable().optional(),
    address: z.string().nullable().optional(),
    amount: moneyOutput,
    currency: currencyCode,
    status: z.enum(['pending', 'completed', 'failed']),
    description: z.string().nullable(),
    memo: z.string().nullable(),
    signature: z.string().nullable(),
    failureReason: z.string().nullable(),
    createdAt: timestampOutput,
    completedAt: timestampOutput.nullable(),
  })
  .meta({ id: 'Transfer' });

export const createTransferBody = z.strictObject({
  fromVaultId: text(1, 64),
  toVaultId: text(1, 64),
  amount: amountInput,
  description: text(1, 500).optional(),
  metadata: metadataInput.optional(),
});

export const createExternalTransferBody = z.strictObject({
  fromVaultId: text(1, 64),
  // Checked as a Solana address in the handler, so a bad one is `invalid_address`.
  address: text(1, 64),
  amount: amountInput,
  memo: text(1, 200).optional(),
  metadata: metadataInput.optional(),
});

export const listTransfersQuery = z.strictObject({
  ...paginationQuery,
  vaultId: text(1, 64).optional(),
  status: z.enum(['pending', 'completed', 'failed']).optional(),
});

const dateBound = z.iso.datetime({ offset: true }).or(z.iso.date());

/** The interface document's filters of List Transactions, and `type`; dates are ISO 8601. */
export const listTransactionsQuery = z.strictObject({
  ...paginationQuery,
  vaultId: text(1, 64).optional(),
  cardId: text(1, 64).optional(),
  status: z.enum(['pending', 'completed', 'failed', 'declined']).optional(),
  type: transactionType
    .optional()
    .meta({ description: 'Only transactions of this type, one of the types a transaction has.' }),
  minAmount: text(1, 40).optional(),
  maxAmount: text(1, 40).optional(),
  startDate: dateBound.optional().meta({
    description:
      'Inclusive. A date-time (with its offset) is that instant; a date alone, YYYY-MM-DD, is ' +
      'the start of that UTC day.',
  }),
  endDate: dateBound.optional().meta({
    description:
      'A date-time (with its offset) is an exclusive bound, that instant; a date alone, ' +
      'YYYY-MM-DD, is inclusive: through the end of that UTC day.',
  }),
});

export const simulateDepositBody = z.strictObject({
  vaultId: text(1, 64),
  amount: amountInput,
  metadata: metadataInput.optional(),
});

export const metadataObject = z.object({
  object: z.literal('transaction_metadata'),
  transactionId: z.string(),
  metadata: z.record(z.string(), z.string()),
});

/** A transaction's lifecycle messages, oldest first (GET /v1/transactions/{id}/timeline). */
export const timelineObject = z
  .object({
    object: z.literal('timeline'),
    transactionId: z.string(),
    currency: currencyCode,
    messages: z.array(
      z.object({
        kind: z.enum([
          'authorization',
          'increment',
          'capture',
          'reversal',
          'expiry',
          'advice',
          'refund',
        ]),
        amount: moneyOutput,
        heldAmount: moneyOutput.meta({ description: 'What the transaction still held after it.' }),
        approved: z.boolean().nullable().meta({
          description: 'For an authorization or an increment, its decision; null otherwise.',
        }),
        networkTransactionId: z.string().nullable(),
        createdAt: timestampOutput,
        billing: fiatAmount.nullable().meta({
          description:
            'A capture converted at its own price: what it captured in the billing currency; null for every other message.',
        }),
        rate: rateObject.nullable().meta({
          description:
            "A capture converted at its own price: that price, in the transaction's `rate` form (it may differ from the authorization's); null for every other message.",
        }),
      }),
    ),
    truncated: z.boolean().meta({
      description: 'True when the transaction has more than the 500 messages shown.',
    }),
  })
  .meta({ id: 'Timeline' });
