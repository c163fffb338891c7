import { z } from 'zod';
import { POLICY_BOUNDS, TEMPLATE_BOUNDS } from './bounds.js';
import { amountInputSchema, countrySchema, mccSchema } from './schema.js';

const description = z.string().min(1).max(TEMPLATE_BOUNDS.descriptionLengthMax);

export const templateParamSchema = z.discriminatedUnion('type', [
  z.strictObject({
    type: z.literal('integer'),
    description,
    min: z.int(),
    max: z.int(),
    default: z.int().optional(),
  }),
  z.strictObject({ type: z.literal('amount'), description, default: amountInputSchema.optional() }),
  z.strictObject({
    type: z.literal('mccList'),
    description,
    default: z.array(mccSchema).optional(),
  }),
  z.strictObject({
    type: z.literal('countryList'),
    description,
    default: z.array(countrySchema).optional(),
  }),
  z.strictObject({
    type: z.literal('stringList'),
    description,
    default: z.array(z.string().min(1).max(POLICY_BOUNDS.stringValueLengthMax)).optional(),
  }),
]);
export type TemplateParam = z.infer<typeof templateParamSchema>;

export const templateRuleSchema = z.strictObject({
  message: z.string().min(1).max(POLICY_BOUNDS.messageLengthMax),
  conditions: z.unknown(),
});

/**
 * The format of a rule-library template (rules/*.json): a parameterised fragment of a policy,
 * made of limits and rules in the policy's own format. Wherever a value may stand, a template
 * may write `{ "param": "name" }`, replaced by the parameter's value when a policy uses it.
 * A rule's message may name parameters as `{name}`.
 */
export const templateSchema = z.strictObject({
  name: z
    .string()
    .regex(/^[a-z0-9]+(?:-[a-z0-9]+)*$/, { error: 'must be kebab-case' })
    .max(64),
  description,
  params: z
    .record(z.string().regex(/^[a-z][A-Za-z0-9]*$/), templateParamSchema)
    .refine((params) => Object.keys(params).length <= TEMPLATE_BOUNDS.paramsMax, {
      error: `must have at most ${TEMPLATE_BOUNDS.paramsMax} parameters`,
    })
    .default({}),
  limits: z.array(z.unknown()).max(TEMPLATE_BOUNDS.limitsMax).default([]),
  rules: z.array(templateRuleSchema).max(TEMPLATE_BOUNDS.rulesMax).default([]),
  // Worked examples, run by the library's tests; they document what the template does.
  examples: z.array(z.unknown()).max(20).default([]),
});
export type TemplateDocument = z.infer<typeof templateSchema>;

/** Templates by name. The built-in library is loaded from rules/ by `src/rule-library`. */
export type TemplateLibrary = ReadonlyMap<string, TemplateDocument>;

export const EMPTY_TEMPLATE_LIBRARY: TemplateLibrary = new Map();
