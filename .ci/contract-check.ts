/**
 * The upstream contract check: the error catalogue, the event types and the API scopes the code
 * has, against the tables of the contract that outside clients are tested with. The contract is
 * not part of this repository, so this is no test of `npm test`: `.ci/run` runs it when the
 * contract sits beside the clone (`npx tsx .ci/contract-check.ts ../shared/contract.md`).
 * Exits 1 with every difference when they disagree.
 */
import { readFileSync } from 'node:fs';
import { ERROR_CATALOGUE } from '../src/core/index.js';
import { EVENT_TYPES } from '../src/store/outbox.js';
import { API_SCOPES } from '../src/store/port/index.js';

const path = process.argv[2];
if (path === undefined) throw new Error('usage: tsx .ci/contract-check.ts <contract.md>');
const text = readFileSync(path, 'utf8');

function section(heading: string, next: string): string {
  const start = text.indexOf(heading);
  const end = text.indexOf(next, start);
  if (start < 0 || end < 0) throw new Error(`the contract has no section "${heading}"`);
  return text.slice(start, end);
}

const problems: string[] = [];
function sameSet(what: string, ours: readonly string[], theirs: readonly string[]): void {
  const missing = theirs.filter((name) => !ours.includes(name));
  const extra = ours.filter((name) => !theirs.includes(name));
  if (missing.length > 0)
    problems.push(`${what} the contract has and the code lacks: ${missing.join(', ')}`);
  if (extra.length > 0)
    problems.push(`${what} the code has and the contract lacks: ${extra.join(', ')}`);
}

// Section 3's table: | status | type | `code`, `code` |.
const errors = new Map<string, { status: number; type: string }>();
for (const line of section('## 3. Errors', 'Amendments').split('\n')) {
  const cells = line.split('|').map((cell) => cell.trim());
  const status = Number(cells[1]);
  if (!Number.isInteger(status) || cells[2] === undefined || cells[3] === undefined) continue;
  for (const code of cells[3].matchAll(/`([a-z_]+)`/g)) {
    errors.set(code[1] as string, { status, type: cells[2] });
  }
}
sameSet('error codes', Object.keys(ERROR_CATALOGUE), [...errors.keys()]);
for (const [code, entry] of Object.entries(ERROR_CATALOGUE)) {
  const theirs = errors.get(code);
  if (theirs !== undefined && (theirs.status !== entry.status || theirs.type !== entry.type)) {
    problems.push(
      `${code}: the code says ${entry.status} ${entry.type}, the contract ${theirs.status} ${theirs.type}`,
    );
  }
}

const events = section('## 13. Events', '`events: ["*"]`');
sameSet(
  'event types',
  [...EVENT_TYPES],
  [...events.matchAll(/`([a-z]+\.[a-z]+)`/g)].map((m) => m[1] as string),
);

const scopes = section('- Scopes:', 'A key made with no');
sameSet(
  'scopes',
  [...API_SCOPES],
  [...scopes.matchAll(/`([a-z]+:[a-z]+)`/g)].map((m) => m[1] as string),
);

if (problems.length > 0) {
  console.error(`The code and ${path} disagree:\n- ${problems.join('\n- ')}`);
  process.exit(1);
}
console.log(
  `contract check: ${errors.size} error codes, ${EVENT_TYPES.length} event types and ${API_SCOPES.length} scopes agree with ${path}`,
);
