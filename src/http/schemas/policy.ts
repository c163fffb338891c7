import { z } from 'zod';
import { isCountryCode, MCC_PATTERN } from '../../core/index.js';
import { amountInput, moneyOutput, timestampOutput, text } from './common.js';

/**
 * A policy body is any JSON object here: the core's compiler validates it (contract section
 * 11), so that its refusals are `policy_invalid` with the path of the fault.
 */
export const policyBody = z.looseObject({}).meta({
  description:
    'An authorization policy (contract section 11): limits, merchantCategories, merchantCountries, templates, rules.',
});

export const policyObject = z
  .looseObject({
    object: z.literal('policy'),
    vaultId: z.string(),
    version: z.number().int(),
    createdAt: timestampOutput,
    updatedAt: timestampOutput,
  })
  .meta({ id: 'Policy' });

export const deletedPolicyObject = z.object({
  object: z.literal('policy'),
  vaultId: z.string(),
  deleted: z.literal(true),
});

export const merchantInput = z.strictObject({
  name: text(1, 200),
  mcc: z.string().regex(MCC_PATTERN, { error: 'must be a four-digit merchant category code' }),
  country: z
    .string()
    .refine(isCountryCode, { error: 'must be an ISO 3166-1 alpha-2 country code' }),
  city: text(1, 200).optional(),
  id: text(1, 200).optional(),
});

export const simulateBody = z.strictObject({
  policy: policyBody.optional(),
  transaction: z.strictObject({
    amount: amountInput,
    currency: text(1, 16).optional(),
    merchant: merchantInput,
    cardId: text(1, 64).optional(),
  }),
});

const declineReason = z.object({ rule: z.string(), message: z.string() });

export const decisionObject = z
  .object({
    id: z.string().nullable(),
    object: z.literal('authorization'),
    approved: z.boolean(),
    status: z.enum(['pending', 'declined']),
    declineCode: z
      .enum(['authorization_failed', 'insufficient_balance', 'card_declined'])
      .nullable(),
    declineReason: declineReason.nullable(),
    amount: moneyOutput,
    currency: z.string(),
    cardId: z.string().nullable(),
    // Null when the card is unknown (no vault to record on) or the answer is a stand-in.
    vaultId: z.string().nullable(),
    standIn: z.boolean(),
    decidedInMicros: z.number().int(),
    shadowMatches: z.array(declineReason),
  })
  .meta({ id: 'AuthorizationDecision' });
