import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compilePolicy, decide, POLICY_BOUNDS, PolicyInvalidError } from '../../src/core/index.js';
import { decisionInput } from '../support/decision-input.js';

/**
 * The code generator's safety rule: no text from a policy enters the generated source. Hostile
 * strings in every place a policy holds text must stay data.
 */
const HOSTILE = [
  '"); globalThis.pwned = 1; ("',
  "'); globalThis.pwned = 1; ('",
  '`${globalThis.pwned = 1}`',
  '*/ globalThis.pwned = 1; /*',
  '\u2028globalThis.pwned = 1',
  '\\"); globalThis.pwned = 1; //',
];

function generatedSource(policy: ReturnType<typeof compilePolicy>): string {
  return `${policy.firstDecline.toString()}\n${policy.shadowMatches.toString()}`;
}

describe('generated evaluators', () => {
  it.each(HOSTILE.map((text) => [text]))('keep %j as data', (text) => {
    const policy = compilePolicy(
      {
        rules: [
          {
            name: 'by-name',
            message: text,
            conditions: { all: [{ fact: 'merchantName', operator: 'equal', value: text }] },
          },
          {
            name: 'by-substring',
            mode: 'shadow',
            message: text,
            conditions: { any: [{ fact: 'merchantName', operator: 'contains', value: text }] },
          },
          {
            name: 'by-list',
            conditions: {
              not: { fact: 'merchant', path: '$.city', operator: 'notIn', value: [text, 'x'] },
            },
          },
        ],
      },
      { currency: 'USDC' },
    );
    const source = generatedSource(policy);
    expect(source).not.toContain('pwned');
    expect(source).not.toContain(text);
    const decision = decide(decisionInput({ policy, merchant: { name: text } }));
    expect(decision.declineReason).toEqual({ rule: 'by-name', message: text });
    expect(decision.shadowMatches).toEqual([{ rule: 'by-substring', message: text }]);
    expect(decide(decisionInput({ policy, merchant: { city: text } })).declineReason?.rule).toBe(
      'by-list',
    );
    expect((globalThis as { pwned?: unknown }).pwned).toBeUndefined();
  });

  it("contain only the generator's own tokens, for any valid string a policy holds", () => {
    fc.assert(
      fc.property(fc.string({ minLength: 1, maxLength: 40 }), (text) => {
        const policy = compilePolicy(
          {
            rules: [
              {
                name: 'r',
                conditions: { all: [{ fact: 'merchantName', operator: 'equal', value: text }] },
              },
            ],
          },
          { currency: 'USDC' },
        );
        // Identifiers, punctuation and operators only; every value is a k<n> constant.
        const body = generatedSource(policy).replace(/\s+/g, ' ');
        expect(body).toMatch(/^[A-Za-z0-9_ (){}[\].,;:=!<>&|?'+-]*$/);
        expect(decide(decisionInput({ policy, merchant: { name: text } })).approved).toBe(false);
      }),
      { numRuns: 300 },
    );
  });
});

describe('bounds, as properties', () => {
  const leaf = { fact: 'amount', operator: 'greaterThan', value: 1 };
  const compiles = (policy: unknown): boolean => {
    try {
      compilePolicy(policy, { currency: 'USDC' });
      return true;
    } catch (error) {
      expect(error).toBeInstanceOf(PolicyInvalidError);
      return false;
    }
  };

  it('a policy compiles exactly when its rule count is within the bound', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: POLICY_BOUNDS.rulesMax + 20 }), (count) => {
        const rules = Array.from({ length: count }, (_, index) => ({
          name: `r${index}`,
          conditions: { all: [leaf] },
        }));
        expect(compiles({ rules })).toBe(count <= POLICY_BOUNDS.rulesMax);
      }),
      { numRuns: 60 },
    );
  });

  it('a policy compiles exactly when its condition count is within the bound', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 1, max: 99 }), { minLength: 1, maxLength: 20 }),
        (leaves) => {
          const rules = leaves.map((count, index) => ({
            name: `r${index}`,
            conditions: { any: Array.from({ length: count }, () => leaf) },
          }));
          const nodes = leaves.reduce((sum, count) => sum + count + 1, 0);
          expect(compiles({ rules })).toBe(nodes <= POLICY_BOUNDS.conditionsMax);
        },
      ),
      { numRuns: 200 },
    );
  });

  it('a policy compiles exactly when its depth is within the bound', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: POLICY_BOUNDS.depthMax + 10 }),
        fc.constantFrom('not', 'all', 'any'),
        (depth, kind) => {
          let node: unknown = leaf;
          for (let level = 1; level < depth; level++)
            node = kind === 'not' ? { not: node } : { [kind]: [node] };
          const root = depth === 1 ? { all: [leaf] } : node;
          const actualDepth = depth === 1 ? 2 : depth;
          expect(compiles({ rules: [{ name: 'r', conditions: root }] })).toBe(
            actualDepth <= POLICY_BOUNDS.depthMax,
          );
        },
      ),
      { numRuns: 100 },
    );
  });

  it('a policy compiles exactly when its list values are within the bound', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 6000 }),
        fc.integer({ min: 1, max: 6000 }),
        (blocked, listed) => {
          const codes = (count: number) =>
            Array.from({ length: count }, (_, index) => String(index % 10_000).padStart(4, '0'));
          const policy = {
            merchantCategories: { block: codes(blocked) },
            rules: [
              {
                name: 'r',
                conditions: { all: [{ fact: 'mcc', operator: 'in', value: codes(listed) }] },
              },
            ],
          };
          expect(compiles(policy)).toBe(blocked + listed <= POLICY_BOUNDS.listValuesMax);
        },
      ),
      { numRuns: 100 },
    );
  });
});
