import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import {
  COUNTRY_CODES,
  MCC_PATTERN,
  POLICY_BOUNDS,
  type TemplateDocument,
  type TemplateLibrary,
  type TemplateParam,
} from '../../core/index.js';
import { amountInputSchema } from '../../core/policy/schema.js';
import { builtinRuleLibrary } from '../../rule-library/load.js';
import { listOf, paginationQuery, presentPage } from '../schemas/common.js';
import type { OperationId } from '../operation-docs/index.js';

/*
 * The rule library (rules/*.json) as the API lists it: what each template does, the parameters
 * a policy gives it, each with the JSON Schema of its value, and an example policy that uses
 * it, so that a client can discover the templates without reading the repository.
 */

const PARAM_TYPES = [
  'integer',
  'amount',
  'mccList',
  'countryList',
  'stringList',
] as const satisfies readonly TemplateParam['type'][];

/** A card transaction of a template's worked example, as rules/*.json write it. */
const exampleTransaction = z.object({
  amount: z.string(),
  mcc: z.string(),
  country: z.string(),
  merchantName: z.string(),
  merchantId: z.string().optional(),
  at: z.string(),
});

const ruleTemplateObject = z
  .object({
    object: z.literal('rule_template'),
    name: z.string().meta({ description: 'What a policy names in templates[].name.' }),
    description: z.string(),
    parameters: z.array(
      z.object({
        name: z.string(),
        type: z.enum(PARAM_TYPES),
        description: z.string(),
        required: z.boolean().meta({ description: 'False when the template has a default.' }),
        schema: z.record(z.string(), z.unknown()).meta({
          description: 'The JSON Schema (2020-12) of the value, its default included.',
        }),
      }),
    ),
    example: z.object({
      policy: z
        .object({
          templates: z.array(
            z.object({ name: z.string(), params: z.record(z.string(), z.unknown()).optional() }),
          ),
        })
        .meta({ description: 'A policy that uses the template, ready for Set Policy.' }),
      transaction: exampleTransaction
        .optional()
        .meta({ description: 'A card transaction that the policy decides as outcome says.' }),
      spend: z
        .record(z.string(), z.union([z.string(), z.number()]))
        .optional()
        .meta({
          description:
            "The vault's spend before the transaction, as measure:interval (amount:daily, count:daily, ...).",
        }),
      outcome: z.enum(['approve', 'decline']).optional(),
    }),
  })
  .meta({ id: 'RuleTemplate' });

type RuleTemplate = z.infer<typeof ruleTemplateObject>;

/** The worked examples a template carries (rules/*.json), as test/rule-library.test.ts checks them. */
const workedExample = z.object({
  expect: z.enum(['approve', 'decline']),
  params: z.record(z.string(), z.unknown()).optional(),
  spend: z.record(z.string(), z.union([z.string(), z.number()])).optional(),
  transaction: exampleTransaction,
});

/** A template's name, as a page's cursor: anything else names no place in the list. */
const templateName = z
  .string()
  .regex(/^[a-z0-9]+(?:-[a-z0-9]+)*$/, {
    error: 'must be the name of a rule template from a previous page',
  })
  .max(64);

const listRuleTemplatesQuery = z.strictObject({
  ...paginationQuery,
  startingAfter: templateName.optional(),
});

/** The zod schema of a parameter's value, as the core's template expansion checks it. */
function valueSchema(param: TemplateParam): z.ZodType {
  const list = (item: z.ZodType) => z.array(item).min(1).max(POLICY_BOUNDS.listValuesMax);
  switch (param.type) {
    case 'integer':
      return z.int().min(param.min).max(param.max);
    case 'amount':
      return amountInputSchema;
    case 'mccList':
      return list(z.string().regex(MCC_PATTERN));
    case 'countryList':
      return list(z.enum([...COUNTRY_CODES].sort()));
    case 'stringList':
      return list(z.string().min(1).max(POLICY_BOUNDS.stringValueLengthMax));
  }
}

function parameterSchema(param: TemplateParam): Record<string, unknown> {
  const schema: Record<string, unknown> = z.toJSONSchema(valueSchema(param), { io: 'input' });
  // Part of a response, not a document of its own: the dialect is the API's (2020-12).
  delete schema['$schema'];
  return {
    ...schema,
    description: param.description,
    ...(param.default === undefined ? {} : { default: param.default }),
  };
}

/** The example that shows the template at work: a decline where there is one. */
function exampleOf(template: TemplateDocument): RuleTemplate['example'] {
  const examples = template.examples.flatMap((example) => {
    const parsed = workedExample.safeParse(example);
    return parsed.success ? [parsed.data] : [];
  });
  const chosen = examples.find((example) => example.expect === 'decline') ?? examples[0];
  const params = chosen?.params ?? {};
  const use = {
    name: template.name,
    ...(Object.keys(params).length === 0 ? {} : { params }),
  };
  return {
    policy: { templates: [use] },
    ...(chosen === undefined
      ? {}
      : {
          transaction: chosen.transaction,
          ...(chosen.spend === undefined ? {} : { spend: chosen.spend }),
          outcome: chosen.expect,
        }),
  };
}

function presentTemplate(template: TemplateDocument): RuleTemplate {
  return {
    object: 'rule_template',
    name: template.name,
    description: template.description,
    parameters: Object.entries(template.params).map(([name, param]) => ({
      name,
      type: param.type,
      description: param.description,
      required: param.default === undefined,
      schema: parameterSchema(param),
    })),
    example: exampleOf(template),
  };
}

/**
 * List Rule Templates: any key may read it (the library is the same for every account and
 * tells nothing of one, as GET /v1/rate-limits), so that a key that writes policies and one
 * that only simulates them both see what a policy may name. Paginated as every list, by name.
 * `library` is the store's (Store.ruleTemplates: the templates its policies compile against,
 * the built-in ones unless the store was opened with others), read at the first request.
 */
export function registerRuleTemplateRoutes(
  app: FastifyInstance,
  library: () => TemplateLibrary = builtinRuleLibrary,
): void {
  // Presented once, on first use: a store's library is loaded once and frozen.
  let presented: RuleTemplate[] | undefined;
  const templatesOf = (): RuleTemplate[] => {
    presented ??= [...library().values()]
      .map(presentTemplate)
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    return presented;
  };

  app.withTypeProvider<ZodTypeProvider>().get(
    '/v1/rule-templates',
    {
      config: { requiredScope: null },
      schema: {
        operationId: 'listRuleTemplates' satisfies OperationId,
        tags: ['policies'],
        querystring: listRuleTemplatesQuery,
        response: { 200: listOf(ruleTemplateObject) },
      },
    },
    (request) => {
      const { limit, startingAfter } = request.query;
      const templates = templatesOf();
      const after =
        startingAfter === undefined ? templates : templates.filter((t) => t.name > startingAfter);
      const data = after.slice(0, limit);
      const hasMore = after.length > limit;
      return presentPage(
        { data, hasMore, nextCursor: hasMore ? (data.at(-1)?.name ?? null) : null },
        (template) => template,
      );
    },
  );
}
