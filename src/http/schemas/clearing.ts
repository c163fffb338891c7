import { z } from 'zod';
import { amountInput, text } from './common.js';
import { merchantInput } from './policy.js';

/*
 * The postings side of a card transaction's life (contract v1.2, section 16): Capture, Force
 * Capture and Refund. Money the network has moved is never refused for the balance or the
 * policy: these refuse only what is malformed, unknown or in a currency that does not match.
 */

/** Capture: without an amount, the whole remaining hold; `final` releases what is left. */
export const captureBody = z
  .strictObject({
    amount: amountInput.optional().meta({
      description:
        "What the network captured, in the authorization's currency (for one converted at a price, its billing currency, converted at the price now: docs/pricing.md): may exceed the hold (tips, fuel); the excess posts too. Without it, the whole remaining hold (at a price, the billing amount while nothing is captured).",
    }),
    final: z.boolean().optional().meta({
      description:
        'True (the default): the last capture, which releases what is left of the hold. False: the hold stays open, less this amount, for later captures (split shipments).',
    }),
  })
  .nullish();

const clearingFields = {
  cardId: text(1, 64),
  amount: amountInput,
  currency: text(1, 16).meta({
    description:
      "The vault's asset (USDC, SOL), a billing currency at par with it (USD for a USDC vault), or the card's billing currency converted at the feed price now (docs/pricing.md; 503 without a usable price).",
  }),
  merchant: merchantInput,
  networkTransactionId: text(1, 255).meta({
    description:
      "The network's id of this message: its idempotency key (per kind of message: a refund may carry the id of the authorization it refunds).",
  }),
};

/** Force Capture: a posting with no authorization. */
export const forceCaptureBody = z.strictObject(clearingFields);

/** Refund: a merchant's credit, linked to a card transaction of the same card or not. */
export const refundBody = z.strictObject({
  ...clearingFields,
  transactionId: text(1, 64).optional().meta({
    description:
      'The card transaction (an authorization or a force capture of this card) the refund credits: its refundedAmount grows by the amount.',
  }),
});
