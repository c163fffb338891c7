import { z } from 'zod';
import { amountInput, text } from './common.js';
import { merchantInput } from './policy.js';

/** The card network's callback (contract section 7, Authorize). */
export const authorizeBody = z.strictObject({
  cardId: text(1, 64),
  amount: amountInput,
  currency: text(1, 16),
  merchant: merchantInput,
  // The card network's id: the idempotency key of the authorization (contract section 5).
  networkTransactionId: text(1, 255),
});

/** Capture and Reverse: without an amount, the whole remaining hold. */
export const holdAmountBody = z.strictObject({ amount: amountInput.optional() }).nullish();
