import { z } from 'zod';
import { isCountryCode, MCC_PATTERN } from '../../core/index.js';
import {
  amountInput,
  idParams,
  moneyOutput,
  paginationQuery,
  timestampOutput,
  text,
} from './common.js';

/**
 * A policy body is any JSON object here: the core's compiler validates it (contract section
 * 11), so that its refusals are `policy_invalid` with the path of the fault.
 */
export const policyBody = z.looseObject({}).meta({
  description:
    'An authorization policy (contract section 11): limits, merchantCategories, merchantCountries, templates, rules.',
});

const cardIdOfPolicy = z.string().optional().meta({
  description: "Only on a card's own policy (Set Card Policy): the card. Its vault is `vaultId`.",
});

export const policyObject = z
  .looseObject({
    object: z.literal('policy'),
    vaultId: z.string(),
    cardId: cardIdOfPolicy,
    version: z.number().int(),
    createdAt: timestampOutput,
    updatedAt: timestampOutput,
  })
  .meta({ id: 'Policy' });

export const deletedPolicyObject = z.object({
  object: z.literal('policy'),
  vaultId: z.string(),
  cardId: cardIdOfPolicy,
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

/**
 * What declined (or, in `shadowMatches`, what would have). `policy` is there only when the
 * card's own policy gave it: the vault's policy and the fixed checks answer as they always have.
 */
export const declineReason = z.object({
  rule: z.string(),
  message: z.string(),
  policy: z
    .literal('card')
    .optional()
    .meta({
      description:
        "`card` when the card's own policy (Set Card Policy) gave this reason; absent when the " +
        "vault's policy or a fixed check did.",
    }),
});

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
    partial: z.boolean().meta({
      description:
        'An approval of less than was asked (partialApprovalAllowed): `amount` is approved.',
    }),
    requestedAmount: moneyOutput.nullable().meta({ description: 'What was asked, when partial.' }),
  })
  .meta({ id: 'AuthorizationDecision' });

/** The path of Restore Policy Version: the owner's id and the version number. */
export const versionParams = idParams.extend({
  version: z.string().max(64).meta({
    description: 'A version number of the policy (List Policy Versions); any other is a 404.',
  }),
});

export const policyVersionsQuery = z.strictObject({
  ...paginationQuery,
  startingAfter: text(1, 64)
    .optional()
    .meta({ description: 'The `version` of the last object of the previous page.' }),
});

export const policyVersionObject = z
  .object({
    object: z.literal('policy_version'),
    vaultId: z.string(),
    cardId: z.string().nullable().meta({ description: "The card, for a card's own policy." }),
    version: z.number().int().meta({ description: "The policy's version after this change." }),
    change: z.enum(['set', 'delete', 'restore']),
    restoredFrom: z
      .number()
      .int()
      .nullable()
      .meta({ description: 'The version a restore put back; null otherwise.' }),
    keyId: z.string().nullable().meta({
      description: 'The id of the API key that made the change (never the key itself).',
    }),
    document: policyBody.nullable(),
    createdAt: timestampOutput,
  })
  .meta({ id: 'PolicyVersion' });

const figure = z.union([z.string(), z.number().int()]);

export const policyLimitsObject = z
  .object({
    object: z.literal('policy_limits'),
    vaultId: z.string(),
    cardId: z.string().nullable().meta({ description: "The card, for a card's own policy." }),
    version: z.number().int().meta({ description: 'The version of the policy reported.' }),
    currency: z.string(),
    asOf: timestampOutput,
    limits: z.array(
      z.object({
        rule: z
          .string()
          .meta({ description: 'The rule its decline names: `limits[i]`, or a template.' }),
        mode: z.enum(['enforce', 'shadow']),
        interval: z.enum(['perTransaction', 'daily', 'weekly', 'monthly', 'yearly', 'allTime']),
        merchantCategories: z.array(z.string()).nullable(),
        amount: moneyOutput.nullable().meta({ description: 'The amount allowed (amount limits).' }),
        currency: z.string().meta({
          description:
            "The currency of `amount`, `used` and `remaining`: the vault's asset, or the billing currency a limit is written in (`currency` on the limit), whose billing amounts it counts.",
        }),
        count: z
          .number()
          .int()
          .nullable()
          .meta({ description: 'The count allowed (count limits).' }),
        used: figure.nullable().meta({
          description:
            'Spent in the current window: an amount (string) or a count; null per transaction.',
        }),
        remaining: figure.meta({
          description:
            'What the next authorization may still take: a larger amount, or any once the count is 0, is declined by this limit.',
        }),
        resetsAt: timestampOutput.nullable().meta({
          description: 'When the window starts again; null per transaction and all time.',
        }),
      }),
    ),
  })
  .meta({ id: 'PolicyLimits' });
