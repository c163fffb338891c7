import { describe, expect, it } from 'vitest';
import { ERROR_CATALOGUE, formatPath, isErrorCode } from '../../src/core/index.js';
import { contractErrorTable } from '../support/contract.js';

describe('the error catalogue', () => {
  const table = contractErrorTable();

  it('reads the contract table', () => {
    expect(table.size).toBeGreaterThan(30);
  });

  it('has exactly the codes of the contract, each with its status and type', () => {
    expect(Object.keys(ERROR_CATALOGUE).sort()).toEqual([...table.keys()].sort());
    for (const [code, entry] of Object.entries(ERROR_CATALOGUE)) {
      expect({ code, status: entry.status, type: entry.type }).toEqual({
        code,
        ...table.get(code),
      });
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
