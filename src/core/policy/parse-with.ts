import type { z } from 'zod';
import { formatPath, PolicyInvalidError } from '../errors/spendgate-error.js';

export type PathKey = string | number;

/**
 * Parses `input` with a zod schema, turning the first issue into a `PolicyInvalidError` whose
 * `param` is the full JSON path of the fault (the schema's path appended to `base`).
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
  if (issue.code === 'invalid_type' && valueAt(input, issue.path) === undefined) {
    throw policyError(path, 'is required');
  }
  throw policyError(path, issue.message);
}

/**
 * A `policy_invalid` error at `path`. Own messages read on from the path ("x must be ..."),
 * zod's start a sentence of their own ("x: Too big: ...").
 */
export function policyError(path: readonly PathKey[], message: string): PolicyInvalidError {
  const param = formatPath(path);
  const subject = param === '' ? 'policy' : param;
  const joiner = /^[A-Z]/.test(message) ? ': ' : ' ';
  return new PolicyInvalidError(`${subject}${joiner}${message}`, subject);
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
