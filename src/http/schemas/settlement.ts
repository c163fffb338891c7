import { z } from 'zod';
import { forceCaptureBody, refundBody } from './clearing.js';
import { amountInput, text, timestampOutput } from './common.js';

const captureRecord = z.strictObject({
  type: z.literal('capture').optional().meta({ description: 'The default kind of record.' }),
  authorizationId: text(1, 64),
  // Without it, the whole remaining hold is captured.
  amount: amountInput.optional(),
  final: z.boolean().optional().meta({
    description: 'False keeps what is left of the hold open for later captures (default true).',
  }),
});

const forceCaptureRecord = z.strictObject({
  type: z.literal('force_capture'),
  ...forceCaptureBody.shape,
});

const refundRecord = z.strictObject({
  type: z.literal('refund'),
  ...refundBody.shape,
});

/**
 * A clearing batch: up to 10,000 records, each any of the network's capture kinds (contract
 * v1.2, section 16): a capture of an authorization (`type` absent or `capture`), a force
 * capture or a refund, with the fields of POST /v1/captures and POST /v1/refunds.
 */
export const createSettlementBody = z.strictObject({
  records: z
    .array(z.union([captureRecord, forceCaptureRecord, refundRecord]))
    .min(1)
    .max(10_000),
});

export type SettlementRecordBody = z.infer<typeof createSettlementBody>['records'][number];

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
        type: z.enum(['capture', 'force_capture', 'refund']),
        authorizationId: z.string().nullable().meta({
          description: "A capture's authorization; null for a force capture or a refund.",
        }),
        networkTransactionId: z.string().nullable().meta({
          description: "A force capture's or refund's network id; null for a capture.",
        }),
        code: z.string(),
        message: z.string(),
      }),
    ),
    createdAt: timestampOutput,
    completedAt: timestampOutput.nullable(),
  })
  .meta({ id: 'Settlement' });
