import type { FastifyError } from 'fastify';
import { formatPath, SpendgateError } from '../core/index.js';

/**
 * A request that fails its zod schema becomes the contract's 400: `parameter_missing` when the
 * field is absent, `parameter_invalid` otherwise, with `param` the field's path
 * (`metadata.costCenter`, `limit`). The first issue is reported, as a client fixes one at a time.
 */
export function validationError(
  error: FastifyError,
  request: { body: unknown; query: unknown; params: unknown; headers: unknown },
): SpendgateError {
  const issue = narrowedUnion(error.validation?.[0]);
  const path: (string | number)[] = (issue?.instancePath ?? '')
    .split('/')
    .filter((part) => part !== '')
    .map((part) => (/^\d+$/.test(part) ? Number(part) : part));
  // zod reports a key the schema does not have at its object; the client's mistake is the key.
  const unknownKey = unrecognizedKey(issue);
  if (unknownKey !== undefined) path.push(unknownKey);
  const part = error.validationContext ?? 'body';
  const source =
    part === 'querystring'
      ? request.query
      : part === 'params'
        ? request.params
        : part === 'headers'
          ? request.headers
          : request.body;
  let node: unknown = source;
  for (const key of path)
    node =
      typeof node === 'object' && node !== null
        ? (node as Record<string | number, unknown>)[key]
        : undefined;
  const param = path.length === 0 ? undefined : formatPath(path);
  const message =
    unknownKey === undefined ? (issue?.message ?? 'is invalid') : 'is not a field of this request';
  if (param !== undefined && node === undefined) {
    return new SpendgateError('parameter_missing', `${param} is required.`, param);
  }
  return new SpendgateError(
    'parameter_invalid',
    param === undefined ? `The ${part} is invalid: ${message}` : `${param}: ${message}`,
    param,
  );
}

function unrecognizedKey(
  issue: { keyword?: string; params?: Record<string, unknown> } | undefined,
): string | undefined {
  if (issue?.keyword !== 'unrecognized_keys') return undefined;
  const keys = issue.params?.['keys'];
  return Array.isArray(keys) && typeof keys[0] === 'string' ? keys[0] : undefined;
}

type ValidationIssue = NonNullable<FastifyError['validation']>[number];

interface InnerIssue {
  code?: unknown;
  path?: unknown;
  message?: unknown;
  keys?: unknown;
}

/**
 * A value that matched no branch of a union (a settlement record of any capture kind) is
 * reported at the field the closest branch refused, not at the whole value: among the branches
 * whose literal the value has (its `type`), the one with the fewest issues is taken as the one
 * the client meant (a refund record with a bad `currency` is reported at its `currency`).
 */
function narrowedUnion(issue: ValidationIssue | undefined): ValidationIssue | undefined {
  if (issue?.keyword !== 'invalid_union') return issue;
  const branches = issue.params['errors'];
  if (!Array.isArray(branches) || branches.length === 0) return issue;
  // A branch whose literal (its `type`) the value does not have is not the one meant, unless
  // no branch's literal matched.
  const literalMatched = (branches as InnerIssue[][]).filter((branch) =>
    branch.every((inner) => inner.code !== 'invalid_value'),
  );
  const candidates = literalMatched.length > 0 ? literalMatched : (branches as InnerIssue[][]);
  const closest = candidates.reduce((best, branch) =>
    branch.length < best.length ? branch : best,
  );
  const inner = closest[0];
  if (inner === undefined || typeof inner.code !== 'string' || !Array.isArray(inner.path)) {
    return issue;
  }
  const innerPath = (inner.path as unknown[]).map(String);
  const narrowed: ValidationIssue = {
    keyword: inner.code,
    instancePath: [issue.instancePath, ...innerPath].join('/'),
    schemaPath: issue.schemaPath,
    params: inner.code === 'unrecognized_keys' ? { keys: inner.keys } : {},
  };
  const message = typeof inner.message === 'string' ? inner.message : issue.message;
  if (message !== undefined) narrowed.message = message;
  return narrowed;
}
