import { z } from 'zod';
import { amountInput, text, timestampOutput } from './common.js';

/** A clearing batch: up to 10,000 capture records. */
export const createSettlementBody = z.strictObject({
  records: z
    .array(
      z.strictObject({
        authorizationId: text(1, 64),
        // Without it, the whole remaining hold is captured.
        amount: amountInput.optional(),
      }),
    )
    .min(1)
    .max(10_000),
});

export const settlementObject = z
  .object({
    id: z.string(),
    object: z.literal('settlement'),
    status: z.enum(['pending', 'completed']),
    recordCount: z.number().int(),
    capturedCount: z.number().int(),
    failedCount: z.number().int(),
    pendingCount: z.number().int(),
    errors: z.array(
      z.object({
        position: z.number().int(),
        authorizationId: z.string(),
        code: z.string(),
        message: z.string(),
      }),
    ),
    createdAt: timestampOutput,
    completedAt: timestampOutput.nullable(),
  })
  .meta({ id: 'Settlement' });
