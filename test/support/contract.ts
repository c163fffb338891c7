import { readFileSync } from 'node:fs';

/** The contract's section 3 table, read from ../shared/contract.md as clients see it. */
export function contractErrorTable(): Map<string, { status: number; type: string }> {
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

/** The event types of the contract's section 13, in its order. */
export function contractEventTypes(): string[] {
  const text = readFileSync(new URL('../../../shared/contract.md', import.meta.url), 'utf8');
  const section = text.slice(text.indexOf('## 13. Events'), text.indexOf('## 14.'));
  const bullet = section.slice(section.indexOf('- Events:'), section.indexOf('`events: ["*"]`'));
  return [...bullet.matchAll(/`([a-z]+\.[a-z]+)`/g)].map((match) => match[1] as string);
}
