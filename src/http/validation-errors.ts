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
  const issue = error.validation?.[0];
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
