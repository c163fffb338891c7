import { z } from 'zod';
import { amountInput, text } from './common.js';
import { merchantInput } from './policy.js';

/** The fields of a card network's authorization request (contract sections 7 and 16). */
const authorizeFields = {
  cardId: text(1, 64),
  // 0.00 is an account verification (section 16): approved with no hold on a live card.
  amount: amountInput,
  // The vault's asset (USDC, SOL) or the card's billing currency (ISO 4217, e.g. USD).
  currency: text(1, 16),
  merchant: merchantInput,
  // The card network's id: the idempotency key of the authorization (contract section 5).
  networkTransactionId: text(1, 255),
  // What the merchant charged, in its own currency (ISO 4217, to its minor units): recorded.
  merchantAmount: amountInput.optional(),
  merchantCurrency: text(3, 3).optional(),
} as const;

/** The card network's callback (contract section 7, Authorize; section 16). */
export const authorizeBody = z.strictObject({
  ...authorizeFields,
  // A decline for the balance or an amount limit may become an approval of what they allow.
  partialApprovalAllowed: z.boolean().optional(),
});

/** A decision the network took on spendgate's behalf (contract v1.2, section 16, Advice). */
export const adviceBody = z.strictObject({
  ...authorizeFields,
  approved: z.boolean(),
  reason: text(1, 200),
});

/** An increment of a pending hold (contract v1.2, section 16): decided on its own amount. */
export const incrementBody = z.strictObject({
  amount: amountInput,
  networkTransactionId: text(1, 255),
});

/** Capture and Reverse: without an amount, the whole remaining hold. */
export const holdAmountBody = z.strictObject({ amount: amountInput.optional() }).nullish();
