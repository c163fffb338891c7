import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ERROR_CATALOGUE, formatPath, isErrorCode } from '../../src/core/index.js';

/** The contract's section 3 table, read from ../shared/contract.md as clients see it. */
function contractTable(): Map<string, { status: number; type: string }> {
  const text = readFileSync(new URL('../../../shared/contract.md', import.meta.url), 'utf8');
  const section = text.slice(text.indexOf('## 3. Errors'), text.indexOf('## 4.'));
  const table = new Map<string, { status: number; type: string }>();
  for (const line of section.split('\n')) {
    const cells = line.split('|').map((cell) => cell.trim());
    const status = Number(cells[1]);
    if (!Number.isInteger(status) || cells[2] === undefined || cells[3] === undefined) continue;
    for (const code of cells[3].matchAll(/`([a-z_]+)`/g))
      table.set(code[1] as string, { status, type: cells[2] });
  }
  return table;
}

describe('the error catalogue', () => {
  const table = contractTable();

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
