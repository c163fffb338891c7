import { z } from 'zod';
import { POLICY_BOUNDS } from './bounds.js';
import { isCountryCode, MCC_PATTERN } from './countries.js';
import { OPERATORS } from './operators.js';

/*
 * The policy document of contract section 11, as zod schemas. Condition trees are validated one
 * node at a time by `check-conditions.ts` (with these node schemas), so that their depth is
 * bounded before anything recurses into them.
 */

/**
 * The one text check: text that can be stored. A lone UTF-16 surrogate can be written in JSON
 * but has no UTF-8 form, and NUL fits neither PostgreSQL's text nor its jsonb, so either would
 * fail deep in the store (a 500) rather than as the client's error. The HTTP schemas' `text()`
 * and the policy document below both refuse what this refuses.
 */
export function isStorableText(value: string): boolean {
  return value.isWellFormed() && !value.includes('\u0000');
}
export const STORABLE_TEXT_ERROR = 'must be well-formed Unicode text without NUL characters';

/**
 * Values a policy document may hold, counted over all its nesting: far above what the bounds
 * let a valid policy have (10,000 list values, 500 conditions, 100 rules), so only a document
 * that would be refused anyway meets it, and the text walk below stays bounded whatever it is
 * given (a cyclic object included).
 */
const DOCUMENT_VALUES_MAX = 100_000;

/** A value met by the text walk, with the way back to the root for an error's path. */
interface WalkEntry {
  readonly value: unknown;
  readonly key: string | number | null;
  readonly parent: WalkEntry | null;
}

function pathOf(entry: WalkEntry): (string | number)[] {
  const path: (string | number)[] = [];
  for (let at: WalkEntry | null = entry; at !== null && at.key !== null; at = at.parent) {
    path.push(at.key);
  }
  return path.reverse();
}

/**
 * Every string of a policy document, keys included, through the text check: a rule's message,
 * a condition's string value and a template's parameters are stored with the policy as they
 * are written. Iterative, with paths built only for the fault, so neither nesting depth nor
 * size costs more than one step per value. A key at fault is reported at its object, so that
 * it is not echoed.
 */
function checkDocumentText(document: unknown, ctx: z.RefinementCtx): void {
  const stack: WalkEntry[] = [{ value: document, key: null, parent: null }];
  for (let visited = 0; stack.length > 0; visited++) {
    if (visited >= DOCUMENT_VALUES_MAX) {
      ctx.addIssue({
        code: 'custom',
        message: 'holds more values than any valid policy has',
        path: [],
      });
      return;
    }
    const entry = stack.pop() as WalkEntry;
    const value = entry.value;
    if (typeof value === 'string') {
      if (!isStorableText(value)) {
        ctx.addIssue({ code: 'custom', message: STORABLE_TEXT_ERROR, path: pathOf(entry) });
        return;
      }
    } else if (Array.isArray(value)) {
      for (let index = value.length - 1; index >= 0; index--) {
        stack.push({ value: value[index] as unknown, key: index, parent: entry });
      }
    } else if (typeof value === 'object' && value !== null) {
      const keys = Object.keys(value);
      for (let index = keys.length - 1; index >= 0; index--) {
        const key = keys[index] as string;
        if (!isStorableText(key)) {
          ctx.addIssue({
            code: 'custom',
            message: 'has a field name that is not well-formed Unicode text or holds NUL',
            path: pathOf(entry),
          });
          return;
        }
        stack.push({ value: (value as Record<string, unknown>)[key], key, parent: entry });
      }
    }
  }
}

export const mccSchema = z
  .string()
  .regex(MCC_PATTERN, { error: 'must be a four-digit merchant category code such as "5812"' });

export const countrySchema = z
  .string()
  .refine(isCountryCode, { error: 'must be an ISO 3166-1 alpha-2 country code such as "US"' });

/** An amount as a client writes it; parsed with the vault currency's scale by the checker. */
export const amountInputSchema = z.union([z.number(), z.string()], {
  error: 'must be a number or a decimal string',
});

/** A limit's currency: an asset code (USDC, SOL) or an ISO 4217 alphabetic code. */
export const LIMIT_CURRENCY = /^[A-Z]{3,4}$/;

export const LIMIT_INTERVALS = [
  'perTransaction',
  'daily',
  'weekly',
  'monthly',
  'yearly',
  'allTime',
] as const;
export type LimitInterval = (typeof LIMIT_INTERVALS)[number];

