import {
  findNodeAtLocation,
  parseTree,
  printParseErrorCode,
  type Node,
  type ParseError,
} from 'jsonc-parser';
import { z } from 'zod';
import { PolicyInvalidError } from '../../src/core/errors/spendgate-error';
import { parseWith } from '../../src/core/policy/parse-with';
import { policySchema } from '../../src/core/policy/schema';

/*
 * The policy editor's checks, placed on their lines: JSON syntax (jsonc-parser, strict JSON
 * options), then the policy document as the API reads it: the API's own schema and wording
 * (src/core/policy: `limits[0].interval: interval must be one of ...`), pure code bundled
 * into the console, so that the editor and Set Policy say the same thing. The API compiles
 * conditions further (facts, operators, templates); Simulate and Save have the last word, and
 * their `param` is placed the same way.
 */

// zod without its generated parsers: the page's CSP refuses `new Function`, and zod's probe for
// it would be reported as a violation even though zod falls back.
z.config({ jitless: true });

export interface Problem {
  /** 1-based; null when the problem has no place in the text. */
  readonly line: number | null;
  readonly message: string;
}

/** Problems shown at most: the first ones are the ones to fix. */
const PROBLEMS_MAX = 20;
function lineOf(text: string, offset: number): number {
  let line = 1;
  for (let index = 0; index < offset && index < text.length; index += 1) {
    if (text.charCodeAt(index) === 10) line += 1;
  }
  return line;
}

/** The node at a path, or its nearest ancestor that exists. */
function nodeAt(tree: Node, path: (string | number)[]): Node | undefined {
  for (let length = path.length; length >= 0; length -= 1) {
    const node = findNodeAtLocation(tree, path.slice(0, length));
    if (node !== undefined) return node;
  }
  return undefined;
}

/** `rules[0].conditions.all[2]` or `policy.rules[0]` (the API's `param`) as a path. */
export function pathOfParam(param: string): (string | number)[] {
  const parts = param
    .replace(/\[(\d+)\]/g, '.$1')
    .split('.')
    .filter((part) => part !== '')
    .map((part) => (/^\d+$/.test(part) ? Number(part) : part));
  return parts[0] === 'policy' ? parts.slice(1) : parts;
}

/** The line of a path in the text, when the text parses. */
export function lineOfPath(text: string, path: (string | number)[]): number | null {
  const tree = parseTree(text, [], { allowTrailingComma: false, disallowComments: true });
  if (tree === undefined) return null;
  const node = nodeAt(tree, path);
  if (node === undefined) return null;
  // A property's value: point at its key, where the reader looks.
  const target = node.parent?.type === 'property' ? node.parent : node;
  return lineOf(text, target.offset);
}

/** The API's refusal of the document's shape, if any, as Set Policy would word it. */
function documentProblem(text: string, value: unknown): Problem | null {
  try {
    parseWith(policySchema, value, []);
    return null;
  } catch (error) {
    if (!(error instanceof PolicyInvalidError)) throw error;
    const param = error.param ?? 'policy';
    return {
      line: param === 'policy' ? null : lineOfPath(text, pathOfParam(param)),
      message: `${param}: ${error.message}`,
    };
  }
}

/** Every problem of the draft found here: syntax first, else the API's first refusal. */
export function checkPolicy(text: string): { problems: Problem[]; value: unknown } {
  const syntax: ParseError[] = [];
  const tree = parseTree(text, syntax, { allowTrailingComma: false, disallowComments: true });
  if (syntax.length > 0 || tree === undefined) {
    const problems = syntax.map((error) => ({
      line: lineOf(text, error.offset),
      message: `JSON: ${printParseErrorCode(error.error)}`,
    }));
    return { problems: problems.slice(0, PROBLEMS_MAX), value: undefined };
  }
  const value: unknown = JSON.parse(text);
  const problem = documentProblem(text, value);
  return { problems: problem === null ? [] : [problem], value };
}
