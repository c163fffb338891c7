import { z } from 'zod';
import { isIsoCurrency } from '../iso-currencies.js';
import {
  metadataChangesInput,
  metadataInput,
  paginationQuery,
  text,
  timestampOutput,
} from './common.js';

/** An ISO 4217 alphabetic code (contract v1.2, section 16), from the maintained table. */
const isoCurrencyCode = z
  .string()
  .refine(isIsoCurrency, { error: 'must be an ISO 4217 currency code, such as USD' });

const cardStatus = z.enum(['active', 'frozen', 'cancelled']);

export const cardObject = z
  .object({
    id: z.string(),
    object: z.literal('card'),
    vaultId: z.string(),
    status: cardStatus,
    last4: z.string(),
    expMonth: z.number().int(),
    expYear: z.number().int(),
    cardholderName: z.string(),
    metadata: z.record(z.string(), z.string()),
    billingCurrency: z
      .string()
      .meta({ description: 'ISO 4217: the currency the network asks in.' }),
    createdAt: timestampOutput,
    cancelledAt: timestampOutput.nullable(),
    processorCard: z.object({ connectionId: z.string(), cardId: z.string() }).nullable().meta({
      description: "The processor's card this card answers for (section 17); null: none.",
    }),
  })
  .meta({ id: 'Card' });

/** Ties a card to a processor's card: unique per connection. */
const processorCardInput = z
  .strictObject({
    connectionId: text(1, 64),
    cardId: text(1, 255).meta({ description: "The processor's id of the card (Stripe ic_...)." }),
  })
  .meta({ description: "The processor connection and the processor's card id (section 17)." });

export const createCardBody = z.strictObject({
  vaultId: text(1, 64),
  cardholderName: text(1, 100),
  metadata: metadataInput.optional(),
  billingCurrency: isoCurrencyCode.optional(),
  processorCard: processorCardInput.optional(),
});

export const updateCardBody = z.strictObject({
  cardholderName: text(1, 100).optional(),
  metadata: metadataChangesInput.optional(),
  processorCard: processorCardInput.nullable().optional().meta({
    description: 'null unties the card.',
  }),
});

export const listCardsQuery = z.strictObject({
  ...paginationQuery,
  vaultId: text(1, 64).optional(),
  status: cardStatus.optional(),
});

export const cardDetailsObject = z
  .object({
    object: z.literal('card_details'),
    cardId: z.string(),
    number: z.string(),
    cvv: z.string(),
    expMonth: z.number().int(),
    expYear: z.number().int(),
  })
  .meta({ id: 'CardDetails' });
