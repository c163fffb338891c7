import { describe, expect, it } from 'vitest';
import { ERROR_CATALOGUE, formatPath, isErrorCode } from '../../src/core/index.js';

describe('the error catalogue', () => {
  it('gives every code a status and type that agree with each other, and a message', () => {
    const typeOfStatus = new Map<number, string>();
    for (const [code, entry] of Object.entries(ERROR_CATALOGUE)) {
      expect(code).toMatch(/^[a-z]+(_[a-z]+)*$/);
      expect(entry.status).toBeGreaterThanOrEqual(400);
      expect(entry.status).toBeLessThan(600);
      // One type per status, as the contract's table has it (402 included).
      const type = typeOfStatus.get(entry.status) ?? entry.type;
      expect({ code, type: entry.type }).toEqual({ code, type });
      typeOfStatus.set(entry.status, type);
      expect(entry.message.length).toBeGreaterThan(5);
    }
  });

  it('tells codes from other strings', () => {
    expect(isErrorCode('vault_not_found')).toBe(true);
    expect(isErrorCode('toString')).toBe(false);
  });
});

describe('formatPath', () => {
  it.each([
    [['rules', 2, 'conditions'], 'rules[2].conditions'],
    [['metadata', 'costCenter'], 'metadata.costCenter'],
    [['metadata', 'cost center'], 'metadata["cost center"]'],
    [[' . '], '[" . "]'],
    [['a', 'b"c'], 'a["b\\"c"]'],
    [[], ''],
  ])('writes %j as %s', (path, expected) => {
    expect(formatPath(path)).toBe(expected);
  });
});
