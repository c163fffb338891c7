import { Validator, type OutputUnit } from '@cfworker/json-schema';
import {
  findNodeAtLocation,
  parseTree,
  printParseErrorCode,
  type Node,
  type ParseError,
} from 'jsonc-parser';

/*
 * The policy editor's checks, placed on their lines: JSON syntax (jsonc-parser, strict JSON
 * options), then the policy document's JSON Schema as the API publishes it (the
 * PolicyDocument component of /v1/openapi.json, checked with @cfworker/json-schema, which
 * needs no eval under the page's CSP). The server's compile (Simulate, Save) has the last word;
 * its `param` is placed the same way.
 */

export interface Problem {
  /** 1-based; null when the problem has no place in the text. */
  readonly line: number | null;
  readonly message: string;
}

/** Problems shown at most: the first ones are the ones to fix. */
const PROBLEMS_MAX = 20;
/** Keywords that only say that something below them failed: their child is reported. */
const WRAPPERS = new Set([
  'properties',
  'items',
  'prefixItems',
  'false',
  '$ref',
  'allOf',
  'additionalItems',
  'unevaluatedProperties',
]);

export interface OpenApiDocument {
  readonly components: { readonly schemas: Record<string, unknown> };
}

export function policyValidator(document: OpenApiDocument): Validator {
  const root = {
    ...(document.components.schemas['PolicyDocument'] as object),
    // $refs in the component point at #/components/schemas/...: kept resolvable from the root.
    components: { schemas: document.components.schemas },
  };
  return new Validator(root, '2020-12', false);
}

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

function pathOfPointer(pointer: string): (string | number)[] {
  return pointer
    .replace(/^#\/?/, '')
    .split('/')
    .filter((part) => part !== '')
    .map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'))
    .map((part) => (/^\d+$/.test(part) ? Number(part) : part));
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

function schemaProblems(text: string, tree: Node, errors: readonly OutputUnit[]): Problem[] {
  const kept = errors.filter(
    (error) =>
      !WRAPPERS.has(error.keyword) &&
      !errors.some(
        (other) =>
          other !== error &&
          other.instanceLocation.startsWith(`${error.instanceLocation}/`) &&
          !WRAPPERS.has(other.keyword),
      ),
  );
  return kept.map((error) => {
    const path = pathOfPointer(error.instanceLocation);
    let message = error.error;
    const extra = /^Property "(.*)" does not match additional properties schema\.$/.exec(message);
    if (error.keyword === 'additionalProperties' && extra?.[1] !== undefined) {
      path.push(extra[1]);
      message = `"${extra[1]}" is not a field here.`;
    }
    const node = nodeAt(tree, path);
    const target = node?.parent?.type === 'property' ? node.parent : node;
    const where = path.length === 0 ? '' : `${path.join('.')}: `;
    return {
      line: target === undefined ? null : lineOf(text, target.offset),
      message: `${where}${message}`,
    };
  });
}

/** Every problem of the draft, syntax first, each on its line. */
export function checkPolicy(
  text: string,
  validator: Validator | null,
): { problems: Problem[]; value: unknown } {
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
  if (validator === null) return { problems: [], value };
  const result = validator.validate(value);
  if (result.valid) return { problems: [], value };
  return { problems: schemaProblems(text, tree, result.errors).slice(0, PROBLEMS_MAX), value };
}
