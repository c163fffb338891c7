import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  compilePolicy,
  decide,
  Decimal,
  PolicyInvalidError,
  type TemplateDocument,
} from '../src/core/index.js';
import { builtinRuleLibrary, loadRuleLibrary } from '../src/rule-library/load.js';
import { decisionInput } from './support/decision-input.js';

const library = builtinRuleLibrary();
const templates = [...library.values()];

/** The worked examples each template carries; they are its tests and its documentation. */
const exampleSchema = z.strictObject({
  expect: z.enum(['approve', 'decline']),
  params: z.record(z.string(), z.unknown()).optional(),
  spend: z.record(z.string(), z.union([z.string(), z.number()])).optional(),
  transaction: z.strictObject({
    amount: z.string(),
    mcc: z.string(),
    country: z.string(),
    merchantName: z.string(),
    merchantId: z.string().optional(),
    merchantCurrency: z.string().optional(),
    billingCurrency: z.string().optional(),
    at: z.iso.datetime(),
  }),
});

function placeholders(node: unknown, found: Set<string> = new Set()): Set<string> {
  if (Array.isArray(node)) for (const item of node) placeholders(item, found);
  else if (typeof node === 'object' && node !== null) {
    const record = node as Record<string, unknown>;
    if (Object.keys(record).length === 1 && typeof record.param === 'string')
      found.add(record.param);
    else for (const value of Object.values(record)) placeholders(value, found);
  }
  return found;
}

function messageParams(template: TemplateDocument): Set<string> {
  return new Set(
    template.rules.flatMap((rule) =>
      [...rule.message.matchAll(/\{([a-z][A-Za-z0-9]*)\}/g)].map((match) => match[1] as string),
    ),
  );
}

describe('the rule library', () => {
  it('ships at least ten templates, each described', () => {
    expect(templates.length).toBeGreaterThanOrEqual(10);
    for (const template of templates) {
      expect(template.description.length, template.name).toBeGreaterThan(20);
      expect(template.limits.length + template.rules.length, template.name).toBeGreaterThan(0);
    }
  });

  it.each(templates.map((template) => [template.name, template] as const))(
    '%s: placeholders and parameters match',
    (_name, template) => {
      const used = placeholders([template.limits, template.rules.map((rule) => rule.conditions)]);
      const declared = new Set(Object.keys(template.params));
      expect([...used].sort()).toEqual([...declared].sort());
      for (const name of messageParams(template))
        expect(declared.has(name), `{${name}} in a message`).toBe(true);
    },
  );

  it.each(templates.map((template) => [template.name, template] as const))(
    '%s: its worked examples hold',
    (_name, template) => {
      const examples = template.examples.map((example) => exampleSchema.parse(example));
      expect(
        examples.some((example) => example.expect === 'approve'),
        'an approving example',
      ).toBe(true);
      expect(
        examples.some((example) => example.expect === 'decline'),
        'a declining example',
      ).toBe(true);
      for (const example of examples) {
        const policy = compilePolicy(
          {
            templates: [
              { name: template.name, ...(example.params ? { params: example.params } : {}) },
            ],
          },
          { currency: 'USDC', templates: library },
        );
        const spend: Record<string, Decimal | number> = {};
        for (const spec of policy.aggregates)
          spend[spec.key] = spec.measure === 'count' ? 0 : new Decimal(0);
        for (const [key, value] of Object.entries(example.spend ?? {}))
          spend[key] = typeof value === 'number' ? value : new Decimal(value);
        const { transaction } = example;
        const input = decisionInput({
          policy,
          spend,
          amount: transaction.amount,
          at: transaction.at,
          available: '1000000',
          merchant: {
            mcc: transaction.mcc,
            country: transaction.country,
            name: transaction.merchantName,
            id: transaction.merchantId,
          },
        });
        // The section 16 currencies, when the example names them (else absent, as from a
        // request with no merchant currency, in the vault's asset).
        const decision = decide({
          ...input,
          request: {
            ...input.request,
            merchantCurrency: transaction.merchantCurrency,
            billingCurrency: transaction.billingCurrency,
          },
        });
        expect(decision.approved ? 'approve' : 'decline', JSON.stringify(example)).toBe(
          example.expect,
        );
        if (!decision.approved) {
          expect(decision.declineCode).toBe('authorization_failed');
          expect(decision.declineReason?.rule).toBe(template.name);
          expect(decision.declineReason?.message).not.toMatch(/\{[a-z]/);
        }
      }
    },
  );

  it('fills parameters into messages', () => {
    const policy = compilePolicy(
      { templates: [{ name: 'business-hours', params: { startHour: 7, endHour: 19 } }] },
      { currency: 'USDC', templates: library },
    );
    expect(policy.checks[0]?.message).toBe('Declined: outside business hours (7:00 to 19:59 UTC)');
  });

  it.each([
    [
      { name: 'business-hours', params: { startHour: 24 } },
      'templates[0].params.startHour',
      'integer from 0 to 23',
    ],
    [
      { name: 'business-hours', params: { start: 8 } },
      'templates[0].params.start',
      'not a parameter of business-hours',
    ],
    [{ name: 'daily-cap' }, 'templates[0].params.amount', 'is required'],
    [
      { name: 'daily-cap', params: { amount: '1.0000001' } },
      'templates[0].params.amount',
      'more than 6 decimal places',
    ],
    [
      { name: 'block-gambling', params: { categories: [] } },
      'templates[0].params.categories',
      'non-empty list',
    ],
    [
      { name: 'block-gambling', params: { categories: ['7995', 'x'] } },
      'templates[0].params.categories[1]',
      'merchant category',
    ],
    [
      { name: 'block-high-risk-countries', params: { countries: ['ZZ'] } },
      'templates[0].params.countries[0]',
      'country',
    ],
  ])('refuses bad parameters at their path: %j', (reference, param, message) => {
    try {
      compilePolicy({ templates: [reference] }, { currency: 'USDC', templates: library });
      expect.unreachable('compiled');
    } catch (error) {
      expect(error).toBeInstanceOf(PolicyInvalidError);
      expect((error as PolicyInvalidError).param).toBe(param);
      expect((error as PolicyInvalidError).message).toContain(message);
    }
  });

  it('refuses to load a malformed template file, naming it', () => {
    const dir = mkdtempSync(join(tmpdir(), 'spendgate-rules-'));
    writeFileSync(
      join(dir, 'broken.json'),
      JSON.stringify({
        name: 'broken',
        description: 'A broken template for a test.',
        rules: [{ conditions: {} }],
      }),
    );
    expect(() => loadRuleLibrary(pathToFileURL(`${dir}/`))).toThrow(
      /broken\.json: rules\[0\]\.message: message is required\./,
    );
    const misnamed = mkdtempSync(join(tmpdir(), 'spendgate-rules-'));
    writeFileSync(
      join(misnamed, 'a.json'),
      JSON.stringify({ name: 'b', description: 'A misnamed template for a test.' }),
    );
    expect(() => loadRuleLibrary(pathToFileURL(`${misnamed}/`))).toThrow(/name the file after it/);
  });
});
