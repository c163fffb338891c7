import { z } from 'zod';
import { FACT_NAMES, policySchema, type Operator } from '../core/index.js';
import {
  allNodeSchema,
  anyNodeSchema,
  leafNodeSchema,
  notNodeSchema,
  ruleSchema,
} from '../core/policy/schema.js';

/*
 * The policy document's JSON Schema (2020-12, the dialect of OpenAPI 3.1), generated from the
 * core's zod schemas, the ones Set Policy validates with, so the reference page shows the real
 * structure of a policy rather than "any object". The HTTP schema of the body stays an open
 * object on purpose: the core's compiler refuses a bad policy as `policy_invalid` with the path
 * of its fault, which a generic validation error would not say.
 *
 * The core checks condition trees one node at a time (their depth is bounded before anything
 * recurses), so its node schemas hold their children as `unknown`; here those children point
 * at one recursive `PolicyCondition` made of the same node schemas.
 */

/** Component names in the OpenAPI document. */
export const POLICY_DOCUMENT_COMPONENT = 'PolicyDocument';
export const POLICY_CONDITION_COMPONENT = 'PolicyCondition';

const componentUri = (id: string): string => `#/components/schemas/${id}`;

const conditionSchema = z.union([allNodeSchema, anyNodeSchema, notNodeSchema, leafNodeSchema]);

/** Where a condition holds another condition: each a `z.unknown()` of its own in the core. */
const CONDITION_SLOTS: ReadonlySet<z.core.$ZodType> = new Set([
  ruleSchema.shape.conditions,
  allNodeSchema.shape.all.element,
  anyNodeSchema.shape.any.element,
  notNodeSchema.shape.not,
]);

/** What the zod schemas cannot say: the meaning of each part, for the reference page. */
const DESCRIPTIONS = new Map<z.core.$ZodType, string>([
  [
    policySchema,
    'An authorization policy. Every part is optional; an empty policy ' +
      'approves whatever the balance covers. The first part a transaction fails declines it, ' +
      'in this order: merchantCategories, merchantCountries, limits, templates, rules.',
  ],
  [
    policySchema.shape.limits,
    'Spend limits: an amount (in the vault currency) or a count of transactions per interval, ' +
      'optionally only over some merchant categories. An amount limit with `currency` set to a ' +
      'billing currency (ISO 4217, "USD") counts the billing amounts card authorizations asked ' +
      'in it (docs/pricing.md).',
  ],
  [
    policySchema.shape.merchantCategories,
    'Merchant category codes (ISO 18245) to allow (all others declined) or to block.',
  ],
  [
    policySchema.shape.merchantCountries,
    'Merchant countries (ISO 3166-1 alpha-2) to allow (all others declined) or to block.',
  ],
  [
    policySchema.shape.templates,
    'Rules from the rule library with their parameters: GET /v1/rule-templates lists them.',
  ],
  [
    policySchema.shape.rules,
    'Custom decline rules: a rule declines when its conditions hold. A shadow rule only ' +
      'reports its matches (shadowMatches) and never declines.',
  ],
  [
    conditionSchema,
    'A condition: all (every child holds), any (one child holds), not, or a comparison of a ' +
      'fact with a value. The root of a rule is all, any or not.',
  ],
  [
    leafNodeSchema.shape.fact,
    `The fact compared: ${FACT_NAMES.join(', ')}. merchant takes a path ($.name, $.mcc, ` +
      '$.country, $.city, $.id).',
  ],
  [
    leafNodeSchema.shape.value,
    'What the fact is compared with: a number, an amount string, a string, a list (in, ' +
      'notIn), or { "fact": name } to compare with another fact.',
  ],
]);

/** Example values shown by the reference page where a generated one would mean nothing. */
const EXAMPLES = new Map<z.core.$ZodType, unknown>([
  [leafNodeSchema.shape.fact, 'mcc'],
  [leafNodeSchema.shape.operator, 'in' satisfies Operator],
  [leafNodeSchema.shape.value, ['7995', '7801']],
]);

/**
 * The two components, their references pointing into the document's components. Generated
 * once: the zod schemas are constants.
 */
let generated: Record<string, Record<string, unknown>> | undefined;

export function policyJsonSchemas(): Record<string, Record<string, unknown>> {
  if (generated !== undefined) return generated;
  const registry = z.registry<{ id: string }>();
  registry.add(policySchema, { id: POLICY_DOCUMENT_COMPONENT });
  registry.add(conditionSchema, { id: POLICY_CONDITION_COMPONENT });
  const { schemas } = z.toJSONSchema(registry, {
    target: 'draft-2020-12',
    // A request body: fields with defaults (a rule's action and mode) may be left out.
    io: 'input',
    uri: componentUri,
    override: ({ zodSchema, jsonSchema }) => {
      if (CONDITION_SLOTS.has(zodSchema))
        jsonSchema.$ref = componentUri(POLICY_CONDITION_COMPONENT);
      const description = DESCRIPTIONS.get(zodSchema);
      if (description !== undefined) jsonSchema.description = description;
      // A default said in words, not as `default`: client generators (openapi-typescript)
      // make a property with a default required, and a request may leave these out.
      if (jsonSchema.default !== undefined) {
        const said = `Default: ${JSON.stringify(jsonSchema.default)}.`;
        jsonSchema.description =
          jsonSchema.description === undefined ? said : `${jsonSchema.description} ${said}`;
        delete jsonSchema.default;
      }
      if (EXAMPLES.has(zodSchema)) jsonSchema.examples = [EXAMPLES.get(zodSchema)];
    },
  });
  generated = Object.fromEntries(
    Object.entries(schemas).map(([id, schema]) => {
      // A component is part of the document, whose dialect OpenAPI 3.1 already fixes, and is
      // named by its place there: a fragment-only $id is not a valid 2020-12 id.
      const component: Record<string, unknown> = { ...schema };
      delete component['$schema'];
      delete component['$id'];
      return [id, component];
    }),
  );
  return generated;
}
