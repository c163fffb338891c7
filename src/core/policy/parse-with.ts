import type { z } from 'zod';
import { fieldSubject, formatPath, PolicyInvalidError } from '../errors/spendgate-error.js';
import { givenWords } from '../errors/given.js';

export type PathKey = string | number;

type ZodIssue = z.ZodError['issues'][number];

/**
 * Parses `input` with a zod schema, turning the first issue into a `PolicyInvalidError` whose
 * `param` is the full JSON path of the fault (the schema's path appended to `base`) and whose
 * message is spendgate's own wording, never zod's ("Too small: expected array to have >=1
 * items" becomes "all must not be empty.").
 */
export function parseWith<T extends z.ZodType>(
  schema: T,
  input: unknown,
  base: readonly PathKey[],
): z.output<T> {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  if (issue === undefined) throw policyError(base, 'is invalid');
  const path: PathKey[] = [
    ...base,
    ...issue.path.map((key) => (typeof key === 'symbol' ? String(key) : key)),
  ];
  if (issue.code === 'unrecognized_keys') {
    const key = issue.keys[0] ?? '';
    // A key too long to echo is reported at its object, so no client text of any size returns.
    if (key.length > 64) throw policyError(path, 'has a field that is not known');
    throw policyError([...path, key], `is not a known field`);
  }
  // Read the input here rather than ask zod to report it (`reportInput` makes every parse
  // several times slower, and this runs only on the error path).
  const value = valueAt(input, issue.path);
  if (issue.code === 'invalid_type' && value === undefined) {
    throw policyError(path, 'is required');
  }
  throw policyError(path, issueWords(issue, value));
}

/**
 * A `policy_invalid` error at `path`. `predicate` reads on from the field's name ("must be a
 * string"): the message is "<field> <predicate>.", the field named by its last key.
 */
export function policyError(path: readonly PathKey[], predicate: string): PolicyInvalidError {
  const param = formatPath(path);
  const sentence = `${fieldSubject(path, 'The policy')} ${predicate}`;
  const message = sentence.endsWith('.') ? sentence : `${sentence}.`;
  return new PolicyInvalidError(message, param === '' ? 'policy' : param);
}

/** What a zod issue says is wrong, in words that read on from the field's name. */
function issueWords(issue: ZodIssue, value: unknown): string {
  // The schemas' own messages (regexes, refinements) are written to read on, in lower case;
  // zod's defaults start with a capital ("Invalid input", "Too small") and are replaced.
  if (/^[a-z]/.test(issue.message)) return issue.message;
  switch (issue.code) {
    case 'invalid_type':
      return `must be ${TYPE_WORDS[issue.expected] ?? issue.expected}, not ${givenWords(value)}`;
    case 'too_small':
      return sizeWords('at least', issue.origin, Number(issue.minimum));
    case 'too_big':
      return sizeWords('at most', issue.origin, Number(issue.maximum));
    case 'invalid_value': {
      const values = issue.values.map((option) => JSON.stringify(option));
      return values.length === 1
        ? `must be ${values[0] ?? ''}`
        : `must be one of ${values.join(', ')}`;
    }
    default:
      return 'is invalid';
  }
}

const TYPE_WORDS: Readonly<Record<string, string>> = {
  object: 'an object',
  array: 'a list',
  string: 'a string',
  number: 'a number',
  int: 'an integer',
  boolean: 'true or false',
};

function sizeWords(bound: 'at least' | 'at most', origin: string, size: number): string {
  switch (origin) {
    case 'array':
    case 'set':
      if (bound === 'at least' && size === 1) return 'must not be empty';
      return `must have ${bound} ${size} ${size === 1 ? 'item' : 'items'}`;
    case 'string':
      if (bound === 'at least' && size === 1) return 'must not be empty';
      return `must be ${bound} ${size} ${size === 1 ? 'character' : 'characters'} long`;
    default:
      return `must be ${bound} ${size}`;
  }
}

function valueAt(input: unknown, path: readonly PropertyKey[]): unknown {
  let node = input;
  for (const key of path) {
    if (typeof node !== 'object' || node === null || !Object.hasOwn(node, key)) return undefined;
    node = (node as Record<PropertyKey, unknown>)[key];
  }
  return node;
}

/**
 * Thrown by a fast compile (compile.ts) where it is not sure: text that is not plain, a node
 * it does not read by hand. Never leaves the compiler: it compiles again in exact mode, which
 * accepts or refuses with the error the client sees.
 */
export class ExactPathNeeded extends Error {
  override readonly name = 'ExactPathNeeded';
}

/** The path a fast compile passes where an exact one builds a path: its errors are not shown. */
export const UNTRACKED_PATH: readonly PathKey[] = Object.freeze([]);