export const limitSchema = z
  .strictObject({
    interval: z.enum(LIMIT_INTERVALS),
    amount: amountInputSchema.optional(),
    count: z.int().min(0).max(POLICY_BOUNDS.countMax).optional(),
    merchantCategories: z.array(mccSchema).min(1).optional(),
    // The vault's asset (the default), or a billing currency (ISO 4217: issue 35), whose
    // limit is checked against billing amounts. Which codes a vault may use: compile.ts.
    currency: z
      .string()
      .regex(LIMIT_CURRENCY, { error: 'must be a currency code such as "USD"' })
      .optional(),
  })
  .superRefine((limit, ctx) => {
    if ((limit.amount === undefined) === (limit.count === undefined)) {
      ctx.addIssue({ code: 'custom', message: 'must have either amount or count', path: [] });
    } else if (limit.currency !== undefined && limit.amount === undefined) {
      ctx.addIssue({
        code: 'custom',
        message: 'is for an amount limit: a count limit counts transactions in any currency',
        path: ['currency'],
      });
    } else if (limit.count !== undefined && limit.interval === 'perTransaction') {
      ctx.addIssue({
        code: 'custom',
        message: 'needs a calendar interval: a count limit cannot be perTransaction',
        path: ['count'],
      });
    }
  });
export type LimitDocument = z.infer<typeof limitSchema>;

function allowOrBlock<T extends z.ZodType<string>>(item: T) {
  return z
    .strictObject({
      allow: z.array(item).min(1).optional(),
      block: z.array(item).min(1).optional(),
    })
    .superRefine((lists, ctx) => {
      if ((lists.allow === undefined) === (lists.block === undefined)) {
        ctx.addIssue({
          code: 'custom',
          message: 'must have either allow or block, not both',
          path: [],
        });
      }
    });
}

export const RULE_MODES = ['enforce', 'shadow'] as const;
export type RuleMode = (typeof RULE_MODES)[number];

export const ruleNameSchema = z
  .string()
  .min(1)
  .max(POLICY_BOUNDS.ruleNameLengthMax)
  .regex(/^[A-Za-z0-9][A-Za-z0-9_.:-]*$/, {
    error: 'must start with a letter or digit and hold only letters, digits and _ . : -',
  });

const messageSchema = z.string().min(1).max(POLICY_BOUNDS.messageLengthMax);

export const ruleSchema = z.strictObject({
  name: ruleNameSchema,
  action: z.literal('decline').default('decline'),
  mode: z.enum(RULE_MODES).default('enforce'),
  message: messageSchema.optional(),
  // Checked node by node by check-conditions.ts; `undefined` is refused there as missing.
  conditions: z.unknown(),
});
export type RuleDocument = z.infer<typeof ruleSchema>;

export const templateRefSchema = z.strictObject({
  name: z.string().min(1).max(64),
  params: z.record(z.string(), z.unknown()).optional(),
  mode: z.enum(RULE_MODES).default('enforce'),
});
export type TemplateRefDocument = z.infer<typeof templateRefSchema>;

export const policySchema = z
  .strictObject({
    limits: z.array(limitSchema).max(POLICY_BOUNDS.limitsMax).optional(),
    merchantCategories: allowOrBlock(mccSchema).optional(),
    merchantCountries: allowOrBlock(countrySchema).optional(),
    templates: z.array(templateRefSchema).max(POLICY_BOUNDS.templatesMax).optional(),
    rules: z.array(ruleSchema).max(POLICY_BOUNDS.rulesMax).optional(),
  })
  .superRefine(checkDocumentText);
export type PolicyDocument = z.infer<typeof policySchema>;

// Condition nodes. A boolean node's children stay `unknown` here and are checked on the way down.
export const allNodeSchema = z.strictObject({
  all: z.array(z.unknown()).min(1).max(POLICY_BOUNDS.childrenMax),
});
export const anyNodeSchema = z.strictObject({
  any: z.array(z.unknown()).min(1).max(POLICY_BOUNDS.childrenMax),
});
export const notNodeSchema = z.strictObject({ not: z.unknown() });
export const leafNodeSchema = z.strictObject({
  fact: z.string().max(64),
  operator: z.enum(OPERATORS, { error: `must be one of ${OPERATORS.join(', ')}` }),
  value: z.unknown(),
  path: z.string().max(64).optional(),
});
export const factRefSchema = z.strictObject({
  fact: z.string().max(64),
  path: z.string().max(64).optional(),
});
